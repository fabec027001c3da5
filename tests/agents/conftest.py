"""The OpenAI-compatible servers the LLM agent's tests talk to (tests/support/openai_fixtures.py):
one process of each per test session, started when a test first asks for it."""
from tests.support.openai_fixtures import openai_standin, openai_standin_server, real_openai_server  # noqa: F401
