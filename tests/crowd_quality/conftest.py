"""Lobby tests pair without a Celery worker: every agent queue is served (tests/conftest.py)."""
import pytest


@pytest.fixture(autouse=True)
def _agent_queues_served(agent_queues_served):
    yield
