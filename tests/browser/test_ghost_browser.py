"""A real person paired with a ghost (issue 20, item 2), in headless Chromium, once per game family:
the partner reached the waiting room and closed the page just before the person arrived, so the
two are paired (the partner's last poll is within GT_PRESENCE_S) but the partner's seat never
connects. When the seat's grace has passed (the match's start is moved back in the database rather
than waited for), the server's watchdog ends the match: the person's game page says so in plain
words and takes them on, back to the waiting room (the batch's default) or to the last page with
the pay for ``partner_left`` (a batch that ends it), and the ghost's worker ends as returned_early."""
from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone
from playwright.sync_api import expect

from crowd.models import Participant
from live.models import Batch, Match, MatchEvent
from tests.support.factories import lab_url

from .conftest import SCREENS
from .sync import wait_synced

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

VIEWPORT = {"width": 1366, "height": 768}
GAMES = {
    "colors": ("colors_v1", {"rounds": 3}, Batch.OnPartnerAbsent.REQUEUE),
    "codraw": ("codraw_v1", {}, Batch.OnPartnerAbsent.END),
    "guesswhich": ("guesswhich_v1", {}, Batch.OnPartnerAbsent.END),
    "visdial": ("visdial_v1", {}, Batch.OnPartnerAbsent.REQUEUE),
}


def to_waiting_room(page, base: str, batch: Batch, name: str) -> None:
    page.goto(base + lab_url(batch, name))
    page.click("#agree")
    page.click("#ready")


@pytest.mark.parametrize("family", list(GAMES))
def test_a_person_paired_with_a_ghost_is_told_and_goes_on(live_server_url, browser, family):
    game_id, config, on_absent = GAMES[family]
    batch = Batch.objects.create(slug=f"ghost-{family}", title=f"ghost {family}", game_id=game_id,
                                 pairing=Batch.Pairing.HUMAN_HUMAN, config=config, max_wait_s=300, pay_cents=120,
                                 on_partner_absent=on_absent, exit_pay={"partner_left": {"pay": "partial", "cents": 90}})
    ghost_ctx, ctx = browser.new_context(viewport=VIEWPORT), browser.new_context(viewport=VIEWPORT)
    errors = []
    ghost = ghost_ctx.new_page()
    to_waiting_room(ghost, live_server_url, batch, "ghost")
    expect(ghost.locator("#waiting h1")).to_have_text("Finding you a partner…")
    ghost_ctx.close()   # the page is gone, but its last poll was just now: it can still be paired
    page = ctx.new_page()
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(live_server_url + lab_url(batch, "ann"))
    page.click("#agree")
    # the ghost closed its page just as ann arrives (on a loaded machine the steps above may take
    # longer than GT_PRESENCE_S): its last poll was a moment ago
    Participant.objects.filter(batch=batch, worker_id="ghost").update(last_seen_at=timezone.now())
    page.click("#ready")
    page.wait_for_url("**/m/**", timeout=15000)
    match = Match.objects.get(batch=batch)
    wait_synced(page, match.id)
    assert match.status == "active"
    # the ghost's grace has passed (moved back in the database instead of waited for)
    Match.objects.filter(pk=match.pk).update(
        created_at=timezone.now() - timedelta(seconds=settings.GT_SEAT_GRACE_S + 1))
    expect(page.locator("#banner")).to_contain_text("Your partner did not join the game, so it could not start.")
    if family == "codraw":   # its "game over" box covers the page: it says the same
        expect(page.locator("#final-reason")).to_contain_text("Your partner did not join the game")
    page.screenshot(path=str(SCREENS / f"ghost-{family}-told.png"))
    page.wait_for_url("**/p/**", timeout=15000)
    ann, gone = Participant.objects.get(batch=batch, worker_id="ann"), Participant.objects.get(batch=batch,
                                                                                                worker_id="ghost")
    if on_absent == Batch.OnPartnerAbsent.REQUEUE:
        expect(page.locator("#waiting h1")).to_have_text("Finding you a partner…")
        assert page.locator("#away").is_hidden()
        ann.refresh_from_db()
        assert (ann.state, ann.games_played, ann.exit_reason) == ("waiting", 0, "")
    else:
        expect(page.locator("#done")).to_have_attribute("data-outcome", "partner_left")
        expect(page.locator("#pay")).to_have_text("You will receive a partial payment of $0.90.")
        assert (ann.exit_reason, ann.outcome, ann.pay, ann.pay_cents) == (
            "partner_never_joined", "partner_left", "partial", 90)
    page.screenshot(path=str(SCREENS / f"ghost-{family}-after.png"))
    assert (gone.exit_reason, gone.outcome, gone.pay) == ("never_joined", "returned_early", "none")
    assert MatchEvent.objects.filter(match=match, type="match_aborted",
                                     payload__reason="partner_never_joined").count() == 1
    assert not errors, errors
    ctx.close()


def test_a_person_back_after_a_while_is_asked_are_you_still_there(live_server_url, browser):
    """The waiting page went quiet (the laptop slept: the page's clock is stopped, then jumps
    ahead, and its last poll is moved back in the database by as much): its next poll says how long
    it was gone and shows "Are you still there?", the person is not paired meanwhile, and the
    button puts them back in the queue. (Only moving the database back is not enough: a page that
    kept polling says so, and a late poll from a live page is no absence.)"""
    batch = Batch.objects.create(slug="ghost-away", title="away", game_id="colors_v1", config={"rounds": 3},
                                 pairing=Batch.Pairing.HUMAN_HUMAN, max_wait_s=300)
    ctx = browser.new_context(viewport=VIEWPORT)
    page = ctx.new_page()
    page.clock.install()
    to_waiting_room(page, live_server_url, batch, "ann")
    expect(page.locator("#waiting h1")).to_have_text("Finding you a partner…")
    assert page.locator("#away").is_hidden()
    asleep_s = settings.GT_PRESENCE_S + 30
    page.clock.pause_at(page.evaluate("Date.now()") + 10)   # asleep: no more polls
    page.wait_for_timeout(2500)                             # (a poll already on its way lands first)
    quiet = timezone.now() - timedelta(seconds=asleep_s)
    Participant.objects.filter(batch=batch, worker_id="ann").update(last_seen_at=quiet, waiting_since=quiet)
    page.clock.fast_forward(asleep_s * 1000)                # awake: the page's clock jumps
    page.clock.resume()
    expect(page.locator("#away h1")).to_have_text("Are you still there?")
    expect(page).to_have_title(re.compile("^" + re.escape("Are you still there?")))
    page.screenshot(path=str(SCREENS / "ghost-away.png"))
    page.click("#still-here")
    expect(page.locator("#waiting h1")).to_have_text("Finding you a partner…")
    expect(page.locator("#away")).to_be_hidden()
    ann = Participant.objects.get(batch=batch, worker_id="ann")
    assert ann.state == "waiting" and timezone.now() - ann.last_seen_at < timedelta(seconds=settings.GT_PRESENCE_S)
    ctx.close()
