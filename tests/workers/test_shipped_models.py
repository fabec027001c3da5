"""The project's models file as shipped (models/models.toml, issue 25 item 1): every neural agent
whose checkpoint ships is declared on, its checkpoint is committed (small), pinned by its sha256,
loads with its family and plays a legal turn of a real game through the rules; each game family has
a demo batch that seats one of them."""
from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path

import pytest

from agents.model_config import parse

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "models" / "models.toml"
ENTRIES = [e for e in tomllib.loads(MODELS.read_text())["agent"] if e.get("kind", "torch") == "torch"]
MAX_BYTES = 1_000_000        # a committed checkpoint stays under 1 MB
# the Colors in Context dev part the people-trained colour agents were trained on (../shared)
CIC_SHA256 = "a46c3768098623601a29dc8b81a41482d51ad5a527ef37058c8653402562ef14"


def test_every_neural_agent_of_the_project_is_declared_on():
    names = {e["name"] for e in ENTRIES}
    assert {"colors_neural_listener", "colors_neural_speaker", "colors_neural_pragmatic_listener",
            "colors_neural_speaker_cic", "colors_neural_listener_generated", "codraw_neural_drawer", "codraw_neural_teller", "guesswhich_neural_alice",
            "guesswhich_neural_qbot", "visdial_neural_alice"} <= names
    configs = parse(MODELS)
    assert {c.name for c in configs if c.kind == "torch"} == names
    # one family_key per model: agents sharing a key share one checkpoint, family and options
    by_key = {}
    for cfg in configs:
        by_key.setdefault(cfg.family_key, set()).add((cfg.family, cfg.checkpoint, repr(cfg.options)))
    assert all(len(models) == 1 for models in by_key.values()), by_key


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["name"] for e in ENTRIES])
def test_the_checkpoint_is_committed_small_and_pinned(entry):
    from agents.checkpoints import file_sha256

    cfg = next(c for c in parse(MODELS) if c.name == entry["name"])
    path = Path(cfg.checkpoint)
    assert path.is_file(), f"{cfg.name}: no checkpoint at {path}"
    assert path.stat().st_size < MAX_BYTES, f"{cfg.name}: {path.stat().st_size} bytes"
    assert cfg.sha256, f"{cfg.name}: the shipped file pins every checkpoint by its sha256"
    assert file_sha256(path) == cfg.sha256, f"{cfg.name}: {path} is not the pinned checkpoint"
    if (ROOT / ".git").exists():    # a clone: the checkpoint is in git, not only on this disk
        rel = path.resolve().relative_to(ROOT)
        tracked = subprocess.run(["git", "ls-files", "--error-unmatch", str(rel)], cwd=ROOT, capture_output=True)
        assert tracked.returncode == 0, f"{rel} is not committed (see .gitignore's exceptions)"
        ignored = subprocess.run(["git", "check-ignore", "--no-index", "-q", str(rel)], cwd=ROOT)
        assert ignored.returncode == 1, f"{rel} is ignored: a retrained file would not be seen by git status"


def first_turn(cfg, agent, seed: int = 3) -> dict:
    """Play a short match of ``cfg``'s game through the pure rules, the game's default rule agents in
    the other seats, until ``agent`` (in ``cfg.role``) has made one move; the rules check it."""
    from games.base import SYSTEM
    from games.registry import get_game
    from games.testing import default_agents, small_config

    spec = get_game(cfg.game_id)
    rules, others = spec.rules, default_agents(spec)
    config = small_config(spec, 3)
    state = rules.initial_state(spec.content.generate(seed, config), seed, config)
    clock = 1_000_000
    for _ in range(200):
        assert not rules.is_over(state), f"{cfg.name} never acted in a whole match"
        for role in rules.to_act(state):
            if role == SYSTEM:
                continue
            view = rules.view_for(state, role)
            action = agent.act(view) if role == cfg.role else others[role].act(view)
            if action is None:
                continue
            clock += 1500
            state, _ = rules.apply(state, role, {**action, "at": clock})    # IllegalAction if it is not legal
            if role == cfg.role:
                return action
            break
    raise AssertionError(f"{cfg.name} did not act in 200 moves")


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["name"] for e in ENTRIES])
def test_each_shipped_model_loads_and_plays_a_legal_turn(entry):
    from agents.serving.family import load_family

    cfg = next(c for c in parse(MODELS) if c.name == entry["name"])
    family = load_family(cfg)     # as the worker does: the family's load() after the sha256 check

    class Agent:   # agents.serving.family.LocalModelAgent, without its per-process cache by family_key
        def act(self, view):
            return family.instance.act_batch([view])[0]

    action = first_turn(cfg, Agent())
    assert isinstance(action, dict) and action.get("type")
    record = family.seat_record()
    assert record["checkpoint_sha256"] == cfg.sha256 and record["version"] == cfg.version
    if "_cic" in Path(cfg.checkpoint).name:    # trained on people's rounds: the data's hash goes on the seat
        assert record["data_sha256"] == CIC_SHA256
    else:
        assert "data_sha256" not in record


def test_each_game_family_has_a_demo_batch_with_a_neural_agent():
    from live.management.commands.gt_demo import demo_batches

    shipped = {e["name"] for e in ENTRIES}
    seated = {b["slug"]: set(b["agents"].values()) for b in demo_batches() if set(b["agents"].values()) & shipped}
    assert {"colors-speak-to-neural", "colors-listen-to-neural", "codraw-tell-to-neural",
            "guesswhich-ask-neural"} <= set(seated)
    assert seated["colors-speak-to-neural"] == {"colors_neural_listener"}
    assert seated["codraw-tell-to-neural"] == {"codraw_neural_drawer"}
    assert seated["guesswhich-ask-neural"] == {"guesswhich_neural_alice"}
