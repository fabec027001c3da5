"""The house has no circle between apps: the import contracts of pyproject.toml
(``[tool.importlinter]``, docs/architecture.md "Dependencies between apps") hold, checked by
import-linter over every import of the product's packages, those inside functions included."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("games", "live", "crowd", "research", "agents", "clevr", "groundtalk_web")
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=root, env=env, capture_output=True, text=True,
                          timeout=300)


def test_the_import_contracts_hold():
    run = lint_imports(ROOT)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 broken" in run.stdout


def test_a_circle_between_apps_or_inside_one_breaks_a_contract(tmp_path):
    """The contracts are not vacuous: a copy of the product with live importing the agents
    (the circle issue 22 removed, here inside a function) and two clevr modules importing each
    other fails them."""
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns(
            "static", "templates", "__pycache__", "*.png", "*.json", "*.js", "*.css", "*.svg", "*.pt"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    control = lint_imports(tmp_path)
    assert control.returncode == 0, control.stdout + control.stderr   # the copy alone keeps them
    (tmp_path / "live" / "planted_wake.py").write_text(
        "def wake(match):\n    from agents.dispatch import wake_agents\n    wake_agents(match)\n")
    (tmp_path / "clevr" / "planted_a.py").write_text("from clevr import planted_b\n")
    (tmp_path / "clevr" / "planted_b.py").write_text("from clevr import planted_a\n")
    run = lint_imports(tmp_path)
    out = run.stdout + run.stderr
    assert run.returncode != 0, out
    assert "live is not allowed to import agents" in out and "live.planted_wake -> agents.dispatch" in out, out
    assert "No cycles are allowed in clevr" in out, out
