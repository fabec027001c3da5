"""Two people play the color game in headless Chromium: entry link, consent, waiting room,
pairing, chat (HTML shown as text), clicks, a reload mid-round, the end and the completion code."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from games.models import Batch, Match, Participant

from tests.platform.factories import lab_url

from .conftest import SCREENS

SHOTS = SCREENS.parent / "screenshots"
from .sync import wait_painted, wait_synced

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def enter(page, base, slug, worker):
    """Open ``worker``'s signed lab link of batch ``slug`` (crowd/entry.py), consent, get ready."""
    page.goto(base + lab_url(Batch.objects.get(slug=slug), worker))
    page.click("#agree")
    page.click("#ready")


def target_color(speaker):
    return speaker.locator(".swatch.target").evaluate("e => getComputedStyle(e).backgroundColor")


def click_target(speaker, listener, round_no, rounds=3):
    """The listener clicks the speaker's target. Both pages must show round ``round_no`` (the
    swatches and the label are rendered from one view) and the listener's swatches must be
    clickable (the speaker has spoken in it): otherwise the colors compared could be of two rounds."""
    label = f"Round {round_no} of {rounds}"
    expect(speaker.locator("#round-label")).to_have_text(label)
    expect(listener.locator("#round-label")).to_have_text(label)
    expect(listener.locator(".swatch.clickable")).to_have_count(3)
    want = target_color(speaker)
    colors = listener.eval_on_selector_all(".swatch", "els => els.map(e => getComputedStyle(e).backgroundColor)")
    assert colors.count(want) == 1, f"the target {want} is not among the listener's colors {colors}"
    listener.locator(f'.swatch[data-position="{colors.index(want)}"]').click()
    return colors.index(want)


def say(page, text):
    page.fill("#chatinput", text)
    page.click("#send")


def test_two_people_play_rounds_with_a_reload(live_server_url, browser):
    batch = Batch.objects.create(slug="browser-hh", title="browser", game_id="colors_v1",
                                 pairing=Batch.Pairing.HUMAN_HUMAN, config={"rounds": 3}, max_wait_s=60)
    ctx_a, ctx_b = browser.new_context(viewport={"width": 1366, "height": 768}), \
        browser.new_context(viewport={"width": 1366, "height": 768})
    a, b = ctx_a.new_page(), ctx_b.new_page()
    errors = []   # no page may throw or log a console error (issue 10)
    for p in (a, b):
        p.on("pageerror", lambda exc: errors.append(str(exc)))
        p.on("console", lambda msg: msg.type == "error" and errors.append(f"console: {msg.text}"))
    enter(a, live_server_url, batch.slug, "alice")
    a.wait_for_selector("#waiting")
    a.screenshot(path=str(SCREENS / "colors-waiting.png"))
    enter(b, live_server_url, batch.slug, "bob")
    a.wait_for_url("**/m/**", timeout=15000)
    b.wait_for_url("**/m/**", timeout=15000)
    match = Match.objects.get(batch=batch)
    wait_synced(a, match.id)
    wait_synced(b, match.id)
    speaker, listener = (a, b) if "speaker" in a.inner_text("#role-label") else (b, a)
    assert "listener" in listener.inner_text("#role-label")
    assert speaker.locator(".swatch.target").count() == 1
    assert listener.locator(".swatch.target").count() == 0
    assert listener.locator(".swatch[disabled]").count() == 3  # nothing to click before the speaker speaks
    # ... but the colors are shown at full strength (the colors judged are the colors meant)
    assert listener.eval_on_selector_all(".swatch", "els => els.map(e => getComputedStyle(e).opacity)") == ["1"] * 3
    assert "Wait for your partner" in listener.inner_text("#instruction")
    wait_painted(listener)
    SHOTS.mkdir(parents=True, exist_ok=True)
    listener.screenshot(path=str(SHOTS / "colors-listener-waiting.png"))
    favicon = a.request.get(f"{live_server_url}/favicon.ico")
    assert favicon.status == 200 and "svg" in favicon.headers["content-type"]
    linked = a.eval_on_selector('link[rel="icon"]', "l => l.href")
    assert a.request.get(linked).status == 200

    hostile = '<img src=x onerror="document.title=\'pwned\'"> the teal one'
    say(speaker, hostile)
    listener.wait_for_selector(".msg.theirs")
    assert listener.inner_text(".msg.theirs") == hostile  # shown as text
    assert listener.locator(".chat img").count() == 0 and listener.title() != "pwned"

    listener.reload()  # mid-round: same seat, same state, message shown once
    wait_synced(listener, match.id)
    assert listener.locator(".msg.theirs").count() == 1
    assert listener.locator(".swatch.clickable").count() == 3
    speaker.screenshot(path=str(SCREENS / "colors-speaker.png"))
    listener.screenshot(path=str(SCREENS / "colors-listener.png"))

    click_target(speaker, listener, 1)
    expect(speaker.locator("#outcome")).to_have_text("Round 1: correct!")
    expect(listener.locator("#outcome")).to_have_text("Round 1: correct!")
    assert "Score 1 / 1" in speaker.inner_text("#score")

    for round_no in (2, 3):
        expect(speaker.locator("#round-label")).to_have_text(f"Round {round_no} of 3")
        say(speaker, f"round {round_no} description")
        expect(listener.locator(".msg.theirs")).to_have_text([f"round {round_no} description"])
        if round_no == 3:
            speaker.reload()  # the speaker reloads too, after speaking
            wait_synced(speaker, match.id)
        click_target(speaker, listener, round_no)
    for page in (listener, speaker):   # each page gets the last view in its own time
        page.wait_for_selector("#finished:not([hidden])")
        assert "3 of 3" in page.inner_text("#final")
    listener.click("#continue")
    listener.wait_for_selector("#completion-code")
    code = listener.inner_text("#completion-code")
    ctx_a.close()
    ctx_b.close()
    assert not errors, errors

    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED and match.outcome["correct"] == 3
    texts = [m["text"] for e in match.events.filter(type="round_ended") for m in e.payload["messages"]]
    assert texts.count(hostile) == 1
    assert set(Participant.objects.filter(batch=batch).values_list("state", flat=True)) == {"done"}
    assert code in set(Participant.objects.filter(batch=batch).values_list("completion_code", flat=True))
