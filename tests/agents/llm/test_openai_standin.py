"""The scripted OpenAI-compatible stand-in (tests/support/openai_standin.py), through the ``openai``
library and raw HTTP: its default decisions validate against the request's schema, it refuses what
a real server refuses, each scripted fault behaves, and its stream parses as OpenAI's."""
from __future__ import annotations

import asyncio
import base64
import io
import json
import time

import httpx
import jsonschema
import openai
import pytest
from PIL import Image

from tests.support.openai_standin import SENTENCE, OpenAIStandin, instance_of

MODEL = "standin-1"
COLOUR = {"type": "object", "properties": {"colour": {"type": "string", "enum": ["red", "green", "blue"]}},
          "required": ["colour"], "additionalProperties": False}
SCHEMAS = [
    COLOUR,
    {"type": "object", "required": ["message"], "additionalProperties": False,
     "properties": {"message": {"type": "string", "minLength": 1, "maxLength": 8}}},
    {"type": "object", "required": ["image"], "properties": {"image": {"type": "integer", "minimum": 3, "maximum": 9}}},
    {"type": "object", "required": ["pieces"], "additionalProperties": False, "$defs": {
        "piece": {"type": "object", "additionalProperties": False, "required": ["name", "x", "y", "size", "flip"],
                  "properties": {"name": {"enum": ["tree", "sun", "owl"]}, "x": {"type": "number", "minimum": 0},
                                 "y": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
                                 "size": {"type": "integer", "enum": [0, 1, 2]}, "flip": {"type": "boolean"}}}},
     "properties": {"pieces": {"type": "array", "items": {"$ref": "#/$defs/piece"}, "minItems": 2, "maxItems": 5},
                    "done": {"type": "boolean"}}},
    {"type": "object", "required": ["guess", "note"], "properties": {
        "guess": {"anyOf": [{"type": "null"}, {"type": "integer", "minimum": 0}]},
        "note": {"type": ["string", "null"], "pattern": "^[a-z]+$"},
        "tags": {"type": "array", "items": {"enum": ["a", "b", "c"]}, "uniqueItems": True, "minItems": 3},
        "kind": {"const": "ask"}}},
]


def png_url(size=(4, 3)) -> str:
    buf = io.BytesIO()
    Image.new("RGB", size, "red").save(buf, "PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def decision_format(schema: dict) -> dict:
    return {"type": "json_schema", "json_schema": {"name": "decision", "strict": True, "schema": schema}}


def ask(client, **kwargs):
    kwargs.setdefault("messages", [{"role": "user", "content": "Which one?"}])
    return client.chat.completions.create(model=MODEL, **kwargs)


@pytest.fixture
def client(openai_standin):
    return openai.OpenAI(base_url=openai_standin.base_url, api_key="unused", max_retries=0, timeout=10)


@pytest.mark.parametrize("schema", SCHEMAS)
def test_the_default_decision_validates_against_the_schema(schema):
    jsonschema.validate(instance_of(schema), schema)
    import random

    for seed in range(20):
        jsonschema.validate(instance_of(schema, random.Random(seed)), schema)


def test_a_seeded_stand_in_draws_enum_values_and_answers_a_request_the_same_each_time():
    import random

    drawn = {instance_of(COLOUR, random.Random(seed))["colour"] for seed in range(30)}
    assert drawn == {"red", "green", "blue"}
    assert instance_of(COLOUR) == {"colour": "red"}   # unseeded: the first
    with OpenAIStandin(seed=7) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0)
        answers = [ask(client, messages=[{"role": "user", "content": f"Turn {i}"}],
                       response_format=decision_format(COLOUR)).choices[0].message.content for i in range(12)]
        again = ask(client, messages=[{"role": "user", "content": "Turn 3"}],
                    response_format=decision_format(COLOUR)).choices[0].message.content
    assert again == answers[3]
    assert len({json.loads(a)["colour"] for a in answers}) > 1


def test_models_and_a_valid_decision_through_the_openai_library(openai_standin, client):
    assert [m.id for m in client.models.list().data] == [MODEL]
    schema = SCHEMAS[3]
    answer = ask(client, messages=[
        {"role": "system", "content": "You draw."},
        {"role": "user", "content": [{"type": "text", "text": "The scene:"},
                                     {"type": "image_url", "image_url": {"url": png_url(), "detail": "low"}}]}],
        response_format=decision_format(schema), max_tokens=400, temperature=0, seed=3)
    choice = answer.choices[0]
    assert choice.finish_reason == "stop" and choice.message.role == "assistant"
    jsonschema.validate(json.loads(choice.message.content), schema)
    # "You draw." and "The scene:" are 3 tokens each (words and punctuation runs); one image
    assert answer.usage.prompt_tokens == 3 + 3 + 85
    assert answer.usage.total_tokens == answer.usage.prompt_tokens + answer.usage.completion_tokens > 85
    [request] = openai_standin.chat_requests()
    assert request["status"] == 200 and request["step"] is None
    assert request["images"][0]["width"] == 4 and request["images"][0]["height"] == 3
    url = request["body"]["messages"][1]["content"][1]["image_url"]["url"]
    assert url == "sha256:" + request["images"][0]["sha256"]
    assert request["body"]["seed"] == 3 and request["authorization"] == "Bearer unused"


def test_plain_text_and_json_object_answers(client):
    assert ask(client).choices[0].message.content == SENTENCE
    assert json.loads(ask(client, response_format={"type": "json_object"}).choices[0].message.content)


def test_max_tokens_cuts_the_answer_with_finish_reason_length(client):
    answer = ask(client, max_tokens=2)
    assert answer.choices[0].finish_reason == "length"
    assert answer.choices[0].message.content == "The one"
    assert answer.usage.completion_tokens == 2


def test_a_stream_parses_as_openai_chunks_with_a_final_usage_chunk(client):
    whole = ask(client, response_format=decision_format(SCHEMAS[3])).choices[0].message.content
    chunks = list(ask(client, response_format=decision_format(SCHEMAS[3]), stream=True,
                      stream_options={"include_usage": True}))
    assert all(c.object == "chat.completion.chunk" for c in chunks)
    assert chunks[0].choices[0].delta.role == "assistant"
    assert len(chunks) > 5
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == whole
    assert chunks[-2].choices[0].finish_reason == "stop"
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens > 0
    assert all(c.usage is None for c in chunks[:-1])


def test_the_raw_stream_is_server_sent_events_ending_in_done(openai_standin):
    body = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}], "stream": True}
    with httpx.stream("POST", f"{openai_standin.base_url}/chat/completions", json=body) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        events = [line for line in response.iter_lines() if line]
    assert all(e.startswith("data: ") for e in events)
    assert events[-1] == "data: [DONE]"
    objects = [json.loads(e[len("data: "):]) for e in events[:-1]]
    assert "usage" not in objects[-1]   # not asked for: no usage chunk, no usage key
    assert objects[-1]["choices"][0]["finish_reason"] == "stop"


@pytest.mark.parametrize("body, status, param", [
    ({"model": MODEL}, 400, "messages"),
    ({"model": MODEL, "messages": []}, 400, "messages"),
    ({"model": MODEL, "messages": [{"role": "robot", "content": "x"}]}, 400, "messages.[0].role"),
    ({"model": MODEL, "messages": [{"role": "user"}]}, 400, "messages.[0].content"),
    ({"model": MODEL, "messages": [{"role": "user", "content": [{"type": "video", "video": "x"}]}]}, 400,
     "messages.[0].content.[0].type"),
    ({"model": MODEL, "messages": [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": "https://example.org/a.png"}}]}]}, 400,
     "messages.[0].content.[0].image_url"),
    ({"model": MODEL, "messages": [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,aGVsbG8="}}]}]}, 400,
     "messages.[0].content.[0].image_url"),
    ({"model": MODEL, "messages": [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,%%%"}}]}]}, 400,
     "messages.[0].content.[0].image_url"),
    ({"model": MODEL, "messages": [{"role": "system", "content": [
        {"type": "image_url", "image_url": {"url": png_url()}}]}]}, 400, "messages.[0].content.[0]"),
    ({"model": MODEL, "messages": [{"role": "user", "content": "x"}], "stream_options": {"include_usage": True}},
     400, "stream_options"),
    ({"model": MODEL, "messages": [{"role": "user", "content": "x"}], "temperature": 3}, 400, "temperature"),
    ({"model": MODEL, "messages": [{"role": "user", "content": "x"}], "n": 2}, 400, "n"),
    ({"model": MODEL, "messages": [{"role": "user", "content": "x"}], "max_tokens": 0}, 400, "max_tokens"),
    ({"model": MODEL, "messages": [{"role": "user", "content": "x"}], "temprature": 0}, 400, "temprature"),
    ({"model": MODEL, "messages": [{"role": "user", "content": "x"}], "response_format": {"type": "xml"}}, 400,
     "response_format.type"),
    ({"model": MODEL, "messages": [{"role": "user", "content": "x"}],
      "response_format": {"type": "json_schema", "json_schema": {"schema": COLOUR}}}, 400,
     "response_format.json_schema.name"),
    ({"model": "gpt-9", "messages": [{"role": "user", "content": "x"}]}, 404, "model"),
])
def test_a_request_a_real_server_refuses_gets_an_openai_error(openai_standin, body, status, param):
    response = httpx.post(f"{openai_standin.base_url}/chat/completions", json=body)
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["param"] == param and error["message"] and error["type"] == "invalid_request_error"
    assert openai_standin.chat_requests()[-1]["status"] == status


def test_a_broken_body_is_refused(openai_standin):
    response = httpx.post(f"{openai_standin.base_url}/chat/completions", content=b"{not json",
                          headers={"content-type": "application/json"})
    assert response.status_code == 400 and "parse" in response.json()["error"]["message"]


def test_a_key_is_required_when_the_stand_in_has_one():
    with OpenAIStandin(api_key="sk-test") as server:
        with pytest.raises(openai.AuthenticationError):
            openai.OpenAI(base_url=server.base_url, api_key="wrong", max_retries=0).models.list()
        good = openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
        assert ask(good).choices[0].message.content == SENTENCE
        assert [r["status"] for r in server.requests()] == [401, 200]


def test_scripted_429_then_5xx_then_back_to_default(openai_standin, client):
    assert openai_standin.script({"status": 429, "retry_after": 2}, {"status": 503, "times": 2}) == 3
    raw = httpx.post(f"{openai_standin.base_url}/chat/completions",
                     json={"model": MODEL, "messages": [{"role": "user", "content": "x"}]})
    assert raw.status_code == 429 and raw.headers["retry-after"] == "2"
    assert raw.json()["error"]["code"] == "rate_limit_exceeded"
    for _ in range(2):
        with pytest.raises(openai.InternalServerError) as caught:
            ask(client)
        assert caught.value.status_code == 503
    assert openai_standin.steps_left() == []
    assert ask(client).choices[0].message.content == SENTENCE
    assert [r["status"] for r in openai_standin.chat_requests()] == [429, 503, 503, 200]


def test_the_openai_library_retries_a_429_and_gets_the_answer(openai_standin):
    openai_standin.script({"status": 429, "retry_after": 0})
    retrying = openai.OpenAI(base_url=openai_standin.base_url, api_key="x", max_retries=2)
    assert ask(retrying).choices[0].message.content == SENTENCE
    assert [r["status"] for r in openai_standin.chat_requests()] == [429, 200]


def test_a_request_the_stand_in_refuses_takes_no_step(openai_standin, client):
    openai_standin.script({"status": 500})
    with pytest.raises(openai.BadRequestError):
        ask(client, messages=[{"role": "wizard", "content": "x"}])
    assert openai_standin.steps_left() == [{"status": 500}]


def test_a_stall_outlasts_the_clients_timeout(openai_standin):
    openai_standin.script({"stall_s": 3})
    impatient = openai.OpenAI(base_url=openai_standin.base_url, api_key="x", max_retries=0, timeout=0.5)
    start = time.monotonic()
    with pytest.raises(openai.APITimeoutError):
        ask(impatient)
    assert time.monotonic() - start < 2


def test_a_stall_in_the_middle_of_a_stream(openai_standin, client):
    openai_standin.script({"stall_after_chunks": 2, "stall_s": 0.6})
    stream = ask(client, stream=True)
    times = [(time.monotonic(), chunk) for chunk in stream]
    gaps = [b[0] - a[0] for a, b in zip(times, times[1:])]
    assert max(gaps) >= 0.5 and gaps.index(max(gaps)) == 2   # role chunk, 2 pieces, then the stall


def test_a_cut_stream_ends_without_the_last_chunk(openai_standin, client):
    openai_standin.script({"cut_stream_after": 3})
    got = []
    with pytest.raises(openai.APIConnectionError):
        for chunk in ask(client, stream=True, stream_options={"include_usage": True}):
            got.append(chunk)
    assert len(got) == 4   # the role chunk and 3 pieces
    assert all(c.choices[0].finish_reason is None for c in got)


def test_a_cut_answer_that_does_not_stream(openai_standin, client):
    openai_standin.script({"cut_stream_after": 0})
    with pytest.raises(openai.APIConnectionError):
        ask(client)
    assert ask(client).choices[0].message.content == SENTENCE   # the server is still up


@pytest.mark.parametrize("stream", [False, True])
def test_scripted_malformed_and_wrong_schema_content(openai_standin, client, stream):
    openai_standin.script({"content": "not json"}, {"content": '{"wrong": 1}'})
    got = []
    for _ in range(2):
        if stream:
            got.append("".join(c.choices[0].delta.content or "" for c in
                               ask(client, stream=True, response_format=decision_format(COLOUR)) if c.choices))
        else:
            got.append(ask(client, response_format=decision_format(COLOUR)).choices[0].message.content)
    assert got == ["not json", '{"wrong": 1}']
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(json.loads(got[1]), COLOUR)


def test_a_scripted_latency_and_finish_reason(openai_standin, client):
    openai_standin.script({"latency_s": 0.7, "finish_reason": "length"})
    start = time.monotonic()
    answer = ask(client)
    assert time.monotonic() - start >= 0.7
    assert answer.choices[0].finish_reason == "length"


def test_a_fixed_latency_is_served_concurrently():
    with OpenAIStandin(latency_s=1.0) as server:
        async def many():
            client = openai.AsyncOpenAI(base_url=server.base_url, api_key="x", max_retries=0)
            start = time.monotonic()
            answers = await asyncio.gather(*(client.chat.completions.create(
                model=MODEL, messages=[{"role": "user", "content": "hi"}]) for _ in range(40)))
            return time.monotonic() - start, answers

        took, answers = asyncio.run(many())
    assert len(answers) == 40 and 1.0 <= took < 3.0


def test_stats_count_the_chat_completions_in_flight_at_once():
    with OpenAIStandin(latency_s=0.5) as server:
        async def some(n: int):
            client = openai.AsyncOpenAI(base_url=server.base_url, api_key="x", max_retries=0)
            await asyncio.gather(*(client.chat.completions.create(
                model=MODEL, messages=[{"role": "user", "content": "hi"}]) for _ in range(n)))

        asyncio.run(some(12))
        first = server.stats()
        fresh = server.stats(reset=True)
        asyncio.run(some(5))
        httpx.get(f"{server.base_url}/models", timeout=10)   # not a chat completion
        second = server.stats()
    assert first["max_in_flight"] == 12 and first["chat_completions"] == 12 and first["in_flight"] == 0
    assert 0 < first["mean_in_flight"] <= 12
    assert fresh["max_in_flight"] == 0 and fresh["chat_completions"] == 0
    assert second["max_in_flight"] == 5 and second["chat_completions"] == 5 and second["in_flight"] == 0
    # five calls of at least 0.5 s each (at most twice that on a busy machine) since the reset
    assert 2.45 <= second["mean_in_flight"] * second["since_s"] <= 5.0


def test_a_bad_script_is_refused(openai_standin):
    response = httpx.post(f"{openai_standin.root_url}/_script", json=[{"stauts": 500}])
    assert response.status_code == 400 and "stauts" in response.json()["error"]["message"]
