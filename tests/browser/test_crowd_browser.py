"""A second browser never gets a participant's seat (issue 11, item 1), in headless Chromium: the
same lab link and the game page's address copied into another browser show the styled "open in
another browser" page (403) and open no socket; with the batch's option, the worker moves to the
second browser with the one-time code, and the first browser's game page then says so."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from crowd.models import Participant
from live.models import Batch, Match
from tests.support.factories import lab_url

from .conftest import SCREENS
from .sync import wait_synced

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = SCREENS.parent / "screenshots"
VIEWPORT = {"width": 1366, "height": 768}


def test_a_second_browser_is_refused_and_can_take_over_only_with_the_code(live_server_url, browser):
    batch = Batch.objects.create(slug="browser-owner", title="owner", game_id="colors_v1",
                                 pairing=Batch.Pairing.HUMAN_HUMAN, config={"rounds": 3}, max_wait_s=60,
                                 allow_device_change=True)
    ann_link = live_server_url + lab_url(batch, "ann")
    ctx_ann, ctx_bob, ctx_other = (browser.new_context(viewport=VIEWPORT) for _ in range(3))
    ann, bob, other = ctx_ann.new_page(), ctx_bob.new_page(), ctx_other.new_page()
    errors, sockets = [], []
    for p in (ann, bob):
        p.on("pageerror", lambda exc: errors.append(str(exc)))
    other.on("websocket", lambda ws: sockets.append(ws.url))
    for page, name in ((ann, "ann"), (bob, "bob")):
        page.goto(live_server_url + lab_url(batch, name))
        page.click("#agree")
        page.click("#ready")
    ann.wait_for_url("**/m/**", timeout=15000)
    bob.wait_for_url("**/m/**", timeout=15000)
    match = Match.objects.get(batch=batch)
    wait_synced(ann, match.id)
    game_url, ann_role = ann.url, ann.inner_text("#role-label")

    # the same lab link in another browser: the refusal, not ann's participant
    response = other.goto(ann_link)
    assert response.status == 403
    expect(other.locator("#other-browser h1")).to_have_text("This study is open in another browser")
    SHOTS.mkdir(parents=True, exist_ok=True)
    other.screenshot(path=str(SHOTS / "crowd-other-browser.png"))
    # ann's game page copied into that browser: the same page, no game, no socket
    response = other.goto(game_url)
    assert response.status == 403 and other.locator("#other-browser").count() == 1
    assert other.locator("#role-label").count() == 0 and sockets == []
    p = Participant.objects.get(batch=batch, worker_id="ann")
    response = other.goto(f"{live_server_url}/p/{p.token}/")
    assert response.status == 403 and p.token not in other.content()

    # ann moves to the other browser: a code in hers, typed in the other one
    helper = ctx_ann.new_page()
    helper.goto(f"{live_server_url}/p/{p.token}/device/")
    helper.click("#transfer-start")
    code = helper.inner_text("#transfer-code-shown")
    helper.screenshot(path=str(SHOTS / "crowd-device-code.png"))
    helper.close()
    other.goto(ann_link)
    other.fill("#transfer-code", code)
    other.click("#transfer-submit")
    other.wait_for_url("**/m/**", timeout=15000)
    wait_synced(other, match.id)
    assert other.url == game_url and other.inner_text("#role-label") == ann_role
    # ann's first browser is told at once (its socket is closed), and keeps nothing
    expect(ann.locator("#other-browser")).to_be_visible()
    ann.screenshot(path=str(SHOTS / "crowd-first-browser-after-move.png"))
    assert not errors, errors
    for ctx in (ctx_ann, ctx_bob, ctx_other):
        ctx.close()


def test_the_pay_is_said_on_consent_waiting_and_the_last_page(live_server_url, browser):
    batch = Batch.objects.create(slug="browser-pay", title="pay", game_id="colors_v1", pay_cents=150,
                                 pairing=Batch.Pairing.HUMAN_HUMAN, config={"rounds": 3}, max_wait_s=60,
                                 exit_pay={"no_partner": {"pay": "partial", "cents": 50}})
    ctx = browser.new_context(viewport=VIEWPORT)
    page = ctx.new_page()
    page.goto(live_server_url + lab_url(batch, "ann"))
    expect(page.locator("#terms")).to_contain_text("finishing the study, the full payment ($1.50)")
    expect(page.locator("#terms")).to_contain_text("a partial payment of $0.50")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "crowd-consent-pay.png"))
    page.click("#agree")
    page.click("#ready")
    expect(page.locator("#leave")).to_have_text("Stop waiting and leave now (no payment)")
    page.click("#leave")
    expect(page.locator("#done")).to_have_attribute("data-outcome", "returned_early")
    expect(page.locator("#pay")).to_have_text("There is no payment for this.")
    assert page.locator("#completion-code").count() == 0 and page.locator("#close-page").count() == 1
    page.screenshot(path=str(SHOTS / "crowd-done-returned-early.png"))
    p = Participant.objects.get(batch=batch)
    assert (p.outcome, p.pay, p.pay_cents) == ("returned_early", "none", 0)
    ctx.close()
