"""The chat request an LLM agent sends, from its role's adapter (:class:`games.llm.LlmRole`) and the
seat's view, as games/llm.py describes it: the system prompt, the dialog so far as turns, the
seat's pictures as ``image_url`` parts of the last user turn (when the agent's ``images`` is on)
and a strict ``json_schema`` response format.

The request recorded (:class:`agents.models.AgentCall`) is the one sent with each image's data URL
replaced by ``"sha256:<hex>"`` of its PNG bytes (:func:`for_record`).
"""
from __future__ import annotations

import base64
import copy
import hashlib

from games.llm import LlmRole, render_system

DATA_URL = "data:image/png;base64,"


def messages_for(adapter: LlmRole, template: str, view: dict, *, images: bool) -> list[dict]:
    """The chat messages of one turn: system prompt, the adapter's turns, the pictures."""
    system = render_system(template, adapter.variables(view))
    turns = [dict(t) for t in adapter.turns(view)]
    if not turns or turns[-1].get("role") != "user":
        raise ValueError("the adapter's turns must end with a user turn asking for this turn's decision")
    pictures = adapter.images(view) if images and adapter.images is not None else []
    if pictures:
        parts = [{"type": "text", "text": turns[-1]["content"]}]
        for picture in pictures:
            parts.append({"type": "text", "text": picture.caption})
            parts.append({"type": "image_url",
                          "image_url": {"url": DATA_URL + base64.b64encode(picture.png).decode("ascii")}})
        turns[-1] = {"role": "user", "content": parts}
    return [{"role": "system", "content": system}, *turns]


def response_format(adapter: LlmRole, view: dict) -> dict:
    return {"type": "json_schema", "json_schema": {"name": "decision", "strict": True, "schema": adapter.schema(view)}}


def body_for(config, messages: list[dict], fmt: dict) -> dict:
    """The JSON body of ``POST /chat/completions`` (exactly what is sent)."""
    body: dict = {"model": config.model, "messages": messages, "response_format": fmt}
    for key in ("temperature", "top_p", "max_tokens", "seed"):
        value = getattr(config, key)
        if value is not None:
            body[key] = value
    if config.stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    return body


def params_of(config) -> dict:
    """The sampling parameters recorded with every call."""
    return {"temperature": config.temperature, "top_p": config.top_p, "max_tokens": config.max_tokens,
            "seed": config.seed, "stream": config.stream, "images": config.images}


def repair_messages(messages: list[dict], answer: str, problem: str) -> list[dict]:
    """The repair request's messages: the first request's, the model's answer as an assistant turn,
    and a user turn that says what was wrong."""
    return [*messages, {"role": "assistant", "content": answer or ""},
            {"role": "user", "content": f"Your answer could not be used: {problem} "
                                        f"Answer again with one JSON object that follows the schema."}]


def for_record(body: dict) -> dict:
    """``body`` with every image data URL replaced by ``"sha256:<hex>"`` of its bytes."""
    body = copy.deepcopy(body)
    for message in body.get("messages", []):
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for part in content:
            url = part.get("image_url", {}).get("url") if isinstance(part, dict) else None
            if isinstance(url, str) and url.startswith("data:"):
                payload = url.split(",", 1)[1] if "," in url else ""
                try:
                    raw = base64.b64decode(payload, validate=True)
                except ValueError:
                    raw = payload.encode("utf-8")
                part["image_url"]["url"] = "sha256:" + hashlib.sha256(raw).hexdigest()
    return body
