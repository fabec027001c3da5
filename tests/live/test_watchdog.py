"""The watchdog (live/watchdog.py) moves matches on from the database alone: an agent overdue
past its timeout gets its fallback, a game clock that ran out ends the match, a match no agent
can play is aborted. The agent's clock starts when it became due and a human's action does not
restart it."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from agents.registry import get_agent_spec
from games.registry import GAMES
from live.models import Match, MatchEvent
from live.services import match_apply_action
from live.watchdog import watchdog_sweep

from tests.support.factories import colors_match

pytestmark = pytest.mark.django_db(transaction=True)
SPEAKER = "colors_lexicon_speaker"


def moved_on(kind: str, match) -> None:
    """One sweep, as each server process runs it. The session's test server (tests/conftest.py
    live_server_url), when running, sweeps the same database with its own watchdog and may move a
    match on first (SKIP LOCKED: never both); so a test checks what was done, once, rather than
    which process did it. Taking the match's row lock afterwards waits for such a sweep to commit."""
    from django.db import transaction

    result = watchdog_sweep()
    assert set(result) <= {kind} and result.get(kind, 0) <= 1, result
    with transaction.atomic():
        list(Match.objects.select_for_update().filter(pk=match.pk))


def unanswered_speaker():
    """A colors match whose agent speaker is due from now on and never answers: its turn is not
    sent to the agents' queue, for a session's Celery worker (tests/conftest.py
    celery_worker_process, once an earlier test started it) would answer it before the sweep."""
    match, seats = colors_match(agents={"speaker": SPEAKER}, wake_agents=False)
    Match.objects.filter(pk=match.pk).update(agent_seats={"speaker": SPEAKER}, agent_due_since=timezone.now())
    match.refresh_from_db()
    return match, seats


def overdue(match, seconds: float) -> None:
    Match.objects.filter(pk=match.pk).update(agent_due_since=timezone.now() - timedelta(seconds=seconds))


def test_an_agent_seat_that_is_due_is_recorded_with_the_match():
    match, _ = colors_match(agents={"speaker": SPEAKER})
    assert match.agent_due_since is not None   # as created (a worker may have answered since)
    human, _ = colors_match()
    assert Match.objects.get(pk=human.pk).agent_due_since is None


def test_an_overdue_agent_gets_its_fallback_and_the_human_is_told():
    match, _ = unanswered_speaker()
    assert watchdog_sweep() == {}    # within its timeout: nothing to do
    overdue(match, get_agent_spec(SPEAKER).timeout_s + 1)
    moved_on("fallback", match)
    events = list(MatchEvent.objects.filter(match=match).order_by("seq").values_list("type", "actor"))
    assert events[-2:] == [("agent_timed_out", "system"), ("message_sent", "speaker")]
    assert [t for t, _ in events].count("agent_timed_out") == 1   # one fallback, whichever process gave it
    after = Match.objects.get(pk=match.pk)
    assert after.agent_due_since is None        # now the human listener's turn
    assert watchdog_sweep() == {}                # and a second sweep does nothing


def test_a_humans_action_does_not_restart_the_agents_clock():
    match, _ = colors_match(agents={"listener": "colors_literal_listener"}, wake_agents=False)
    # an agent no worker serves: its turn waits (a served one may answer between the two messages)
    Match.objects.filter(pk=match.pk).update(agent_seats={"listener": "served_elsewhere"})
    # the human speaker speaks: the agent listener is due from now on
    match_apply_action(match_id=match.id, role="speaker", action={"type": "chat", "text": "teal"},
                       client_action_id="s1")
    due = Match.objects.get(pk=match.pk).agent_due_since
    assert due is not None
    match_apply_action(match_id=match.id, role="speaker", action={"type": "chat", "text": "the blue one"},
                       client_action_id="s2")
    assert Match.objects.get(pk=match.pk).agent_due_since == due


def test_an_agent_nobody_can_play_ends_the_match():
    match, _ = unanswered_speaker()
    Match.objects.filter(pk=match.pk).update(agent_seats={"speaker": "no_such_agent"},
                                             agent_due_since=timezone.now() - timedelta(hours=1))
    moved_on("aborted", match)
    match.refresh_from_db()
    assert match.status == Match.Status.ABORTED
    assert MatchEvent.objects.filter(match=match, type="match_aborted", payload__reason="agent_failed").exists()


def test_an_agent_this_process_does_not_know_gets_the_default_timeout_first():
    """Another process may serve it (its own models file; a rolling deploy): not aborted at once."""
    from agents.base import AgentSpec

    match, _ = unanswered_speaker()
    default = AgentSpec.__dataclass_fields__["timeout_s"].default
    Match.objects.filter(pk=match.pk).update(agent_seats={"speaker": "served_elsewhere"},
                                             agent_due_since=timezone.now() - timedelta(seconds=default - 5))
    assert watchdog_sweep() == {}
    assert Match.objects.get(pk=match.pk).status == Match.Status.ACTIVE
    overdue(match, default + 1)
    moved_on("aborted", match)
    assert Match.objects.get(pk=match.pk).status == Match.Status.ABORTED


def test_a_game_clock_that_ran_out_ends_the_match():
    match, _ = colors_match()
    Match.objects.filter(pk=match.pk).update(deadline_at=timezone.now() - timedelta(seconds=1))
    moved_on("time_up", match)
    match.refresh_from_db()
    # the colour game's rules have no clock: the match is aborted, saying why
    assert match.status == Match.Status.ABORTED
    assert MatchEvent.objects.filter(match=match, type="match_aborted", payload__reason="time_up").exists()
    assert watchdog_sweep() == {}


def test_codraws_clock_ends_the_match_through_its_rules():
    from live.models import Seat
    from live.services import SeatSpec, match_create

    match = match_create(game_id="codraw_v1", seats={r: SeatSpec(Seat.Kind.HUMAN) for r in ("teller", "drawer")},
                         seed=3, config={"time_limit_s": 60})
    assert match.deadline_at is not None
    Match.objects.filter(pk=match.pk).update(deadline_at=timezone.now() - timedelta(seconds=1))
    moved_on("time_up", match)
    match.refresh_from_db()
    assert match.status == Match.Status.TIMED_OUT          # recorded as timed out, not finished
    assert MatchEvent.objects.filter(match=match, actor="system").exclude(action=None).exists()


def test_an_agent_within_its_timeout_is_left_alone():
    match, _ = unanswered_speaker()
    overdue(match, get_agent_spec(SPEAKER).timeout_s / 2)   # past the sweep's floor, within its timeout
    assert watchdog_sweep() == {}                           # not even claimed (no lock taken)
    assert not MatchEvent.objects.filter(match=match, type="agent_timed_out").exists()


@pytest.mark.parametrize("game_id", list(GAMES))
def test_an_abandoned_match_of_every_game_ends_after_its_inactivity_limit(game_id):
    from crowd.models import Participant
    from live.models import Seat
    from games.registry import get_game
    from live.services import SeatSpec, match_create

    from tests.support.factories import batch as make_batch
    from tests.support.factories import enter

    b = make_batch(game_id=game_id, inactivity_limit_s=300, config={})
    roles = get_game(game_id).roles
    people = [enter(b, f"w-{game_id}-{r}") for r in roles]
    Participant.objects.filter(pk__in=[p.pk for p in people]).update(state=Participant.State.PLAYING)
    match = match_create(game_id=game_id, batch=b, seed=5,
                         seats={r: SeatSpec(Seat.Kind.HUMAN, participant=p) for r, p in zip(roles, people)})
    assert watchdog_sweep() == {}                      # just started
    Match.objects.filter(pk=match.pk).update(updated_at=timezone.now() - timedelta(seconds=299))
    assert watchdog_sweep() == {}                      # within the limit
    Match.objects.filter(pk=match.pk).update(updated_at=timezone.now() - timedelta(seconds=301))
    moved_on("inactive", match)
    match.refresh_from_db()
    assert match.status == Match.Status.ABORTED
    assert MatchEvent.objects.filter(match=match, type="match_aborted", payload__reason="inactive").exists()
    due = set(get_game(game_id).rules.to_act(match.state))
    assert due
    for p in Participant.objects.filter(pk__in=[p.pk for p in people]):   # let go, not re-queued
        role = Seat.objects.get(match=match, participant=p).role
        # the worker the game waited on stopped playing; the other was waiting on them (issue 11)
        want = ("match_inactive", "returned_early") if role in due else ("partner_inactive", "partner_left")
        assert p.state == Participant.State.DONE and (p.exit_reason, p.outcome) == want, role


def test_a_batch_without_an_inactivity_limit_never_aborts_for_it():
    from live.models import Seat
    from live.services import SeatSpec, match_create

    from tests.support.factories import batch as make_batch

    b = make_batch(inactivity_limit_s=0)
    match = match_create(game_id="colors_v1", batch=b, seats={r: SeatSpec(Seat.Kind.HUMAN) for r in ("speaker", "listener")})
    Match.objects.filter(pk=match.pk).update(updated_at=timezone.now() - timedelta(days=3))
    assert watchdog_sweep() == {}


def test_a_timed_out_match_is_exported_only_when_asked_for():
    from live.models import Seat
    from live.selectors import export_matches
    from live.services import SeatSpec, match_create, match_time_up

    match = match_create(game_id="codraw_v1", seed=4, seats={r: SeatSpec(Seat.Kind.HUMAN) for r in ("teller", "drawer")})
    match_time_up(match_id=match.id)
    assert not export_matches(status="finished").filter(pk=match.pk).exists()
    assert export_matches(status="timed_out").filter(pk=match.pk).exists()
