"""Tests here pair workers with agents without running a Celery worker: every agent queue is
served (heartbeats, tests/conftest.py ``agent_queues_served``); tests/agents/test_liveness.py
covers a batch whose worker is gone."""
import pytest


@pytest.fixture(autouse=True)
def _agent_queues_served(agent_queues_served):
    yield
