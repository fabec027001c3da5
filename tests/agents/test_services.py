"""Agent seats: a real Celery worker plays the speaker against a human over the websocket; the
watchdog's fallback; stale turns do nothing."""
from __future__ import annotations

import time

import pytest
from channels.db import database_sync_to_async

from agents.services import agent_fallback_turn, agent_take_turn
from live.models import Match, MatchEvent

from tests.support.factories import colors_match, listener_target
from tests.live.test_consumers import connect, until


@pytest.mark.celery
@pytest.mark.django_db(transaction=True)
async def test_human_listener_plays_rounds_with_agent_speaker_on_celery_worker(celery_worker_process):
    match, seats = await database_sync_to_async(colors_match)(
        rounds=3, agents={"speaker": "colors_lexicon_speaker"})
    # last_seq=0: the join brings every event so far. The agent may already have spoken (it is woken
    # when the match is created), and then its message comes with the join, not as a later batch.
    listener, joined = await connect(match.id, seats["listener"].token, last_seq=0)
    assert not joined["reset"]
    batches = [joined]
    for round_no in (1, 2):
        # the worker process's agent speaks; its message reaches the human through Redis
        while True:
            got = batches.pop() if batches else await until(listener, "events", timeout=30)
            said = [e for e in got["events"] if e["type"] == "message_sent" and e["actor"] == "speaker"]
            if said:
                break
        assert said[0]["payload"]["text"]
        assert got["view"]["can_click"] is True and got["view"]["round"] == round_no
        fresh = await database_sync_to_async(Match.objects.get)(pk=match.id)
        await listener.send_json_to({"type": "action", "id": f"click{round_no}", "action": {
            "type": "click", "position": listener_target(fresh), "round": round_no}})
        await until(listener, "ack")
    await listener.disconnect()
    m = await database_sync_to_async(Match.objects.get)(pk=match.id)
    assert m.outcome["correct"] == 2 and m.state["round"] == 2
    n_msgs = await database_sync_to_async(
        lambda: MatchEvent.objects.filter(match=m, type="message_sent", actor="speaker").count())()
    assert n_msgs >= 2


@pytest.mark.django_db
def test_watchdog_fallback_acts_and_tells_the_human():
    match, _ = colors_match(agents={"speaker": "colors_lexicon_speaker"})  # on_commit never fires here
    result = agent_fallback_turn(match_id=match.id, role="speaker", expected_seq=match.seq)
    assert result == "fallback"
    events = list(MatchEvent.objects.filter(match=match, seq__gt=match.seq).order_by("seq"))
    assert events[0].type == "agent_timed_out" and "did not answer in time" in events[0].payload["message"]
    # the notice says a fallback answered; the move itself is logged as the fallback made it
    assert events[0].payload["fallback"] and events[0].seq + 1 == events[1].seq
    assert events[1].type == "message_sent" and "fallback" not in events[1].action
    # the agent's own late answer is now stale and changes nothing
    assert agent_take_turn(match_id=match.id, role="speaker", expected_seq=match.seq) == "stale"


@pytest.mark.django_db
def test_agent_turn_is_a_noop_when_agent_answered_before_watchdog():
    match, _ = colors_match(agents={"speaker": "colors_lexicon_speaker"})
    assert agent_take_turn(match_id=match.id, role="speaker", expected_seq=match.seq) == "acted"
    assert agent_fallback_turn(match_id=match.id, role="speaker", expected_seq=match.seq) == "answered"
    assert MatchEvent.objects.filter(match=match, type="agent_timed_out").count() == 0
