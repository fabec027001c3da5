"""The lobby's instructions pages for GuessWhich and visual dialog, and the way from an entry link
through consent and instructions to the game page (headless Chromium, 1366x768)."""
from __future__ import annotations

import pytest

from live.models import Batch, Match, Seat
from tests.support.factories import lab_url

from .conftest import SCREENS, VIEWPORT

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True),
              pytest.mark.usefixtures("agent_queues_served")]   # agents served (tests/conftest.py)


def test_guesswhich_entry_instructions_and_game_page(live_server_url, browser):
    batch = Batch.objects.create(slug="gw-ui-alice", title="GuessWhich with ALICE", game_id="guesswhich_v1",
                                 pairing=Batch.Pairing.HUMAN_AGENT, human_roles=["questioner"],
                                 agents={"answerer": "alice_exact"}, config={"rounds": 9})
    ctx = browser.new_context(viewport=VIEWPORT)
    page = ctx.new_page()
    page.goto(live_server_url + lab_url(batch, "gw-ui-1"))
    page.click("#agree")
    page.wait_for_selector("#instructions")
    text = page.inner_text("#instructions")
    assert "How to play GuessWhich" in text and "ALICE" in text and "20 similar images" in text
    assert "9 rounds" in text and "200 points" in text and "If you are the answerer" not in text
    page.screenshot(path=str(SCREENS / "guesswhich-instructions.png"))
    page.click("#ready")
    page.wait_for_url("**/m/**", timeout=15000)
    page.wait_for_selector("#askinput:enabled")
    assert page.locator(".thumb").count() == 20
    assert page.inner_text("#round-label") == "Round 1 of 9"
    seat = Seat.objects.get(match=Match.objects.get(batch=batch), role="questioner")
    assert seat.participant.worker_id == "gw-ui-1"
    ctx.close()


def test_visdial_instructions(live_server_url, browser):
    batch = Batch.objects.create(slug="vd-ui-hh", title="Visual dialog", game_id="visdial_v1",
                                 pairing=Batch.Pairing.HUMAN_HUMAN, config={"rounds": 10}, max_wait_s=30)
    ctx = browser.new_context(viewport=VIEWPORT)
    page = ctx.new_page()
    page.goto(live_server_url + lab_url(batch, "vd-ui-1"))
    page.click("#agree")
    page.wait_for_selector("#instructions")
    text = page.inner_text("#instructions")
    assert "Questioner" in text and "Answerer" in text and "10 questions and answers" in text
    page.screenshot(path=str(SCREENS / "visdial-instructions.png"))
    page.click("#ready")
    page.wait_for_selector("#waiting")
    ctx.close()


def test_guesswhich_answerer_gets_the_answerers_instructions(live_server_url, browser):
    """Issue 10: a person who can only answer is not shown the questioner's instructions."""
    batch = Batch.objects.create(slug="gw-ui-answer", title="GuessWhich answering", game_id="guesswhich_v1",
                                 pairing=Batch.Pairing.HUMAN_AGENT, human_roles=["answerer"],
                                 agents={"questioner": "qbot"}, config={"rounds": 9})
    ctx = browser.new_context(viewport=VIEWPORT)
    page = ctx.new_page()
    errors = []
    page.on("console", lambda msg: msg.type == "error" and errors.append(msg.text))
    page.goto(live_server_url + lab_url(batch, "gw-ui-a1"))
    page.click("#agree")
    page.wait_for_selector("#instructions")
    text = page.inner_text("#instructions")
    assert page.locator("#instructions-answerer").count() == 1 and page.locator("#instructions-questioner").count() == 0
    assert "answer it truthfully" in text and "200 points" not in text and "click your best guess" not in text
    SCREENS.parent.joinpath("screenshots").mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENS.parent / "screenshots" / "guesswhich-instructions-answerer.png"))
    assert not errors, errors
    ctx.close()
