"""Two people play the color game in headless Chromium: entry link, consent, waiting room,
pairing, chat (HTML shown as text), clicks, a reload mid-round, the end and the completion code."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from crowd.models import Participant
from live.models import Batch, Match

from tests.support.factories import lab_url

from tests.browser.conftest import SCREENS

SHOTS = SCREENS.parent / "screenshots"
from tests.browser.sync import wait_painted, wait_synced

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
    expect(speaker.locator("#outcome .outcome-text")).to_have_text("Round 1: correct!")
    expect(listener.locator("#outcome .outcome-text")).to_have_text("Round 1: correct!")
    assert "Score 1 / 1" in speaker.inner_text("#score")

    for round_no in (2, 3):
        expect(speaker.locator("#round-label")).to_have_text(f"Round {round_no} of 3")
        say(speaker, f"round {round_no} description")
        # this round's part of the chat (the earlier rounds' stay above it)
        expect(listener.locator("#chat .round-log.current .msg.theirs")).to_have_text([f"round {round_no} description"])
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


def bg(locator) -> str:
    return locator.evaluate("e => getComputedStyle(e).backgroundColor")


def test_both_see_each_rounds_outcome_the_chat_stays_and_the_finished_page_sums_up(live_server_url, browser):
    """Issue 20, item 4: after each click the speaker sees which color the listener picked and
    whether it was right, the listener whether it was right and which was the target (only after
    the click); the chat of every round stays readable, separated by round, across a reload; the
    finished page lists each round (colors, target, pick, right or wrong, messages) and the total."""
    batch = Batch.objects.create(slug="browser-outcome", title="browser", game_id="colors_v1",
                                 pairing=Batch.Pairing.HUMAN_HUMAN, config={"rounds": 3}, max_wait_s=60)
    contexts = [browser.new_context(viewport={"width": 1366, "height": 768}) for _ in range(2)]
    a, b = (c.new_page() for c in contexts)
    errors = []
    for p in (a, b):
        p.on("pageerror", lambda exc: errors.append(str(exc)))
        p.on("console", lambda msg: msg.type == "error" and errors.append(f"console: {msg.text}"))
    enter(a, live_server_url, batch.slug, "carol")
    a.wait_for_selector("#waiting")
    enter(b, live_server_url, batch.slug, "dave")
    a.wait_for_url("**/m/**", timeout=15000)
    b.wait_for_url("**/m/**", timeout=15000)
    match = Match.objects.get(batch=batch)
    wait_synced(a, match.id)
    wait_synced(b, match.id)
    speaker, listener = (a, b) if "speaker" in a.inner_text("#role-label") else (b, a)
    expect(speaker.locator("#outcome .mini")).to_have_count(0)      # no round has ended yet

    # round 1: the listener picks the target
    say(speaker, "the bright one")
    expect(listener.locator(".swatch.clickable")).to_have_count(3)
    say(listener, "got it")
    expect(speaker.locator(".msg.theirs")).to_have_text(["got it"])
    click_target(speaker, listener, 1)
    for page in (speaker, listener):
        expect(page.locator("#outcome .outcome-text")).to_have_text("Round 1: correct!")
        expect(page.locator("#outcome .mini.target.picked")).to_have_count(1)
    expect(speaker.locator("#outcome .outcome-detail")).to_have_text("Your partner picked the target.")
    expect(listener.locator("#outcome .outcome-detail")).to_have_text("You picked the target.")

    # round 2: the listener picks a wrong color; before the click it is shown nothing of round 2
    expect(speaker.locator("#round-label")).to_have_text("Round 2 of 3")
    say(speaker, "the dull one")
    expect(listener.locator(".swatch.clickable")).to_have_count(3)
    wait_synced(listener, match.id)
    assert listener.get_attribute("#outcome", "data-round") == "1"
    target = target_color(speaker)
    colors = listener.eval_on_selector_all(".swatch", "els => els.map(e => getComputedStyle(e).backgroundColor)")
    wrong = next(i for i, c in enumerate(colors) if c != target)
    listener.locator(f'.swatch[data-position="{wrong}"]').click()
    for page in (speaker, listener):
        expect(page.locator("#outcome .outcome-text")).to_have_text("Round 2: not the target.")
    # the speaker sees which color the listener clicked (in the speaker's own order) ...
    expect(speaker.locator("#outcome .outcome-detail")).to_have_text(
        "Your partner picked the color marked ✗; the target is framed.")
    assert bg(speaker.locator("#outcome .mini.picked")) == colors[wrong]
    assert bg(speaker.locator("#outcome .mini.target")) == target
    # ... and the listener, after the click, which one was the target
    expect(listener.locator("#outcome .outcome-detail")).to_have_text("You picked the color marked ✗; the target is framed.")
    assert bg(listener.locator("#outcome .mini.target")) == target
    assert bg(listener.locator("#outcome .mini.picked")) == colors[wrong]
    SHOTS.mkdir(parents=True, exist_ok=True)
    wait_synced(speaker, match.id)
    speaker.screenshot(path=str(SHOTS / "colors-speaker-round-outcome.png"))

    # the chat keeps every round, separated, each ending with its outcome; a reload keeps it too
    expect(speaker.locator("#round-label")).to_have_text("Round 3 of 3")
    say(speaker, "the last one")
    listener.reload()
    wait_synced(listener, match.id)
    for page in (speaker, listener):
        expect(page.locator("#chat .round-sep")).to_have_text(["Round 1", "Round 2", "Round 3"])
        expect(page.locator('#chat .round-log[data-round="1"] .msg:not(.system)')).to_have_text(
            ["the bright one", "got it"])
        expect(page.locator('#chat .round-log[data-round="2"] .msg.system')).to_contain_text("✗")
        expect(page.locator('#chat .round-log[data-round="3"] .msg')).to_have_text(["the last one"])
    expect(listener.locator("#outcome .outcome-text")).to_have_text("Round 2: not the target.")
    click_target(speaker, listener, 3)

    # the finished page: a row per round and the total, for both
    for page in (speaker, listener):
        page.wait_for_selector("#finished:not([hidden])")
        expect(page.locator("#final")).to_have_text("Your team got 2 of 3 rounds right.")
        assert page.locator("#play").is_hidden()
        rows = page.locator("#summary-rows tr")
        expect(rows).to_have_count(3)
        expect(page.locator("#summary-rows td.result")).to_have_text(["✓ right", "✗ wrong", "✓ right"])
        expect(rows.nth(0).locator(".summary-msg")).to_have_text(
            ["Youthe bright one", "Partnergot it"] if page is speaker else ["Partnerthe bright one", "Yougot it"])
        expect(rows.nth(1).locator(".mini")).to_have_count(3)
        expect(rows.nth(1).locator(".mini.target")).to_have_count(1)
        assert bg(rows.nth(1).locator(".mini.picked")) == colors[wrong]
        assert bg(rows.nth(1).locator(".mini.target")) == target
    wait_painted(speaker)
    speaker.screenshot(path=str(SHOTS / "colors-finished-speaker.png"), full_page=True)
    wait_painted(listener)
    listener.screenshot(path=str(SHOTS / "colors-finished-listener.png"), full_page=True)
    for c in contexts:
        c.close()
    assert not errors, errors
