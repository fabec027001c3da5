"""CoDraw (``codraw_v1``): a Teller describes a clip-art park scene, a Drawer rebuilds it.

Modules: ``clipart`` (the 58-piece Abstract Scenes library), ``scenes`` (pieces, the scene string
format, dataset import, a scene generator), ``metric`` (scene similarity), ``content`` (targets and
palettes), ``rules`` (the game), ``exports`` (CoDraw_1_0.json), ``agents`` (baselines), ``monitor``
(the research pages' scores, summaries and boards), ``views`` and ``urls`` (the art and the staff
SVG snapshots).
"""
from games.spec import BonusKind, ExportFormat, GameSpec

SPEC = GameSpec(
    id="codraw_v1",
    title="CoDraw: collaborative drawing",
    package="games.codraw",
    default_config={"time_limit_s": 1200},
    extra_config={"min_pieces": (int,), "max_pieces": (int,), "full_palette": (bool,), "scenes": (list,),
                  "script_teller": (bool,), "start_ms": (int,), "max_message_len": (int,)},
    exports={"codraw": ExportFormat(".exports:write_codraw_json", "json", "application/json"),
             "codraw-keys": ExportFormat(".exports:write_codraw_keys", "csv", "text/csv")},
    compare_roles=("drawer", "teller"),
    bonus_kinds={"codraw_similarity": BonusKind("CoDraw: cents per similarity point", outcome_key="score")},
    doc_page="docs/games/codraw.md",
    research_template="codraw/research_match.html",
    monitor_script="games/codraw/monitor.js",
    urls=".urls",
    demo_batches=(
        dict(slug="codraw-human-human", title="CoDraw: two people draw a scene", pairing="human-human",
             max_wait_s=120, on_timeout="agent", agents={"teller": "codraw_rule_teller", "drawer": "codraw_rule_drawer"}),
        dict(slug="codraw-tell-to-agent", title="CoDraw: you describe, an agent draws", pairing="human-agent",
             human_roles=["teller"], agents={"drawer": "codraw_rule_drawer"}),
        # the neural Drawer of models/models.toml (docs/games/codraw_neural.md); gt_demo skips the batch
        # when the models file does not declare it
        dict(slug="codraw-tell-to-neural", title="CoDraw: you describe, a neural Drawer draws", pairing="human-agent",
             human_roles=["teller"], agents={"drawer": "codraw_neural_drawer"}),
    ),
)
