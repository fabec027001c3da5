"""How a language model plays a role of a game: the game's half of an LLM agent.

A chat model (an OpenAI-compatible endpoint: vLLM, TGI, Ollama, a hosted API) plays a seat through
the platform's LLM agent (``agents/llm/``), which owns the endpoint: the call, streaming, retries,
the concurrency limit, pacing, the repair request and the record of every call. What the model is
told and what its answer means belong to the game: each game package may have an ``llm`` module
(``spec.llm``) whose ``ROLES`` maps a role to an :class:`LlmRole`. A role without one cannot be
played by an LLM agent (the models file refuses it at start-up).

The request, as the platform builds it from a role's adapter and the seat's view
(``rules.view_for(state, role)``, exactly what a person in that seat sees)::

    system     the prompt template (``template``, a file of the game's package, or the agent's own
               ``prompt`` file) with its ``$names`` filled from ``variables(view)``
               (``string.Template``; ``$$`` is a dollar sign)
    turns      ``turns(view)``: the dialog so far as chat turns ({"role": "user"|"assistant",
               "content": str}), the partner's lines as "user", this seat's own as "assistant",
               ending with a "user" turn that asks for this turn's decision
    images     ``images(view)`` when the agent's ``images`` option is on: PNG pictures the seat
               sees, appended to the last user turn as ``image_url`` parts (base64 data URLs),
               each after a text part with its caption
    format     ``response_format = {"type": "json_schema", "json_schema": {"name": "decision",
               "strict": true, "schema": schema(view)}}``: the model is asked for its decision
               only (the colour to click, the message to send, the pieces to place, the image to
               guess), never for the bookkeeping of an action (round numbers, ids of the turn)

and the answer: the JSON object the model returned, parsed, then ``to_action(decision, view)``
builds the full action the game's schema and rules check. A decision that cannot be used raises
:class:`DecisionError` with what was wrong; the platform sends it back once as a repair request,
then the agent's fallback acts and the person is told.

What a role must not learn (``games.<game>.hidden``) must not be in its request either: the
contract suite (:func:`games.testing.check_llm_roles`) renders every role's request over played
matches and fails if a hidden value appears in it.

This module imports nothing from Django or from the platform apps: a game's ``llm`` module is pure.
"""
from __future__ import annotations

import hashlib
import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from string import Template
from typing import Callable


class DecisionError(ValueError):
    """The model's decision cannot become an action; the message says what was wrong (it is sent
    back to the model in the repair request, so write it to the model)."""


@dataclass(frozen=True)
class Image:
    """A picture the seat sees: ``caption`` (e.g. "Image 3 of the pool (id 1234)") and PNG bytes."""

    caption: str
    png: bytes

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.png).hexdigest()


@dataclass(frozen=True)
class LlmRole:
    """One role's adapter. Functions take the seat's view (a dict, as the browser gets it).

    ``template``   the default system prompt: a file name relative to the game's package
                   (``"prompts/listener.txt"``), a ``string.Template``; documented in the game's
                   docs page; its sha256 is recorded with every call.
    ``version``    of the adapter and its default prompt, recorded with every call; raise it when
                   either changes what the model is asked.
    ``variables``  view -> the template's ``$names`` (strings).
    ``turns``      view -> the chat turns after the system prompt (see the module docstring).
    ``schema``     view -> the JSON schema of the decision (an object schema; may depend on the
                   view, e.g. an ``enum`` of the images still in play). Keep it within what
                   ``strict`` structured outputs accept: every property required, no
                   ``additionalProperties``.
    ``to_action``  (decision, view) -> the action dict (as a browser would send it), or raise
                   :class:`DecisionError`.
    ``images``     view -> the seat's pictures (:class:`Image`), sent when the agent's ``images``
                   option is on; None: the role sees no picture worth sending.
    ``stream_field``  the decision's string field a partner sees appear while the model writes it
                   (``"message"`` for a chat line); None: nothing of this role's answer is shown
                   before it is final (e.g. a CoDraw drawer's canvas, which the teller must not see).
    """

    template: str
    version: str
    variables: Callable[[dict], dict]
    turns: Callable[[dict], list]
    schema: Callable[[dict], dict]
    to_action: Callable[[dict, dict], dict]
    images: Callable[[dict], list] | None = None
    stream_field: str | None = "message"
    package_dir: Path | None = field(default=None, compare=False)

    def template_text(self, override: Path | None = None) -> str:
        """The prompt template: the agent's own file when given, else the game's default."""
        path = override if override is not None else self._default_path()
        return path.read_text(encoding="utf-8")

    def _default_path(self) -> Path:
        if self.package_dir is None:
            raise ValueError("LlmRole.package_dir is not set: build roles with games.llm.role(__file__, ...)")
        return self.package_dir / self.template


def role(module_file: str, **kwargs) -> LlmRole:
    """An :class:`LlmRole` whose ``template`` is relative to the folder of ``module_file``
    (pass ``__file__`` of the game's ``llm`` module)."""
    return LlmRole(**kwargs, package_dir=Path(module_file).resolve().parent)


def template_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def render_system(text: str, variables: dict) -> str:
    """The system prompt: ``text`` with ``$names`` filled (a missing name is an error, naming it)."""
    try:
        return Template(text).substitute({k: str(v) for k, v in variables.items()})
    except KeyError as exc:
        raise ValueError(f"the prompt template uses ${exc.args[0]}, which this role does not provide; "
                         f"it provides: {', '.join('$' + k for k in sorted(variables))}") from None
    except ValueError as exc:
        raise ValueError(f"the prompt template is not a valid template: {exc}") from None


def png_bytes(image) -> bytes:
    """PNG bytes of a PIL image (the games draw their pictures with Pillow)."""
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=True)
    return out.getvalue()


def parse_decision(text: str) -> dict:
    """The model's answer as a JSON object, or :class:`DecisionError` saying why not. Tolerates a
    fenced code block around the object (some servers ignore ``response_format``)."""
    body = (text or "").strip()
    if body.startswith("```"):
        body = body.strip("`")
        body = body[4:] if body.lower().startswith("json") else body
    try:
        value = json.loads(body)
    except ValueError as exc:
        raise DecisionError(f"Your answer is not valid JSON ({exc.msg} at character {exc.pos}). "
                            f"Answer with one JSON object that follows the schema.") from None
    if not isinstance(value, dict):
        raise DecisionError("Your answer must be one JSON object that follows the schema, "
                            f"not {type(value).__name__}.")
    return value


def dialog_turns(lines: list[tuple[bool, str]]) -> list[dict]:
    """Chat turns from the dialog so far: ``(mine, text)`` pairs, this seat's own lines as
    "assistant", the partner's as "user"; consecutive lines of one side are joined."""
    turns: list[dict] = []
    for mine, text in lines:
        who = "assistant" if mine else "user"
        if turns and turns[-1]["role"] == who:
            turns[-1]["content"] += "\n" + text
        else:
            turns.append({"role": who, "content": text})
    return turns
