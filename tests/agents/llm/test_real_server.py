"""The real OpenAI protocol from a real server: ``transformers serve`` with the tiny chat model built on
this machine (tests/support/real_openai_server.py), through the ``openai`` library. These tests also
pin what that server does with what it does not support (response_format, stream_options, images
to a text model), which the LLM agent must survive."""
from __future__ import annotations

import base64
import io
import json

import jsonschema
import openai
import pytest
from PIL import Image

from tests.support.real_openai_server import REPO_ID

COLOUR = {"type": "object", "properties": {"colour": {"type": "string", "enum": ["red", "green", "blue"]}},
          "required": ["colour"], "additionalProperties": False}
MESSAGES = [{"role": "system", "content": "You play a game."},
            {"role": "user", "content": "Which colour is the square?"}]


@pytest.fixture(scope="module")
def client(real_openai_server):
    return openai.OpenAI(base_url=real_openai_server.base_url, api_key="unused", max_retries=0, timeout=60)


def ask(client, **kwargs):
    kwargs.setdefault("messages", MESSAGES)
    kwargs.setdefault("max_tokens", 24)
    return client.chat.completions.create(model=REPO_ID, temperature=0, seed=1, **kwargs)


def test_the_model_is_listed(client):
    assert REPO_ID in [m.id for m in client.models.list().data]


def test_a_completion_has_content_and_usage(client):
    answer = ask(client)
    choice = answer.choices[0]
    assert choice.message.role == "assistant"
    assert isinstance(choice.message.content, str) and choice.message.content.strip()
    assert choice.finish_reason in ("stop", "length")
    assert answer.model.startswith(REPO_ID)   # reported as "groundtalk/tiny-chat@main"
    usage = answer.usage
    assert usage.prompt_tokens > 10 and 0 < usage.completion_tokens <= 24
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens


def test_a_stream_yields_chunks_and_ends_with_the_usage(client):
    whole = ask(client).choices[0].message.content
    chunks = list(ask(client, stream=True, stream_options={"include_usage": True}))
    assert all(c.object == "chat.completion.chunk" for c in chunks)
    pieces = [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]
    assert len(pieces) > 3 and "".join(pieces) == whole   # greedy: the same words, in pieces
    last = chunks[-1]
    # transformers serve puts the usage on the chunk with finish_reason (OpenAI sends a chunk of its own)
    assert last.usage is not None and last.usage.completion_tokens > 0
    assert last.choices and last.choices[0].finish_reason in ("stop", "length")
    assert all(c.usage is None for c in chunks[:-1])


def test_response_format_json_schema_is_accepted_and_not_enforced(client):
    answer = ask(client, response_format={"type": "json_schema", "json_schema": {
        "name": "decision", "strict": True, "schema": COLOUR}})
    content = answer.choices[0].message.content
    try:
        decision = json.loads(content)
    except json.JSONDecodeError:
        return   # not even JSON: the agent's repair path
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(decision, COLOUR)


def test_an_image_part_is_accepted_and_dropped_by_a_text_model(client):
    buf = io.BytesIO()
    Image.new("RGB", (8, 8), "blue").save(buf, "PNG")
    url = "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()
    with_image = [MESSAGES[0], {"role": "user", "content": [
        {"type": "text", "text": MESSAGES[1]["content"]}, {"type": "image_url", "image_url": {"url": url}}]}]
    answer = ask(client, messages=with_image)
    assert answer.usage.prompt_tokens == ask(client).usage.prompt_tokens


def test_a_model_the_server_is_not_pinned_to_is_refused(client):
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(model="gpt-9", messages=MESSAGES, max_tokens=4)
