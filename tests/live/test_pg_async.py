"""Actions written on the event loop (live/pg_async.py) through the real consumer, Redis and
PostgreSQL: the same acks, events and log as the thread path, and a clean fall back to it."""
from __future__ import annotations

from unittest import mock

import pytest
from channels.db import database_sync_to_async
from django.db import connection

from live import pg_async, services
from live.services import match_replay

from tests.live.test_consumers import connect, make_match, snapshot, until

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL only"),
    pytest.mark.django_db(transaction=True),
]


async def play_three_actions(match, seats):
    speaker, _ = await connect(match.id, seats["speaker"].token, last_seq=0)
    listener, _ = await connect(match.id, seats["listener"].token, last_seq=0)
    acks = []
    for comm, other, action_id, text in [(speaker, listener, "s1", "the dull teal"),
                                         (listener, speaker, "l1", "the darker one?"),
                                         (speaker, listener, "s2", "yes")]:
        await comm.send_json_to({"type": "action", "id": action_id, "action": {"type": "chat", "text": text}})
        acks.append(await until(comm, "ack"))
        while True:   # the partner sees it (after the events it has not read yet)
            got = await until(other, "events")
            if got["events"][-1]["payload"].get("text") == text:
                break
    await speaker.send_json_to({"type": "action", "id": "s2", "action": {"type": "chat", "text": "yes"}})
    again = await until(speaker, "ack")   # a resend: answered, not applied again
    assert again["duplicate"] is True and again["seq"] == acks[-1]["seq"]
    await speaker.disconnect()
    await listener.disconnect()
    return acks


@database_sync_to_async
def replayed(match_id):
    from live.models import Match

    match = Match.objects.get(pk=match_id)
    return match.state == match_replay(match)


async def test_seat_actions_are_written_on_the_event_loop_with_the_same_outcome():
    match, seats = await make_match()
    calls = []
    real = pg_async.fetchone

    async def counted(sql, params):
        calls.append(sql[:40])
        return await real(sql, params)

    with mock.patch.object(pg_async, "fetchone", counted), \
            mock.patch.object(services, "match_apply_action", wraps=services.match_apply_action) as thread_path:
        acks = await play_three_actions(match, seats)
    # three written on the loop; the resend tried there too, was refused (its id is logged), found
    # no newer snapshot and was answered by the thread path
    assert [c[:22] for c in calls] == ["WITH updated AS (UPDAT"] * 4 + ["SELECT seq, status, ga"]
    assert thread_path.call_count == 1
    seq, state, events = await snapshot(match.id)
    assert [a["seq"] for a in acks] == [seq - 2, seq - 1, seq]
    assert [m["text"] for m in state["messages"]] == ["the dull teal", "the darker one?", "yes"]
    assert [s for s, _ in sorted(events)] == list(range(1, seq + 1))
    assert await replayed(match.id)


async def test_when_the_event_loop_cannot_write_the_thread_path_does_it_once():
    match, seats = await make_match()

    async def unavailable(sql, params):
        raise pg_async.Unavailable("connection refused")

    with mock.patch.object(pg_async, "fetchone", unavailable):
        acks = await play_three_actions(match, seats)
    seq, state, _ = await snapshot(match.id)
    assert [a["seq"] for a in acks] == [seq - 2, seq - 1, seq]
    assert len(state["messages"]) == 3
    assert await replayed(match.id)


async def test_a_snapshot_overtaken_by_another_process_is_read_again_and_written_on_the_loop():
    from live import match_store
    match, seats = await make_match()
    speaker, _ = await connect(match.id, seats["speaker"].token, last_seq=0)
    listener, _ = await connect(match.id, seats["listener"].token, last_seq=0)
    await speaker.send_json_to({"type": "action", "id": "s1", "action": {"type": "chat", "text": "one"}})
    await until(speaker, "ack")
    stale = match_store.state_cache.entry(match.id)
    # another process writes (its broadcast is not seen here: this process's snapshot stays old)
    with mock.patch("live.broadcast.broadcast_events"):
        await database_sync_to_async(services.match_apply_action)(
            match_id=match.id, role="speaker", action={"type": "chat", "text": "two"}, client_action_id="s2",
            try_conditional=False)
    match_store.state_cache.put(match.id, *stale)
    calls = []
    real = pg_async.fetchone

    async def counted(sql, params):
        calls.append("write" if sql.startswith("WITH updated AS (UPDATE") else sql[:18])
        return await real(sql, params)

    with mock.patch.object(pg_async, "fetchone", counted), \
            mock.patch.object(services, "match_apply_action", wraps=services.match_apply_action) as thread_path:
        await listener.send_json_to({"type": "action", "id": "l1", "action": {"type": "chat", "text": "three"}})
        ack = await until(listener, "ack")
    assert thread_path.call_count == 0
    assert calls == ["write", "SELECT seq, status", "write"]   # refused, read again, written
    seq, state, _ = await snapshot(match.id)
    assert ack["seq"] == seq and [m["text"] for m in state["messages"]] == ["one", "two", "three"]
    assert await replayed(match.id)
    await speaker.disconnect()
    await listener.disconnect()
