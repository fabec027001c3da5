"""The platform's tests mirror the code (docs/testing.md, "Layout"): each test file in tests/<app>/ is
named for a module of that app, ``test_<module>.py`` or ``test_<module>_<what>.py``, so a reader finds
a module's tests by its name and a file named for nothing is caught when it is added or its module
is renamed. A module in a subpackage counts by its path (``agents/serving/worker.py``: ``serving``
or ``serving_worker``), a management command by its name."""
from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
APPS = ("live", "crowd", "research", "agents", "groundtalk_web")
#: test files named for something that is not a module, and why
NOT_A_MODULE = {
    "live/test_model_move_migration.py": "the state-only migrations that moved the models out of games/",
}


def module_names(app: str) -> set[str]:
    names = set()
    for path in (ROOT / app).rglob("*.py"):
        parts = path.relative_to(ROOT / app).with_suffix("").parts
        if "migrations" in parts:
            continue
        if parts[:2] == ("management", "commands"):
            parts = parts[2:]
        parts = tuple(p for p in parts if p != "__init__")
        for n in range(1, len(parts) + 1):
            names.add("_".join(parts[:n]))
    return names


@pytest.mark.parametrize("app", APPS)
def test_every_test_file_of_an_app_is_named_for_one_of_its_modules(app):
    names = module_names(app)
    assert names, app
    stray = []
    for test in sorted((ROOT / "tests" / app).glob("test_*.py")):
        key = f"{app}/{test.name}"
        stem = test.stem[len("test_"):]
        if key in NOT_A_MODULE:
            continue
        if not any(stem == name or stem.startswith(name + "_") for name in names):
            stray.append(key)
    assert not stray, f"test files named for no module of {app}/: {stray}"


def test_the_check_finds_a_stray_name():
    names = module_names("agents")
    assert {"registry", "serving", "serving_worker", "model_worker"} <= names   # a subpackage, a command
    assert not any("transport" == n or "transport".startswith(n + "_") for n in names)
