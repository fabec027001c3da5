"""Visual-dialog chat (``visdial_v1``): the VisDial two-person collection protocol on CLEVR scenes.

``rules`` (pure state machine), ``content`` (one CLEVR scene and its caption), ``agents`` (ALICE
as answerer, QBot as questioner), ``exports`` (``--format visdial``, VisDial v1.0 JSON), ``monitor`` (the research pages' scores and summaries). See
``docs/games/guesswhich.md``.
"""
from games.spec import ExportFormat, GameSpec

SPEC = GameSpec(
    id="visdial_v1",
    title="Visual-dialog chat",
    package="games.visdial",
    default_config={"rounds": 10},
    exports={"visdial": ExportFormat(".exports:write_visdial", "json", "application/json"),
             "visdial-image-ids": ExportFormat(".exports:write_image_ids", "json", "application/json")},
    doc_page="docs/games/guesswhich.md",   # GuessWhich's page documents the visual-dialog chat too
    monitor_script="games/visdial/monitor.js",
    prewarm="live.scene_images:prewarm",   # CLEVR images: render them before the page asks for them
    demo_batches=(
        dict(slug="visdial-human-human", title="Visual dialog: ask about an image you cannot see",
             pairing="human-human", max_wait_s=120, on_timeout="agent",
             agents={"questioner": "visdial_qbot", "answerer": "visdial_alice_exact"}),
    ),
)
