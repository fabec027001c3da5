"""A scripted OpenAI-compatible chat server (tests and the benchmark only), run as a real process:
``python -m tests.support.openai_standin --port 8123 [--latency-s 1.0] [--api-key KEY] [--seed N]``
or, from a test, ``with OpenAIStandin() as server: server.base_url`` (start/stop, scripting, the
requests it got).

It speaks the chat-completions protocol as OpenAI documents it and vLLM serves it:

* ``GET /v1/models`` lists the one model it serves (``--model``, default ``standin-1``).
* ``POST /v1/chat/completions``, streamed or not. Streamed answers are server-sent events of
  ``chat.completion.chunk`` objects: a first chunk with the assistant role, the content in pieces,
  a last chunk with ``finish_reason``, then, when ``stream_options.include_usage``, a chunk with
  empty ``choices`` and the ``usage`` (the other chunks carry ``"usage": null``), then
  ``data: [DONE]``. ``usage`` counts tokens deterministically: a token is a run of word characters
  or a run of other non-space characters (``re`` ``\\w+|[^\\w\\s]+``) in every text part of every
  message; an image counts ``IMAGE_TOKENS``. ``max_tokens`` (or ``max_completion_tokens``) cuts the
  answer at that many tokens with ``finish_reason: "length"``, as a real server does.
* It checks what it gets and answers 400 with OpenAI's error body (``{"error": {"message", "type":
  "invalid_request_error", "param", "code"}}``) otherwise: a JSON object; ``model`` the served one
  (404 ``model_not_found`` otherwise); ``messages`` a non-empty list of ``{"role", "content"}`` with
  a known role; content a string or a list of parts, ``{"type": "text", "text"}`` and, in user
  messages, ``{"type": "image_url", "image_url": {"url"}}`` whose url is a base64 ``data:image/png``
  URL that decodes to a PNG (Pillow opens and verifies it); ``response_format`` text, json_object
  or json_schema (``json_schema.name`` and an object ``json_schema.schema``); ``stream_options`` only
  with ``stream``; ``n`` 1; numbers in their documented ranges; no request argument OpenAI or vLLM
  does not know. With ``--api-key`` every ``/v1/`` request must carry ``Authorization: Bearer KEY``
  (401 ``invalid_api_key`` otherwise).

By default it answers a VALID decision: an instance of the request's ``response_format`` json_schema
built from the schema (every property of an object, ``const``, an enum value, the first branch of an
``anyOf``/``oneOf``, ``SENTENCE`` cut or padded to the string's length bounds, the minimum of a number,
``max(minItems, 1)`` items of an array within ``maxItems``), so that a game can be played to its end
against it. An enum value is the first one, or with ``--seed`` one drawn from a generator seeded by
the seed and the request's messages (the same request gets the same answer). ``json_object`` gets
``{"answer": SENTENCE}``; plain text gets ``SENTENCE``.

What a real server cannot be made to do on demand is scripted: ``POST /_script`` with a list of steps
(or ``{"steps": [...]}``) replaces the queue; each chat-completion request takes the next step, and
when the queue is empty it answers by default again. A step is a dict of:

* ``status`` (an HTTP error: 429 with ``retry_after`` seconds in ``Retry-After``, 5xx, 4xx) and
  optionally ``message``;
* ``stall_s``: wait that long before the first byte (after ``stall_after_chunks`` content chunks of
  a stream instead, when given), then answer;
* ``latency_s``: this answer's latency before the first byte (instead of ``--latency-s``);
* ``cut_stream_after``: close the connection after that many content chunks of a stream (no last
  chunk, no ``[DONE]``); on a request that does not stream, after half of the body;
* ``content``: answer this text instead of the default (``"not json"``, ``"{\\"wrong\\": 1}"``);
* ``finish_reason``: report this one; ``chunk_delay_s``: the pause between streamed chunks;
* ``times``: the step is queued that many times.

``GET /_stats`` reports the chat completions in flight now (received, not yet answered in full),
the most in flight at once and their time-weighted mean since the last reset, the chat completions
received since then and the seconds covered (``in_flight``, ``max_in_flight``, ``mean_in_flight``,
``chat_completions``, ``since_s``); ``POST /_stats/reset`` starts that count again (what a benchmark
does at the start of its measured window: the concurrency an endpoint saw).

``GET /_script`` shows the steps left. ``GET /_requests`` returns every request received in order:
``method``, ``path``, ``t`` (time received), ``authorization``, ``body`` (the JSON with each image's
data URL replaced by ``sha256:<hex>``), ``images`` (sha256, width, height of each), ``step`` (the
scripted step it took, if any) and ``status`` (the HTTP status it answered). ``POST /_reset`` empties
the script and the record and starts the ``/_stats`` count again. The admin endpoints need no key.
"""
from __future__ import annotations

import argparse
import asyncio
import base64
import binascii
import copy
import hashlib
import io
import json
import logging
import random
import re
import socket
import subprocess
import sys
import time
import uuid
from collections import deque
from pathlib import Path
from urllib.parse import parse_qs

import httpx
from PIL import Image

SENTENCE = "The one on the left."
IMAGE_TOKENS = 85   # what OpenAI counts for a low-detail image
ROLES = {"system", "developer", "user", "assistant", "tool"}
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
TOKEN = re.compile(r"\w+|[^\w\s]+")
# Request arguments OpenAI documents for chat completions, and the sampling extras vLLM accepts.
KNOWN_ARGS = {
    "model", "messages", "stream", "stream_options", "temperature", "top_p", "max_tokens",
    "max_completion_tokens", "seed", "n", "stop", "response_format", "presence_penalty",
    "frequency_penalty", "logit_bias", "logprobs", "top_logprobs", "user", "tools", "tool_choice",
    "parallel_tool_calls", "metadata", "store", "service_tier", "reasoning_effort", "modalities",
    "prediction", "safety_identifier", "prompt_cache_key", "verbosity",
    # vLLM
    "top_k", "min_p", "repetition_penalty", "ignore_eos", "chat_template_kwargs",
}
ROOT = Path(__file__).resolve().parents[2]


class BadRequest(Exception):
    def __init__(self, message: str, param: str | None = None, status: int = 400,
                 type_: str = "invalid_request_error", code: str | None = None):
        super().__init__(message)
        self.message, self.param, self.status, self.type, self.code = message, param, status, type_, code

    def body(self) -> dict:
        return error_body(self.message, self.type, self.param, self.code)


class CutConnection(Exception):
    """Raised inside the app to make uvicorn drop the connection mid-answer (a scripted cut)."""


def error_body(message: str, type_: str, param: str | None = None, code: str | None = None) -> dict:
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


def count_tokens(text: str) -> int:
    return len(TOKEN.findall(text))


def cut_tokens(text: str, limit: int) -> str:
    """The text up to the end of its ``limit``-th token."""
    matches = list(TOKEN.finditer(text))
    return text if len(matches) <= limit else text[:matches[limit - 1].end()] if limit > 0 else ""


# ---------------------------------------------------------------------------------------------
# Checking a request


def check_image(url, where: str) -> dict:
    if not isinstance(url, str):
        raise BadRequest(f"{where}.url must be a string.", where)
    if not url.startswith("data:"):
        raise BadRequest("The stand-in accepts images only as base64 data URLs "
                         f"(data:image/png;base64,...), got {url[:40]!r}.", where)
    head, sep, data = url.partition(",")
    if not sep or not head.endswith(";base64"):
        raise BadRequest(f"{where}.url is not a base64 data URL.", where)
    mime = head[len("data:"):-len(";base64")]
    if mime != "image/png":
        raise BadRequest(f"{where}.url has media type {mime!r}; the stand-in takes image/png.", where)
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise BadRequest(f"{where}.url: invalid base64 data.", where) from None
    if not raw.startswith(PNG_MAGIC):
        raise BadRequest(f"{where}.url does not decode to a PNG.", where, code="invalid_image_format")
    try:
        with Image.open(io.BytesIO(raw)) as im:
            im.verify()
            width, height = im.size
    except Exception as exc:   # Pillow raises many kinds for a broken file
        raise BadRequest(f"{where}.url: the PNG is broken ({exc}).", where, code="invalid_image") from None
    return {"sha256": hashlib.sha256(raw).hexdigest(), "width": width, "height": height, "bytes": len(raw)}


def check_messages(messages) -> tuple[list[str], list[dict], list]:
    """(the texts, the images, the messages with images replaced by their sha256) of a valid list."""
    if not isinstance(messages, list) or not messages:
        raise BadRequest("'messages' must be a non-empty array.", "messages")
    texts: list[str] = []
    images: list[dict] = []
    recorded = copy.deepcopy(messages)
    for i, message in enumerate(messages):
        where = f"messages.[{i}]"
        if not isinstance(message, dict):
            raise BadRequest(f"{where} must be an object.", where)
        role = message.get("role")
        if role not in ROLES:
            raise BadRequest(f"Invalid value for {where}.role: {role!r}. Supported values are: "
                             f"{', '.join(sorted(ROLES))}.", f"{where}.role")
        if "content" not in message:
            raise BadRequest(f"Missing required parameter: '{where}.content'.", f"{where}.content")
        content = message["content"]
        if isinstance(content, str):
            texts.append(content)
            continue
        if content is None and role == "assistant":
            continue
        if not isinstance(content, list) or not content:
            raise BadRequest(f"{where}.content must be a string or a non-empty array of parts.",
                             f"{where}.content")
        for j, part in enumerate(content):
            pwhere = f"{where}.content.[{j}]"
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "text":
                if not isinstance(part.get("text"), str):
                    raise BadRequest(f"{pwhere}.text must be a string.", f"{pwhere}.text")
                texts.append(part["text"])
            elif kind == "image_url":
                if role != "user":
                    raise BadRequest(f"Image parts are only allowed in user messages ({pwhere}).", pwhere)
                image_url = part.get("image_url")
                if not isinstance(image_url, dict):
                    raise BadRequest(f"{pwhere}.image_url must be an object with a url.", f"{pwhere}.image_url")
                if image_url.get("detail", "auto") not in ("auto", "low", "high"):
                    raise BadRequest(f"{pwhere}.image_url.detail must be auto, low or high.",
                                     f"{pwhere}.image_url.detail")
                info = check_image(image_url.get("url"), f"{pwhere}.image_url")
                images.append(info)
                recorded[i]["content"][j]["image_url"]["url"] = f"sha256:{info['sha256']}"
            else:
                raise BadRequest(f"Invalid content part type {kind!r} at {pwhere}; expected text or image_url.",
                                 f"{pwhere}.type")
    return texts, images, recorded


def check_number(body: dict, name: str, low: float, high: float, integer: bool = False) -> None:
    if name not in body or body[name] is None:
        return
    value = body[name]
    if isinstance(value, bool) or not isinstance(value, int if integer else (int, float)):
        raise BadRequest(f"Invalid type for '{name}': expected {'an integer' if integer else 'a number'}.", name)
    if not low <= value <= high:
        raise BadRequest(f"Invalid '{name}': {value} is outside [{low}, {high}].", name)


def check_request(body, model: str) -> dict:
    """The request's checked parts: texts, images, recorded messages, stream, include_usage,
    schema (or None), response kind, max_tokens."""
    if not isinstance(body, dict):
        raise BadRequest("The request body must be a JSON object.")
    unknown = sorted(set(body) - KNOWN_ARGS)
    if unknown:
        raise BadRequest(f"Unrecognized request argument supplied: {unknown[0]}", unknown[0])
    if "model" not in body:
        raise BadRequest("you must provide a model parameter", "model")
    if body["model"] != model:
        raise BadRequest(f"The model `{body['model']}` does not exist or you do not have access to it.",
                         "model", status=404, code="model_not_found")
    texts, images, recorded = check_messages(body.get("messages"))
    stream = body.get("stream", False)
    if stream is not None and not isinstance(stream, bool):
        raise BadRequest("'stream' must be a boolean.", "stream")
    options = body.get("stream_options")
    if options is not None:
        if not stream:
            raise BadRequest("The 'stream_options' parameter is only allowed when 'stream' is enabled.",
                             "stream_options")
        if not isinstance(options, dict) or set(options) - {"include_usage", "include_obfuscation"}:
            raise BadRequest("'stream_options' must be an object with include_usage.", "stream_options")
    check_number(body, "temperature", 0, 2)
    check_number(body, "top_p", 0, 1)
    check_number(body, "presence_penalty", -2, 2)
    check_number(body, "frequency_penalty", -2, 2)
    check_number(body, "max_tokens", 1, 10**7, integer=True)
    check_number(body, "max_completion_tokens", 1, 10**7, integer=True)
    check_number(body, "seed", -2**63, 2**63 - 1, integer=True)
    check_number(body, "n", 1, 1, integer=True)
    schema, kind = None, "text"
    fmt = body.get("response_format")
    if fmt is not None:
        if not isinstance(fmt, dict) or fmt.get("type") not in ("text", "json_object", "json_schema"):
            raise BadRequest("Invalid value for 'response_format.type': expected one of text, json_object, "
                             "json_schema.", "response_format.type")
        kind = fmt["type"]
        if kind == "json_schema":
            spec = fmt.get("json_schema")
            if not isinstance(spec, dict):
                raise BadRequest("Missing required parameter: 'response_format.json_schema'.",
                                 "response_format.json_schema")
            name = spec.get("name")
            if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", name):
                raise BadRequest("Invalid 'response_format.json_schema.name': letters, digits, _ and -, "
                                 "at most 64.", "response_format.json_schema.name")
            schema = spec.get("schema")
            if not isinstance(schema, dict):
                raise BadRequest("'response_format.json_schema.schema' must be an object (a JSON schema).",
                                 "response_format.json_schema.schema")
    return {"texts": texts, "images": images, "messages": recorded, "stream": bool(stream),
            "include_usage": bool((options or {}).get("include_usage")), "schema": schema, "kind": kind,
            "max_tokens": body.get("max_completion_tokens") or body.get("max_tokens")}


# ---------------------------------------------------------------------------------------------
# A valid instance of a JSON schema


class Instance:
    """Builds a value that validates against a JSON schema (the subset structured outputs use)."""

    def __init__(self, root: dict, rng: random.Random | None):
        self.root, self.rng = root, rng

    def pick(self, options: list):
        return options[0] if self.rng is None else self.rng.choice(options)

    def resolve(self, schema: dict) -> dict:
        seen = 0
        while "$ref" in schema and seen < 32:
            ref = schema["$ref"]
            if not ref.startswith("#"):
                raise BadRequest(f"Only local $ref are supported, got {ref!r}.", "response_format")
            node = self.root
            for key in filter(None, ref[1:].split("/")):
                node = node[key.replace("~1", "/").replace("~0", "~")]
            schema = {**node, **{k: v for k, v in schema.items() if k != "$ref"}}
            seen += 1
        return schema

    def build(self, schema):
        if schema is True or schema == {}:
            return SENTENCE
        schema = self.resolve(schema)
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            return self.pick(list(schema["enum"]))
        for key in ("anyOf", "oneOf"):
            if key in schema:
                branches = [b for b in schema[key] if self.resolve(b).get("type") != "null"] or schema[key]
                return self.build(branches[0] if self.rng is None else self.rng.choice(branches))
        if "allOf" in schema:
            merged: dict = {}
            for part in schema["allOf"]:
                merged.update(self.resolve(part))
            return self.build({**merged, **{k: v for k, v in schema.items() if k != "allOf"}})
        kind = schema.get("type")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "null")
        if kind is None:
            kind = "object" if "properties" in schema else "array" if "items" in schema else "string"
        if kind == "object":
            return {name: self.build(sub) for name, sub in schema.get("properties", {}).items()}
        if kind == "array":
            low, high = schema.get("minItems", 0), schema.get("maxItems")
            count = max(low, 1) if high is None else min(max(low, 1), high)
            items = schema.get("items", {})
            if isinstance(items, dict) and schema.get("uniqueItems") and "enum" in self.resolve(items):
                values = list(self.resolve(items)["enum"])
                if self.rng is not None:
                    self.rng.shuffle(values)
                return values[:count]
            prefix = schema.get("prefixItems", [])
            return [self.build(prefix[i] if i < len(prefix) else items) for i in range(count)]
        if kind in ("integer", "number"):
            value = schema.get("minimum")
            if value is None and "exclusiveMinimum" in schema:
                value = schema["exclusiveMinimum"] + (1 if kind == "integer" else 1e-6)
            if value is None:
                value = 0
                top = schema.get("maximum", schema.get("exclusiveMaximum"))
                if top is not None and top <= 0:
                    value = top - (1 if "exclusiveMaximum" in schema else 0)
            return int(value) if kind == "integer" else float(value)
        if kind == "boolean":
            return True
        if kind == "null":
            return None
        return self.string(schema)

    @staticmethod
    def string(schema: dict) -> str:
        low, high = schema.get("minLength", 0), schema.get("maxLength")
        text = SENTENCE if high is None else SENTENCE[:high]
        text = text + "." * (low - len(text)) if len(text) < low else text
        pattern = schema.get("pattern")
        if pattern and not re.search(pattern, text):
            for candidate in ("a", "A", "0", "a1", "red", "yes"):
                if re.search(pattern, candidate):
                    return candidate
        return text


def instance_of(schema: dict, rng: random.Random | None = None):
    return Instance(schema, rng).build(schema)


# ---------------------------------------------------------------------------------------------
# The ASGI app


class Standin:
    def __init__(self, model: str = "standin-1", api_key: str | None = None, latency_s: float = 0.0,
                 seed: int | None = None, chunk_delay_s: float = 0.0):
        self.model, self.api_key, self.latency_s, self.seed = model, api_key, latency_s, seed
        self.chunk_delay_s = chunk_delay_s
        self.script: deque[dict] = deque()
        self.requests: list[dict] = []
        self.created = int(time.time())
        self.in_flight = 0
        self.reset_stats()

    # -- chat completions in flight (GET /_stats)
    def reset_stats(self) -> None:
        now = time.monotonic()
        self.stats_since = self.stats_changed = now
        self.max_in_flight = self.in_flight
        self.in_flight_area = 0.0   # in-flight count integrated over time since stats_since
        self.chat_count = 0

    def _in_flight(self, delta: int) -> None:
        now = time.monotonic()
        self.in_flight_area += self.in_flight * (now - self.stats_changed)
        self.stats_changed = now
        self.in_flight += delta
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        if delta > 0:
            self.chat_count += delta

    def stats(self) -> dict:
        self._in_flight(0)
        covered = self.stats_changed - self.stats_since
        return {"in_flight": self.in_flight, "max_in_flight": self.max_in_flight,
                "mean_in_flight": round(self.in_flight_area / covered, 3) if covered > 0 else float(self.in_flight),
                "chat_completions": self.chat_count, "since_s": round(covered, 3)}

    # -- plumbing
    async def __call__(self, scope, receive, send):
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        raw = b""
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            raw += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        method, path = scope["method"], scope["path"].rstrip("/") or "/"
        query = parse_qs(scope.get("query_string", b"").decode())
        try:
            await self.route(method, path, query, headers, raw, send)
        except BadRequest as exc:
            await self.json(send, exc.status, exc.body())

    @staticmethod
    async def json(send, status: int, body, extra: list | None = None) -> None:
        data = json.dumps(body).encode()
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(data)).encode()), *(extra or [])]})
        await send({"type": "http.response.body", "body": data})

    async def route(self, method, path, query, headers, raw, send) -> None:
        if path == "/_script":
            if method == "GET":
                return await self.json(send, 200, {"steps": list(self.script)})
            if method == "POST":
                return await self.json(send, 200, {"queued": self.set_script(parse_json(raw))})
        if path == "/_requests" and method == "GET":
            since = int(query.get("since", ["0"])[0])
            return await self.json(send, 200, {"requests": self.requests[since:]})
        if path == "/_stats" and method == "GET":
            return await self.json(send, 200, self.stats())
        if path == "/_stats/reset" and method == "POST":
            self.reset_stats()
            return await self.json(send, 200, self.stats())
        if path == "/_reset" and method == "POST":
            self.script.clear()
            self.requests.clear()
            self.reset_stats()
            return await self.json(send, 200, {"reset": True})
        if not path.startswith("/v1/"):
            raise BadRequest(f"Unknown path {path}.", status=404, code="not_found")
        record = {"n": len(self.requests), "method": method, "path": path, "t": time.time(),
                  "authorization": headers.get("authorization"), "body": None, "images": [],
                  "step": None, "status": None}
        self.requests.append(record)
        try:
            self.check_key(headers)
            if path == "/v1/models" and method == "GET":
                record["status"] = 200
                return await self.json(send, 200, {"object": "list", "data": [self.model_card()]})
            if path == f"/v1/models/{self.model}" and method == "GET":
                record["status"] = 200
                return await self.json(send, 200, self.model_card())
            if path == "/v1/chat/completions" and method == "POST":
                self._in_flight(+1)
                try:
                    return await self.chat(record, raw, send)
                finally:
                    self._in_flight(-1)
            raise BadRequest(f"Unknown path or method: {method} {path}.", status=404, code="not_found")
        except BadRequest as exc:
            record["status"] = exc.status
            raise

    def check_key(self, headers: dict) -> None:
        if self.api_key is None:
            return
        if headers.get("authorization") != f"Bearer {self.api_key}":
            raise BadRequest("Incorrect API key provided.", status=401, code="invalid_api_key")

    def model_card(self) -> dict:
        return {"id": self.model, "object": "model", "created": self.created, "owned_by": "groundtalk-standin"}

    def set_script(self, steps) -> int:
        if isinstance(steps, dict):
            steps = steps.get("steps")
        if not isinstance(steps, list) or not all(isinstance(s, dict) for s in steps):
            raise BadRequest("A script is a list of step objects (or {\"steps\": [...]}).")
        known = {"status", "retry_after", "message", "stall_s", "stall_after_chunks", "latency_s",
                 "cut_stream_after", "content", "finish_reason", "chunk_delay_s", "times"}
        self.script.clear()
        for step in steps:
            if set(step) - known:
                raise BadRequest(f"Unknown step keys {sorted(set(step) - known)}; known: {sorted(known)}.")
            for _ in range(int(step.get("times", 1))):
                self.script.append({k: v for k, v in step.items() if k != "times"})
        return len(self.script)

    # -- chat completions
    async def chat(self, record: dict, raw: bytes, send) -> None:
        body = parse_json(raw)
        record["body"] = body
        checked = check_request(body, self.model)   # a request it refuses takes no step
        record["body"] = {**body, "messages": checked["messages"]}
        record["images"] = checked["images"]
        step = self.script.popleft() if self.script else {}
        record["step"] = step or None
        latency = step.get("latency_s", self.latency_s)
        stall_after = step.get("stall_after_chunks")
        if "stall_s" in step and stall_after is None:
            latency += step["stall_s"]
        if latency:
            await asyncio.sleep(latency)
        if "status" in step:
            status = int(step["status"])
            record["status"] = status
            extra = []
            if status == 429:
                type_, code = "requests", "rate_limit_exceeded"
                message = step.get("message", "Rate limit reached for requests. Please try again later.")
                if "retry_after" in step:
                    extra.append((b"retry-after", str(step["retry_after"]).encode()))
            elif status >= 500:
                type_, code = "server_error", None
                message = step.get("message", "The server had an error while processing your request.")
            else:
                type_, code = "invalid_request_error", None
                message = step.get("message", "Scripted error.")
            return await self.json(send, status, error_body(message, type_, None, code), extra)
        content = step.get("content")
        if content is None:
            content = self.default_answer(body, checked)
        finish = step.get("finish_reason", "stop")
        if checked["max_tokens"] and count_tokens(content) > checked["max_tokens"]:
            content, finish = cut_tokens(content, checked["max_tokens"]), "length"
        prompt = sum(count_tokens(t) for t in checked["texts"]) + IMAGE_TOKENS * len(checked["images"])
        usage = {"prompt_tokens": prompt, "completion_tokens": count_tokens(content),
                 "total_tokens": prompt + count_tokens(content)}
        ident, created = f"chatcmpl-{uuid.uuid4().hex}", int(time.time())
        record["status"] = 200
        if not checked["stream"]:
            answer = {"id": ident, "object": "chat.completion", "created": created, "model": self.model,
                      "system_fingerprint": "fp_standin",
                      "choices": [{"index": 0, "message": {"role": "assistant", "content": content,
                                                            "refusal": None},
                                   "logprobs": None, "finish_reason": finish}],
                      "usage": usage}
            if "cut_stream_after" in step:
                data = json.dumps(answer).encode()
                await send({"type": "http.response.start", "status": 200,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"content-length", str(len(data)).encode())]})
                await send({"type": "http.response.body", "body": data[:len(data) // 2], "more_body": True})
                raise CutConnection
            return await self.json(send, 200, answer)
        await self.stream(send, ident, created, content, finish, usage if checked["include_usage"] else None,
                          checked["include_usage"], step)

    async def stream(self, send, ident, created, content, finish, usage, include_usage, step) -> None:
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/event-stream; charset=utf-8"),
                                (b"cache-control", b"no-cache")]})
        delay = step.get("chunk_delay_s", self.chunk_delay_s)

        def chunk(delta: dict | None, finish_reason=None, usage=None) -> bytes:
            obj = {"id": ident, "object": "chat.completion.chunk", "created": created, "model": self.model,
                   "system_fingerprint": "fp_standin",
                   "choices": [] if delta is None else
                   [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}]}
            if include_usage:
                obj["usage"] = usage
            return b"data: " + json.dumps(obj).encode() + b"\n\n"

        async def emit(data: bytes) -> None:
            await send({"type": "http.response.body", "body": data, "more_body": True})

        await emit(chunk({"role": "assistant", "content": ""}))
        for i, piece in enumerate(pieces(content)):
            if step.get("cut_stream_after") is not None and i >= step["cut_stream_after"]:
                raise CutConnection
            if step.get("stall_after_chunks") is not None and i == step["stall_after_chunks"]:
                await asyncio.sleep(step.get("stall_s", 0))
            if delay and i:
                await asyncio.sleep(delay)
            await emit(chunk({"content": piece}))
        if step.get("cut_stream_after") is not None:
            raise CutConnection
        await emit(chunk({}, finish))
        if usage is not None:
            await emit(chunk(None, usage=usage))
        await send({"type": "http.response.body", "body": b"data: [DONE]\n\n"})

    def default_answer(self, body: dict, checked: dict) -> str:
        rng = None
        if self.seed is not None:
            key = json.dumps([self.seed, body.get("seed"), checked["messages"]], sort_keys=True)
            rng = random.Random(hashlib.sha256(key.encode()).hexdigest())
        if checked["kind"] == "json_schema":
            return json.dumps(instance_of(checked["schema"], rng), separators=(", ", ": "))
        if checked["kind"] == "json_object":
            return json.dumps({"answer": SENTENCE})
        return SENTENCE


def parse_json(raw: bytes):
    try:
        return json.loads(raw or b"null")
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise BadRequest("We could not parse the JSON body of your request.") from None


def pieces(content: str, size: int = 12) -> list[str]:
    """The streamed pieces of an answer: each word with its trailing space, long ones in parts."""
    out = []
    for word in re.findall(r"\S+\s*|\s+", content):
        out.extend(word[i:i + size] for i in range(0, len(word), size))
    return out or [""]


class _DropCuts(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], CutConnection))


# ---------------------------------------------------------------------------------------------
# Running it


def main(argv: list[str] | None = None) -> None:
    import uvicorn

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--model", default="standin-1")
    parser.add_argument("--api-key", default=None, help="require Authorization: Bearer KEY on /v1/")
    parser.add_argument("--latency-s", type=float, default=0.0, help="every answer's latency before its first byte")
    parser.add_argument("--chunk-delay-s", type=float, default=0.0, help="the pause between streamed chunks")
    parser.add_argument("--seed", type=int, default=None, help="draw enum values (default: the first)")
    args = parser.parse_args(argv)
    app = Standin(args.model, args.api_key, args.latency_s, args.seed, args.chunk_delay_s)
    logging.getLogger("uvicorn.error").addFilter(_DropCuts())
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning", access_log=False,
                lifespan="off", timeout_keep_alive=30, backlog=4096)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class OpenAIStandin:
    """The stand-in as a child process: ``with OpenAIStandin(latency_s=1.0) as server:`` gives
    ``server.base_url`` (``http://127.0.0.1:PORT/v1``, what an OpenAI client takes), ``script(steps)``,
    ``requests()``, ``chat_requests()`` and ``reset()``."""

    def __init__(self, model: str = "standin-1", api_key: str | None = None, latency_s: float = 0.0,
                 seed: int | None = None, chunk_delay_s: float = 0.0, port: int | None = None):
        self.model, self.api_key = model, api_key
        self.port = port or free_port()
        self.args = ["--port", str(self.port), "--model", model, "--latency-s", str(latency_s),
                     "--chunk-delay-s", str(chunk_delay_s)]
        if api_key is not None:
            self.args += ["--api-key", api_key]
        if seed is not None:
            self.args += ["--seed", str(seed)]
        self.proc: subprocess.Popen | None = None

    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.root_url}/v1"

    def start(self, timeout: float = 60) -> OpenAIStandin:
        self.proc = subprocess.Popen([sys.executable, "-m", "tests.support.openai_standin", *self.args],
                                     cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the stand-in exited with {self.proc.returncode}: "
                                   f"{self.proc.stderr.read().decode()[-2000:]}")
            try:
                if httpx.get(f"{self.root_url}/_script", timeout=1).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"the stand-in did not answer on port {self.port} within {timeout} s")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc is not None and self.proc.stderr is not None:
            self.proc.stderr.close()
        self.proc = None

    def __enter__(self) -> OpenAIStandin:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def script(self, *steps: dict) -> int:
        """Queue these steps (replacing any left); each chat completion takes the next one."""
        response = httpx.post(f"{self.root_url}/_script", json=list(steps), timeout=10)
        response.raise_for_status()
        return response.json()["queued"]

    def steps_left(self) -> list[dict]:
        return httpx.get(f"{self.root_url}/_script", timeout=10).json()["steps"]

    def requests(self, since: int = 0) -> list[dict]:
        return httpx.get(f"{self.root_url}/_requests", params={"since": since}, timeout=30).json()["requests"]

    def chat_requests(self) -> list[dict]:
        return [r for r in self.requests() if r["path"] == "/v1/chat/completions"]

    def reset(self) -> None:
        httpx.post(f"{self.root_url}/_reset", timeout=10).raise_for_status()

    def stats(self, reset: bool = False) -> dict:
        """``GET /_stats`` (the module docstring); with ``reset``, the count starts again."""
        if reset:
            response = httpx.post(f"{self.root_url}/_stats/reset", timeout=10)
        else:
            response = httpx.get(f"{self.root_url}/_stats", timeout=10)
        response.raise_for_status()
        return response.json()


if __name__ == "__main__":
    main()
