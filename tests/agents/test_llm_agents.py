"""``manage.py llm_agents [--check]``: the LLM agents of the models file, and whether each endpoint
serves the agent's model (a real server process, the stand-in, answering GET /v1/models)."""
from __future__ import annotations

import io
import socket

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from tests.support.llm_agents import openai_entry, reset_registry, write_models_file
from tests.support.openai_standin import OpenAIStandin


@pytest.fixture
def models(tmp_path, monkeypatch):
    yield lambda *entries: write_models_file(tmp_path, monkeypatch, *entries)
    monkeypatch.delenv("GT_MODELS_FILE", raising=False)
    reset_registry()


def _run(*args) -> tuple[str, int]:
    out = io.StringIO()
    try:
        call_command("llm_agents", *args, stdout=out)
    except CommandError as exc:
        return out.getvalue(), exc.returncode
    return out.getvalue(), 0


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_check_says_served_not_served_or_unreachable(models, monkeypatch):
    monkeypatch.setenv("GT_TEST_LLM_KEY", "sk-check-key")
    with OpenAIStandin(api_key="sk-check-key") as server:
        models(openai_entry(server.base_url, api_key_env="GT_TEST_LLM_KEY"),
               openai_entry(server.base_url, name="llm_listener", role="listener", model="absent-model",
                            api_key_env="GT_TEST_LLM_KEY"),
               openai_entry(f"http://127.0.0.1:{_closed_port()}/v1", name="llm_far", timeout_s=2))
        listed, code = _run()
        assert code == 0 and "llm_speaker: colors_v1/speaker -> standin-1 at " + server.base_url in listed
        assert "key=$GT_TEST_LLM_KEY" in listed and "sk-check-key" not in listed
        out, code = _run("--check")
        assert code == 1
        lines = dict(line.split(": ", 1) for line in out.strip().splitlines())
        assert lines["llm_speaker"] == f"served: standin-1 at {server.base_url}"
        assert lines["llm_listener"] == f"NOT SERVED: absent-model at {server.base_url}; it serves: standin-1"
        assert lines["llm_far"].startswith("UNREACHABLE") and "Connection refused" in lines["llm_far"]
        assert [r["path"] for r in server.requests()] == ["/v1/models"]   # once per endpoint and key
        out, code = _run("--check", "--agents", "llm_speaker")
        assert code == 0 and out.startswith("llm_speaker: served")


def test_a_wrong_key_is_unreachable_with_the_servers_reason(models, monkeypatch):
    monkeypatch.setenv("GT_TEST_LLM_KEY", "sk-wrong")
    with OpenAIStandin(api_key="sk-right") as server:
        models(openai_entry(server.base_url, api_key_env="GT_TEST_LLM_KEY"))
        out, code = _run("--check")
    assert code == 1 and "UNREACHABLE" in out and "HTTP 401" in out and "sk-wrong" not in out


def test_no_llm_agent(models):
    models()
    assert _run("--check") == ("No LLM agent (kind = \"openai\") in the models file.\n", 0)
