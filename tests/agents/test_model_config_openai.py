"""``kind = "openai"`` entries of the models file (agents/model_config.py): every field checked, each
mistake naming the file, the entry and the field; the key's variable must be set; a role without an
LLM adapter is refused; the agent is served on its own ``agent.<name>`` queue."""
from __future__ import annotations

import subprocess
import sys

import pytest

from agents.model_config import ModelConfigError
from agents.registry import all_agents, get_agent_spec

from tests.conftest import ROOT
from tests.support.llm_agents import openai_entry, reset_registry, write_models_file

URL = "http://127.0.0.1:9/v1"


@pytest.fixture
def models(tmp_path, monkeypatch):
    def write(*entries: str):
        return write_models_file(tmp_path, monkeypatch, *entries)

    yield write
    monkeypatch.delenv("GT_MODELS_FILE", raising=False)
    reset_registry()


def test_an_entry_becomes_an_agent_on_its_own_queue(models, tmp_path, monkeypatch):
    monkeypatch.setenv("GT_TEST_KEY", "sk-1")
    models(openai_entry(URL + "?key=x", api_key_env="GT_TEST_KEY", extra="""
        temperature = 0.2
        top_p = 0.9
        max_tokens = 50
        seed = 3
        images = true
        stream = true
        max_concurrency = 8
        price_in = 0.5
        price_out = 1.5
        reply_pacing = { min_s = 1.5, chars_per_s = 6, jitter = 0.25, max_s = 20 }
        """))
    spec = get_agent_spec("llm_speaker")
    cfg = spec.model
    assert spec.queue_name == "agent.llm_speaker" and spec.device == "cpu" and spec.fallback == "colors_lexicon_speaker"
    assert (cfg.temperature, cfg.top_p, cfg.max_tokens, cfg.seed, cfg.images, cfg.stream, cfg.max_concurrency) == \
        (0.2, 0.9, 50, 3, True, True, 8)
    assert (cfg.price_in, cfg.price_out) == (0.5, 1.5)
    assert cfg.reply_pacing == {"min_s": 1.5, "chars_per_s": 6.0, "jitter": 0.25, "max_s": 20.0}
    assert cfg.prompt == str(tmp_path / "speaker.txt")   # relative to the models file
    record = cfg.seat_record()
    assert record["base_url"] == "http://127.0.0.1:9/v1" and record["kind"] == "openai"   # no query string
    assert "sk-1" not in repr(cfg) and cfg.api_key_env == "GT_TEST_KEY"   # the name, never the value


def test_the_games_default_prompt_when_the_agent_has_none(models):
    models(openai_entry(URL).replace('prompt = "speaker.txt"\n', ""))
    cfg = get_agent_spec("llm_speaker").model
    role = cfg.llm_role()
    assert cfg.prompt == "" and cfg.prompt_text == role.template_text()
    assert cfg.seat_record()["adapter_version"] == role.version


@pytest.mark.parametrize("change, field, message", [
    (lambda e: e.replace('base_url = "http://127.0.0.1:9/v1"', 'base_url = "gpu-box:8000"'), "base_url", "http://"),
    (lambda e: e.replace('model = "standin-1"\n', ""), "model", "is missing"),
    (lambda e: e.replace('api_key_env = ""\n', ""), "api_key_env", "is missing"),
    (lambda e: e.replace('api_key_env = ""', 'api_key_env = "sk-abc def"'), "api_key_env", "NAME of an environment"),
    (lambda e: e.replace('api_key_env = ""', 'api_key_env = "GT_NOT_SET_ANYWHERE"'), "api_key_env",
     "GT_NOT_SET_ANYWHERE, which is not set"),
    (lambda e: e + "temperature = 3\n", "temperature", "at most 2"),
    (lambda e: e + "top_p = 0\n", "top_p", "more than 0"),
    (lambda e: e + "max_tokens = 0\n", "max_tokens", "at least 1"),
    (lambda e: e + "seed = 1.5\n", "seed", "whole number"),
    (lambda e: e + 'images = "yes"\n', "images", "true or false"),
    (lambda e: e + "stream = 1\n", "stream", "true or false"),
    (lambda e: e + "max_concurrency = 0\n", "max_concurrency", "at least 1"),
    (lambda e: e.replace('prompt = "speaker.txt"', 'prompt = "absent.txt"'), "prompt", "not a file"),
    (lambda e: e + "price_in = -1\n", "price_in", "at least 0"),
    (lambda e: e + 'reply_pacing = { min_s = 1 }\n', "reply_pacing", "chars_per_s"),
    (lambda e: e + 'reply_pacing = { chars_per_s = 5, jitter = 1 }\n', "reply_pacing", "jitter must be less than 1"),
    (lambda e: e + 'reply_pacing = { chars_per_s = 5, speed = 2 }\n', "reply_pacing", "unknown key(s) speed"),
    (lambda e: e + 'url = "http://x"\n', "url", "unknown key(s) for an openai agent: url"),
    (lambda e: e.replace("timeout_s = 10", "timeout_s = 0"), "timeout_s", "more than 0"),
])
def test_mistakes_name_the_entry_and_the_field(models, change, field, message):
    with pytest.raises(ModelConfigError) as caught:
        models(change(openai_entry(URL)))
        all_agents()
    text = str(caught.value)
    assert "models.toml: agent #1 (llm_speaker)" in text and field in text and message in text, text


def test_a_role_without_an_llm_adapter_is_refused(models, monkeypatch):
    from games.spec import GameSpec

    monkeypatch.setattr(GameSpec, "llm_role", lambda self, role: None)
    models(openai_entry(URL))
    with pytest.raises(ModelConfigError, match=r"agent #1 \(llm_speaker\): role 'speaker' of colors_v1 has no LLM adapter"):
        all_agents()


def test_agents_calling_one_model_share_its_limit(models):
    first = openai_entry(URL, extra="max_concurrency = 4")
    second = openai_entry(URL, name="llm_listener", role="listener", extra="max_concurrency = 8")
    models(first, second)
    with pytest.raises(ModelConfigError, match=r"agent #2 \(llm_listener\): max_concurrency 8 differs from 4"):
        all_agents()


def test_a_missing_key_stops_a_process_at_start_up(tmp_path):
    """The key's variable is read when Django starts (agents.apps): a process without it does not start."""
    (tmp_path / "speaker.txt").write_text("x")
    path = tmp_path / "models.toml"
    path.write_text(openai_entry(URL, api_key_env="GT_TEST_ABSENT_KEY"))
    env = {**__import__("os").environ, "GT_MODELS_FILE": str(path)}
    env.pop("GT_TEST_ABSENT_KEY", None)
    done = subprocess.run([sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode != 0 and "api_key_env names the environment variable GT_TEST_ABSENT_KEY" in done.stderr
    done = subprocess.run([sys.executable, "manage.py", "check"], cwd=ROOT, capture_output=True, text=True,
                          env={**env, "GT_TEST_ABSENT_KEY": "sk-secret-value"}, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "sk-secret-value" not in done.stdout + done.stderr
