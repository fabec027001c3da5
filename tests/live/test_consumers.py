"""The seat websocket, through the real ASGI app and the Redis channel layer.

Every piece of bad input gets a typed error and changes nothing; a dropped connection resumes
the same seat with exactly the events it missed.
"""
from __future__ import annotations

import asyncio
import json

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from live.models import Match, MatchEvent
from groundtalk_web.asgi import application

from tests.support.factories import colors_match, listener_target

pytestmark = pytest.mark.django_db(transaction=True)


async def connect(match_id, token=None, last_seq=None):
    comm = WebsocketCommunicator(application, f"/ws/match/{match_id}/", headers=[(b"origin", b"http://localhost")])
    ok, _ = await comm.connect()
    assert ok
    if token is not None:
        await comm.send_json_to({"type": "join", "token": token, "last_seq": last_seq})
        joined = await comm.receive_json_from(timeout=5)
        assert joined["type"] == "joined", joined
        return comm, joined
    return comm, None


async def until(comm, kind, timeout=5):
    while True:
        msg = await comm.receive_json_from(timeout=timeout)
        if msg["type"] == kind:
            return msg


@database_sync_to_async
def make_match(rounds=3):
    match, seats = colors_match(rounds=rounds)
    return match, seats


@database_sync_to_async
def snapshot(match_id):
    m = Match.objects.get(pk=match_id)
    return m.seq, m.state, list(MatchEvent.objects.filter(match=m).values_list("seq", "type"))


async def test_join_gets_view_and_hidden_information_stays_hidden():
    match, seats = await make_match()
    speaker, sj = await connect(match.id, seats["speaker"].token)
    listener, lj = await connect(match.id, seats["listener"].token)
    assert sj["role"] == "speaker" and lj["role"] == "listener"
    assert sum(c.get("target", False) for c in sj["view"]["colors"]) == 1
    assert all("target" not in c for c in lj["view"]["colors"])
    assert "target" not in json.dumps(lj)  # nothing in the listener's stream names the target
    await speaker.disconnect()
    await listener.disconnect()


async def test_chat_reaches_partner_and_is_acked():
    match, seats = await make_match()
    speaker, _ = await connect(match.id, seats["speaker"].token)
    listener, _ = await connect(match.id, seats["listener"].token)
    await speaker.send_json_to({"type": "action", "id": "a1", "action": {"type": "chat", "text": "<b>teal</b>"}})
    got = await until(listener, "events")
    assert got["events"][0]["type"] == "message_sent"
    assert got["events"][0]["payload"]["text"] == "<b>teal</b>"  # stored and sent as text, never rendered here
    assert got["view"]["can_click"] is True
    ack = await until(speaker, "ack")
    assert ack["id"] == "a1" and ack["duplicate"] is False
    await speaker.send_json_to({"type": "action", "id": "a1", "action": {"type": "chat", "text": "<b>teal</b>"}})
    again = await until(speaker, "ack")
    assert again["duplicate"] is True and again["seq"] == ack["seq"]
    seq, state, _ = await snapshot(match.id)
    assert len(state["messages"]) == 1
    await speaker.disconnect()
    await listener.disconnect()


@pytest.mark.parametrize("frame,code", [
    ("{not json", "bad_json"),
    ("[1, 2]", "bad_message"),
    (json.dumps({"type": "teleport"}), "unknown_message"),
    (json.dumps({"type": "action", "id": "z", "action": {"type": "fly"}}), "unknown_action"),
    (json.dumps({"type": "action", "id": "z", "action": "chat"}), "bad_action"),
    (json.dumps({"type": "action", "action": {"type": "chat", "text": "hi"}}), "bad_action_id"),
    (json.dumps({"type": "action", "id": "z", "action": {"type": "chat", "text": "   "}}), "empty_message"),
    (json.dumps({"type": "action", "id": "z", "action": {"type": "chat", "text": "y" * 141}}), "message_too_long"),
    (json.dumps({"type": "action", "id": "z", "action": {"type": "click", "position": 0, "round": 1}}), "wrong_role"),
    (json.dumps({"type": "action", "id": "z", "action": {"type": "chat", "text": "x" * 9000}}), "too_large"),
])
async def test_bad_input_gets_typed_error_and_changes_nothing(frame, code):
    match, seats = await make_match()
    before = await snapshot(match.id)
    speaker, _ = await connect(match.id, seats["speaker"].token)
    await speaker.send_to(text_data=frame)
    err = await until(speaker, "error")
    assert err["code"] == code, err
    assert err["message"]
    assert await snapshot(match.id) == before
    await speaker.disconnect()


async def test_listener_out_of_turn_and_after_round_end():
    match, seats = await make_match()
    speaker, _ = await connect(match.id, seats["speaker"].token)
    listener, _ = await connect(match.id, seats["listener"].token)
    await listener.send_json_to({"type": "action", "id": "l0", "action": {"type": "click", "position": 0, "round": 1}})
    assert (await until(listener, "error"))["code"] == "speaker_first"
    await speaker.send_json_to({"type": "action", "id": "s1", "action": {"type": "chat", "text": "green"}})
    await until(speaker, "ack")
    await listener.send_json_to({"type": "action", "id": "l1", "action": {"type": "click", "position": 1, "round": 1}})
    await until(listener, "ack")
    before = await snapshot(match.id)
    await listener.send_json_to({"type": "action", "id": "l2", "action": {"type": "click", "position": 2, "round": 1}})
    assert (await until(listener, "error"))["code"] == "round_over"
    assert await snapshot(match.id) == before
    await speaker.disconnect()
    await listener.disconnect()


async def test_tokens_for_another_match_or_nonsense_are_refused():
    m1, s1 = await make_match()
    m2, s2 = await make_match()
    comm, _ = await connect(m1.id)
    await comm.send_json_to({"type": "join", "token": s2["speaker"].token, "last_seq": None})
    assert (await until(comm, "error"))["code"] == "wrong_match"
    await comm.send_json_to({"type": "join", "token": "nope", "last_seq": None})
    assert (await until(comm, "error"))["code"] == "bad_token"
    await comm.send_json_to({"type": "action", "id": "a", "action": {"type": "chat", "text": "hi"}})
    assert (await until(comm, "error"))["code"] == "not_joined"
    await comm.send_json_to({"type": "join", "token": s1["speaker"].token, "last_seq": -3})
    assert (await until(comm, "error"))["code"] == "bad_last_seq"
    await comm.disconnect()


async def test_flood_is_rate_limited_and_nothing_extra_is_applied():
    match, seats = await make_match()
    speaker, _ = await connect(match.id, seats["speaker"].token)
    for i in range(60):
        await speaker.send_json_to({"type": "action", "id": f"f{i}", "action": {"type": "chat", "text": f"spam {i}"}})
    acks, limited = 0, 0
    for _ in range(60):
        msg = await speaker.receive_json_from(timeout=10)
        while msg["type"] == "events":
            msg = await speaker.receive_json_from(timeout=10)
        if msg["type"] == "ack":
            acks += 1
        elif msg["type"] == "error" and msg["code"] == "rate_limited":
            limited += 1
    assert limited > 0 and acks + limited == 60
    _, state, _ = await snapshot(match.id)
    assert len(state["messages"]) == acks
    await speaker.disconnect()


async def test_reconnect_resumes_with_exactly_the_missed_events():
    match, seats = await make_match()
    speaker, _ = await connect(match.id, seats["speaker"].token)
    listener, lj = await connect(match.id, seats["listener"].token)
    last_seen = lj["seq"]
    await listener.disconnect()  # the listener's network drops
    await speaker.send_json_to({"type": "action", "id": "s1", "action": {"type": "chat", "text": "pale blue"}})
    await until(speaker, "ack")
    await speaker.send_json_to({"type": "action", "id": "s2", "action": {"type": "chat", "text": "not the grey"}})
    await until(speaker, "ack")
    listener, again = await connect(match.id, seats["listener"].token, last_seq=last_seen)
    assert [e["seq"] for e in again["events"]] == [last_seen + 1, last_seen + 2]
    assert [e["payload"]["text"] for e in again["events"]] == ["pale blue", "not the grey"]
    assert again["reset"] is False and len(again["view"]["messages"]) == 2
    # a reload without a known seq gets the full view instead
    fresh, snap = await connect(match.id, seats["listener"].token, last_seq=None)
    assert snap["reset"] is True and snap["events"] == [] and len(snap["view"]["messages"]) == 2
    await fresh.disconnect()
    await listener.disconnect()
    await speaker.disconnect()


async def test_out_of_order_batches_are_sent_in_seq_order_without_reading_the_log():
    match, seats = await make_match()
    listener, lj = await connect(match.id, seats["listener"].token)
    from live.services import match_apply_action
    from unittest import mock

    sent = []
    with mock.patch("live.broadcast.broadcast_events", side_effect=lambda **kw: sent.append(kw)):
        for text in ("one", "two"):
            await database_sync_to_async(match_apply_action)(match_id=match.id, role="speaker",
                                                             action={"type": "chat", "text": text})
    from live.broadcast import broadcast_events
    from live import selectors
    with mock.patch.object(selectors, "seat_snapshot", side_effect=AssertionError("read the log")):
        await database_sync_to_async(broadcast_events)(**sent[1])   # seq n+2 first
        await asyncio.sleep(0.05)
        await database_sync_to_async(broadcast_events)(**sent[0])   # then seq n+1
        first = await until(listener, "events")
        second = await until(listener, "events")
    assert [e["payload"]["text"] for e in first["events"] + second["events"]] == ["one", "two"]
    assert second["view"]["messages"][-1]["text"] == "two"
    await listener.disconnect()


async def test_consumer_fills_a_gap_left_by_a_lost_notification():
    """Channels may drop a message: the consumer notices the seq gap and reads the log."""
    match, seats = await make_match()
    listener, lj = await connect(match.id, seats["listener"].token)
    from live.services import match_apply_action

    apply = database_sync_to_async(match_apply_action)
    # simulate a lost broadcast: apply an action whose notification never reaches this consumer
    from unittest import mock

    with mock.patch("live.broadcast.broadcast_events"):
        await apply(match_id=match.id, role="speaker", action={"type": "chat", "text": "lost"})
        await asyncio.sleep(0.2)
    await apply(match_id=match.id, role="speaker", action={"type": "chat", "text": "seen"})
    got = await until(listener, "events")
    assert [e["payload"]["text"] for e in got["events"]] == ["lost", "seen"]
    assert [e["seq"] for e in got["events"]] == [lj["seq"] + 1, lj["seq"] + 2]
    await listener.disconnect()


async def test_partner_told_only_when_last_connection_of_a_seat_closes():
    match, seats = await make_match()
    speaker, _ = await connect(match.id, seats["speaker"].token)
    first, _ = await connect(match.id, seats["listener"].token)
    second, _ = await connect(match.id, seats["listener"].token)  # a reload opens the new tab first
    await first.disconnect()
    await second.send_json_to({"type": "ping"})
    await until(second, "pong")
    msgs = []
    while not await speaker.receive_nothing(timeout=0.3):
        msgs.append(await speaker.receive_json_from())
    assert not any(m["type"] == "presence" and m["connected"] is False for m in msgs)
    await second.disconnect()
    gone = await until(speaker, "presence")
    while gone["connected"]:
        gone = await until(speaker, "presence")
    assert gone == {"type": "presence", "role": "listener", "connected": False}
    await speaker.disconnect()


async def test_a_burst_of_actions_is_applied_in_the_order_sent_and_acked_in_that_order():
    """Actions run as tasks (so partner events are not held up behind them), one at a time per seat."""
    match, seats = await make_match()
    speaker, _ = await connect(match.id, seats["speaker"].token)
    for i in range(8):
        await speaker.send_json_to({"type": "action", "id": f"b{i}", "action": {"type": "chat", "text": f"m{i}"}})
    acks = []
    while len(acks) < 8:
        msg = await speaker.receive_json_from(timeout=5)
        if msg["type"] == "ack":
            acks.append(msg)
    assert [a["id"] for a in acks] == [f"b{i}" for i in range(8)]
    assert [a["seq"] for a in acks] == sorted(a["seq"] for a in acks)
    texts = await database_sync_to_async(lambda: list(
        MatchEvent.objects.filter(match_id=match.id, type="message_sent").order_by("seq")
        .values_list("payload__text", flat=True)))()
    assert texts == [f"m{i}" for i in range(8)]
    await speaker.disconnect()


async def test_an_action_whose_socket_closes_at_once_is_still_applied():
    match, seats = await make_match()
    speaker, _ = await connect(match.id, seats["speaker"].token)
    await speaker.send_json_to({"type": "action", "id": "gone", "action": {"type": "chat", "text": "still here"}})
    await speaker.disconnect()
    for _ in range(100):
        _, _, events = await snapshot(match.id)
        if any(kind == "message_sent" for _, kind in events):
            break
        await asyncio.sleep(0.05)
    assert any(kind == "message_sent" for _, kind in events)
    again, _ = await connect(match.id, seats["speaker"].token)
    await again.send_json_to({"type": "action", "id": "gone", "action": {"type": "chat", "text": "still here"}})
    ack = await until(again, "ack")
    assert ack["duplicate"] is True  # the re-sent action is recognised, not applied twice
    await again.disconnect()
