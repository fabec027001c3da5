"""Every action gets exactly one answer, whatever fails: the ack when it is in the log, a
retryable ``unavailable`` when the server cannot tell, a final ``internal_error`` when the log says
it was not applied. And a consumer told that the channel layer reconnected reads what it missed."""
from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from django.db import OperationalError

from live import channel_layer, services
from live.models import MatchEvent

from tests.live.test_consumers import connect, make_match, until

pytestmark = pytest.mark.django_db(transaction=True)
CHAT = {"type": "chat", "text": "teal"}


async def test_a_database_failure_before_the_write_asks_for_a_retry_and_the_retry_is_applied_once(monkeypatch):
    match, seats = await make_match()
    speaker, _ = await connect(match.id, seats["speaker"].token)
    real = services.match_apply_action_async

    async def down(**kwargs):
        raise OperationalError("server closed the connection unexpectedly")

    async def log_down(**kwargs):
        raise OperationalError("connection refused")

    monkeypatch.setattr(services, "match_apply_action_async", down)
    monkeypatch.setattr(services, "action_outcome", log_down)
    await speaker.send_json_to({"type": "action", "id": "a1", "action": CHAT})
    err = await until(speaker, "error")
    assert err["id"] == "a1" and err["code"] == "unavailable" and err["retryable"] is True
    monkeypatch.setattr(services, "match_apply_action_async", real)
    await speaker.send_json_to({"type": "action", "id": "a1", "action": CHAT})
    ack = await until(speaker, "ack")
    assert ack["id"] == "a1" and ack["duplicate"] is False
    assert await database_sync_to_async(MatchEvent.objects.filter(client_action_id="a1").count)() == 1
    await speaker.disconnect()


async def test_a_failure_after_the_commit_is_answered_with_the_ack(monkeypatch):
    match, seats = await make_match()
    speaker, _ = await connect(match.id, seats["speaker"].token)
    real = services.match_apply_action_async

    async def commit_then_fail(**kwargs):
        await real(**kwargs)
        raise ConnectionError("the broker went away after the commit")

    monkeypatch.setattr(services, "match_apply_action_async", commit_then_fail)
    await speaker.send_json_to({"type": "action", "id": "a1", "action": CHAT})
    ack = await until(speaker, "ack")
    assert ack["id"] == "a1" and ack["seq"] > 0
    assert await database_sync_to_async(MatchEvent.objects.filter(client_action_id="a1").count)() == 1
    await speaker.disconnect()


async def test_a_bug_that_applied_nothing_gets_a_final_error(monkeypatch):
    match, seats = await make_match()
    speaker, _ = await connect(match.id, seats["speaker"].token)

    async def bug(**kwargs):
        raise KeyError("oops")

    monkeypatch.setattr(services, "match_apply_action_async", bug)
    await speaker.send_json_to({"type": "action", "id": "a1", "action": CHAT})
    err = await until(speaker, "error")
    assert err["code"] == "internal_error" and err["retryable"] is False and err["id"] == "a1"
    await speaker.send_json_to({"type": "ping"})
    assert (await until(speaker, "pong"))["type"] == "pong"   # exactly one answer, and the seat goes on
    await speaker.disconnect()


async def test_a_resync_after_a_lost_connection_sends_what_was_missed(monkeypatch):
    match, seats = await make_match()
    listener, joined = await connect(match.id, seats["listener"].token, last_seq=0)
    # the speaker's chat is committed while this process hears nothing (its broadcast is lost)
    monkeypatch.setattr("live.broadcast.broadcast_events", lambda **kw: None)
    await database_sync_to_async(services.match_apply_action)(
        match_id=match.id, role="speaker", action=CHAT, client_action_id="s1")
    # what the channel layer's reconnect hook runs (live/channel_layer.py): every seat of the process
    await channel_layer.resync_seats()
    got = await until(listener, "events")
    assert [e["type"] for e in got["events"]] == ["message_sent"]
    assert got["events"][0]["seq"] == joined["seq"] + 1
    await listener.disconnect()
