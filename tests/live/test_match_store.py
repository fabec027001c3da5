"""The conditional write (live/match_store.py) against PostgreSQL.

An action on the snapshot this process wrote last is one statement that writes only if the match
row is still at that seq, still active, and the seat has not sent this action id; otherwise nothing
is written and the locked way decides. These tests commit for real (``transaction=True``): the
snapshot cache is filled only on commit.
"""
from __future__ import annotations


import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from live import match_store
from games.base import IllegalAction
from live.models import Match, MatchEvent
from live.services import match_abort, match_apply_action, match_replay

from tests.support.factories import colors_match, listener_target, run_in_threads

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL only"),
    pytest.mark.django_db(transaction=True),
]


def chat(match, role, text, action_id="", **kw):
    return match_apply_action(match_id=match.id, role=role, action={"type": "chat", "text": text},
                              client_action_id=action_id, **kw)


def log(match):
    return list(MatchEvent.objects.filter(match=match).order_by("seq")
                .values_list("seq", "type", "actor", "payload", "private", "action", "client_action_id"))


def test_an_action_on_this_process_s_snapshot_is_one_statement():
    match, _ = colors_match()
    chat(match, "speaker", "the teal one", "a1")          # the locked way; fills the cache on commit
    assert match_store.cached_match(match.id).seq == match.seq + 1
    with CaptureQueriesContext(connection) as queries:
        result = chat(match, "listener", "which teal?", "b1")
    assert len(queries) == 1, [q["sql"][:80] for q in queries]
    assert queries[0]["sql"].startswith("WITH updated AS (UPDATE games_match")
    match.refresh_from_db()
    assert (result.first_seq, result.last_seq) == (match.seq, match.seq)
    assert [m["text"] for m in match.state["messages"]] == ["the teal one", "which teal?"]
    assert match.state == match_replay(match)


def test_a_snapshot_another_process_moved_past_writes_nothing_and_the_locked_way_applies_it():
    match, _ = colors_match()
    chat(match, "speaker", "one", "s1")
    stale = match_store.state_cache.entry(match.id)
    chat(match, "listener", "two", "l1")                  # "another process" moves the match on
    match_store.state_cache.put(match.id, *stale)         # ... and this one has not seen it
    result = chat(match, "speaker", "three", "s2")
    match.refresh_from_db()
    assert [m["text"] for m in match.state["messages"]] == ["one", "two", "three"]
    assert result.last_seq == match.seq == stale[0] + 2
    assert [row[0] for row in log(match)] == list(range(1, match.seq + 1))
    assert match.state == match_replay(match)


def test_a_repeated_action_id_is_answered_with_the_original_and_not_applied_again():
    match, _ = colors_match()
    chat(match, "speaker", "warm up", "s0")
    first = chat(match, "speaker", "blue", "same")        # conditional
    again = chat(match, "speaker", "blue", "same")        # conditional refused: the id is logged
    match.refresh_from_db()
    assert again.duplicate and (again.first_seq, again.last_seq) == (first.first_seq, first.last_seq)
    assert [m["text"] for m in match.state["messages"]] == ["warm up", "blue"]
    # the same id from the other seat is another action
    chat(match, "listener", "blue?", "same")
    match.refresh_from_db()
    assert len(match.state["messages"]) == 3


def test_a_match_that_ended_elsewhere_refuses_the_action_whatever_the_cache_says():
    match, _ = colors_match()
    chat(match, "speaker", "hello", "s1")
    # the status changes without this process seeing it (seq unchanged: only the status guards)
    Match.objects.filter(pk=match.id).update(status=Match.Status.ABORTED)
    with pytest.raises(IllegalAction) as exc:
        chat(match, "listener", "hi", "l1")
    assert exc.value.code == "game_over"
    Match.objects.filter(pk=match.id).update(status=Match.Status.ACTIVE)
    match_abort(match_id=match.id, reason="researcher stopped it")
    with pytest.raises(IllegalAction):
        chat(match, "listener", "hi", "l1")
    assert MatchEvent.objects.filter(match=match, type="message_sent").count() == 1


def test_refusals_and_stale_expectations_are_those_of_the_locked_way():
    match, _ = colors_match()
    chat(match, "speaker", "red", "s1")
    before = log(match)
    for role, action, code in [
        ("speaker", {"type": "click", "position": 0, "round": 1}, "wrong_role"),
        ("listener", {"type": "chat", "text": ""}, "empty_message"),
        ("referee", {"type": "chat", "text": "hi"}, "wrong_role"),
    ]:
        with pytest.raises(IllegalAction) as exc:
            match_apply_action(match_id=match.id, role=role, action=action, client_action_id="x")
        assert exc.value.code == code
    with pytest.raises(IllegalAction) as exc:
        chat(match, "listener", "late", expected_seq=match.seq)   # the match has moved on since
    assert exc.value.code == "stale"
    assert log(match) == before


def _play(seed: int, try_conditional: bool) -> tuple[list, dict]:
    match, _ = colors_match(rounds=2, seed=seed)
    for n in range(2):
        chat(match, "speaker", f"round {n} target", f"s{n}", try_conditional=try_conditional)
        chat(match, "listener", "that one?", f"l{n}", try_conditional=try_conditional)
        chat(match, "speaker", f"round {n} target", f"s{n}", try_conditional=try_conditional)      # a retry
        match.refresh_from_db()
        match_apply_action(match_id=match.id, role="listener",
                           action={"type": "click", "position": listener_target(match), "round": n + 1},
                           client_action_id=f"c{n}", try_conditional=try_conditional)
    match.refresh_from_db()
    assert match.state == match_replay(match)
    # server times differ between two runs; everything else must not
    rows = [(seq, kind, actor, cid, {k: v for k, v in (action or {}).items() if k != "at"}, payload.get("text"))
            for seq, kind, actor, payload, private, action, cid in log(match)]
    return rows, {"status": match.status, "correct": match.outcome["correct"],
                  "history": [(h["round"], h["chosen"], h["correct"]) for h in match.state["history"]]}


def test_the_same_game_logs_the_same_events_with_and_without_conditional_writes():
    with_conditional = _play(seed=11, try_conditional=True)
    locked_only = _play(seed=11, try_conditional=False)
    assert with_conditional == locked_only
    assert with_conditional[1]["status"] == Match.Status.FINISHED
    assert with_conditional[1]["correct"] == 2


def test_two_seats_racing_on_one_process_lose_nothing_and_apply_nothing_twice():
    """Both seats' actions run on this process (one cache) from 8 threads: conflicting conditional
    writes must fall back, never double-apply or drop."""
    match, _ = colors_match()
    chat(match, "speaker", "start", "start")
    start_seq = match_store.cached_match(match.id).seq

    def work(i: int) -> None:
        for j in range(10):
            for _ in range(2):   # each action sent twice, as a reconnecting client may
                chat(match, ("speaker", "listener")[i % 2], f"m{i}-{j}", f"c{i}-{j}")

    run_in_threads(8, work)
    match.refresh_from_db()
    assert match.seq == start_seq + 80
    assert [row[0] for row in log(match)] == list(range(1, match.seq + 1))
    texts = sorted(m["text"] for m in match.state["messages"] if m["text"] != "start")
    assert texts == sorted(f"m{i}-{j}" for i in range(8) for j in range(10))
    assert match.state == match_replay(match)


def test_a_later_seq_from_the_channel_layer_drops_the_out_of_date_snapshot():
    match, _ = colors_match()
    chat(match, "speaker", "one", "s1")
    seq = match_store.cached_match(match.id).seq
    match_store.state_cache.forget_before(match.id, seq)          # its own commit: kept
    assert match_store.cached_match(match.id).seq == seq
    match_store.state_cache.forget_before(match.id, seq + 1)      # another process's commit
    assert match_store.cached_match(match.id) is None
    with CaptureQueriesContext(connection) as queries:            # so the locked way, no wasted try
        chat(match, "listener", "two", "l1")
    assert not any(q["sql"].startswith("WITH updated") for q in queries)
    assert match_store.cached_match(match.id).seq == seq + 1
