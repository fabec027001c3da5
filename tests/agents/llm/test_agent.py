"""The LLM agent (agents/llm/agent.py) against a real OpenAI-compatible server process, the scripted
stand-in (tests/support/openai_standin.py): a turn played through the match service, the request
it sent, the retries, the repair, the fallback and the record of every call."""
from __future__ import annotations

import json
import time

import pytest

from agents.models import AgentCall
from agents.services import agent_take_turn
from live.models import Match, MatchEvent, Seat
from live.services import SeatSpec, match_create

from tests.support.llm_agents import openai_entry, reset_registry, use_tiny_roles, write_models_file


@pytest.fixture
def llm(tmp_path, monkeypatch, openai_standin):
    """``setup(**entry)``: one LLM speaker (by default) on the stand-in; returns the stand-in."""
    use_tiny_roles(monkeypatch)

    def setup(*entries: str, **kw):
        write_models_file(tmp_path, monkeypatch, *(entries or [openai_entry(openai_standin.base_url, **kw)]))
        return openai_standin

    yield setup
    monkeypatch.delenv("GT_MODELS_FILE", raising=False)
    reset_registry()


def _play(agent: str = "llm_speaker", role: str = "speaker", config: dict | None = None):
    # on_commit never fires in a test transaction: the agent is not woken, the test plays its turn
    seats = {r: SeatSpec(Seat.Kind.AGENT, agent_name=agent) if r == role else SeatSpec(Seat.Kind.HUMAN)
             for r in ("speaker", "listener")}
    match = match_create(game_id="colors_v1", seats=seats, seed=7, config=config or {"rounds": 2})
    result = agent_take_turn(match_id=match.id, role=role, expected_seq=match.seq)
    return match, result


def _events_after(match):
    return list(MatchEvent.objects.filter(match=match, seq__gt=match.seq).order_by("seq"))


@pytest.mark.django_db
def test_a_turn_asks_the_model_and_plays_its_answer(llm):
    server = llm(extra='temperature = 0\nseed = 7\nmax_tokens = 64\nimages = true\nprice_in = 2.0\nprice_out = 8.0')
    match, result = _play()
    assert result == "acted"
    said = _events_after(match)
    assert [e.type for e in said] == ["message_sent"] and said[0].payload["text"] == "The one on the left."
    # what the server got: the system prompt (the agent's own template, filled), the turn, the images
    (sent,) = server.chat_requests()
    body = sent["body"]
    assert body["model"] == "standin-1" and body["temperature"] == 0 and body["seed"] == 7 and body["max_tokens"] == 64
    assert body["messages"][0] == {"role": "system", "content": "You describe colours. Round 1 of 2. Say which "
                                                                "colour is the target in a few words.\n"}
    assert body["response_format"]["type"] == "json_schema" and body["response_format"]["json_schema"]["strict"]
    assert len(sent["images"]) == 3 and "stream" not in body
    assert sent["authorization"] == "Bearer none"   # api_key_env = "": the endpoint needs no key
    # the record: the request exactly as sent, the images as their sha256
    (call,) = AgentCall.objects.filter(match=match)
    assert call.outcome == "acted" and call.attempt == 1 and call.seq == match.seq and call.role == "speaker"
    assert call.request == body
    assert [p["image_url"]["url"] for p in call.request["messages"][-1]["content"] if p["type"] == "image_url"] == \
        ["sha256:" + i["sha256"] for i in sent["images"]]
    assert json.loads(call.response_text) == {"message": "The one on the left."} == call.decision
    assert call.model_reported == "standin-1" and call.prompt_tokens > 0 and call.completion_tokens > 0
    assert call.cost_usd == pytest.approx((call.prompt_tokens * 2.0 + call.completion_tokens * 8.0) / 1e6)
    assert call.params == {"temperature": 0, "top_p": None, "max_tokens": 64, "seed": 7, "stream": False,
                           "images": True}
    assert call.adapter_version == "tiny-speaker-1" and len(call.prompt_sha256) == 64
    assert call.total_ms > 0 and call.ttft_ms > 0 and call.retries == 0 and call.pacing_ms is None
    # the seat says which model played it
    seat = Seat.objects.get(match=match, role="speaker")
    assert seat.agent_model == {"kind": "openai", "version": "test-1", "base_url": server.base_url,
                                "model": "standin-1", "prompt_sha256": call.prompt_sha256,
                                "adapter_version": "tiny-speaker-1"}


@pytest.mark.django_db
def test_the_key_is_sent_and_never_recorded(llm, monkeypatch):
    monkeypatch.setenv("GT_TEST_LLM_KEY", "sk-test-secret-123")
    llm(api_key_env="GT_TEST_LLM_KEY")
    match, result = _play()
    assert result == "acted"
    assert llm().chat_requests()[0]["authorization"] == "Bearer sk-test-secret-123"
    call = AgentCall.objects.get(match=match)
    stored = json.dumps([call.request, call.params, call.error, Seat.objects.get(match=match, role="speaker").agent_model])
    assert "sk-test-secret" not in stored


@pytest.mark.django_db
def test_429_and_500_are_tried_again_and_retry_after_is_honoured(llm):
    server = llm(timeout_s=15)
    server.script({"status": 429, "retry_after": 1}, {"status": 500}, {"status": 503})
    started = time.monotonic()
    match, result = _play()
    took = time.monotonic() - started
    assert result == "acted"
    got = server.chat_requests()
    assert [r["status"] for r in got] == [429, 500, 503, 200]
    assert got[1]["t"] - got[0]["t"] >= 1.0     # Retry-After: 1
    call = AgentCall.objects.get(match=match)
    assert call.retries == 3 and call.outcome == "acted" and took < 12


@pytest.mark.django_db
def test_a_cut_stream_is_tried_again(llm):
    server = llm(extra="stream = true")
    server.script({"cut_stream_after": 2})
    match, result = _play()
    assert result == "acted" and len(server.chat_requests()) == 2
    call = AgentCall.objects.get(match=match)
    assert call.retries == 1 and call.outcome == "acted" and call.ttft_ms is not None


@pytest.mark.django_db
def test_a_bad_answer_gets_one_repair_request(llm):
    server = llm()
    server.script({"content": "this is not json"})
    match, result = _play()
    assert result == "acted"
    first, repair = server.chat_requests()
    messages = repair["body"]["messages"]
    assert messages[:-2] == first["body"]["messages"]
    assert messages[-2] == {"role": "assistant", "content": "this is not json"}
    assert messages[-1]["role"] == "user" and "not valid JSON" in messages[-1]["content"]
    calls = list(AgentCall.objects.filter(match=match).order_by("attempt"))
    assert [(c.attempt, c.outcome) for c in calls] == [(1, "repaired"), (2, "repaired")]
    assert "not valid JSON" in calls[0].error and calls[0].decision is None and calls[1].error == ""


@pytest.mark.django_db
def test_an_answer_the_rules_refuse_is_repaired(llm):
    """The schema takes 60 characters; this match's rules take 20: the turn context's check
    applies the rules to a copy of the state, and the repair request says what was wrong."""
    server = llm()
    server.script({"content": json.dumps({"message": "x" * 60})})
    match, result = _play(config={"rounds": 2, "max_message_len": 20})
    assert result == "acted"
    repair = server.chat_requests()[1]["body"]["messages"][-1]["content"]
    assert "message_too_long" in repair and "the limit is 20" in repair
    assert Match.objects.get(pk=match.pk).seq == match.seq + 1    # the refused answer wrote nothing


@pytest.mark.django_db
def test_a_second_bad_answer_lets_the_fallback_act_and_the_person_is_told(llm):
    server = llm()
    server.script({"content": '{"wrong": 1}'}, {"content": '{"message": "   "}'})
    match, result = _play()
    assert result == "fallback"
    notice, move = _events_after(match)
    assert notice.type == "agent_timed_out" and notice.payload["reason"] == "illegal"
    assert notice.payload["fallback"] == "colors_lexicon_speaker" and "could not be used" in notice.payload["message"]
    assert move.type == "message_sent"
    calls = list(AgentCall.objects.filter(match=match).order_by("attempt"))
    assert [(c.attempt, c.outcome) for c in calls] == [(1, "fallback"), (2, "fallback")]
    assert "non-empty" in calls[1].error


@pytest.mark.django_db
def test_an_endpoint_that_refuses_lets_the_fallback_act_at_once(llm):
    server = llm(model="not-served", timeout_s=20)
    started = time.monotonic()
    match, result = _play()
    assert result == "fallback" and time.monotonic() - started < 5    # a 404 is not tried again
    notice = _events_after(match)[0]
    assert notice.payload["reason"] == "error"
    call = AgentCall.objects.get(match=match)
    assert call.outcome == "error" and "HTTP 404" in call.error and len(server.chat_requests()) == 1


@pytest.mark.django_db
def test_a_stalled_endpoint_is_given_up_within_the_timeout(llm):
    server = llm(timeout_s=3, extra="stream = true")
    server.script({"stall_s": 30})
    started = time.monotonic()
    match, result = _play()
    assert result == "fallback" and time.monotonic() - started < 3.5
    assert _events_after(match)[0].payload["reason"] == "timeout"
    assert AgentCall.objects.get(match=match).outcome == "error"


@pytest.mark.django_db
def test_a_stream_that_stalls_midway_is_cut_at_the_deadline(llm):
    server = llm(timeout_s=3, extra="stream = true")
    server.script({"stall_s": 30, "stall_after_chunks": 2})
    started = time.monotonic()
    match, result = _play()
    assert result == "fallback" and time.monotonic() - started < 3.5
    call = AgentCall.objects.get(match=match)
    assert call.outcome == "error" and "cut at the deadline" in call.error


@pytest.mark.django_db
def test_waiting_for_a_slot_of_max_concurrency_is_recorded(llm):
    import threading

    from agents.llm import slots

    server = llm(extra="max_concurrency = 1")
    key = slots.key_for(server.base_url, "standin-1")
    held, release = threading.Event(), threading.Event()

    def hold():
        with slots.slot(key, 1, deadline=time.monotonic() + 5, lease_s=5):
            held.set()
            release.wait(5)

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait(5)
    seats = {"speaker": SeatSpec(Seat.Kind.AGENT, agent_name="llm_speaker"), "listener": SeatSpec(Seat.Kind.HUMAN)}
    match = match_create(game_id="colors_v1", seats=seats, seed=7, config={"rounds": 2})
    # the slot is given back 1.5 s after the turn starts (the match made first: on a loaded machine
    # making it took a good part of a timer started before it)
    threading.Timer(1.5, release.set).start()
    result = agent_take_turn(match_id=match.id, role="speaker", expected_seq=match.seq)
    holder.join(5)
    assert result == "acted"
    call = AgentCall.objects.get(match=match)
    assert 800 <= call.queue_ms <= 3000 and call.total_ms < call.queue_ms


@pytest.mark.django_db
def test_no_slot_within_the_timeout_is_busy(llm):
    import threading

    from agents.llm import slots

    server = llm(timeout_s=2, extra="max_concurrency = 1")
    key = slots.key_for(server.base_url, "standin-1")
    held, release = threading.Event(), threading.Event()

    def hold():
        with slots.slot(key, 1, deadline=time.monotonic() + 5, lease_s=10):
            held.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait(5)
    try:
        match, result = _play()
    finally:
        release.set()
        holder.join(5)
    assert result == "fallback" and server.chat_requests() == []
    notice = _events_after(match)[0]
    assert notice.payload["reason"] == "busy" and "too busy" in notice.payload["message"]


@pytest.mark.django_db
def test_a_whole_colour_game_played_by_two_llm_agents_through_the_games_adapter(tmp_path, monkeypatch, openai_standin):
    """The colour game's own adapter (games/colors/llm.py, its default prompts), both seats, images
    and streaming on: every turn is the model's answer (the stand-in answers schema-valid decisions)."""
    from games.registry import get_game

    extra = "stream = true\nimages = true\nmax_concurrency = 4\nprice_in = 1.0\nprice_out = 1.0"
    speaker = openai_entry(openai_standin.base_url, extra=extra).replace('prompt = "speaker.txt"\n', "")
    listener = openai_entry(openai_standin.base_url, name="llm_listener", role="listener",
                            extra=extra).replace('prompt = "listener.txt"\n', "")
    write_models_file(tmp_path, monkeypatch, speaker, listener)
    try:
        seats = {"speaker": SeatSpec(Seat.Kind.AGENT, agent_name="llm_speaker"),
                 "listener": SeatSpec(Seat.Kind.AGENT, agent_name="llm_listener")}
        match = match_create(game_id="colors_v1", seats=seats, seed=3, config={"rounds": 3})
        rules = get_game("colors_v1").rules
        for _ in range(20):
            match.refresh_from_db()
            if match.status != Match.Status.ACTIVE:
                break
            for role in rules.to_act(match.state):
                assert agent_take_turn(match_id=match.id, role=role, expected_seq=match.seq) == "acted"
    finally:
        reset_registry()
    assert match.status == Match.Status.FINISHED and match.outcome["played"] == 3
    calls = list(AgentCall.objects.filter(match=match))
    assert len(calls) == 6 and {c.outcome for c in calls} == {"acted"}
    assert all(c.prompt_tokens and c.cost_usd > 0 and c.adapter_version == "colors-llm/1" for c in calls)
    assert not MatchEvent.objects.filter(match=match, type="agent_timed_out").exists()
    got = openai_standin.chat_requests()
    assert all(r["body"]["stream"] and r["images"] for r in got) and len(got) == 6
    records = {s.role: s.agent_model for s in Seat.objects.filter(match=match)}
    assert records["listener"]["prompt_sha256"] != records["speaker"]["prompt_sha256"]


def test_what_a_server_asks_to_wait_is_read_in_each_form():
    import email.utils

    from agents.llm.agent import _backoff, _retry_after

    assert _retry_after({"retry-after-ms": "1500"}) == 1.5
    assert _retry_after({"retry-after": "3"}) == 3.0
    in_4_s = email.utils.formatdate(time.time() + 4, usegmt=True)
    assert 2.5 < _retry_after({"retry-after": in_4_s}) <= 4.0
    assert _retry_after({"retry-after": "soon"}) == 0.0 and _retry_after({}) == 0.0
    assert all(0.25 <= _backoff(0) <= 0.5 and 4 <= _backoff(4) <= 8 and 4 <= _backoff(9) <= 8 for _ in range(50))


@pytest.mark.django_db(transaction=True)
def test_an_answer_after_the_watchdogs_fallback_is_recorded_stale(llm):
    import threading

    from agents.services import agent_fallback_turn

    server = llm(timeout_s=20)
    server.script({"latency_s": 2.0})
    seats = {"speaker": SeatSpec(Seat.Kind.AGENT, agent_name="llm_speaker"), "listener": SeatSpec(Seat.Kind.HUMAN)}
    # woken on commit, into a queue no worker serves here: this test plays the turn itself
    match = match_create(game_id="colors_v1", seats=seats, seed=7, config={"rounds": 2})
    got = {}
    turn = threading.Thread(target=lambda: got.update(result=agent_take_turn(
        match_id=match.id, role="speaker", expected_seq=match.seq)))
    turn.start()
    time.sleep(1.0)    # the model is still thinking when the watchdog's fallback plays
    assert agent_fallback_turn(match_id=match.id, role="speaker", expected_seq=match.seq) == "fallback"
    turn.join(20)
    assert got["result"] == "stale"
    assert AgentCall.objects.get(match=match).outcome == "stale"


@pytest.mark.django_db
def test_gt_agent_timeout_s_caps_the_agents_own_deadline(llm, settings):
    settings.GT_AGENT_TIMEOUT_S = 2
    server = llm(timeout_s=30)
    server.script({"stall_s": 30})
    started = time.monotonic()
    match, result = _play()
    assert result == "fallback" and time.monotonic() - started < 2.5
