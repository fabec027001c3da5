"""Color reference game (``colors_v1``): a speaker describes one of three colours, a listener picks it.

``rules`` (pure state machine), ``content`` (rounds of colour triples by condition), ``agents``
(literal and pragmatic speakers and listeners), ``exports`` (``--format colors-csv``), ``monitor``
(the research pages' scores and summaries), ``onboarding`` (quiz and practice round). See
``docs/games/colors.md``.
"""
from games.spec import BonusKind, ExportFormat, GameSpec

SPEC = GameSpec(
    id="colors_v1",
    title="Color reference game",
    package="games.colors",
    default_config={"rounds": 50},
    extra_config={"max_message_len": (int,)},
    exports={"colors-csv": ExportFormat(".exports:write_csv", "csv", "text/csv")},
    compare_roles=("listener", "speaker"),
    bonus_kinds={"colors_accuracy": BonusKind("colors: cents per correct pick", outcome_key="correct")},
    doc_page="docs/games/colors.md",
    monitor_script="games/colors/monitor.js",
    warm_up="games.colors.content:warm_up",   # colour-science, imported on first use
    demo_batches=(
        dict(slug="colors-human-human", title="Color game: two people", pairing="human-human", max_wait_s=90,
             on_timeout="agent", agents={"speaker": "colors_lexicon_speaker", "listener": "colors_pragmatic_listener"},
             config={"rounds": 10}, games_per_worker=1),
        dict(slug="colors-listen-to-agent", title="Color game: you listen, an agent speaks", pairing="human-agent",
             human_roles=["listener"], agents={"speaker": "colors_lexicon_speaker"}, config={"rounds": 10}),
        dict(slug="colors-speak-to-agent", title="Color game: you speak, an agent listens", pairing="human-agent",
             human_roles=["speaker"], agents={"listener": "colors_pragmatic_listener"}, config={"rounds": 10}),
        # the neural agents of models/models.toml (docs/games/colors_neural.md); gt_demo skips a batch
        # whose agent the models file does not declare
        dict(slug="colors-speak-to-neural", title="Color game: you speak, a neural listener trained on people listens",
             pairing="human-agent", human_roles=["speaker"], agents={"listener": "colors_neural_listener"},
             config={"rounds": 10}),
        dict(slug="colors-listen-to-neural", title="Color game: you listen, a neural speaker speaks",
             pairing="human-agent", human_roles=["listener"], agents={"speaker": "colors_neural_speaker"},
             config={"rounds": 10}),
    ),
)
