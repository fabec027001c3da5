"""Fixtures of the crowd tests: the MTurk recording server, reached by the real boto3 client."""
from __future__ import annotations

import pytest

from tests.support.mturk_server import MTurkRecorder


@pytest.fixture
def rec(monkeypatch):
    """tests/support/mturk_server.py on a free port; ``crowd.mturk.client`` goes there (GT_MTURK_ENDPOINT)."""
    with MTurkRecorder() as r:
        monkeypatch.setenv("GT_MTURK_ENDPOINT", r.url)
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDTEST")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
        yield r


@pytest.fixture(autouse=True)
def _agent_queues_served(agent_queues_served):
    """Lobby tests pair workers with agents without running a Celery worker: every agent queue
    is served (heartbeats, tests/conftest.py)."""
    yield
