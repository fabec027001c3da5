"""An LLM agent's recorded calls as staff see them (research/agent_calls.py): the match page's table
per seat, the batch monitor's numbers per agent, and the ``agent_calls`` of the jsonl export. The
calls are recorded by the real agent (agents/llm/) playing against the stand-in server."""
from __future__ import annotations

import html
import io
import json

import numpy as np
import pytest

from agents.models import AgentCall
from research import agent_calls
from research.exports import run_export
from live.models import Seat
from live.services import SeatSpec, match_create

from tests.support import play
from tests.support.factories import batch as make_batch
from tests.support.llm_agents import models_on_standin, openai_entry, write_models_file
from tests.support.llm_matches import llm_colors_match
from tests.support.staff_users import staff_user

pytestmark = pytest.mark.django_db
PRICED = "images = true\nseed = 3\ntemperature = 0\nprice_in = 2.5\nprice_out = 10.0"


@pytest.fixture
def llm(tmp_path, monkeypatch, openai_standin_server):
    """One LLM speaker (``llm_speaker``, priced, images on) on the stand-in, or the entries given."""
    url = openai_standin_server.base_url
    with models_on_standin(tmp_path, monkeypatch, openai_standin_server, openai_entry(url, extra=PRICED),
                           openai_entry(url, name="llm_speaker_b", extra="stream = true")) as server:
        yield server


@pytest.fixture
def staff(client):
    client.force_login(staff_user("calls-staff", "pw"))
    return client


def test_numbers_in_words():
    assert agent_calls.tokens(None) == "–" and agent_calls.tokens(12345) == "12,345"
    assert agent_calls.duration(None) == "–" and agent_calls.duration(840.4) == "840 ms"
    assert agent_calls.duration(1250) == "1.25 s" and agent_calls.duration(125_000) == "2 min 5 s"
    assert agent_calls.money(None) == "–" and agent_calls.money(0) == "$0" and agent_calls.money(12.345) == "$12.35"
    assert agent_calls.money(0.0153) == "$0.0153" and agent_calls.money(0.000123) == "$0.000123"
    assert agent_calls.money(0.0000123) == "$0.000012" and agent_calls.money(1e-9) == "<$0.000001"


def test_the_match_page_shows_each_call_of_the_llm_seat(llm, staff):
    llm.script({"content": "this is not json"})   # the first turn's answer is repaired
    m = llm_colors_match(rounds=2)
    calls = list(AgentCall.objects.filter(match=m).order_by("seq", "attempt"))
    assert [(c.attempt, c.outcome) for c in calls] == [(1, "repaired"), (2, "repaired"), (1, "acted")]
    page = html.unescape(staff.get(f"/research/matches/{m.id}/").content.decode())
    assert "Calls of the speaker (llm_speaker)" in page and "standin-1 at" in page
    table = page[page.index('<table class="data llm" data-role="speaker">'):]
    table = table[:table.index("</table>")]
    assert table.count("<tr data-call=") == 3 and "2 (repair)" in table
    for c in calls:
        row = table[table.index(f'<tr data-call="{c.pk}"'):]
        row = row[:row.index("</tr>")]
        for shown in (str(c.seq), agent_calls.tokens(c.prompt_tokens), agent_calls.tokens(c.completion_tokens),
                      agent_calls.duration(c.ttft_ms), agent_calls.duration(c.total_ms), agent_calls.money(c.cost_usd),
                      c.outcome):
            assert shown in row, (shown, row)
        # the request behind a click: the JSON sent, the images as their sha256, and the raw answer
        assert '<details class="raw request"><summary>request</summary>' in row
        assert json.dumps(c.request["model"]) in row and row.count('"sha256:') == 3
        assert c.response_text in row
    assert "not valid JSON" in table and "this is not json" in table
    prompt = sum(c.prompt_tokens for c in calls)
    completion = sum(c.completion_tokens for c in calls)
    assert prompt > 0 and (f"{prompt:,} prompt + {completion:,} completion = {prompt + completion:,}" in page)
    assert agent_calls.money(sum(c.cost_usd for c in calls)) in page
    assert "2 turns, 3 calls (1 repaired, 1 acted)" in page


def test_a_match_without_calls_shows_no_table_and_no_traceback(llm, staff):
    plain = play.colors()
    r = staff.get(f"/research/matches/{plain.id}/")
    assert r.status_code == 200 and "Calls of the" not in r.content.decode()
    # an LLM seat that has not played yet
    seats = {"speaker": SeatSpec(Seat.Kind.AGENT, agent_name="llm_speaker"), "listener": SeatSpec(Seat.Kind.HUMAN)}
    waiting = match_create(game_id="colors_v1", seats=seats, config={"rounds": 1})
    page = staff.get(f"/research/matches/{waiting.id}/").content.decode()
    assert "Calls of the speaker (llm_speaker)" in page and "No call recorded for this seat." in page
    assert agent_calls.match_calls(plain) == []


def test_the_monitor_counts_tokens_money_and_times_per_agent(llm, staff):
    b = make_batch(slug="llm-mon", game_id="colors_v1", config={"rounds": 2})
    assert staff.get("/research/batches/llm-mon/?format=json").json()["llm_calls"] == {
        "agents": [], "totals": {"calls": 0, "turns": 0, "repairs": 0, "fallbacks": 0, "errors": 0, "stale": 0,
                                 "prompt_tokens": 0, "completion_tokens": 0, "cost_usd": None}}
    # llm_speaker: a repaired turn, then two acted; a match whose second answer fails twice (fallback)
    llm.script({"content": "nope"})
    llm_colors_match(b, rounds=2)
    llm.script({"latency_s": 0.3}, {"content": '{"x": 1}'}, {"content": '{"x": 2}'})
    llm_colors_match(b, rounds=2, seed=8)
    # llm_speaker_b (streamed, no prices): a 404 is no answer (an error turn)
    llm.script({"status": 404, "message": "gone"})
    llm_colors_match(b, agent="llm_speaker_b", rounds=2, seed=9)
    llm_colors_match(agent="llm_speaker_b", rounds=1)   # in no batch: not counted
    stats = staff.get("/research/batches/llm-mon/?format=json").json()["llm_calls"]
    assert [a["agent"] for a in stats["agents"]] == ["llm_speaker", "llm_speaker_b"]
    a, s = stats["agents"]
    assert (a["turns"], a["calls"], a["repairs"], a["acted"], a["repaired"], a["fallbacks"], a["errors"]) == \
        (4, 6, 2, 2, 1, 1, 0)
    assert (s["turns"], s["calls"], s["repairs"], s["acted"], s["fallbacks"], s["errors"], s["cost_usd"]) == \
        (2, 2, 0, 1, 0, 1, None)
    rows = AgentCall.objects.filter(match__batch=b, agent="llm_speaker")
    assert a["prompt_tokens"] == sum(r.prompt_tokens for r in rows) > 0
    assert a["completion_tokens"] == sum(r.completion_tokens for r in rows) > 0
    assert a["cost_usd"] == pytest.approx(sum(r.cost_usd for r in rows))
    ttft = [r.ttft_ms for r in rows]
    total = [r.total_ms for r in rows]
    assert max(ttft) > 300   # the slow answer
    assert a["ttft_ms"]["mean"] == pytest.approx(np.mean(ttft)) and a["ttft_ms"]["p95"] == pytest.approx(np.percentile(ttft, 95))
    assert a["total_ms"]["mean"] == pytest.approx(np.mean(total)) and a["total_ms"]["p95"] == pytest.approx(np.percentile(total, 95))
    assert stats["totals"]["calls"] == 8 and stats["totals"]["cost_usd"] == pytest.approx(a["cost_usd"])
    # the same numbers computed from the rows (the path of a database without percentile_cont)
    python = agent_calls.aggregate_rows(AgentCall.objects.filter(match__batch=b).values_list(
        "agent", "attempt", "outcome", "prompt_tokens", "completion_tokens", "cost_usd", "ttft_ms", "total_ms"))
    assert [p["ttft_p95"] for p in python] == pytest.approx([x["ttft_ms"]["p95"] for x in stats["agents"]])
    assert [(p["calls"], p["fallbacks"], p["errors"], p["prompt_tokens"]) for p in python] == \
        [(x["calls"], x["fallbacks"], x["errors"], x["prompt_tokens"]) for x in stats["agents"]]
    page = staff.get("/research/batches/llm-mon/").content.decode()
    assert 'id="llm-stats"' in page


def test_the_monitor_poll_costs_one_query_for_the_calls(llm, django_assert_num_queries):
    b = make_batch(slug="llm-q", game_id="colors_v1", config={"rounds": 1})
    llm_colors_match(b)
    with django_assert_num_queries(1):
        agent_calls.batch_call_stats(batch=b)


def test_the_jsonl_export_has_the_calls_as_stored_and_no_key(llm, tmp_path, monkeypatch):
    monkeypatch.setenv("GT_TEST_LLM_KEY", "sk-test-secret-456")
    write_models_file(tmp_path, monkeypatch, openai_entry(llm.base_url, api_key_env="GT_TEST_LLM_KEY", extra=PRICED))
    b = make_batch(slug="llm-exp", game_id="colors_v1", config={"rounds": 1})
    llm.script({"content": "not json"})
    m = llm_colors_match(b)
    plain = play.colors(b)
    out = io.StringIO()
    assert run_export("jsonl", out, batch="llm-exp") == 2
    records = {r["match_id"]: r for r in map(json.loads, out.getvalue().splitlines())}
    assert records[str(plain.id)]["agent_calls"] == []
    calls = records[str(m.id)]["agent_calls"]
    rows = list(AgentCall.objects.filter(match=m).order_by("attempt"))
    assert [(c["attempt"], c["outcome"]) for c in calls] == [(1, "repaired"), (2, "repaired")]
    for c, row in zip(calls, rows):
        assert c["request"] == row.request and c["response_text"] == row.response_text
        assert c["decision"] == row.decision and c["error"] == row.error
        assert (c["prompt_tokens"], c["completion_tokens"], c["ttft_ms"], c["total_ms"], c["cost_usd"]) == \
            (row.prompt_tokens, row.completion_tokens, row.ttft_ms, row.total_ms, row.cost_usd)
        assert c["model_reported"] == "standin-1" and c["role"] == "speaker" and c["seq"] == row.seq
        assert set(c) == set(agent_calls.EXPORT_FIELDS) | {"created_at"}
    assert calls[1]["decision"] == {"message": "The one on the left."}
    images = [p["image_url"]["url"] for p in calls[0]["request"]["messages"][-1]["content"] if p["type"] == "image_url"]
    assert len(images) == 3 and all(u.startswith("sha256:") and len(u) == 7 + 64 for u in images)
    assert "base64" not in out.getvalue() and "sk-test-secret" not in out.getvalue()
    assert llm.chat_requests()[0]["authorization"] == "Bearer sk-test-secret-456"   # the key was sent
