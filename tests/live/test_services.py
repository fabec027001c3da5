"""The match service against PostgreSQL: sequence numbers, idempotency, staleness, concurrency."""
from __future__ import annotations

import pytest

from games.base import IllegalAction
from live.models import Match, MatchEvent
from live.services import match_apply_action, match_replay

from tests.support.factories import colors_match, listener_target, run_in_threads

pytestmark = pytest.mark.django_db


def events_of(match):
    return list(MatchEvent.objects.filter(match=match).order_by("seq").values_list("seq", "type", "actor"))


def test_create_writes_start_events_with_contiguous_seq():
    match, _ = colors_match()
    seqs = [e[0] for e in events_of(match)]
    assert seqs == list(range(1, match.seq + 1))
    assert events_of(match)[0][1] == "match_started"
    assert events_of(match)[1][1] == "round_started"


def test_action_appends_events_and_snapshot_matches_replay():
    match, _ = colors_match()
    r = match_apply_action(match_id=match.id, role="speaker", action={"type": "chat", "text": "the teal one"},
                           client_action_id="a1")
    match.refresh_from_db()
    assert (r.first_seq, r.last_seq) == (3, 3) and match.seq == 3
    r2 = match_apply_action(match_id=match.id, role="listener",
                            action={"type": "click", "position": listener_target(match), "round": 1},
                            client_action_id="b1")
    match.refresh_from_db()
    types = [e[1] for e in events_of(match)][r2.first_seq - 1:]
    assert types[0] == "color_clicked" and "round_ended" in types and "round_started" in types
    assert match.state == match_replay(match)
    assert match.outcome["correct"] == 1


def test_repeated_client_action_id_is_not_applied_twice():
    match, _ = colors_match()
    first = match_apply_action(match_id=match.id, role="speaker", action={"type": "chat", "text": "blue"},
                               client_action_id="same")
    again = match_apply_action(match_id=match.id, role="speaker", action={"type": "chat", "text": "blue"},
                               client_action_id="same")
    match.refresh_from_db()
    assert again.duplicate and (again.first_seq, again.last_seq) == (first.first_seq, first.last_seq)
    assert len(match.state["messages"]) == 1
    assert MatchEvent.objects.filter(match=match, type="message_sent").count() == 1


@pytest.mark.parametrize("role,action,code", [
    ("listener", {"type": "click", "position": 0, "round": 1}, "speaker_first"),
    ("speaker", {"type": "click", "position": 0, "round": 1}, "wrong_role"),
    ("speaker", {"type": "chat", "text": ""}, "empty_message"),
    ("speaker", {"type": "chat", "text": "x" * 141}, "message_too_long"),
    ("speaker", {"type": "dance"}, "unknown_action"),
    ("speaker", {"type": "chat", "text": "hi", "round": 2}, "bad_round"),
    ("referee", {"type": "chat", "text": "hi"}, "wrong_role"),
])
def test_illegal_actions_change_nothing(role, action, code):
    match, _ = colors_match()
    before = (match.seq, match.state, events_of(match))
    with pytest.raises(IllegalAction) as exc:
        match_apply_action(match_id=match.id, role=role, action=action, client_action_id="x")
    assert exc.value.code == code
    match.refresh_from_db()
    assert (match.seq, match.state, events_of(match)) == before


def test_stale_expected_seq_is_refused():
    match, _ = colors_match()
    match_apply_action(match_id=match.id, role="speaker", action={"type": "chat", "text": "hi"})
    with pytest.raises(IllegalAction) as exc:
        match_apply_action(match_id=match.id, role="speaker", action={"type": "chat", "text": "again"},
                           expected_seq=match.seq)
    assert exc.value.code == "stale"


def test_finished_match_refuses_actions_and_counts_for_players():
    match, _ = colors_match(rounds=1)
    match_apply_action(match_id=match.id, role="speaker", action={"type": "chat", "text": "red"})
    match.refresh_from_db()
    match_apply_action(match_id=match.id, role="listener", action={"type": "click", "position": 0, "round": 1})
    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED and match.finished_at is not None
    with pytest.raises(IllegalAction) as exc:
        match_apply_action(match_id=match.id, role="speaker", action={"type": "chat", "text": "more"})
    assert exc.value.code == "game_over"


@pytest.mark.django_db(transaction=True)
def test_many_concurrent_actions_on_one_match_get_contiguous_seqs():
    """16 threads (16 PostgreSQL connections) chat on one match at once: every message lands once."""
    match, _ = colors_match()
    start_seq = match.seq

    def work(i: int) -> None:
        for j in range(5):
            match_apply_action(match_id=match.id, role=("speaker", "listener")[i % 2],
                               action={"type": "chat", "text": f"m{i}-{j}"}, client_action_id=f"c{i}-{j}")
            # a retry of the same action must not be applied again
            match_apply_action(match_id=match.id, role=("speaker", "listener")[i % 2],
                               action={"type": "chat", "text": f"m{i}-{j}"}, client_action_id=f"c{i}-{j}")

    run_in_threads(16, work)
    match.refresh_from_db()
    seqs = list(MatchEvent.objects.filter(match=match).order_by("seq").values_list("seq", flat=True))
    assert seqs == list(range(1, start_seq + 81))
    texts = sorted(m["text"] for m in match.state["messages"])
    assert texts == sorted(f"m{i}-{j}" for i in range(16) for j in range(5))
    assert match.state == match_replay(match)


def test_game_clock_starts_with_the_match_and_time_up_ends_it_once():
    from live.models import Seat
    from live.services import SeatSpec, match_create, match_time_up

    match = match_create(game_id="codraw_v1", seed=3, seats={"teller": SeatSpec(Seat.Kind.HUMAN),
                                                            "drawer": SeatSpec(Seat.Kind.HUMAN)})
    assert abs(match.config["start_ms"] - match.events.first().t) < 5
    assert match_time_up(match_id=match.id) == "ended"
    match.refresh_from_db()
    assert match.status == Match.Status.TIMED_OUT
    seq = match.seq
    assert match_time_up(match_id=match.id) == "already"  # a second timer changes nothing
    match.refresh_from_db()
    assert match.seq == seq and match.state == match_replay(match)
