"""The neural GuessWhich agents as the researcher runs them: declared in a models file, played by
``manage.py simulate`` through the same match service as people (stored, replayable matches; the
seat records the checkpoint), and compared with the grounded ALICE by ``manage.py guesswhich_report``
(mean rank and MRR with bootstrap CIs per ALICE version, Mann-Whitney between two)."""
from __future__ import annotations

import hashlib
import io
import textwrap

import pytest
from django.core.management import call_command

from live.models import Match, Seat
from tests.workers.conftest import reset_registry

pytestmark = pytest.mark.django_db

CONFIG = '{"rounds": 3, "pool_size": 6}'


@pytest.fixture
def checkpoint(small_alice):
    """The session's small neural ALICE (tests/tiny_models.py)."""
    return small_alice[1]


@pytest.fixture
def declared(tmp_path, monkeypatch, checkpoint):
    """A models file declaring the neural ALICE and the neural QBot over the checkpoint."""
    path = tmp_path / "models.toml"
    path.write_text(textwrap.dedent(f"""
        [[agent]]
        name = "guesswhich_neural_alice"
        game_id = "guesswhich_v1"
        role = "answerer"
        family = "games.guesswhich.neural.agents:NeuralAliceAgent"
        family_key = "guesswhich_neural_alice"
        checkpoint = "{checkpoint}"
        timeout_s = 30
        fallback = "alice_exact"
        version = "alice-sim"

        [[agent]]
        name = "guesswhich_neural_qbot"
        game_id = "guesswhich_v1"
        role = "questioner"
        family = "games.guesswhich.neural.qbot:NeuralQBot"
        family_key = "guesswhich_neural_qbot"
        checkpoint = "{checkpoint}"
        timeout_s = 30
        fallback = "qbot"
        version = "qbot-sim"
        """))
    monkeypatch.setenv("GT_MODELS_FILE", str(path))
    reset_registry()
    yield hashlib.sha256(checkpoint.read_bytes()).hexdigest()
    monkeypatch.delenv("GT_MODELS_FILE")
    reset_registry()


def simulate(*seats: str) -> None:
    args = ["simulate", "guesswhich", "--matches", "4", "--config", CONFIG, "--batch", "neural-vs-grounded"]
    for seat in seats:
        args += ["--seat", seat]
    call_command(*args, stdout=io.StringIO())


def test_simulate_then_guesswhich_report_compares_the_neural_and_grounded_alice(declared):
    simulate("questioner=qbot", "answerer=guesswhich_neural_alice")
    simulate("questioner=qbot", "answerer=alice_exact")
    matches = Match.objects.filter(batch__slug="neural-vs-grounded")
    assert matches.count() == 8 and all(m.status == Match.Status.FINISHED for m in matches)
    seats = Seat.objects.filter(role="answerer", agent_name="guesswhich_neural_alice")
    assert seats.count() == 4 and all(s.agent_model["checkpoint_sha256"] == declared for s in seats)
    out = io.StringIO()
    call_command("guesswhich_report", "--batch", "neural-vs-grounded", "--compare", "alice_exact",
                 "guesswhich_neural_alice", stdout=out)
    text = out.getvalue()
    assert "== guesswhich_neural_alice" in text and "== alice_exact" in text
    assert "mean rank" in text.lower() and "MRR" in text
    assert "Mann-Whitney U, ranks of alice_exact vs guesswhich_neural_alice: " in text and "p_value" in text


def test_simulate_plays_the_neural_qbot_as_the_questioner(declared):
    simulate("questioner=guesswhich_neural_qbot", "answerer=alice_exact")
    matches = Match.objects.filter(batch__slug="neural-vs-grounded")
    assert matches.count() == 4 and all(m.status == Match.Status.FINISHED and m.outcome["found"] for m in matches)
    seats = Seat.objects.filter(role="questioner", agent_name="guesswhich_neural_qbot")
    assert seats.count() == 4 and all(s.agent_model["checkpoint_sha256"] == declared for s in seats)
    assert all(len(m.state["dialog"]) == 3 for m in matches)
