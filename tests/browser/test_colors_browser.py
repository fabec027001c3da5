"""Two people play the color game in headless Chromium: entry link, consent, waiting room,
pairing, chat (HTML shown as text), clicks, a reload mid-round, the end and the completion code."""
from __future__ import annotations

import pytest

from games.models import Batch, Match, Participant

from .conftest import SCREENS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def enter(page, base, slug, worker):
    page.goto(f"{base}/b/{slug}/?worker={worker}")
    page.click("#agree")
    page.click("#ready")


def target_color(speaker):
    return speaker.locator(".swatch.target").evaluate("e => getComputedStyle(e).backgroundColor")


def click_target(speaker, listener):
    want = target_color(speaker)
    swatches = listener.locator(".swatch")
    for i in range(swatches.count()):
        if swatches.nth(i).evaluate("e => getComputedStyle(e).backgroundColor") == want:
            swatches.nth(i).click()
            return i
    raise AssertionError("the target is not among the listener's colors")


def say(page, text):
    page.fill("#chatinput", text)
    page.click("#send")


def test_two_people_play_rounds_with_a_reload(live_server_url, browser):
    batch = Batch.objects.create(slug="browser-hh", title="browser", game_id="colors_v1",
                                 pairing=Batch.Pairing.HUMAN_HUMAN, config={"rounds": 3}, max_wait_s=60)
    ctx_a, ctx_b = browser.new_context(viewport={"width": 1366, "height": 768}), \
        browser.new_context(viewport={"width": 1366, "height": 768})
    a, b = ctx_a.new_page(), ctx_b.new_page()
    enter(a, live_server_url, batch.slug, "alice")
    a.wait_for_selector("#waiting")
    a.screenshot(path=str(SCREENS / "colors-waiting.png"))
    enter(b, live_server_url, batch.slug, "bob")
    a.wait_for_url("**/m/**", timeout=15000)
    b.wait_for_url("**/m/**", timeout=15000)
    a.wait_for_selector(".swatch")
    b.wait_for_selector(".swatch")
    speaker, listener = (a, b) if "speaker" in a.inner_text("#role-label") else (b, a)
    assert "listener" in listener.inner_text("#role-label")
    assert speaker.locator(".swatch.target").count() == 1
    assert listener.locator(".swatch.target").count() == 0
    assert listener.locator(".swatch[disabled]").count() == 3  # nothing to click before the speaker speaks

    hostile = '<img src=x onerror="document.title=\'pwned\'"> the teal one'
    say(speaker, hostile)
    listener.wait_for_selector(".msg.theirs")
    assert listener.inner_text(".msg.theirs") == hostile  # shown as text
    assert listener.locator(".chat img").count() == 0 and listener.title() != "pwned"

    listener.reload()  # mid-round: same seat, same state, message shown once
    listener.wait_for_selector(".msg.theirs")
    assert listener.locator(".msg.theirs").count() == 1
    assert listener.locator(".swatch.clickable").count() == 3
    speaker.screenshot(path=str(SCREENS / "colors-speaker.png"))
    listener.screenshot(path=str(SCREENS / "colors-listener.png"))

    click_target(speaker, listener)
    speaker.wait_for_selector("text=Round 1: correct!")
    listener.wait_for_selector("text=Round 1: correct!")
    assert "Score 1 / 1" in speaker.inner_text("#score")

    for round_no in (2, 3):
        speaker.wait_for_selector(f"text=Round {round_no} of 3")
        say(speaker, f"round {round_no} description")
        listener.wait_for_selector(f"text=round {round_no} description")
        if round_no == 3:
            speaker.reload()  # the speaker reloads too, after speaking
            speaker.wait_for_selector(".swatch.target")
        click_target(speaker, listener)
    listener.wait_for_selector("#finished:not([hidden])")
    assert "3 of 3" in listener.inner_text("#final")
    assert "3 of 3" in speaker.inner_text("#final")
    listener.click("#continue")
    listener.wait_for_selector("#completion-code")
    code = listener.inner_text("#completion-code")
    ctx_a.close()
    ctx_b.close()

    match = Match.objects.get(batch=batch)
    assert match.status == Match.Status.FINISHED and match.outcome["correct"] == 3
    texts = [m["text"] for e in match.events.filter(type="round_ended") for m in e.payload["messages"]]
    assert texts.count(hostile) == 1
    assert set(Participant.objects.filter(batch=batch).values_list("state", flat=True)) == {"done"}
    assert code in set(Participant.objects.filter(batch=batch).values_list("completion_code", flat=True))
