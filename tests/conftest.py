"""Shared fixtures: a real uvicorn server and a real Celery worker, both on the test database.

The suite runs against PostgreSQL and Redis (see test.sh). Tests that talk to a server process
or a worker use ``transactional_db`` so what they write is committed and visible to it.
"""
from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from xdist.scheduler import LoadFileScheduling

from tests.tiny_models import small_alice, tiny_listener, tiny_speaker  # noqa: F401 (session fixtures)

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def var_log(name: str):
    """A log file under var/ for a process this test process starts, or DEVNULL without var/; in an
    xdist run the worker's id is in the name (``test-server-gw0.log``): each worker starts its own."""
    if not name or not (ROOT / "var").is_dir():
        return subprocess.DEVNULL
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker:
        stem, dot, ext = name.rpartition(".")
        name = f"{stem}-{worker}.{ext}" if dot else f"{name}-{worker}"
    return open(ROOT / "var" / name, "w")


def child_env() -> dict:
    """Environment for a child process that must use the test database pytest-django created."""
    from django.db import connection

    env = dict(os.environ)
    name = connection.settings_dict["NAME"]
    url = env.get("DATABASE_URL", "")
    if url:
        env["DATABASE_URL"] = url.rsplit("/", 1)[0] + "/" + name
    else:
        env["SQLITE_PATH"] = name
    env["PYTHONUNBUFFERED"] = "1"
    return env


def wait_for_port(port: int, proc: subprocess.Popen, timeout: float = 120) -> None:
    """Until the server listens; on a loaded machine (stress runs) uvicorn took over 30 s to start."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"nothing listening on {port} after {timeout}s")


@contextlib.contextmanager
def running_server(env: dict, log_name: str = ""):
    """uvicorn serving the ASGI app (HTTP + websockets) with ``env``; yields its base URL."""
    port = free_port()
    log = var_log(log_name)
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "groundtalk_web.asgi:application", "--host", "127.0.0.1",
         "--port", str(port), "--log-level", "warning", "--ws-max-size", "65536",
         "--ws-per-message-deflate", "false"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_for_port(port, proc)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture(scope="session")
def live_server_url(django_db_setup, django_db_blocker):
    """uvicorn on the test database."""
    with running_server(child_env(), "test-server.log") as url:
        yield url


@pytest.fixture(scope="session")
def celery_worker_process(django_db_setup, django_db_blocker):
    """A real Celery worker (``manage.py agent_worker``) consuming every CPU agent's queue."""
    from django.conf import settings

    if settings.GT_AGENT_MODE != "celery":
        pytest.skip("needs REDIS_URL and DATABASE_URL (the full stack)")
    from groundtalk_web.celery import app

    env = child_env()
    log = var_log("test-worker.log")
    app.control.purge()
    proc = subprocess.Popen([sys.executable, "manage.py", "agent_worker", "--concurrency", "2", "--loglevel", "info"],
                            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    # 180 s as for a model worker (tests/browser/model_stack.py): on a loaded machine (the suite's
    # parallel workers, other runs) the worker's start and warm-up took over 60 s
    deadline = time.time() + 180
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"celery worker exited with {proc.returncode}")
        replies = app.control.ping(timeout=0.5)
        if replies:
            break
    else:
        proc.terminate()
        raise RuntimeError("celery worker did not answer a ping in 180 s")
    try:
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture(scope="session", autouse=True)
def _close_stray_connections(django_db_setup, django_db_blocker):
    """Thread-pool connections (consumers, agents) outlive their tests; end them so the test
    database can be dropped cleanly at the end of the session."""
    yield
    from django.db import connection

    from live import pg_async
    pg_async.close_all()
    if connection.vendor != "postgresql" or not str(connection.settings_dict["NAME"]).startswith("test_"):
        return
    with django_db_blocker.unblock():
        with connection.cursor() as cur:
            cur.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                        "WHERE datname = current_database() AND pid <> pg_backend_pid()")


# Database connections of threads that ended. An in-process consumer test runs its database calls
# on its event loop's executor threads (groundtalk_web/asgi.py sets one of GT_DB_THREADS per loop,
# and each test has a loop of its own); each thread opens a Django connection, kept open
# (CONN_MAX_AGE). When the loop ends its threads end, but their connections close only when the
# cycle collector frees them, which the test process's tuned collector (groundtalk_web/gc_tuning.py)
# rarely runs: one xdist worker held 44 such connections after a few minutes of tests/live, and
# the suite's workers, servers and Celery workers together ran PostgreSQL (max_connections 100)
# out of connections. So every connection made in this process is noted with its thread, and
# after each test those of threads that have ended are closed.
_thread_connections: list = []   # (weak reference to the DatabaseWrapper, its thread)


def _note_connection(sender, connection, **kwargs):
    import threading
    import weakref

    if threading.current_thread() is not threading.main_thread():
        _thread_connections.append((weakref.ref(connection), threading.current_thread()))


def close_connections_of_ended_threads() -> int:
    """Close the connections of this process's threads that have ended; returns how many."""
    closed, keep = 0, []
    for ref, thread in _thread_connections:
        wrapper = ref()
        if wrapper is None:
            continue
        if thread.is_alive():
            keep.append((ref, thread))
            continue
        raw, wrapper.connection = wrapper.connection, None
        if raw is not None and not getattr(raw, "closed", False):
            raw.close()   # the driver's own close: the wrapper belongs to a thread that is gone
            closed += 1
    _thread_connections[:] = keep
    return closed


@pytest.fixture(autouse=True)
def _close_ended_threads_connections():
    close_connections_of_ended_threads()
    yield
    close_connections_of_ended_threads()


def _retrying_fixture_teardown(original):
    """Flush the test database, retrying when a server or worker process (still finishing an agent
    turn of the test that just ended) makes PostgreSQL pick the TRUNCATE as a deadlock victim."""
    from django.core.management.base import CommandError
    from django.db import OperationalError

    def teardown(self):
        for attempt in range(5):
            try:
                return original(self)
            except (CommandError, OperationalError):
                if attempt == 4:
                    raise
                time.sleep(0.5 * (attempt + 1))

    return teardown


def pytest_configure(config):
    from django.db.backends.signals import connection_created
    from django.test import TransactionTestCase

    connection_created.connect(_note_connection, weak=False)

    TransactionTestCase._fixture_teardown = _retrying_fixture_teardown(TransactionTestCase._fixture_teardown)


@pytest.fixture
def agent_queues_served():
    """Heartbeats for every agent queue, written by the same thread a Celery worker runs
    (agents/liveness.py), for tests of the lobby that pair with agents without running a worker:
    their batches are runnable as on a deployment whose workers are up. The thread forgets its
    heartbeats at the end (a real worker's stay)."""
    from django.conf import settings

    if settings.GT_AGENT_MODE != "celery":
        yield
        return
    from agents import liveness
    from agents.registry import all_agents

    beat = liveness.Heartbeat(sorted({s.queue_name for s in all_agents().values()}), f"pytest:{os.getpid()}")
    liveness.beat(liveness._client(), beat.queues, beat.hostname)   # before the first check
    beat.start()
    try:
        yield
    finally:
        beat.stop()


# In an xdist run (test.sh: ``--dist loadfile --no-loadscope-reorder``) each worker takes whole test
# files in the order they were collected; the files that take longest (training, whole stacks of
# processes, browsers; measured in a full run, docs/testing.md) go first, so that none of them
# starts near the end and then runs alone. The first part of a test's path that matches ranks it.
SLOW_FIRST = ("tests/bench/test_model_batching.py", "tests/games/codraw/neural/", "tests/faults/", "tests/browser/",
              "/neural/", "tests/workers/", "tests/agents/", "tests/bench/", "tests/groundtalk_web/test_urls.py",
              "tests/groundtalk_web/test_settings.py", "tests/groundtalk_web/test_gc_tuning.py",
              "tests/research/test_simulate.py", "tests/clevr/test_qbot.py", "tests/test_game_contract.py",
              "tests/games/shapes/", "tests/games/codraw/test_agents_teller_words.py", "tests/games/test_actions.py",
              "tests/crowd/test_presence.py", "tests/crowd/test_staff.py", "tests/clevr/test_embedding.py")


# Test files that share a session fixture too costly to start twice run on ONE xdist worker: each
# group is one work unit of ``--dist loadfile`` (SameWorkerScheduling), placed where its first file
# comes in the order above. "neural-stack": the neural browser tests' model process and server
# (tests/browser/model_stack.py, started once per worker that runs them).
SAME_WORKER = {
    "neural-stack": ("tests/browser/colors/test_neural_agent_browser.py",
                     "tests/browser/codraw/test_codraw_neural_drawer_browser.py",
                     "tests/browser/codraw/test_codraw_neural_teller_browser.py",
                     "tests/browser/guesswhich/test_guesswhich_neural_alice_browser.py",
                     "tests/browser/guesswhich/test_guesswhich_neural_qbot_browser.py"),
}


class SameWorkerScheduling(LoadFileScheduling):
    """xdist's ``--dist loadfile`` (a file's tests on one worker, the units in collection order
    with ``--no-loadscope-reorder``), with each ``SAME_WORKER`` group's files as one unit."""

    def _split_scope(self, nodeid: str) -> str:
        path = super()._split_scope(nodeid)
        return next((group for group, files in SAME_WORKER.items() if path in files), path)


@pytest.hookimpl(optionalhook=True)   # xdist's hook: unknown with ``-p no:xdist``
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadfile`` keeps each ``SAME_WORKER`` group on one worker; other modes are xdist's."""
    if config.getvalue("dist") == "loadfile":
        return SameWorkerScheduling(config, log)
    return None


# Tests that need the machine to themselves: ./test.sh runs them in a phase of their own, in one
# process, after the parallel phase (docs/testing.md, "In parallel"). Marked ``serial`` here, by a
# marker or a file, or by a test's own ``pytest.mark.serial``:
# * the fault tests (``faults``): each starts a whole stack of processes and has marks (a fallback
#   within its timeout plus the watchdog's period, 200 arrivals paired within their polls) that a
#   machine loaded by the other workers missed;
# * the rate limiter's tests, whose buckets refill with the clock (a 60-per-minute limit over six
#   requests, a 0.5 s pool timeout for 200 checks at once, a retry-after within 0.1 s): under the
#   parallel phase's load on 2 cores the requests were slow enough for the buckets to refill;
# * the two-server presence tests (``tests/crowd/test_presence.py``, their own mark): two present
#   people paired in under 2 s, a seat that never connects aborted within its grace and a sweep.
SERIAL_MARKERS = ("faults",)
SERIAL_FILES = ("tests/live/test_ratelimit.py", "tests/live/test_ratelimit_http.py")


@pytest.hookimpl(tryfirst=True)   # before ``-m`` selects
def pytest_collection_modifyitems(config, items):
    for item in items:
        if (any(item.get_closest_marker(name) for name in SERIAL_MARKERS)
                or item.nodeid.split("::", 1)[0] in SERIAL_FILES):
            item.add_marker(pytest.mark.serial)
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return

    def rank(item) -> int:
        path = item.nodeid.split("::", 1)[0]
        return next((i for i, part in enumerate(SLOW_FIRST) if part in path), len(SLOW_FIRST))

    items.sort(key=rank)   # stable: a file's tests keep their order
