"""A worker takes the onboarding quiz (fails once, then passes), plays the color game against an
agent, answers the post-game questionnaire and reaches the completion code, in headless Chromium
at 1366x768 (issue 12, item 3). Screenshots: var/screenshots/quality-*.png."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from crowd.onboarding import game_quiz
from crowd.models import OnboardingResult, Participant, PracticeRound, QuestionnaireResponse
from live.models import Batch

from tests.browser.conftest import SCREENS, browser  # noqa: F401  (the fixture)
from tests.browser.sync import wait_painted
from tests.support.factories import lab_url, listener_target

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = SCREENS.parent / "screenshots"
QUESTIONS = [
    {"id": "partner_clear", "kind": "likert", "text": "My partner's descriptions were clear", "about": "partner"},
    {"id": "enjoyed", "kind": "likert", "text": "I enjoyed the game", "about": "study", "min": 1, "max": 7},
    {"id": "comment", "kind": "text", "text": "Anything else? (optional)", "required": False},
]


def test_quiz_play_questionnaire_code(live_server_url, celery_worker_process, browser):  # noqa: F811
    batch = Batch.objects.create(
        slug="quality", title="Colors with a quiz", game_id="colors_v1", pairing=Batch.Pairing.HUMAN_AGENT,
        human_roles=["listener"], agents={"speaker": "colors_lexicon_speaker"}, config={"rounds": 2},
        onboarding="quiz", questionnaire=QUESTIONS, pay_cents=150)
    quiz = game_quiz("colors_v1")
    ctx = browser.new_context(viewport={"width": 1366, "height": 768})
    page = ctx.new_page()
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: msg.type == "error" and errors.append(f"console: {msg.text}"))
    SHOTS.mkdir(parents=True, exist_ok=True)

    page.goto(live_server_url + lab_url(batch, "ann"))
    page.click("#agree")
    page.click("#ready")
    expect(page.locator("#onboarding-quiz h1")).to_have_text("A short quiz before you play")
    page.screenshot(path=str(SHOTS / "quality-quiz.png"), full_page=True)
    bank = {q["id"]: q for q in quiz["questions"]}

    def answer(right: bool) -> None:
        """Pick each shown question's right (or a wrong) choice by its text: the page shuffles them."""
        shown = page.locator("fieldset.quiz-question")
        for i in range(shown.count()):
            q = bank[shown.nth(i).get_attribute("id")[2:]]
            text = q["choices"][q["answer"] if right else (q["answer"] + 1) % len(q["choices"])]
            shown.nth(i).get_by_label(text, exact=True).check()
        page.click("#quiz-submit")

    answer(right=False)   # first attempt: every answer wrong
    expect(page.locator("#quiz-result")).to_contain_text("You did not pass this time")
    expect(page.locator("#attempts-left")).to_have_text("1")
    page.screenshot(path=str(SHOTS / "quality-quiz-retry.png"), full_page=True)
    answer(right=True)

    page.wait_for_url("**/m/**", timeout=15000)   # passed: waiting, then paired with the agent
    for round_no in (1, 2):
        expect(page.locator("#round-label")).to_have_text(f"Round {round_no} of 2")
        expect(page.locator(".swatch.clickable")).to_have_count(3)   # the agent has spoken
        page.locator(".swatch.clickable").first.click()
        expect(page.locator("#outcome")).to_contain_text(f"Round {round_no}: ")
    expect(page.locator("#finished")).to_be_visible()
    page.click("#continue")

    expect(page.locator("#questionnaire h1")).to_have_text("A few questions before you finish")
    assert page.locator("#completion-code").count() == 0
    page.click("#questionnaire-submit")            # nothing answered: told what is missing
    expect(page.locator("#questionnaire-error")).to_be_visible()
    page.screenshot(path=str(SHOTS / "quality-questionnaire-errors.png"), full_page=True)
    page.locator('#qn-partner_clear input[value="4"]').check()
    page.locator('#qn-enjoyed input[value="6"]').check()
    page.fill("#qn-comment textarea", "The speaker's words were short but clear.")
    page.screenshot(path=str(SHOTS / "quality-questionnaire.png"), full_page=True)
    page.click("#questionnaire-submit")
    expect(page.locator("#completion-code")).to_be_visible()
    wait_painted(page)
    page.screenshot(path=str(SHOTS / "quality-done.png"))
    code = page.inner_text("#completion-code")
    ctx.close()

    assert errors == []   # the refused form comes back with its reasons, and nothing is logged
    p = Participant.objects.get(batch=batch)
    assert (p.state, p.exit_reason, p.completion_code) == ("done", "completed", code)
    result = OnboardingResult.objects.get(worker_id="ann")
    assert (result.passed, result.attempts) == (True, 2)
    answers = QuestionnaireResponse.objects.get(participant=p).answers
    assert answers == {"partner_clear": 4, "enjoyed": 6, "comment": "The speaker's words were short but clear."}


def test_practice_round_then_the_waiting_room(live_server_url, celery_worker_process, browser):  # noqa: F811
    """The practice round in the browser: its page, the game against the agent, back to the
    worker's page, which grades it and moves on to the waiting room."""
    batch = Batch.objects.create(
        slug="quality-practice", title="Colors with a practice round", game_id="colors_v1",
        pairing=Batch.Pairing.HUMAN_HUMAN, config={"rounds": 3}, onboarding="practice", pay_cents=150)
    ctx = browser.new_context(viewport={"width": 1366, "height": 768})
    page = ctx.new_page()
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: msg.type == "error" and errors.append(f"console: {msg.text}"))
    page.goto(live_server_url + lab_url(batch, "ann"))
    expect(page.locator("#terms-screened-out")).to_have_text("no payment")
    page.click("#agree")
    page.click("#ready")
    expect(page.locator("#onboarding-practice h1")).to_have_text("A practice round before you play")
    page.screenshot(path=str(SHOTS / "quality-practice.png"))
    page.click("#practice-start")
    page.wait_for_url("**/m/**", timeout=15000)
    match = PracticeRound.objects.get(participant__batch=batch).match
    for round_no in (1, 2):   # the practice config: two rounds; the right color (read from the server)
        expect(page.locator("#round-label")).to_have_text(f"Round {round_no} of 2")
        expect(page.locator(".swatch.clickable")).to_have_count(3)   # the agent has spoken
        match.refresh_from_db()
        page.locator(f'.swatch[data-position="{listener_target(match)}"]').click()
        expect(page.locator("#outcome")).to_contain_text(f"Round {round_no}: ")
    expect(page.locator("#finished")).to_be_visible()
    wait_painted(page)
    page.screenshot(path=str(SHOTS / "quality-practice-game.png"))
    page.click("#continue")
    p = Participant.objects.get(batch=batch)
    expect(page.locator("#waiting")).to_be_visible()
    page.screenshot(path=str(SHOTS / "quality-practice-passed-waiting.png"))
    p.refresh_from_db()
    result = OnboardingResult.objects.get(worker_id="ann", kind="practice")
    assert (p.state, p.games_played) == ("waiting", 0)
    assert (result.passed, result.attempts, result.score) == (True, 1, 2)
    ctx.close()
    assert not errors, errors
