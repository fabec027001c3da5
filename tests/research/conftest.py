"""Tests here pair workers with agents without running a Celery worker: every agent queue is
served (heartbeats, tests/conftest.py ``agent_queues_served``); tests/agents/test_liveness.py
covers a batch whose worker is gone. The LLM stand-in is the session's (tests/support/openai_fixtures.py)."""
import pytest

from tests.support.openai_fixtures import openai_standin_server  # noqa: F401


@pytest.fixture(autouse=True)
def _agent_queues_served(agent_queues_served):
    yield
