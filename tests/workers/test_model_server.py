"""The embedded mode's model server (agents/serving/server.py, ``manage.py model_server``) as a real
process on loopback, serving the tiny torch family (tests/workers/tiny_family.py) beside a family
whose checkpoint is missing: ``/health`` says which is ready and names the one that cannot load
(so does its stderr), concurrent requests of one family are answered by one ``act_batch`` call per
``batch_size``, the answers are the model's, the bad requests get clear errors; and the web side
(agents/model_client.py, agents/dispatch.py, agents/liveness.py): a torch agent's turn posted
from the web process's threads is played and the seat records the checkpoint's sha256, a model
that raises lets the fallback act at once, and a family that is not ready shows its batches as
"cannot run" with the reason."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading

import httpx
import pytest
from django.test import override_settings

from agents import for_live, liveness
from agents.checkpoints import file_sha256
from games.registry import get_game
from live.batches import worker_problems
from live.models import MatchEvent, Seat
from live.services import match_apply_action
from tests.conftest import ROOT, free_port, var_log
from tests.support.factories import colors_match
from tests.workers.conftest import reset_registry, torch_entry
from tests.support.waiting import wait_until

PROTOCOL = "groundtalk-agent/1"



@pytest.fixture(scope="module")
def server(tiny_checkpoint, tmp_path_factory):
    """``manage.py model_server --no-supervise`` on a free port with three families: ``tiny`` (a
    5 ms window; the model raises on "explode"), ``tiny_batch`` (batches of 4, a 60 s window: a
    batch closes by filling up, so how requests group does not depend on the machine's speed) and
    ``broken`` (its checkpoint is not there). Yields (url, models file path, stderr path, calls file)."""
    folder = tmp_path_factory.mktemp("model_server")
    checkpoint, _ = tiny_checkpoint
    calls = folder / "batch_calls.txt"
    path = folder / "models.toml"
    path.write_text(textwrap.dedent(
        torch_entry(checkpoint, extra='options = { fail_word = "explode" }')
        + torch_entry(checkpoint, name="tiny_batch_listener", family_key="tiny_batch").replace(
            "batch_size = 8", "batch_size = 4").replace("wait_ms = 5", "wait_ms = 60000").replace(
            'description = "A tiny torch listener (tests)."',
            f'options = {{ calls_file = "{calls}" }}')
        + torch_entry(folder / "missing.pt", name="broken_listener", family_key="broken")))
    port = free_port()
    log = folder / "stderr.log"
    env = {**os.environ, "GT_MODELS_FILE": str(path), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "manage.py", "model_server", "--no-supervise", "--port", str(port)],
                            cwd=ROOT, env=env, stdout=var_log("test-model-server.log"), stderr=open(log, "w"))
    url = f"http://127.0.0.1:{port}"

    def all_tried():
        assert proc.poll() is None, f"the model server exited with {proc.returncode}: {log.read_text()}"
        try:
            families = httpx.get(url + "/health", timeout=2).json()["families"]
        except httpx.HTTPError:
            return None
        return all(f["state"] != "loading" for f in families.values()) and families

    try:
        wait_until(all_tried, 180, "every family loaded or failed")
        yield url, path, log, calls
    finally:
        proc.terminate()
        proc.wait(20)


@pytest.fixture
def registry_of(server, monkeypatch):
    """This process's registry reads the server's models file (the web side's view of it)."""
    monkeypatch.setenv("GT_MODELS_FILE", str(server[1]))
    reset_registry()
    yield
    monkeypatch.delenv("GT_MODELS_FILE")
    reset_registry()


def spoken_view(text: str, seed: int = 3) -> dict:
    """The listener's view after the speaker said ``text`` in a fresh colors match of ``seed``."""
    game = get_game("colors_v1")
    config = dict(game.default_config)
    state = game.rules.initial_state(game.content.generate(seed, config), seed, config)
    state, _ = game.rules.apply(state, "speaker", {"type": "chat", "text": text, "at": 1})
    return json.loads(json.dumps(game.rules.view_for(state, "listener")))


def request(agent: str, view: dict, **over) -> dict:
    return {"protocol": PROTOCOL, "agent": agent, "game_id": "colors_v1", "role": "listener", "version": "tiny-1",
            "view": view, **over}


def test_health_names_the_family_that_cannot_load_and_serves_the_others(server, tiny_checkpoint):
    url, _, log, _ = server
    families = httpx.get(url + "/health").json()["families"]
    assert families["tiny"]["state"] == families["tiny_batch"]["state"] == "ready"
    assert families["tiny"]["model"]["checkpoint_sha256"] == file_sha256(tiny_checkpoint[0])
    assert families["tiny"]["model"]["version"] == "tiny-1"
    broken = families["broken"]
    assert broken["state"] == "error" and broken["agents"] == ["broken_listener"] and broken["model"] is None
    assert "missing.pt cannot be read" in broken["error"]
    assert "family broken (agents broken_listener) cannot load" in log.read_text()
    answer = httpx.post(url + "/act", json=request("broken_listener", spoken_view("red")))
    assert answer.status_code == 503 and "family broken is not ready" in answer.json()["error"]


def test_concurrent_requests_are_answered_in_batches_by_the_model(server, tiny_checkpoint):
    from tests.workers.tiny_family import TinyColorsListener

    url, _, _, calls = server
    views = [spoken_view(text, seed) for seed, text in enumerate(
        ["the red one", "dark blue", "light green", "pink", "the teal", "orange", "purple", "yellow"])]
    answers: dict[int, dict] = {}

    def post(i: int) -> None:
        answers[i] = httpx.post(url + "/act", json=request("tiny_batch_listener", views[i]), timeout=120).json()

    threads = [threading.Thread(target=post, args=(i,)) for i in range(len(views))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    sizes = [int(n) for n in calls.read_text().split()]
    assert sizes[-2:] == [4, 4]   # eight concurrent turns, batch_size 4: two act_batch calls
    expected = TinyColorsListener.load(str(tiny_checkpoint[0]), "cpu").act_batch(views)
    assert [answers[i]["action"] for i in range(len(views))] == expected
    assert all(a["model"]["family_key"] == "tiny_batch" for a in answers.values())
    assert httpx.get(url + "/health").json()["families"]["tiny_batch"]["batches"] == 2


def test_bad_requests_get_clear_errors(server):
    url = server[0]
    view = spoken_view("red")
    assert httpx.post(url + "/act", content=b"{not json").status_code == 400
    bad = httpx.post(url + "/act", json={"agent": "tiny_listener", "view": view})
    assert bad.status_code == 400 and PROTOCOL in bad.json()["error"]
    unknown = httpx.post(url + "/act", json=request("nobody", view))
    assert unknown.status_code == 404 and "tiny_listener" in unknown.json()["error"]
    wrong = httpx.post(url + "/act", json=request("tiny_listener", view, role="speaker"))
    assert wrong.status_code == 400 and "colors_v1/listener" in wrong.json()["error"]
    failed = httpx.post(url + "/act", json=request("tiny_listener", spoken_view("explode")))
    assert failed.status_code == 500 and "the model failed" in failed.json()["error"]
    assert httpx.get(url + "/act").status_code == 405


def test_liveness_follows_the_servers_families(server, registry_of):
    url = server[0]
    with override_settings(GT_AGENT_MODE="inprocess", GT_MODEL_SERVER_URL=url):
        assert liveness.dead_queues(["model.tiny", "model.broken", "agent.colors_literal_listener"]) == ["model.broken"]
        assert "could not load family broken" in for_live.queue_problem("model.broken")
        (problem,) = worker_problems({"listener": "broken_listener"})
        assert problem.startswith("Model agent 'broken_listener' cannot run (queue model.broken)")
        assert "missing.pt cannot be read" in problem
        assert worker_problems({"listener": "tiny_listener"}) == []
    nowhere = f"http://127.0.0.1:{free_port()}"
    with override_settings(GT_AGENT_MODE="inprocess", GT_MODEL_SERVER_URL=nowhere):
        assert liveness.dead_queues(["model.tiny"]) == ["model.tiny"]
        assert "model server is not running" in for_live.queue_problem("model.tiny")


@pytest.mark.django_db(transaction=True)
def test_an_embedded_turn_is_played_by_the_server_and_the_seat_records_the_model(server, registry_of,
                                                                                    tiny_checkpoint):
    with override_settings(GT_AGENT_MODE="inprocess", GT_MODEL_SERVER_URL=server[0]):
        match, seats = colors_match(rounds=3, agents={"listener": "tiny_listener"})
        match_apply_action(match_id=match.id, role="speaker", action={"type": "chat", "text": "the dark red one"},
                           client_action_id="s1")   # the commit wakes the agent: dispatch -> model server
        click = wait_until(lambda: MatchEvent.objects.filter(match=match, type="color_clicked").first(), 60,
                           "clicked by the model")
        assert click.actor == "listener"
        assert not MatchEvent.objects.filter(match=match, type="agent_timed_out").exists()
        record = wait_until(lambda: Seat.objects.get(pk=seats["listener"].pk).agent_model.get("checkpoint_sha256"),
                            30, "recorded")
        assert record == file_sha256(tiny_checkpoint[0])

        # a model that raises: the fallback acts at once and the person is told
        match2, _ = colors_match(rounds=3, agents={"listener": "tiny_listener"})
        match_apply_action(match_id=match2.id, role="speaker", action={"type": "chat", "text": "explode"},
                           client_action_id="s1")
        notice = wait_until(lambda: MatchEvent.objects.filter(match=match2, type="agent_timed_out").first(), 60,
                            "the fallback's notice")
        assert notice.payload["reason"] == "error" and notice.payload["fallback"] == "colors_literal_listener"
        assert MatchEvent.objects.filter(match=match2, type="color_clicked").exists()
