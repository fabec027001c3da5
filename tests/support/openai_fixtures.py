"""The fixtures of the OpenAI-compatible servers the LLM agent's tests talk to
(tests/support/openai_standin.py, tests/support/real_openai_server.py), defined once here and
imported by the conftests of the folders that use them (tests/agents, tests/research).

``openai_standin_server`` is one stand-in process per test session even though two conftests
import it (each import is a fixture definition of its own, so each would start a process): the
first definition to be asked for starts it, the last one torn down at the end of the session
stops it."""
from __future__ import annotations

import pytest

from tests.support.openai_standin import OpenAIStandin
from tests.support.real_openai_server import TransformersServe

_shared: dict = {"server": None, "users": 0}


@pytest.fixture(scope="session")
def openai_standin_server():
    """The session's stand-in (scripts and records are the tests' to reset: ``openai_standin``,
    tests/support/llm_agents.models_on_standin)."""
    if _shared["server"] is None:
        server = OpenAIStandin()
        server.__enter__()
        _shared["server"] = server
    _shared["users"] += 1
    try:
        yield _shared["server"]
    finally:
        _shared["users"] -= 1
        if _shared["users"] == 0:
            server, _shared["server"] = _shared["server"], None
            server.__exit__(None, None, None)


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
