"""GuessWhich (``guesswhich_v1``): ask an answerer about a secret CLEVR scene, then find it in a pool.

``rules`` (pure state machine), ``content`` (pools of CLEVR scenes), ``agents`` (ALICE versions and
QBot; ``summarize`` for the simulate command), ``exports`` (``--format guesswhich`` and
``--format guesswhich-visdial``), ``monitor`` (the research pages' scores and
summaries), ``onboarding`` (quiz and practice round). See ``docs/games/guesswhich.md``.
"""
from games.spec import BonusKind, ExportFormat, GameSpec

SPEC = GameSpec(
    id="guesswhich_v1",
    title="GuessWhich",
    package="games.guesswhich",
    default_config={"pool_size": 20, "rounds": 9, "difficulty": "medium"},
    config_choices={"difficulty": ("easy", "medium", "hard")},   # clevr/embedding.py
    # format names are global across games, hence guesswhich-visdial
    exports={"guesswhich": ExportFormat(".exports:write_guesswhich", "jsonl", "application/x-ndjson"),
             "guesswhich-visdial": ExportFormat(".exports:write_visdial", "json", "application/json"),
             "guesswhich-visdial-image-ids": ExportFormat(".exports:write_image_ids", "json", "application/json")},
    compare_roles=("answerer", "questioner"),
    bonus_kinds={"guesswhich": BonusKind("GuessWhich: the game's bonus points, cents per point", outcome_key="bonus")},
    doc_page="docs/games/guesswhich.md",
    monitor_script="games/guesswhich/monitor.js",
    prewarm="live.scene_images:prewarm",   # CLEVR images: render them before the page asks for them
    demo_batches=(
        dict(slug="guesswhich-alice", title="GuessWhich: find the secret image by asking ALICE", pairing="human-agent",
             human_roles=["questioner"], agents={"answerer": "alice_exact"}),
        # the neural ALICE of models/models.toml (docs/games/guesswhich_neural.md); gt_demo skips the
        # batch when the models file does not declare it
        dict(slug="guesswhich-ask-neural", title="GuessWhich: find the secret image by asking a neural ALICE",
             pairing="human-agent", human_roles=["questioner"], agents={"answerer": "guesswhich_neural_alice"}),
    ),
)
