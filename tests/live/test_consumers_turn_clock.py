"""A staller on the real server (issue 20, item 3), through the real socket and HTTP: a listener
who chats on its turn and never clicks, under a 2-second batch turn limit, is recorded by the
server's own watchdog (the chat does not restart its clock); the speaker who waited is offered to
end, ends, and is paid; and a staller who asks to end the game after the honest partner closed
the tab still gets ``timed_out`` while the partner is paid."""
from __future__ import annotations

import time

import pytest

from live.models import Match, MatchEvent, Seat
from tests.conftest import child_env, running_server

from tests.support.factories import batch as make_batch
from tests.support.stall_client import Person

pytestmark = pytest.mark.django_db(transaction=True)
WAIT_S = 30.0


@pytest.fixture(scope="module")
def server(django_db_setup, django_db_blocker):
    env = {**child_env(), "GT_PARTNER_GONE_S": "1", "GT_WATCHDOG_S": "0.2"}
    with running_server(env, "test-turn-clock.log") as url:
        yield url


def paired(server, batch) -> dict[str, Person]:
    """Two people entered, ready and joined to one match over the socket; by role."""
    ann, bob = Person(server, batch, "ann"), Person(server, batch, "bob")
    ann.ready()
    bob.ready()
    people = {}
    for person in (ann, bob):
        person.join()
        people[Seat.objects.get(token=person.token).role] = person
    assert set(people) == {"speaker", "listener"}
    return people


def stalled_event(role: str):
    return lambda f: any(e["type"] == "turn_timed_out" and e["payload"]["role"] == role
                         for e in f.get("events") or [])


def chat_until_recorded(staller: Person, waiter: Person) -> int:
    """The staller chats (never the awaited click) until the waiter's socket is told that the
    staller timed out; returns how many messages it sent. If chat restarted the clock, it would never come."""
    deadline = time.monotonic() + WAIT_S
    sent = 0
    while True:
        staller.act({"type": "chat", "text": f"let me think {sent}"})
        sent += 1
        try:
            waiter.wait_for(stalled_event("listener"), timeout=0.3)
            return sent
        except AssertionError:
            assert time.monotonic() < deadline, "the staller was never recorded"


def test_a_listener_chatting_on_its_turn_times_out_and_the_speaker_ends_with_full_pay(server):
    b = make_batch(slug="stall-socket", pay_cents=125, turn_limit_s=2)
    people = paired(server, b)
    speaker, listener = people["speaker"], people["listener"]
    speaker.act({"type": "chat", "text": "the bright blue one"})          # the speaker's turn
    sent = chat_until_recorded(listener, speaker)
    assert sent >= 2
    listener.wait_for(stalled_event("listener"))                          # the staller is told too
    match = Match.objects.get(pk=speaker.match_id)
    assert match.stalled_role == "listener"
    assert MatchEvent.objects.filter(match=match, type="message_sent", actor="listener").count() == sent
    offer = speaker.http.get(f"{server}/m/{match.id}/turn", params={"seat": speaker.token}).json()
    assert offer["offer"] is True and "full payment ($1.25)" in offer["pay_text"]
    assert listener.end_stalled().status_code == 409                       # not the staller's button
    r = speaker.end_stalled()
    assert r.status_code == 200 and r.json() == {"ended": True}
    for person in (speaker, listener):
        aborted = person.wait_event("match_aborted")
        assert aborted["payload"] == {"reason": "partner_stalled", "by": "speaker"}
    s, l_ = speaker.participant, listener.participant
    s.refresh_from_db()
    l_.refresh_from_db()
    assert (s.exit_reason, s.outcome, s.pay, s.pay_cents) == ("partner_timed_out", "partner_left", "full", 125)
    assert (l_.exit_reason, l_.outcome, l_.pay, l_.pay_cents) == ("timed_out", "timed_out", "none", 0)
    assert "You will receive the full payment ($1.25)." in speaker.done_page()
    page = listener.done_page()
    assert "You did not take your turn in time" in page and "There is no payment for this." in page
    for person in (speaker, listener):
        person.close()


def test_the_staller_asking_to_end_after_the_partner_left_still_timed_out(server):
    b = make_batch(slug="stall-gone", pay_cents=100, turn_limit_s=2)
    people = paired(server, b)
    speaker, listener = people["speaker"], people["listener"]
    speaker.act({"type": "chat", "text": "the dull green one"})
    chat_until_recorded(listener, speaker)
    speaker.close()                                                       # the honest person gives up
    seat = Seat.objects.get(token=speaker.token)
    deadline = time.monotonic() + WAIT_S
    while True:   # the staller presses "partner gone" until the server agrees (after GT_PARTNER_GONE_S)
        r = listener.partner_gone()
        if r.status_code == 200:
            break
        assert r.status_code == 409 and time.monotonic() < deadline, r.text
        time.sleep(0.2)   # poll again
    seat.refresh_from_db()
    assert seat.connected == 0 and seat.left_at is not None
    listener.wait_event("match_aborted")
    s, l_ = speaker.participant, listener.participant
    s.refresh_from_db()
    l_.refresh_from_db()
    assert (l_.exit_reason, l_.outcome, l_.pay) == ("timed_out", "timed_out", "none")
    assert (s.exit_reason, s.outcome, s.pay, s.pay_cents) == ("partner_timed_out", "partner_left", "full", 100)
    assert "Your partner did not take their turn in time" in speaker.done_page()
    listener.close()
