"""``manage.py llm_replay`` (agents/management/commands/llm_replay.py): a batch's recorded LLM calls,
made by the real agent against the stand-in server, rebuilt from the match's log and sent again."""
from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from agents.management.commands.llm_replay import request_sha256, states_at
from agents.models import AgentCall
from live.models import Match

from tests.support.factories import batch as make_batch
from tests.support.llm_agents import PROMPT, models_on_standin, openai_entry, reset_registry
from tests.support.llm_matches import llm_colors_match

pytestmark = pytest.mark.django_db
PINNED = "images = true\nseed = 3\ntemperature = 0\nmax_tokens = 64"


@pytest.fixture
def llm(tmp_path, monkeypatch, openai_standin_server):
    """``llm_speaker`` (pinned: seed, temperature 0, images) and ``llm_streamer`` (streamed, no seed)."""
    url = openai_standin_server.base_url
    with models_on_standin(tmp_path, monkeypatch, openai_standin_server, openai_entry(url, extra=PINNED),
                           openai_entry(url, name="llm_streamer", extra="stream = true")) as server:
        yield server


def replay(*args) -> str:
    out = io.StringIO()
    call_command("llm_replay", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("match ")]


def test_the_rebuilt_request_is_the_recorded_one_and_the_same_answer_is_same(llm):
    b = make_batch(slug="rp-same", game_id="colors_v1", config={"rounds": 2})
    m = llm_colors_match(b, rounds=2)
    llm_colors_match(b, agent="llm_streamer", rounds=1, seed=8)
    recorded = list(AgentCall.objects.filter(match__batch=b).order_by("match__created_at", "seq"))
    assert len(recorded) == 3
    sent_before = [r["body"] for r in llm.chat_requests()]
    llm.reset()
    out = replay("--batch", "rp-same")
    got = lines(out)
    assert len(got) == 3 and all(": same: " in line for line in got), out
    assert f"match {str(m.id)[:8]} speaker@{recorded[0].seq} llm_speaker: same: " \
           '{"message": "The one on the left."}' in got[0]
    # what was sent again is what was sent then, images and all (the stand-in records their sha256)
    assert [r["body"] for r in llm.chat_requests()] == sent_before
    assert "3 call(s) of batch rp-same: 3 same, 0 different, 0 request changed (not sent), 0 error(s)" in out
    assert "llm_streamer: without seed and temperature = 0" in out and "llm_speaker: without" not in out
    # the state each request was rebuilt from is the one the turn was due on
    states = states_at(m, [c.seq for c in recorded[:2]])
    assert states[recorded[0].seq]["round"] == 0 and states[recorded[1].seq]["round"] == 1
    assert request_sha256(recorded[0].request) == request_sha256(json.loads(json.dumps(sent_before[0])))


def test_a_different_answer_is_shown_with_the_recorded_one(llm):
    b = make_batch(slug="rp-diff", game_id="colors_v1", config={"rounds": 2})
    llm_colors_match(b, rounds=2)
    llm.script({"content": json.dumps({"message": "The bright green one."})})
    out = replay("--batch", "rp-diff", "--agent", "llm_speaker")
    first, second = lines(out)
    assert ": DIFFERENT: recorded {\"message\": \"The one on the left.\"}; now {\"message\": \"The bright green one.\"}" \
        in first
    assert ": same: " in second
    assert "2 call(s) of batch rp-diff: 1 same, 1 different" in out


def test_a_changed_prompt_is_refused_unless_forced(llm, tmp_path):
    b = make_batch(slug="rp-changed", game_id="colors_v1", config={"rounds": 1})
    llm_colors_match(b)
    llm.reset()
    (tmp_path / "speaker.txt").write_text(PROMPT.replace("a few words", "one word"))
    reset_registry()
    out = replay("--batch", "rp-changed")
    (line,) = lines(out)
    assert ": REQUEST CHANGED: the rebuilt request differs from the one recorded: the prompt template changed" in line
    assert "these parts of the request differ: messages" in line and "not sent (--force sends it)" in line
    assert llm.chat_requests() == []   # nothing was sent
    assert "0 same, 0 different, 1 request changed (not sent)" in out
    forced = replay("--batch", "rp-changed", "--force")
    assert ": same: " in lines(forced)[0] and "sent with --force although the request changed" in lines(forced)[0]
    (sent,) = llm.chat_requests()
    assert "one word" in sent["body"]["messages"][0]["content"]


def test_errors_limits_and_what_is_not_replayed(llm):
    b = make_batch(slug="rp-more", game_id="colors_v1", config={"rounds": 2})
    llm.script({"status": 404, "message": "gone"})    # the first turn: no answer (skipped)
    llm_colors_match(b, rounds=2)
    active = llm_colors_match(b, rounds=2, seed=9, finish=False)   # not ended: not replayed
    assert Match.objects.get(pk=active.pk).status == Match.Status.ACTIVE
    llm.script({"status": 400, "message": "bad request"})
    out = replay("--batch", "rp-more")
    skipped, error = lines(out)
    assert ": SKIPPED: no answer was recorded (HTTP 404" in skipped
    assert ": ERROR: HTTP 400 from " in error and "bad request" in error
    assert "2 call(s) of batch rp-more: 0 same, 0 different, 0 request changed (not sent), 1 error(s), 1 skipped" in out
    assert len(lines(replay("--batch", "rp-more", "--limit", "1"))) == 1
    with pytest.raises(CommandError, match="No batch 'nope'"):
        replay("--batch", "nope")
    with pytest.raises(CommandError, match="No recorded call of agent 'someone'"):
        replay("--batch", "rp-more", "--agent", "someone")
    empty = make_batch(slug="rp-empty", game_id="colors_v1")
    assert "No recorded LLM call" in replay("--batch", empty.slug)
