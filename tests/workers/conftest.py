"""Fixtures of the model-serving tests: a models file of the test's own (GT_MODELS_FILE, the
registry rebuilt around it) and a tiny trained checkpoint (tests/workers/tiny_family.py)."""
from __future__ import annotations

import textwrap

import pytest

from agents import registry


def reset_registry() -> None:
    registry.all_agents.cache_clear()
    registry._built.clear()


@pytest.fixture
def models_file(tmp_path, monkeypatch):
    """``write(text)``: the models file for this test; the registry is rebuilt from it."""
    path = tmp_path / "models.toml"

    def write(text: str):
        path.write_text(textwrap.dedent(text))
        monkeypatch.setenv("GT_MODELS_FILE", str(path))
        reset_registry()
        return path

    yield write
    monkeypatch.delenv("GT_MODELS_FILE", raising=False)
    reset_registry()


@pytest.fixture(scope="session")
def tiny_checkpoint(tmp_path_factory):
    """A TinyColorsListener checkpoint trained for a few steps on generated data, and its accuracy."""
    from tests.workers.tiny_family import train

    path = tmp_path_factory.mktemp("models") / "tiny_listener.pt"
    accuracy = train(str(path))
    return path, accuracy


def torch_entry(checkpoint, *, name="tiny_listener", family_key="tiny", extra: str = "") -> str:
    return f"""
    [[agent]]
    name = "{name}"
    game_id = "colors_v1"
    role = "listener"
    family = "tests.workers.tiny_family:TinyColorsListener"
    family_key = "{family_key}"
    checkpoint = "{checkpoint}"
    device = "cpu"
    batch_size = 8
    wait_ms = 5
    timeout_s = 30
    fallback = "colors_literal_listener"
    version = "tiny-1"
    description = "A tiny torch listener (tests)."
    {extra}
    """
