"""The fifth game (tests/fixtures/shapes_game) registered for its tests, and the processes that
serve it: a uvicorn server and an agent worker started with ``GT_GAME_PACKAGES`` (games/registry.py),
the one hook a game outside the product needs."""
from __future__ import annotations

import subprocess
import sys
import time

import pytest

from games import registry
from tests.conftest import ROOT, child_env, running_server

PACKAGE = "tests.fixtures.shapes_game"
GAME_ID = "shapes_v1"
ENV = {"GT_GAME_PACKAGES": PACKAGE}


@pytest.fixture(scope="module", autouse=True)
def shapes_game():
    """The game registered in this test process for the module (GAMES and the agents' registry);
    removed afterwards, so other tests see the product's games only."""
    from agents.registry import all_agents

    had = GAME_ID in registry.GAMES
    spec = registry.register(PACKAGE)
    all_agents.cache_clear()
    yield spec
    if not had:
        del registry.GAMES[GAME_ID]
        registry.GAME_PACKAGES.remove(PACKAGE)
    all_agents.cache_clear()


@pytest.fixture(scope="module")
def shapes_server(django_db_setup, django_db_blocker):
    """uvicorn on the test database, serving the fifth game."""
    with running_server({**child_env(), **ENV}, "test-shapes-server.log") as url:
        yield url


@pytest.fixture(scope="module")
def shapes_worker(django_db_setup, django_db_blocker, shapes_game):
    """A real agent worker (``manage.py agent_worker``) for the fifth game's agents, ready when its
    heartbeat says their queues are served (agents/liveness.py: what the lobby checks)."""
    from django.conf import settings

    from agents import liveness
    from agents.registry import all_agents

    if settings.GT_AGENT_MODE != "celery":
        pytest.skip("needs REDIS_URL and DATABASE_URL (the full stack)")
    names = sorted(n for n, s in all_agents().items() if s.game_id == GAME_ID)
    queues = sorted({all_agents()[n].queue_name for n in names})
    log = open(ROOT / "var" / "test-shapes-worker.log", "w") if (ROOT / "var").is_dir() else subprocess.DEVNULL
    proc = subprocess.Popen([sys.executable, "manage.py", "agent_worker", "--agents", ",".join(names),
                             "--no-control", "--concurrency", "1", "--loglevel", "info"],
                            cwd=ROOT, env={**child_env(), **ENV}, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.time() + 90
        while liveness.dead_queues(queues):
            if proc.poll() is not None:
                raise RuntimeError(f"the shapes agent worker exited with {proc.returncode}")
            if time.time() > deadline:
                raise RuntimeError(f"no heartbeat for {queues} in 90 s")
            time.sleep(0.2)
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
