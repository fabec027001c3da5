"""A person waits on a partner who stalls (issue 20, item 3), one game of each family, in headless
Chromium: the partner (a protocol-level client on the real socket) holds the first turn and never
takes it (CoDraw's Teller peeks and closes the peek, which is not the move the game waits for);
under a 3-second batch turn limit the server's watchdog records it, the person's game page offers
in plain words to end the game with full pay, the person ends it and the last page says the pay.
The staller's part ends as ``timed_out`` with no pay."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from crowd.models import Participant
from live.models import Batch, Seat
from live.services import SeatSpec, match_create
from tests.support.factories import lab_url
from tests.support.stall_client import Person

from .conftest import SCREENS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# game, its role that acts first (the staller's), the other (the person's), the batch's settings
GAMES = [
    ("colors_v1", "speaker", "listener", {"rounds": 3}),
    ("codraw_v1", "teller", "drawer", {}),
    ("guesswhich_v1", "questioner", "answerer", {"rounds": 3}),
    ("visdial_v1", "questioner", "answerer", {"rounds": 3}),
]


@pytest.mark.parametrize("game_id,first,second,config", GAMES, ids=[g[0] for g in GAMES])
def test_a_person_waiting_on_a_staller_is_offered_to_end_with_full_pay(live_server_url, browser, game_id,
                                                                       first, second, config):
    b = Batch.objects.create(slug=f"stall-{game_id.replace('_', '-')}", title="stall", game_id=game_id,
                             pairing=Batch.Pairing.HUMAN_HUMAN, config=config, pay_cents=125, turn_limit_s=3)
    staller = Person(live_server_url, b, "staller")
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    page = ctx.new_page()
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(live_server_url + lab_url(b, "person"))
    page.click("#agree")
    expect(page.locator("#ready")).to_be_visible()
    person = Participant.objects.get(batch=b, worker_id="person")
    # the seats as the test wants them (the lobby draws roles at random): the staller acts first
    match_create(game_id=game_id, batch=b, seats={first: SeatSpec(Seat.Kind.HUMAN, participant=staller.participant),
                                                  second: SeatSpec(Seat.Kind.HUMAN, participant=person)})
    Participant.objects.filter(pk__in=[person.pk, staller.participant.pk]).update(state=Participant.State.PLAYING)
    staller.join()
    page.goto(f"{live_server_url}/p/{person.token}/")
    page.wait_for_url("**/m/**")
    if game_id == "codraw_v1":   # moves that are not the Teller's turn do not restart its clock
        staller.act({"type": "peek"})
        staller.act({"type": "close_peek"})

    offer = page.locator("#stall")
    try:
        expect(offer).to_be_visible(timeout=30000)
    except AssertionError:
        from live.models import Match, MatchEvent
        match = Match.objects.get(batch=b)
        raise AssertionError(f"no offer: {match.status} stalled={match.stalled_role!r} since={match.turn_since} "
                             f"events={list(MatchEvent.objects.filter(match=match).values_list('type', 'payload'))} "
                             f"seats={list(Seat.objects.filter(match=match).values('role', 'connected', 'left_at'))} "
                             f"banner={page.locator('#banner').inner_text()!r} errors={errors}") from None
    expect(page.locator("#stall-text")).to_contain_text("Your partner has not taken their turn")
    expect(page.locator("#stall-text")).to_contain_text("You will receive the full payment ($1.25).")
    staller.wait_for(lambda f: any(e["type"] == "turn_timed_out" and e["payload"]["role"] == first
                                   for e in f.get("events") or []))
    page.screenshot(path=str(SCREENS / f"stall-offer-{game_id}.png"))
    page.click("#end-stalled")
    page.wait_for_url(f"**/p/{person.token}/")
    expect(page.locator("#pay")).to_have_text("You will receive the full payment ($1.25).")
    expect(page.locator("#reason")).to_contain_text("Your partner did not take their turn in time")
    expect(page.locator("#completion-code")).to_be_visible()
    aborted = staller.wait_event("match_aborted")
    assert aborted["payload"] == {"reason": "partner_stalled", "by": second}
    person.refresh_from_db()
    staller.participant.refresh_from_db()
    assert (person.outcome, person.pay, person.pay_cents) == ("partner_left", "full", 125)
    assert (staller.participant.exit_reason, staller.participant.pay) == ("timed_out", "none")
    assert "You did not take your turn in time" in staller.done_page()
    assert not errors, errors
    staller.close()
    ctx.close()
