"""The model worker (``manage.py model_worker``, agents/serving/worker.py) as a real process on
PostgreSQL and Redis: it warms up before it serves (its queue has a heartbeat only then), several
concurrent matches' turns run as ONE act_batch call of a real torch model (the worker's batch log
and the model's own call log agree), each answer lands through the match service, the seats record
the checkpoint's sha256 and version and the exports carry them, and a model that raises lets the
fallback act at once with a notice for the person."""
from __future__ import annotations

import hashlib
import io
import json
import subprocess
import sys

import pytest
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError

from agents import liveness
from research.exports import run_export
from live.models import Match, MatchEvent, Seat
from live.services import match_apply_action

from tests.conftest import ROOT, child_env
from tests.support.factories import colors_match
from tests.workers.conftest import torch_entry
from tests.support.waiting import stop_process, wait_until

pytestmark = [pytest.mark.celery, pytest.mark.django_db(transaction=True)]
N_MATCHES = 6



def read_lines(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


@pytest.fixture
def worker(models_file, tiny_checkpoint, tmp_path):
    """A model worker for the family ``tiny`` (batch_size = N_MATCHES, a long window so a batch
    closes when it is full), with its timings log and the model's call log."""
    if settings.GT_AGENT_MODE != "celery":
        pytest.skip("needs REDIS_URL and DATABASE_URL (the full stack)")
    checkpoint, _ = tiny_checkpoint
    calls, timings = tmp_path / "calls.txt", tmp_path / "timings.jsonl"
    path = models_file(torch_entry(checkpoint, extra=f'options = {{ calls_file = "{calls}", fail_word = "boom" }}')
                       .replace("batch_size = 8", f"batch_size = {N_MATCHES}").replace("wait_ms = 5", "wait_ms = 10000"))
    from groundtalk_web.celery import app

    with app.connection_for_write() as conn:   # no turn left over from an earlier run
        conn.default_channel.queue_purge("model.tiny")
    env = {**child_env(), "GT_MODELS_FILE": str(path)}
    log = open(ROOT / "var" / "test-model-worker.log", "w") if (ROOT / "var").is_dir() else subprocess.DEVNULL
    proc = subprocess.Popen([sys.executable, "manage.py", "model_worker", "--family", "tiny", "--no-supervise",
                             "--timings", str(timings), "--loglevel", "info"],
                            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        yield proc, calls, timings
    finally:
        stop_process(proc)


def test_warm_up_then_one_forward_pass_for_concurrent_matches(worker, tiny_checkpoint):
    proc, calls, timings = worker
    checkpoint, accuracy = tiny_checkpoint
    assert accuracy["after"] > 0.5 > accuracy["before"] - 0.2   # trained: well above chance (1/3)
    sha = hashlib.sha256(checkpoint.read_bytes()).hexdigest()

    # warm-up first: the queue is alive only once the worker logged "ready" after its warm-up pass
    # (this worker's own "ready" line too: a heartbeat may still be an earlier worker's, killed
    # before it could take its beat back)
    wait_until(lambda: read_lines(timings) and liveness.dead_queues(["model.tiny"]) == [], 120,
               "heartbeating on model.tiny", proc)
    ready = read_lines(timings)[0]
    assert ready["event"] == "ready" and ready["sha256"] == sha and ready["warmup_s"] >= 0
    assert calls.read_text().split() == ["1"]   # the warm-up pass: act_batch on a view the game produced

    # N matches whose listener is the model; each person (speaker) speaks, so N turns are due at once
    matches = [colors_match(rounds=2, seed=100 + i, agents={"listener": "tiny_listener"})[0] for i in range(N_MATCHES)]
    for i, match in enumerate(matches):
        match_apply_action(match_id=match.id, role="speaker", action={"type": "chat", "text": "the light blue one"},
                           client_action_id=f"s{i}")

    def clicked():
        return MatchEvent.objects.filter(match__in=matches, type="color_clicked").count() == N_MATCHES

    wait_until(clicked, 60, "answered in every match", proc)
    # the worker logs a batch after its commit: wait for that line too
    wait_until(lambda: any(line["event"] == "batch" for line in read_lines(timings)), 30, "the batch logged", proc)
    lines = read_lines(timings)
    batches = [line for line in lines if line["event"] == "batch"]
    assert [b["size"] for b in batches] == [N_MATCHES]   # one act_batch call for the six matches
    assert calls.read_text().split() == ["1", str(N_MATCHES)]   # the model saw the same: one call of six views
    turns = [line for line in lines if line["event"] == "turn"]
    assert sorted(t["match"] for t in turns) == sorted(str(m.id) for m in matches)
    assert {t["result"] for t in turns} == {"acted"} and {t["batch_size"] for t in turns} == {N_MATCHES}
    for t in turns:   # per-turn timings a benchmark can read: model time and the rest
        assert {"queue_ms", "window_ms", "read_ms", "model_ms", "submit_ms", "total_ms", "overhead_ms"} <= set(t)
        assert t["overhead_ms"] == pytest.approx(t["total_ms"] - t["model_ms"], abs=0.01)
    for match in matches:   # each answer went through the service: the round ended, the next began
        match.refresh_from_db()
        assert match.state["round"] == 1 and match.seq > 0
        click = MatchEvent.objects.get(match=match, type="color_clicked")
        assert click.actor == "listener" and click.client_action_id == f"agent:listener:{click.seq - 1}"
        seat = Seat.objects.get(match=match, role="listener")
        assert seat.agent_model["checkpoint_sha256"] == sha and seat.agent_model["version"] == "tiny-1"
        assert seat.agent_model["family"] == "tests.workers.tiny_family:TinyColorsListener"
    assert not MatchEvent.objects.filter(match__in=matches, type="agent_timed_out").exists()

    # the exports carry the hash and the version (jsonl: every game; the game formats: see test_checkpoint)
    out = io.StringIO()
    run_export("jsonl", out, status="all")
    records = {r["match_id"]: r for r in map(json.loads, out.getvalue().splitlines())}
    for match in matches:
        model = records[str(match.id)]["seats"]["listener"]["model"]
        assert model["checkpoint_sha256"] == sha and model["version"] == "tiny-1"
        assert records[str(match.id)]["seats"]["speaker"]["model"] is None

    # a model that raises: the fallback acts at once (no timeout), and the person is told
    broken = matches[0]
    broken.refresh_from_db()
    # round 2: say the word the test model fails on
    match_apply_action(match_id=broken.id, role="speaker", action={"type": "chat", "text": "boom"},
                       client_action_id="boom")
    wait_until(lambda: MatchEvent.objects.filter(match=broken, type="agent_timed_out").exists(), 30,
               "a fallback after the model's error", proc)
    notice = MatchEvent.objects.get(match=broken, type="agent_timed_out")
    assert notice.payload["reason"] == "error" and "had a problem" in notice.payload["message"]
    follow = MatchEvent.objects.get(match=broken, seq=notice.seq + 1)
    assert follow.type == "color_clicked" and follow.actor == "listener"
    assert Match.objects.get(pk=broken.pk).status == Match.Status.FINISHED   # two rounds played
    failed = [line for line in read_lines(timings) if line["event"] == "batch" and line["error"]]
    assert len(failed) == 1 and "fails on 'boom'" in failed[0]["error"]
    assert proc.poll() is None   # the worker goes on serving


def test_a_missing_checkpoint_is_a_start_up_error(models_file, tmp_path):
    path = models_file(torch_entry(tmp_path / "nothing.pt"))
    env = {**child_env(), "GT_MODELS_FILE": str(path)}
    done = subprocess.run([sys.executable, "manage.py", "model_worker", "--family", "tiny"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=180)
    assert done.returncode != 0
    assert "checkpoint" in done.stderr and "nothing.pt cannot be read" in done.stderr
    assert "not restarting" in done.stderr   # the supervisor does not loop on a configuration error
    # an unknown family: the command's check before any supervisor or worker starts (in this process;
    # manage.py turns the CommandError into its message on stderr and exit status 1)
    with pytest.raises(CommandError, match=r"No torch agent of family 'other' in .*; families: tiny\."):
        call_command("model_worker", "--family", "other")


def test_the_neural_color_listener_serves_through_the_worker(models_file, tmp_path, request):
    """The project's own neural literal listener (games/colors/neural/agents.py, issue 13 item 5),
    the session's tiny one (tests/tiny_models.py), named only in the models file: warm-up, one
    batch for three matches."""
    if settings.GT_AGENT_MODE != "celery":
        pytest.skip("needs REDIS_URL and DATABASE_URL (the full stack)")
    checkpoint = request.getfixturevalue("tiny_listener")[1]
    path = models_file(torch_entry(checkpoint, name="neural_listener", family_key="neural")
                       .replace("tests.workers.tiny_family:TinyColorsListener",
                                "games.colors.neural.agents:NeuralLiteralListener")
                       .replace("batch_size = 8", "batch_size = 3").replace("wait_ms = 5", "wait_ms = 10000"))
    from groundtalk_web.celery import app

    with app.connection_for_write() as conn:
        conn.default_channel.queue_purge("model.neural")
    timings = tmp_path / "timings.jsonl"
    proc = subprocess.Popen([sys.executable, "manage.py", "model_worker", "--family", "neural", "--no-supervise",
                             "--timings", str(timings)], cwd=ROOT, env={**child_env(), "GT_MODELS_FILE": str(path)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: read_lines(timings) and liveness.dead_queues(["model.neural"]) == [], 120,
                   "heartbeating on model.neural", proc)
        assert read_lines(timings)[0]["event"] == "ready"
        matches = [colors_match(rounds=2, seed=200 + i, agents={"listener": "neural_listener"})[0] for i in range(3)]
        for i, match in enumerate(matches):
            match_apply_action(match_id=match.id, role="speaker", action={"type": "chat", "text": "the dark green one"},
                               client_action_id=f"n{i}")
        wait_until(lambda: MatchEvent.objects.filter(match__in=matches, type="color_clicked").count() == 3, 60,
                   "answered in the three matches", proc)
        wait_until(lambda: any(b["event"] == "batch" for b in read_lines(timings)), 30, "the batch logged", proc)
        assert [b["size"] for b in read_lines(timings) if b["event"] == "batch"] == [3]
        sha = hashlib.sha256(checkpoint.read_bytes()).hexdigest()
        assert {s.agent_model["checkpoint_sha256"] for s in Seat.objects.filter(match__in=matches, role="listener")} \
            == {sha}
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
