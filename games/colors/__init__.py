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
)
