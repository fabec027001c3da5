"""LLM agents for the platform's tests (tests/agents/llm/): a models file of the test's own with
``kind = "openai"`` entries, and the colour game's roles played through an LLM adapter.

The adapter is the colour game's own (``games/colors/llm.py``) when the game has one; until then
(and for tests that need a role whose answer they control exactly) :data:`TINY_ROLES`, a small
adapter of this file's, is put in its place with :func:`use_tiny_roles`.
"""
from __future__ import annotations

import contextlib
import textwrap

from agents import registry
from games.llm import DecisionError, Image, LlmRole, dialog_turns, png_bytes
from games.spec import GameSpec

PROMPT = "You describe colours. Round $round of $rounds. Say which colour is the target in a few words.\n"


def _speaker_turns(view: dict) -> list[dict]:
    lines = [(m["role"] == "speaker", m["text"]) for m in view["messages"]]
    return [*dialog_turns(lines), {"role": "user", "content": f"Round {view['round']}: describe the target."}]


def _speaker_action(decision: dict, view: dict) -> dict:
    message = decision.get("message")
    if not isinstance(message, str) or not message.strip():
        raise DecisionError('"message" must be a non-empty string.')
    return {"type": "chat", "text": message, "round": view["round"]}


def _colours(view: dict) -> list:
    from PIL import Image as PilImage

    pictures = []
    for i, colour in enumerate(view["colors"]):
        h, s, l = (int(round(v)) for v in colour["hsl"])
        fill = f"hsl({h % 360},{min(max(s, 0), 100)}%,{min(max(l, 0), 100)}%)"
        pictures.append(Image(f"Colour {i + 1}", png_bytes(PilImage.new("RGB", (8, 8), fill))))
    return pictures


def _listener_action(decision: dict, view: dict) -> dict:
    return {"type": "click", "position": decision["position"], "round": view["round"]}


TINY_ROLES = {
    ("colors_v1", "speaker"): LlmRole(
        template="speaker.txt", version="tiny-speaker-1",
        variables=lambda view: {"round": view["round"], "rounds": view["rounds"]},
        turns=_speaker_turns,
        schema=lambda view: {"type": "object", "properties": {"message": {"type": "string", "maxLength": 140}},
                             "required": ["message"], "additionalProperties": False},
        to_action=_speaker_action, images=_colours, stream_field="message"),
    ("colors_v1", "listener"): LlmRole(
        template="listener.txt", version="tiny-listener-1",
        variables=lambda view: {"round": view["round"], "rounds": view["rounds"]},
        turns=lambda view: [{"role": "user", "content": "Which colour? " + " / ".join(
            m["text"] for m in view["messages"])}],
        schema=lambda view: {"type": "object", "properties": {"position": {"type": "integer", "enum": [0, 1, 2]}},
                             "required": ["position"], "additionalProperties": False},
        to_action=_listener_action, stream_field=None),
}


def use_tiny_roles(monkeypatch) -> None:
    """The colour game's roles are played through :data:`TINY_ROLES` for this test."""
    original = GameSpec.llm_role

    def llm_role(self, role):
        return TINY_ROLES.get((self.id, role)) or original(self, role)

    monkeypatch.setattr(GameSpec, "llm_role", llm_role)


def openai_entry(base_url: str, *, name: str = "llm_speaker", role: str = "speaker", model: str = "standin-1",
                 timeout_s: float = 10, fallback: str | None = None, api_key_env: str = "", extra: str = "") -> str:
    fallback = fallback or {"speaker": "colors_lexicon_speaker", "listener": "colors_literal_listener"}[role]
    return textwrap.dedent(f"""
    [[agent]]
    name = "{name}"
    kind = "openai"
    game_id = "colors_v1"
    role = "{role}"
    base_url = "{base_url}"
    model = "{model}"
    api_key_env = "{api_key_env}"
    timeout_s = {timeout_s}
    fallback = "{fallback}"
    version = "test-1"
    prompt = "{role}.txt"
    """) + textwrap.dedent(extra) + "\n"


def write_models_file(tmp_path, monkeypatch, *entries: str):
    """The models file of this test (with the prompt files its entries name), the registry rebuilt."""
    (tmp_path / "speaker.txt").write_text(PROMPT)
    (tmp_path / "listener.txt").write_text("You pick the colour your partner describes. Round $round.\n")
    path = tmp_path / "models.toml"
    path.write_text("".join(entries))
    monkeypatch.setenv("GT_MODELS_FILE", str(path))
    reset_registry()
    return path


def reset_registry() -> None:
    registry.all_agents.cache_clear()
    registry._built.clear()


@contextlib.contextmanager
def models_on_standin(tmp_path, monkeypatch, server, *entries: str):
    """The tiny roles and a models file of ``entries`` for one test against the stand-in ``server``
    (its script and record reset before and after); the registry rebuilt without them afterwards."""
    server.reset()
    use_tiny_roles(monkeypatch)
    write_models_file(tmp_path, monkeypatch, *entries)
    try:
        yield server
    finally:
        server.reset()
        monkeypatch.delenv("GT_MODELS_FILE", raising=False)
        reset_registry()
