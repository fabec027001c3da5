"""A partner who stalls (issue 20, item 3): the clock of whose turn it is restarts only when the
awaited move is made (chat is not the listener's turn), on both write paths; the watchdog records
the seat that did not take its turn within the batch's turn limit; the partner who waited may end
the game with full pay and the staller gets the batch's pay for ``timed_out``; who stalled and who
left first decide the outcomes, never who pressed the button."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import transaction
from django.db.models import F
from django.test import Client
from django.utils import timezone

from crowd import lobby
from research.admin import BatchForm
from games.base import turn_taken
from live.models import Batch, Match, MatchEvent, Seat
from games.registry import GAMES, get_game
from live.services import SeatSpec, match_abort, match_apply_action, match_create, match_end_stalled
from live.watchdog import watchdog_sweep

from tests.support.factories import batch as make_batch
from tests.support.factories import colors_match, listener_target
from tests.research.test_admin import form_data
from tests.crowd.test_outcomes import done_page, enter, participant, two_in_a_match

pytestmark = pytest.mark.django_db(transaction=True)


def seats_of(match) -> dict[str, Seat]:
    return {s.role: s for s in Seat.objects.filter(match=match).select_related("participant")}


def chat(match, role: str, text: str, **kw):
    return match_apply_action(match_id=match.id, role=role, action={"type": "chat", "text": text}, **kw)


def backdate_turn(match, seconds: float) -> None:
    Match.objects.filter(pk=match.pk).update(turn_since=F("turn_since") - timedelta(seconds=seconds))


def sweep_until_recorded(match) -> Match:
    """One watchdog sweep (the session's test server, when running, sweeps the same database and
    may record it first: SKIP LOCKED, never both), then the match as recorded."""
    watchdog_sweep()
    with transaction.atomic():
        return Match.objects.select_for_update().get(pk=match.pk)


# ---------------------------------------------------------------------------------- the contract
def test_every_game_declares_what_takes_a_turn_and_a_default_limit():
    for spec in GAMES.values():
        rules = spec.rules
        assert set(rules.TURN_ACTIONS) == set(rules.ROLES), spec.id
        accepted = set(spec.actions.json_schema().get("$defs", {})) | set(getattr(rules, "ACTIONS", ())) | set(
            getattr(getattr(rules, "C", None), "ACTIONS", ()))
        for role, kinds in rules.TURN_ACTIONS.items():
            assert kinds and set(kinds) <= accepted, (spec.id, role, kinds)
        assert 30 <= rules.TURN_LIMIT_S <= 600, spec.id


def test_colors_chat_takes_the_speakers_turn_only_and_never_the_listeners():
    rules = get_game("colors_v1").rules
    match, _ = colors_match(rounds=2)
    start = match.state
    spoke, _ = rules.apply(start, "speaker", {"type": "chat", "text": "blue", "at": 1})
    assert turn_taken(rules, start, spoke, "speaker", "chat")
    again, _ = rules.apply(spoke, "speaker", {"type": "chat", "text": "the dark one", "at": 2})
    assert not turn_taken(rules, spoke, again, "speaker", "chat")        # not the speaker's turn any more
    asked, _ = rules.apply(spoke, "listener", {"type": "chat", "text": "which?", "at": 3})
    assert not turn_taken(rules, spoke, asked, "listener", "chat")       # the listener's turn is the click


# ------------------------------------------------------------------------------- the write paths
@pytest.mark.parametrize("conditional", [True, False], ids=["conditional-write", "locked"])
def test_chat_on_ones_turn_does_not_restart_the_turn_clock(conditional):
    b = make_batch(pay_cents=100, turn_limit_s=90)
    (_, ua), (_, uc), match = two_in_a_match(b)
    match.refresh_from_db()
    assert match.turn_limit == timedelta(seconds=90) and match.turn_since is not None   # the speaker is due
    chat(match, "speaker", "the blue one", client_action_id="s1")                       # the speaker's turn
    match.refresh_from_db()
    listener_due = match.turn_since
    for i in range(3):   # the listener chats and never clicks; the speaker chats too
        chat(match, "listener", f"hmm {i}", client_action_id=f"l{i}", try_conditional=conditional)
        chat(match, "speaker", f"it is blue {i}", client_action_id=f"s{i + 2}", try_conditional=conditional)
    match.refresh_from_db()
    assert match.turn_since == listener_due and match.seq > 8
    assert match.updated_at > listener_due                 # the inactivity clock did restart
    match_apply_action(match_id=match.id, role="listener", client_action_id="click",
                       action={"type": "click", "position": listener_target(match), "round": 1},
                       try_conditional=conditional)
    match.refresh_from_db()
    assert match.turn_since > listener_due                 # the click took the turn


def test_agent_seats_have_no_turn_clock_and_batches_set_or_turn_it_off():
    human_agent = make_batch(pairing=Batch.Pairing.HUMAN_AGENT, human_roles=["listener"],
                             agents={"speaker": "colors_lexicon_speaker"})
    match = match_create(game_id="colors_v1", batch=human_agent, wake_agents=False, seats={
        "speaker": SeatSpec(Seat.Kind.AGENT, agent_name="colors_lexicon_speaker"),
        "listener": SeatSpec(Seat.Kind.HUMAN)})
    Match.objects.filter(pk=match.pk).update(agent_seats={"speaker": "colors_lexicon_speaker"})
    match.refresh_from_db()
    assert match.turn_limit == timedelta(seconds=get_game("colors_v1").rules.TURN_LIMIT_S)   # the game's default
    # (wake_agents=False makes the seat unknown to the clock at creation; the next write reads agent_seats)
    chat(match, "speaker", "blue", client_action_id="a1")
    match.refresh_from_db()
    assert match.turn_since is not None                    # the human listener is due now
    match_apply_action(match_id=match.id, role="listener", client_action_id="h1",
                       action={"type": "click", "position": listener_target(match), "round": 1})
    match.refresh_from_db()
    assert match.turn_since is None                        # the agent speaker is due: its own timeout applies
    agents_only = make_batch(pairing=Batch.Pairing.AGENT_AGENT, agents={
        "speaker": "colors_lexicon_speaker", "listener": "colors_literal_listener"})
    simulated = match_create(game_id="colors_v1", batch=agents_only, wake_agents=False, seats={
        role: SeatSpec(Seat.Kind.AGENT, agent_name=name) for role, name in agents_only.agents.items()})
    assert simulated.turn_limit is None and simulated.turn_since is None   # no person: no turn clock
    off = make_batch(turn_limit_s=0)
    (_, _), (_, _), never = two_in_a_match(off)
    never.refresh_from_db()
    assert never.turn_limit is None and never.turn_since is None


# ------------------------------------------------------------------------- the watchdog and ending
def test_a_staller_chatting_on_its_turn_is_recorded_and_the_partner_ends_with_full_pay():
    b = make_batch(pay_cents=150, turn_limit_s=60)
    (a, ua), (c, uc), match = two_in_a_match(b)
    seats = seats_of(match)
    chat(match, "speaker", "the blue one", client_action_id="s1")
    for i in range(3):
        chat(match, "listener", f"thinking {i}", client_action_id=f"l{i}")
    assert watchdog_sweep().get("turn_timed_out", 0) == 0      # within the limit: nothing
    backdate_turn(match, 61)
    match = sweep_until_recorded(match)
    assert match.stalled_role == "listener" and match.stalled_at is not None
    event = MatchEvent.objects.filter(match=match, type="turn_timed_out").get()
    assert (event.actor, event.payload) == ("system", {"role": "listener", "limit_s": 60})
    assert watchdog_sweep().get("turn_timed_out", 0) == 0      # recorded once
    # the staller cannot end it; the speaker who waited can, and is paid
    assert match_end_stalled(match_id=match.id, role="listener") is False
    by_role = {s.role: s.participant for s in seats.values()}
    clients = {participant(ua).pk: (a, ua), participant(uc).pk: (c, uc)}
    waiter_client, waiter_url = clients[by_role["speaker"].pk]
    staller_client, staller_url = clients[by_role["listener"].pk]
    turn = waiter_client.get(f"/m/{match.id}/turn?seat={seats['speaker'].token}").json()
    assert turn["offer"] is True and "full payment ($1.50)" in turn["pay_text"] and turn["pay_kind"] == "full"
    told = staller_client.get(f"/m/{match.id}/turn?seat={seats['listener'].token}").json()
    assert told["offer"] is False and told["stalled"] is True and "no payment" in told["pay_text"]
    # the staller may not press the waiter's button, nor another browser
    assert staller_client.post(f"/m/{match.id}/end-stalled", {"seat": seats["listener"].token}).status_code == 409
    assert Client().post(f"/m/{match.id}/end-stalled", {"seat": seats["speaker"].token}).status_code == 403
    r = waiter_client.post(f"/m/{match.id}/end-stalled", {"seat": seats["speaker"].token})
    assert r.status_code == 200 and r.json() == {"ended": True}
    match.refresh_from_db()
    assert match.status == Match.Status.ABORTED
    waiter, staller = participant(waiter_url), participant(staller_url)
    assert (waiter.exit_reason, waiter.outcome, waiter.pay, waiter.pay_cents, waiter.games_played) == (
        "partner_timed_out", "partner_left", "full", 150, 1)
    assert (staller.exit_reason, staller.outcome, staller.pay, staller.pay_cents, staller.games_played) == (
        "timed_out", "timed_out", "none", 0, 0)
    page = done_page(waiter_client, waiter_url)
    assert "Your partner did not take their turn in time" in page and waiter.completion_code in page
    assert "You will receive the full payment ($1.50)." in page
    page = done_page(staller_client, staller_url)
    assert "You did not take your turn in time" in page and staller.completion_code not in page
    assert "There is no payment for this." in page


def test_the_offer_is_withdrawn_when_the_staller_takes_its_turn():
    b = make_batch(turn_limit_s=60)
    _, _, match = two_in_a_match(b)
    backdate_turn(match, 61)                                   # the speaker stalls, silent
    match = sweep_until_recorded(match)
    assert match.stalled_role == "speaker"
    chat(match, "speaker", "sorry: the blue one", client_action_id="late")
    match.refresh_from_db()
    assert match.stalled_role == "" and match.turn_since > match.stalled_at   # cleared: the partner is there
    assert match_end_stalled(match_id=match.id, role="listener") is False
    assert Match.objects.get(pk=match.pk).status == Match.Status.ACTIVE


def test_the_staller_pressing_partner_gone_after_the_honest_partner_left_still_timed_out():
    b = make_batch(pay_cents=100, turn_limit_s=60)
    (a, ua), (c, uc), match = two_in_a_match(b)
    seats = seats_of(match)
    chat(match, "speaker", "the blue one", client_action_id="s1")
    chat(match, "listener", "which blue?", client_action_id="l1")
    backdate_turn(match, 61)
    assert sweep_until_recorded(match).stalled_role == "listener"
    # the honest speaker gives up and closes the tab after the stall; the staller even plays a
    # move while alone, then asks to end the game because its partner is gone
    Seat.objects.filter(pk=seats["speaker"].pk).update(connected=0, left_at=timezone.now() - timedelta(seconds=120))
    chat(match, "listener", "still here", client_action_id="l2")
    assert lobby.match_partner_gone(seat=Seat.objects.get(pk=seats["listener"].pk), gone_after_s=60)
    honest, staller = seats["speaker"].participant, seats["listener"].participant
    honest.refresh_from_db()
    staller.refresh_from_db()
    assert (staller.exit_reason, staller.outcome, staller.pay) == ("timed_out", "timed_out", "none")
    assert (honest.exit_reason, honest.outcome, honest.pay, honest.pay_cents) == (
        "partner_timed_out", "partner_left", "full", 100)


def test_a_partner_who_left_before_the_stall_is_not_paid_for_it():
    """Who left first decides: the listener left while it was the speaker's turn; the speaker's
    clock then ran out with nobody to play for. The speaker did not stall: the one who left gets
    left_match, the speaker partner_left."""
    b = make_batch(pay_cents=100, turn_limit_s=60)
    _, _, match = two_in_a_match(b)
    seats = seats_of(match)
    Seat.objects.filter(pk=seats["listener"].pk).update(connected=0, left_at=timezone.now() - timedelta(seconds=120))
    backdate_turn(match, 61)
    assert sweep_until_recorded(match).stalled_role == ""      # not recorded: the partner had left
    assert lobby.match_partner_gone(seat=Seat.objects.get(pk=seats["speaker"].pk), gone_after_s=60)
    stayed, left = seats["speaker"].participant, seats["listener"].participant
    stayed.refresh_from_db()
    left.refresh_from_db()
    assert (stayed.exit_reason, stayed.pay) == ("partner_left", "full")
    assert (left.exit_reason, left.outcome, left.pay) == ("left_match", "returned_early", "none")


def test_the_inactivity_limit_on_a_stalled_match_times_out_the_staller_and_pays_the_waiter():
    b = make_batch(pay_cents=100, turn_limit_s=60, exit_pay={"timed_out": {"pay": "partial", "cents": 20}})
    _, _, match = two_in_a_match(b)
    seats = seats_of(match)
    chat(match, "speaker", "the blue one", client_action_id="s1")
    backdate_turn(match, 61)                                   # not recorded yet: the abort decides
    match_abort(match_id=match.id, reason="inactive")
    staller, waiter = seats["listener"].participant, seats["speaker"].participant
    staller.refresh_from_db()
    waiter.refresh_from_db()
    assert (staller.exit_reason, staller.outcome, staller.pay, staller.pay_cents) == (
        "timed_out", "timed_out", "partial", 20)
    assert (waiter.exit_reason, waiter.outcome, waiter.pay) == ("partner_inactive", "partner_left", "full")


def test_the_partner_who_ends_a_stalled_game_goes_on_to_the_next_one():
    b = make_batch(pay_cents=100, turn_limit_s=60, games_per_worker=2)
    _, _, match = two_in_a_match(b)
    seats = seats_of(match)
    backdate_turn(match, 61)
    assert match_end_stalled(match_id=match.id, role="listener") is True   # the watchdog not by yet: checked live
    waiter, staller = seats["listener"].participant, seats["speaker"].participant
    waiter.refresh_from_db()
    staller.refresh_from_db()
    assert (waiter.state, waiter.games_played, waiter.exit_reason) == ("waiting", 1, "")
    assert (staller.state, staller.exit_reason, staller.pay) == ("done", "timed_out", "none")


# ------------------------------------------------------------------------------------ the batch form
def test_the_batch_form_takes_a_turn_limit_and_refuses_a_negative_one():
    for value, want in (("", None), ("0", 0), ("45", 45)):
        form = BatchForm(data=form_data(slug=f"t{want}", turn_limit_s=value))
        form.is_valid()
        assert "turn_limit_s" not in form.errors and form.cleaned_data["turn_limit_s"] == want, form.errors
    form = BatchForm(data=form_data(slug="neg", turn_limit_s="-5"))
    assert not form.is_valid() and "turn_limit_s" in form.errors
    assert "turn_limit_s" in BatchForm().fields


def test_the_consent_page_says_what_a_stall_earns():
    for limit, words in ((None, "2 minutes"), (45, "45 seconds")):   # colors' default is 120 s
        b = make_batch(pay_cents=100, turn_limit_s=limit)
        c = Client()
        page = done_page(c, enter(c, b, "ann"))
        assert f"does not take their turn within {words} or the computer partner stops working" in page
        assert f'<span id="terms-turn-limit">{words}</span> (chatting alone does not count)' in page
        assert "and the game ends, no payment" in page
    b = make_batch(pay_cents=100, turn_limit_s=0)
    c = Client()
    assert "terms-turn-limit" not in done_page(c, enter(c, b, "bob"))
