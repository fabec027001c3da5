"""The OpenAI-compatible servers the LLM agent's tests talk to (tests/support/openai_standin.py,
tests/support/real_openai_server.py): one process of each per test session, started when a test
first asks for it."""
from __future__ import annotations

import pytest

from tests.support.openai_standin import OpenAIStandin
from tests.support.real_openai_server import TransformersServe


@pytest.fixture(scope="session")
def openai_standin_server():
    with OpenAIStandin() as server:
        yield server


@pytest.fixture
def openai_standin(openai_standin_server):
    """The session's stand-in with an empty script and record."""
    openai_standin_server.reset()
    yield openai_standin_server
    openai_standin_server.reset()


@pytest.fixture(scope="session")
def real_openai_server():
    """``transformers serve`` with the tiny chat model (built once per machine under var/test-models)."""
    with TransformersServe() as server:
        yield server
