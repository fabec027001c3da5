"""A batch whose agent has no live Celery worker is shown as such and not served
(agents/liveness.py, live/batches.py): a real ``manage.py agent_worker`` on a broker database of
its own, started, killed with SIGKILL (it ages out) and stopped cleanly (it leaves at once)."""
from __future__ import annotations

import signal
import subprocess
import sys
import time

import psutil
import pytest
from django.conf import settings
from django.test import Client, override_settings

from agents import liveness
from crowd import lobby
from live.batches import batch_problems, runnable
from live.models import Batch

from tests.conftest import ROOT, child_env

pytestmark = pytest.mark.django_db(transaction=True)

AGENT = "colors_random_listener"
TTL = 6.0
ENTRY = "/b/live/?assignmentId=A1&hitId=H1&turkSubmitTo=https://workersandbox.mturk.com&workerId="


@pytest.fixture
def broker():
    """A Redis database no other worker of the test session (nor another test process) uses,
    emptied before and after."""
    if settings.GT_AGENT_MODE != "celery":
        pytest.skip("needs REDIS_URL and DATABASE_URL (the full stack)")
    import redis

    from tests.support.redis_db import spare_database

    url = f"{settings.REDIS_URL.rpartition('/')[0]}/{spare_database()}"
    client = redis.Redis.from_url(url)
    client.flushdb()
    with override_settings(CELERY_BROKER_URL=url, GT_WORKER_TTL_S=TTL):
        yield url
    client.flushdb()


def start_worker(url: str) -> subprocess.Popen:
    env = {**child_env(), "CELERY_BROKER_URL": url, "GT_WORKER_TTL_S": str(TTL)}
    return subprocess.Popen([sys.executable, "manage.py", "agent_worker", "--agents", AGENT, "--no-control",
                             "--concurrency", "1"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def wait_until(predicate, timeout: float, what: str) -> float:
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if predicate():
            return time.monotonic() - start
        time.sleep(0.2)
    raise AssertionError(f"not {what} after {timeout} s")


def test_a_batch_follows_its_agents_worker(broker):
    b = Batch.objects.create(slug="live", title="Live", game_id="colors_v1", pairing=Batch.Pairing.HUMAN_AGENT,
                             human_roles=["speaker"], agents={"listener": AGENT}, config={"rounds": 2})
    problems = batch_problems(b)
    assert len(problems) == 1 and "No worker is running for agent 'colors_random_listener'" in problems[0]
    assert batch_problems(b, live=False) == []   # the batch itself is fine (the admin form saves it)
    client = Client()
    page = client.get(ENTRY + "AW1")
    assert page.status_code == 503 and "not available" in page.content.decode()
    assert runnable([b]) == []
    assert "/b/live/" not in client.get("/").content.decode()

    worker = start_worker(broker)
    try:
        took = wait_until(lambda: not batch_problems(b), 60, "served after the worker started")
        print(f"served {took:.1f} s after the worker was started")
        lobby.check_runnable(b)   # no exception
        assert client.get(ENTRY + "AW1").status_code == 302

        # kill -9 of the supervisor and its Celery child: nothing says goodbye; it ages out. The
        # supervisor first: killed after its child, it could start a new child (0.5 s later) on a
        # loaded machine before its own kill arrived, and that child would beat again.
        children = psutil.Process(worker.pid).children(recursive=True)
        worker.kill()
        worker.wait(10)
        for proc in children:
            proc.kill()
        gone = wait_until(lambda: bool(batch_problems(b)), TTL + 10, "refused after the worker was killed")
        assert gone <= TTL + 6   # the last beat was at most 5 s before the kill
        with pytest.raises(lobby.BatchCannotRun):
            lobby.check_runnable(b)
        assert client.get(ENTRY + "AW2").status_code == 503

        # a worker that stops cleanly (SIGTERM) leaves at once
        worker = start_worker(broker)
        wait_until(lambda: not batch_problems(b), 60, "served after the worker started again")
        worker.send_signal(signal.SIGTERM)
        worker.wait(30)
        wait_until(lambda: bool(batch_problems(b)), 3, "refused just after a clean stop")
    finally:
        if worker.poll() is None:
            for proc in psutil.Process(worker.pid).children(recursive=True):
                proc.kill()
            worker.kill()


def test_liveness_is_unknown_not_dead_when_redis_is_away(broker):
    with override_settings(CELERY_BROKER_URL="redis://127.0.0.1:1/0"):
        assert liveness.dead_queues(["agent.x"]) is None
        b = Batch(slug="x", title="x", game_id="colors_v1", pairing=Batch.Pairing.HUMAN_AGENT,
                  human_roles=["speaker"], agents={"listener": AGENT})
        assert batch_problems(b) == []   # the watchdog's fallbacks cover agents that cannot be woken


def test_inprocess_agents_are_always_served():
    with override_settings(GT_AGENT_MODE="inprocess"):
        assert liveness.dead_queues(["agent.anything"]) == []


def test_a_human_human_batch_needs_no_worker(broker):
    b = Batch(slug="hh", title="hh", game_id="colors_v1", pairing=Batch.Pairing.HUMAN_HUMAN,
              agents={"listener": AGENT})
    assert batch_problems(b) == []
    b.on_timeout = Batch.OnTimeout.AGENT
    b.agents = {"listener": AGENT, "speaker": "colors_lexicon_speaker"}
    assert len(batch_problems(b)) == 2   # pairing with an agent after the wait needs its worker
