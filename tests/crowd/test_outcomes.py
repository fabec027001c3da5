"""What each way out earns (issue 11, item 2): every exit reason the code writes maps to an
outcome; each outcome's pay (full, partial, none) is the batch's, recorded on the participant and
said on the last page; the code is shown only when the outcome pays; Prolific gets its code per
outcome and the redirect; MTurk gets the submit form with the outcome."""
from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.db.models import F
from django.test import Client
from django.utils import timezone

from crowd import outcomes
from crowd import lobby
from research.admin import BatchForm
from crowd.models import Participant
from live.models import Batch, Match, Seat
from live.services import match_abort, match_apply_action, match_end_stalled

from tests.conftest import ROOT
from tests.support.platform_ids import mturk_rec, mturk_worker, prolific_id, prolific_rec  # noqa: F401 (fixtures)
from tests.support.factories import batch as make_batch
from tests.support.factories import lab_url

pytestmark = pytest.mark.django_db

PROLIFIC_CODES = {"completed": "C0MPLETE", "time_up": "TIMEUP1", "no_partner": "NOPARTNER",
                  "partner_left": "PLEFT", "agent_failed": "AGENTX", "no_consent": "NOCONSENT"}


def written_exit_reasons() -> set[str]:
    """Every exit reason the code can write, read from the source so that a new one cannot be
    missed: the literals passed to ``participant_exit``, ``participant_leave``'s default, the
    reason maps and the choices in ``participants_after_match`` (crowd/after_match.py)."""
    import inspect

    from crowd import after_match
    found = set(after_match.LET_GO_REASONS.values()) | set(after_match.LAST_GAME_REASONS.values())
    for path in [*Path(ROOT, "games").rglob("*.py"), *Path(ROOT, "crowd").rglob("*.py"), *Path(ROOT, "live").rglob("*.py")]:
        text = path.read_text()
        found |= set(re.findall(r'participant_exit\(\w+, "(\w+)"\)', text))
        found |= set(re.findall(r'def participant_leave\(.*reason: str = "(\w+)"', text))
    after = inspect.getsource(after_match.participants_after_match)
    found |= set(re.findall(r'"(\w+)" if ', after)) | set(re.findall(r'else "(\w+)"', after))
    return found


def test_every_exit_reason_the_code_writes_has_an_outcome():
    reasons = written_exit_reasons()
    assert {"completed", "time_up", "timed_out", "no_partner", "partner_left", "agent_failed", "left_waiting",
            "left_match", "match_inactive", "partner_timed_out", "declined"} <= reasons
    assert reasons <= set(outcomes.OUTCOME_OF_REASON), reasons - set(outcomes.OUTCOME_OF_REASON)
    assert set(outcomes.OUTCOME_OF_REASON.values()) == set(outcomes.OUTCOMES) == set(outcomes.DEFAULT_PAY)
    for outcome in outcomes.OUTCOMES:
        assert outcomes.REASON_TEXT[outcome]
    # the docstring's table names every reason (docs/crowd.md copies it)
    for reason, outcome in outcomes.OUTCOME_OF_REASON.items():
        assert re.search(rf"^{reason}\s+{outcome}\s", outcomes.__doc__, re.M), reason


def enter(c: Client, b: Batch, name: str) -> str:
    r = c.get(lab_url(b, name))
    assert r.status_code == 302
    return r.url


def ready(c: Client, url: str) -> None:
    c.post(url, {"step": "consent", "agree": "yes"})
    c.post(url, {"step": "ready"})


def play_colors_round(match_id) -> None:
    """One round of the colour game, to its end (rounds=1)."""
    from live.models import Match

    from tests.support.factories import listener_target

    match_apply_action(match_id=match_id, role="speaker", action={"type": "chat", "text": "the blue one"},
                       client_action_id="s1")
    match = Match.objects.get(pk=match_id)
    match_apply_action(match_id=match_id, role="listener", client_action_id="l1",
                       action={"type": "click", "position": listener_target(match), "round": 1})


def two_in_a_match(b: Batch, platform_urls=None):
    """Two browsers entered, paired into one match; returns ((client, url), (client, url), match)."""
    a, c = Client(), Client()
    ua, uc = enter(a, b, "ann"), enter(c, b, "bob")
    ready(a, ua)
    ready(c, uc)
    a.get(ua)
    r = c.get(uc)
    assert "/m/" in r.url
    match = Seat.objects.get(token=r.url.split("seat=")[1]).match
    return (a, ua), (c, uc), match


def done_page(c: Client, url: str) -> str:
    r = c.get(url)
    assert r.status_code == 200
    return r.content.decode()


def participant(url: str) -> Participant:
    return Participant.objects.get(token=url.rstrip("/").rsplit("/", 1)[-1])


def test_completed_pays_in_full_with_the_code():
    b = make_batch(slug="fin", config={"rounds": 1}, pay_cents=200)
    (a, ua), (c, uc), match = two_in_a_match(b)
    play_colors_round(match.id)
    for client, url in ((a, ua), (c, uc)):
        p = participant(url)
        assert (p.exit_reason, p.outcome, p.pay, p.pay_cents) == ("completed", "completed", "full", 200)
        page = done_page(client, url)
        assert p.completion_code in page and "You finished the study." in page
        assert "You will receive the full payment ($2.00)." in page


def test_no_partner_in_time_default_full_and_a_partial_batch():
    for exit_pay, want, text in (({}, ("full", 100), "the full payment ($1.00)"),
                                 ({"no_partner": {"pay": "partial", "cents": 40}}, ("partial", 40),
                                  "a partial payment of $0.40")):
        b = make_batch(max_wait_s=30, pay_cents=100, exit_pay=exit_pay)
        c = Client()
        url = enter(c, b, "ann")
        ready(c, url)
        Participant.objects.filter(batch=b).update(waiting_since=timezone.now() - timedelta(seconds=31))
        p = participant(url)
        lobby.lobby_poll(participant_id=p.pk)
        p.refresh_from_db()
        assert (p.exit_reason, p.outcome, (p.pay, p.pay_cents)) == ("no_partner", "no_partner", want)
        page = done_page(c, url)
        assert "No partner arrived in time." in page and text in page and p.completion_code in page


def test_leaving_the_waiting_room_at_once_earns_no_code():
    b = make_batch(pay_cents=100)
    c = Client()
    url = enter(c, b, "ann")
    ready(c, url)
    c.post(url, {"step": "leave"})
    p = participant(url)
    assert (p.exit_reason, p.outcome, p.pay, p.pay_cents) == ("left_waiting", "returned_early", "none", 0)
    page = done_page(c, url)
    assert p.completion_code not in page and "There is no payment for this." in page
    assert 'id="completion-code"' not in page


def test_partner_left_pays_the_one_who_stayed_and_not_the_one_who_left():
    b = make_batch(pay_cents=100)
    (a, ua), (c, uc), match = two_in_a_match(b)
    stay = Seat.objects.get(match=match, participant=participant(ua))
    gone = Seat.objects.get(match=match, participant=participant(uc))
    Seat.objects.filter(pk=gone.pk).update(left_at=timezone.now() - timedelta(seconds=120))
    assert lobby.match_partner_gone(seat=stay, gone_after_s=60)
    p, q = participant(ua), participant(uc)
    assert (p.exit_reason, p.outcome, p.pay) == ("partner_left", "partner_left", "full")
    assert (q.exit_reason, q.outcome, q.pay) == ("left_match", "returned_early", "none")
    page = done_page(a, ua)
    assert "Your partner left the game" in page and p.completion_code in page
    page = done_page(c, uc)
    assert q.completion_code not in page and "You left the study before it was finished." in page


@pytest.mark.parametrize("reason,exit_reason,outcome,text", [
    ("agent_failed", "agent_failed", "agent_failed", "The computer partner stopped working"),
    ("time_up", "time_up", "time_up", "The time for the game ran out."),
])
def test_an_aborted_last_game_names_why(reason, exit_reason, outcome, text):
    b = make_batch(pay_cents=100, exit_pay={outcome: {"pay": "partial", "cents": 70}})
    (a, ua), _, match = two_in_a_match(b)
    match_abort(match_id=match.id, reason=reason)
    p = participant(ua)
    assert (p.exit_reason, p.outcome, p.pay, p.pay_cents) == (exit_reason, outcome, "partial", 70)
    page = done_page(a, ua)
    assert text in page and "a partial payment of $0.70" in page and p.completion_code in page


def test_declining_consent_is_no_consent():
    b = make_batch(slug="nope", entry_kinds=["prolific"], prolific_codes=PROLIFIC_CODES)
    c = Client()
    r = c.get(f"/b/nope/?PROLIFIC_PID={prolific_id()}&STUDY_ID={prolific_id()}&SESSION_ID={prolific_id()}")
    c.post(r.url, {"step": "consent", "agree": "no"})
    p = Participant.objects.get(batch=b)
    assert (p.state, p.exit_reason, p.outcome, p.pay) == ("declined", "declined", "no_consent", "none")
    page = done_page(c, r.url)
    assert "https://app.prolific.com/submissions/complete?cc=NOCONSENT" in page


def prolific_entry(rec, b, study) -> str:
    """A participant starting the study on Prolific (the recorder), and the link Prolific opens."""
    pid = prolific_id()
    return f"/b/{b.slug}/?PROLIFIC_PID={pid}&STUDY_ID={study}&SESSION_ID={rec.start(pid, study)}"


def test_prolific_gets_its_code_per_outcome_and_the_redirect(prolific_rec):
    b = make_batch(slug="pro", entry_kinds=["prolific"], prolific_codes=PROLIFIC_CODES, config={"rounds": 1},
                   pay_cents=300)
    study = prolific_id()
    c1, c2 = Client(), Client()
    u1 = c1.get(prolific_entry(prolific_rec, b, study)).url
    u2 = c2.get(prolific_entry(prolific_rec, b, study)).url
    ready(c1, u1)
    ready(c2, u2)
    c1.get(u1)
    match = Seat.objects.get(token=c2.get(u2).url.split("seat=")[1]).match
    play_colors_round(match.id)
    page = done_page(c1, u1)
    url = "https://app.prolific.com/submissions/complete?cc=C0MPLETE"
    assert f'href="{url}"' in page and f'content="10;url={url}"' in page
    assert participant(u1).completion_code not in page      # Prolific's code, not ours
    # an outcome with no code (returned early pays nothing): told to return the study, no redirect
    c3 = Client()
    u3 = c3.get(prolific_entry(prolific_rec, b, study)).url
    ready(c3, u3)
    c3.post(u3, {"step": "leave"})
    page = done_page(c3, u3)
    assert "submissions/complete" not in page and "return the study" in page


def test_mturk_submit_form_posts_the_assignment_and_the_outcome(mturk_rec):
    b = make_batch(slug="mt", entry_kinds=["mturk"], config={"rounds": 1})
    hit = mturk_rec.hit(annotation=b.slug)
    w1, w2 = mturk_worker(), mturk_worker()
    a1, a2 = mturk_rec.accept(w1, hit), mturk_rec.accept(w2, hit)
    c1, c2 = Client(), Client()
    q = f"&hitId={hit}&turkSubmitTo=https://workersandbox.mturk.com"
    u1 = c1.get(f"/b/mt/?workerId={w1}&assignmentId={a1}{q}").url
    u2 = c2.get(f"/b/mt/?workerId={w2}&assignmentId={a2}{q}").url
    ready(c1, u1)
    ready(c2, u2)
    c1.get(u1)
    match = Seat.objects.get(token=c2.get(u2).url.split("seat=")[1]).match
    play_colors_round(match.id)
    page = done_page(c1, u1)
    p = participant(u1)
    form = page.split('<form method="post" action="https://workersandbox.mturk.com/mturk/externalSubmit"')[1]
    form = form.split("</form>")[0]
    assert f'name="assignmentId" value="{a1}"' in form and 'name="outcome" value="completed"' in form
    assert f'name="completionCode" value="{p.completion_code}"' in form
    assert (p.outcome, p.pay) == ("completed", "full")   # recorded on the server, not taken from the form


def test_the_consent_and_waiting_pages_say_what_each_way_out_earns():
    b = make_batch(pay_cents=100, exit_pay={"no_partner": {"pay": "partial", "cents": 25}})
    c = Client()
    url = enter(c, b, "ann")
    consent = done_page(c, url)
    assert "the full payment ($1.00)" in consent and "a partial payment of $0.25" in consent
    assert "no payment" in consent
    ready(c, url)
    waiting = done_page(c, url)
    assert "Stop waiting and leave now (no payment)" in waiting and "a partial payment of $0.25" in waiting


@pytest.mark.parametrize("field,value,message", [
    ("exit_pay", {"finished": "full"}, "not an outcome"),
    ("exit_pay", {"completed": {"pay": "some"}}, '"pay" must be one of'),
    ("exit_pay", {"no_partner": {"pay": "partial", "cents": 999}}, "from 0 to the batch's pay"),
    ("exit_pay", ["full"], "must be a JSON object"),
    ("prolific_codes", {"completed": "has space"}, "letters or digits"),
    ("prolific_codes", {}, "enter Prolific's completion code for every outcome that pays"),
    ("entry_kinds", ["fax"], "Select a valid choice"),
])
def test_the_batch_form_refuses_bad_crowd_settings(field, value, message):
    from tests.research.test_admin import form_data

    data = form_data(**{"entry_kinds": ["prolific", "lab"], "pay_cents": 100, field: value})
    form = BatchForm(data=data)
    assert not form.is_valid()
    assert message in " ".join(str(e) for e in form.errors.get(field, [])), form.errors


def test_outcome_defaults_and_overrides():
    b = make_batch(pay_cents=120, exit_pay={"returned_early": "partial", "time_up": {"pay": "none"}})
    assert outcomes.pay_for(b, "completed") == outcomes.Pay("full", 120)
    assert outcomes.pay_for(b, "returned_early") == outcomes.Pay("partial", 60)   # no cents: half
    assert outcomes.pay_for(b, "time_up") == outcomes.Pay("none", 0)
    # a game clock run out pays in full by default; not taking one's turn in time (stalling) pays nothing
    assert outcomes.pay_for(make_batch(pay_cents=120), "time_up") == outcomes.Pay("full", 120)
    assert outcomes.pay_for(make_batch(pay_cents=120), "timed_out") == outcomes.Pay("none", 0)
    assert outcomes.pay_for(make_batch(), "returned_early").kind == "none"
    assert outcomes.outcome_for("something new") == "returned_early"


@pytest.mark.parametrize("on_absent", ["requeue", "end"])
def test_a_partner_who_never_joins(on_absent):
    """Paired, but bob's game page never connects (live/presence.py): bob ends as never_joined
    (returned_early: no pay, no code); ann goes back to the waiting room, or ends with the pay for
    partner_left, as the batch says."""
    from django.conf import settings

    from live.presence import absent_seats_sweep
    from live.services import seat_presence

    b = make_batch(pay_cents=100, on_partner_absent=on_absent, exit_pay={"partner_left": {"pay": "partial", "cents": 70}})
    (a, ua), (c, uc), match = two_in_a_match(b)
    seat_presence(seat_id=Seat.objects.get(match=match, participant=participant(ua)).pk, connected=True)
    assert absent_seats_sweep(now=timezone.now() + timedelta(seconds=settings.GT_SEAT_GRACE_S + 1))
    bob = participant(uc)
    assert (bob.exit_reason, bob.outcome, bob.pay, bob.pay_cents) == ("never_joined", "returned_early", "none", 0)
    page = done_page(c, uc)
    assert "did not open the game" in page and "There is no payment for this." in page
    assert bob.completion_code not in page
    ann = participant(ua)
    if on_absent == "requeue":
        assert (ann.state, ann.games_played, ann.outcome) == ("waiting", 0, "")
        assert "Finding you a partner" in done_page(a, ua)
    else:
        assert (ann.exit_reason, ann.outcome, ann.pay, ann.pay_cents) == (
            "partner_never_joined", "partner_left", "partial", 70)
        page = done_page(a, ua)
        assert "Your partner did not join the game" in page and "a partial payment of $0.70" in page
        assert ann.completion_code in page


def test_a_stall_times_out_the_staller_with_the_batchs_pay_and_pays_the_partner():
    """Issue 20, item 3 (tests/live/test_services_turn_clock.py has the rest): the speaker never takes
    its turn within the batch's turn limit; the listener ends the game."""
    b = make_batch(pay_cents=100, turn_limit_s=60, exit_pay={"timed_out": {"pay": "partial", "cents": 10}})
    (a, ua), (c, uc), match = two_in_a_match(b)
    by_pk = {participant(ua).pk: (a, ua), participant(uc).pk: (c, uc)}
    seats = {s.role: s for s in Seat.objects.filter(match=match)}
    Match.objects.filter(pk=match.pk).update(turn_since=F("turn_since") - timedelta(seconds=61))
    assert match_end_stalled(match_id=match.id, role="listener")
    (wc, wu), (sc, su) = by_pk[seats["listener"].participant_id], by_pk[seats["speaker"].participant_id]
    waiter, staller = participant(wu), participant(su)
    assert (waiter.exit_reason, waiter.outcome, waiter.pay) == ("partner_timed_out", "partner_left", "full")
    assert (staller.exit_reason, staller.outcome, staller.pay, staller.pay_cents) == (
        "timed_out", "timed_out", "partial", 10)
    assert "a partial payment of $0.10" in done_page(sc, su) and staller.completion_code in done_page(sc, su)
    assert "Your partner did not take their turn in time" in done_page(wc, wu)
