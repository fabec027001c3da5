"""The models file (agents/model_config.py): entries become registered agents; every mistake is
a clear error naming the file, the entry and the field; a bad file stops a process at start-up."""
from __future__ import annotations

import subprocess
import sys

import pytest

from agents.registry import all_agents, get_agent_spec
from agents.model_config import ModelConfigError, parse

from tests.conftest import ROOT
from tests.workers.conftest import torch_entry

HTTP = """
[[agent]]
name = "remote_listener"
kind = "http"
game_id = "colors_v1"
role = "listener"
url = "http://127.0.0.1:9/act?key=secret"
headers = { Authorization = "Bearer x" }
timeout_s = 2.5
fallback = "colors_random_listener"
version = "remote-7"
"""


def test_entries_become_registered_agents(models_file):
    models_file(torch_entry("ckpt/tiny.pt") + torch_entry("ckpt/tiny.pt", name="tiny_listener_b") + HTTP)
    specs = all_agents()
    tiny = get_agent_spec("tiny_listener")
    assert tiny.game_id == "colors_v1" and tiny.role == "listener" and tiny.device == "cpu"
    assert tiny.queue_name == "model.tiny" == get_agent_spec("tiny_listener_b").queue_name   # one family, one queue
    assert tiny.fallback == "colors_literal_listener" and tiny.timeout_s == 30
    assert tiny.model.batch_size == 8 and tiny.model.wait_ms == 5 and tiny.model.threads == 0
    assert tiny.model.checkpoint.endswith("/ckpt/tiny.pt")   # relative to the file's folder
    remote = specs["remote_listener"]
    assert remote.queue_name == "agent.remote_listener" and remote.device == "cpu" and remote.timeout_s == 2.5
    # what a seat records: no query string (it may hold a key)
    assert remote.model.seat_record() == {"kind": "http", "version": "remote-7", "endpoint": "http://127.0.0.1:9/act"}
    assert tiny.model.seat_record()["version"] == "tiny-1"
    assert "colors_lexicon_speaker" in specs   # the games' own agents are still there


def test_a_gpu_device_makes_a_gpu_agent(models_file):
    models_file(torch_entry("t.pt").replace('device = "cpu"', 'device = "cuda:1"'))
    assert get_agent_spec("tiny_listener").device == "gpu"
    assert get_agent_spec("tiny_listener").model.device == "cuda:1"


def test_no_file_means_no_model_agents(tmp_path, monkeypatch):
    from agents import model_config as config

    monkeypatch.setattr(config, "DEFAULT_FILE", tmp_path / "absent.toml")
    monkeypatch.delenv("GT_MODELS_FILE", raising=False)
    assert parse() == []
    monkeypatch.setenv("GT_MODELS_FILE", str(tmp_path / "absent.toml"))
    with pytest.raises(ModelConfigError, match="does not exist"):
        parse()


@pytest.mark.parametrize("change, message", [
    (lambda t: t.replace('game_id = "colors_v1"', 'game_id = "chess_v1"'), "game_id 'chess_v1' is not a registered game"),
    (lambda t: t.replace('role = "listener"', 'role = "judge"'), "role 'judge' is not a role of colors_v1"),
    (lambda t: t.replace('fallback = "colors_literal_listener"', 'fallback = "nobody"'),
     "fallback 'nobody' is not a registered agent"),
    (lambda t: t.replace('fallback = "colors_literal_listener"', 'fallback = "colors_lexicon_speaker"'),
     "fallback 'colors_lexicon_speaker' plays colors_v1/speaker"),
    (lambda t: t.replace('fallback = "colors_literal_listener"\n', ''), "fallback is missing"),
    (lambda t: t.replace('version = "tiny-1"', ''), "version is missing"),
    (lambda t: t.replace('device = "cpu"', 'device = "tpu"'), "device must be 'cpu', 'cuda' or 'cuda:N'"),
    (lambda t: t.replace('batch_size = 8', 'batch_size = 0'), "batch_size must be at least 1"),
    (lambda t: t.replace('batch_size = 8', 'batch_size = 2.5'), "batch_size must be a whole number"),
    (lambda t: t.replace('batch_size = 8', 'batch_size = 8\nthreads = -1'), "threads must be at least 0"),
    (lambda t: t.replace('batch_size = 8', 'batch_size = 8\nthreads = 1.5'), "threads must be a whole number"),
    (lambda t: t.replace('wait_ms = 5', 'wait_ms = -1'), "wait_ms must be at least 0"),
    (lambda t: t.replace('timeout_s = 30', 'timeout_s = 0'), "timeout_s must be more than 0"),
    (lambda t: t.replace('timeout_s = 30', 'timeout_s = "30"'), "timeout_s must be a number"),
    (lambda t: t.replace('tests.workers.tiny_family:TinyColorsListener', 'tests.workers.nowhere:X'),
     "names the module 'tests.workers.nowhere', which cannot be found"),
    (lambda t: t.replace('tests.workers.tiny_family:TinyColorsListener', 'TinyColorsListener'),
     "must name a class as 'package.module:Class'"),
    (lambda t: t.replace('wait_ms = 5', 'wait_ms = 5\nbatchsize = 3'), "unknown key(s) for a torch agent: batchsize"),
    (lambda t: t.replace('name = "tiny_listener"', 'name = "colors_literal_listener"'),
     "already a registered agent of colors_v1"),
    (lambda t: t.replace('name = "tiny_listener"', 'name = "Tiny Listener"'), "name must be lower-case"),
    (lambda t: t + t, "declared twice"),
    (lambda t: t.replace('kind', 'x') + '\nkind = "onnx"', "kind must be one of torch, http"),
    (lambda t: t.replace('checkpoint = "t.pt"', 'checkpoint = "t.pt"\nsha256 = "abc"'), "sha256 must be 64 hexadecimal"),
    (lambda t: t.replace("[[agent]]", "[agent"), "is not valid TOML"),
    (lambda t: t.replace("[[agent]]", "[[agents]]"), "unknown top-level key(s) agents"),
])
def test_mistakes_are_clear_errors(models_file, change, message):
    path = models_file(change(torch_entry("t.pt")))
    with pytest.raises(ModelConfigError) as caught:
        all_agents()
    assert message in str(caught.value) and str(path) in str(caught.value)


def test_agents_of_one_family_must_share_the_model(models_file):
    models_file(torch_entry("a.pt") + torch_entry("b.pt", name="tiny_other"))
    with pytest.raises(ModelConfigError, match=r"shares family_key 'tiny' with 'tiny_listener' but its checkpoint "
                                                r"differs"):
        all_agents()


@pytest.mark.parametrize("change, message", [
    (lambda t: t.replace('url = "http://127.0.0.1:9/act?key=secret"', 'url = "ftp://x/act"'),
     "url must be an http:// or https:// address"),
    (lambda t: t.replace('headers = { Authorization = "Bearer x" }', 'headers = { Authorization = 3 }'),
     "headers must be a table of strings"),
    (lambda t: t.replace('version = "remote-7"', 'version = "remote-7"\ncheckpoint = "x.pt"'),
     "unknown key(s) for a http agent: checkpoint"),
])
def test_bridge_mistakes(models_file, change, message):
    models_file(change(HTTP))
    with pytest.raises(ModelConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        all_agents()


def test_a_bad_file_stops_django_at_start_up(tmp_path):
    """``manage.py check`` (run.sh's migrate, the workers, the server: every process sets Django up)."""
    bad = tmp_path / "models.toml"
    bad.write_text(torch_entry("t.pt").replace('fallback = "colors_literal_listener"', 'fallback = "nobody"'))
    env = {**__import__("os").environ, "GT_MODELS_FILE": str(bad)}
    done = subprocess.run([sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode != 0
    assert "ModelConfigError" in done.stderr and "fallback 'nobody' is not a registered agent" in done.stderr
    good = tmp_path / "good.toml"
    good.write_text(torch_entry("t.pt"))
    done = subprocess.run([sys.executable, "manage.py", "check"], cwd=ROOT, env={**env, "GT_MODELS_FILE": str(good)},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


NEURAL_AGENTS = {   # the neural agents models/models.toml ships on: agent -> (game, role, fallback)
    "colors_neural_listener": ("colors_v1", "listener", "colors_literal_listener"),
    "colors_neural_speaker": ("colors_v1", "speaker", "colors_lexicon_speaker"),
    "colors_neural_pragmatic_listener": ("colors_v1", "listener", "colors_pragmatic_listener"),
    "colors_neural_speaker_cic": ("colors_v1", "speaker", "colors_lexicon_speaker"),
    "colors_neural_listener_generated": ("colors_v1", "listener", "colors_literal_listener"),
    "codraw_neural_drawer": ("codraw_v1", "drawer", "codraw_rule_drawer"),
    "codraw_neural_teller": ("codraw_v1", "teller", "codraw_rule_teller"),
    "guesswhich_neural_alice": ("guesswhich_v1", "answerer", "alice_exact"),
    "visdial_neural_alice": ("visdial_v1", "answerer", "visdial_alice_exact"),
    "guesswhich_neural_qbot": ("guesswhich_v1", "questioner", "qbot"),
}


def test_the_shipped_file_is_valid_and_its_commented_examples_too(models_file):
    """models/models.toml ships every neural agent on (their committed checkpoints pinned by sha256:
    tests/workers/test_shipped_models.py loads and plays each) and holds commented examples of the
    other kinds: uncommented, those are valid too (the fallbacks are rule agents)."""
    import re

    text = (ROOT / "models" / "models.toml").read_text()
    shipped = {c.name: c for c in parse(ROOT / "models" / "models.toml")}
    assert set(NEURAL_AGENTS) <= set(shipped)
    assert all(c.sha256 for c in shipped.values() if c.kind == "torch")
    assert shipped["colors_neural_listener"].checkpoint.endswith("/colors/colors_neural_listener_cic.pt")
    assert shipped["guesswhich_neural_qbot"].checkpoint == shipped["guesswhich_neural_alice"].checkpoint
    lines = [line[2:] for line in text.splitlines() if re.match(r"^# (\[\[agent\]\]|[a-z_0-9]+ = )", line)]
    models_file(text + "\n" + "\n".join(lines))
    specs = all_agents()
    assert specs["colors_remote_listener"].model.kind == "http"
    assert specs["colors_llm_speaker"].model.kind == "openai" and specs["colors_llm_speaker"].queue_name == "agent.colors_llm_speaker"
    assert specs["colors_neural_listener"].queue_name == "model.colors_neural_l0"
    for name, (game_id, role, fallback) in NEURAL_AGENTS.items():
        spec = specs[name]
        assert (spec.game_id, spec.role, spec.fallback) == (game_id, role, fallback), name
        assert spec.queue_name == f"model.{spec.model.family_key}"
