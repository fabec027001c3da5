"""The web process never imports torch, even with torch model agents configured: the ASGI app,
every URL's view, the registry with the models file, a seat's record, the watchdog and the
embedded mode's dispatch (which posts a torch agent's turn to the model server, agents/model_client.py).
Nor any module of a game's worker-only ``neural`` package, nor what is imported on first use because
every Django process paid for it at start (docs/testing.md, "Where the time goes"): scipy.stats (the
statistics), colour-science with matplotlib (a colour computation), the openai library (an LLM agent
built) and daphne/twisted (not an app)."""
from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT
from tests.workers.conftest import torch_entry

PROBE = r"""
import os, sys, uuid
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "groundtalk_web.settings")
import groundtalk_web.asgi                       # the server's entry point (sets Django up)
from django.urls import get_resolver
def walk(patterns):
    for p in patterns:
        if hasattr(p, "url_patterns"):
            walk(p.url_patterns)
        else:
            p.callback                           # imports every view module
walk(get_resolver().url_patterns)
from agents.registry import all_agents, get_agent_spec
assert get_agent_spec("tiny_listener").queue_name == "model.tiny"
get_agent_spec("tiny_listener").model.seat_record()
import live.watchdog, live.batches, agents.dispatch, research.exports
from agents.dispatch import wake_agents
wake_agents(match_id=uuid.uuid4(), seq=1, roles=["listener"], agent_seats={"listener": "tiny_listener"})
from agents import liveness
assert liveness.dead_queues(["model.tiny"]) == ["model.tiny"]   # embedded: no model worker
print("torch imported:", "torch" in sys.modules)
print("neural modules:", sorted(m for m in sys.modules if m.startswith("games.") and ".neural" in m))
print("scipy.stats imported:", "scipy.stats" in sys.modules)
print("first-use modules:", sorted(m for m in ("colour", "matplotlib", "openai", "daphne", "twisted") if m in sys.modules))
from games.colors import content
content.generate(1, {"rounds": 3})               # a colour match's rounds: colour-science now
print("after a colour match:", sorted(m for m in ("colour",) if m in sys.modules))
"""


def test_the_web_process_does_not_import_torch(tmp_path):
    path = tmp_path / "models.toml"
    path.write_text(torch_entry("tiny.pt"))
    env = {"PATH": "/usr/bin:/bin", "GT_MODELS_FILE": str(path), "GT_AGENT_MODE": "inprocess",
           "SQLITE_PATH": str(tmp_path / "db.sqlite3")}
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert "torch imported: False" in done.stdout
    assert "neural modules: []" in done.stdout           # games/<game>/neural/ is worker-only
    # nor scipy.stats (about 1.3 s of CPU at every Django process's start), imported on first use
    # by the statistics (games/stats.py, research/arms.py, clevr/metrics.py)
    assert "scipy.stats imported: False" in done.stdout, done.stdout
    # nor colour-science (matplotlib, scipy.interpolate: about 1.5 s), openai (about 0.7 s), daphne
    # (twisted: about 0.4 s), until a colour computation or an LLM agent needs them
    assert "first-use modules: []" in done.stdout, done.stdout
    assert "after a colour match: ['colour']" in done.stdout, done.stdout
