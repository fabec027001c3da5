"""The onboarding quiz (issue 12, item 3): required before the worker may wait or be paired;
graded on the server; failing ends the worker's part (failed_onboarding -> screened_out, no pay by
default); the result is kept per (platform, worker, game, version) and reused across batches."""
from __future__ import annotations

import pytest
from django.test import Client
from django.utils.html import escape

from crowd import onboarding
from crowd import lobby
from research.admin import BatchForm
from crowd.models import OnboardingResult, Participant, QuizAttempt
from live.models import Batch
from games.registry import GAMES

from tests.support.factories import batch as make_batch
from tests.support.factories import lab_url

pytestmark = pytest.mark.django_db

QUIZ = onboarding.game_quiz("colors_v1")
BANK = {q["id"]: q for q in QUIZ["questions"]}
RIGHT, WRONG = "right", "wrong"


def enter_ready(b: Batch, name: str) -> tuple[Client, str]:
    c = Client()
    r = c.get(lab_url(b, name))
    assert r.status_code == 302
    c.post(r.url, {"step": "consent", "agree": "yes"})
    c.post(r.url, {"step": "ready"})
    return c, r.url


def me(url: str) -> Participant:
    return Participant.objects.get(token=url.rstrip("/").rsplit("/", 1)[-1])


def attempt_answers(url: str, how: str = RIGHT) -> dict:
    """The form of the worker's open attempt (test-side knowledge of the answers): every answer
    right, or every answer wrong, as positions on the page that attempt drew."""
    p = me(url)   # the worker's open attempt, wherever it was drawn (one per worker and quiz)
    attempt = QuizAttempt.objects.get(result__platform=p.platform, result__worker_id=p.worker_id,
                                      result__game_id=p.batch.game_id, submitted_at__isnull=True)
    form = {"attempt": str(attempt.pk)}
    for d in attempt.drawn:
        answer = BANK[d["id"]]["answer"]
        position = d["order"].index(answer)
        form[d["id"]] = str(position if how == RIGHT else (position + 1) % len(d["order"]))
    return form


def quiz(c, url, how=RIGHT, **extra):
    """Open the quiz page (which draws the attempt), then answer it."""
    assert c.get(url).status_code == 200
    return c.post(url, {"step": "quiz", **attempt_answers(url, how), **extra})


def test_every_games_quiz_is_well_formed():
    found = [g for g in GAMES if onboarding.game_quiz(g)]
    assert {"colors_v1", "guesswhich_v1"} <= set(found)
    for game_id in found:
        assert onboarding.quiz_problems(onboarding.game_quiz(game_id)) == [], game_id
    assert onboarding.quiz_problems({"version": "1", "pass_mark": 3, "max_attempts": 1, "questions": [
        {"id": "a", "text": "?", "choices": ["x"], "answer": 1}]})


def test_the_quiz_gates_pairing_and_passing_lets_the_worker_wait():
    b = make_batch(onboarding="quiz")
    ca, ua = enter_ready(b, "ann")
    cb, ub = enter_ready(b, "bob")
    assert me(ua).state == me(ub).state == "onboarding"
    page = ca.get(ua).content.decode()
    drawn = QuizAttempt.objects.get(participant=me(ua)).drawn
    assert "A short quiz before you play" in page and escape(BANK[drawn[0]["id"]]["text"]) in page
    # nobody in onboarding is paired
    assert lobby.lobby_poll(participant_id=me(ua).pk).match_id is None
    assert quiz(ca, ua, RIGHT).status_code == 302
    assert me(ua).state == "waiting"
    assert lobby.lobby_poll(participant_id=me(ua).pk).match_id is None    # bob has not passed yet
    quiz(cb, ub, RIGHT)
    status = lobby.lobby_poll(participant_id=me(ub).pk)
    assert status.match_id is not None
    r = OnboardingResult.objects.get(worker_id="ann")
    assert (r.passed, r.attempts, r.score, r.game_id, r.version, r.batch_id) == (True, 1, 1.0, "colors_v1", "2", b.pk)


def test_a_bad_form_changes_nothing():
    b = make_batch(onboarding="quiz")
    c, url = enter_ready(b, "ann")
    c.get(url)
    right = attempt_answers(url)
    first = QuizAttempt.objects.get().drawn[0]["id"]
    partial = dict(list(right.items())[:-1])
    for answers in (partial, {**right, first: "9"}, {**right, first: "x"}, {**right, "attempt": "0"},
                    {k: v for k, v in right.items() if k != "attempt"}):
        r = c.post(url, {"step": "quiz", **answers})
        assert r.status_code == 200 and 'id="quiz-error"' in r.content.decode()   # the form again, with why
        assert "Traceback" not in r.content.decode()
    assert me(url).state == "onboarding" and OnboardingResult.objects.get().attempts == 0
    assert QuizAttempt.objects.count() == 1 and QuizAttempt.objects.get().submitted_at is None


def test_failing_twice_ends_the_study_without_pay_and_is_remembered():
    b = make_batch(onboarding="quiz", pay_cents=100)
    c, url = enter_ready(b, "ann")
    quiz(c, url, WRONG)
    assert me(url).state == "onboarding"
    page = c.get(url).content.decode()
    assert "You did not pass this time" in page and 'id="attempts-left">1<' in page
    quiz(c, url, WRONG)
    p = me(url)
    assert (p.state, p.exit_reason, p.outcome, p.pay, p.pay_cents) == ("done", "failed_onboarding", "screened_out",
                                                                       "none", 0)
    page = c.get(url).content.decode()
    assert "You did not pass the quiz" in page and p.completion_code not in page
    # a later batch of the same game does not let the worker try again
    c2, url2 = enter_ready(make_batch(onboarding="quiz", slug="second"), "ann")
    assert (me(url2).state, me(url2).exit_reason) == ("done", "failed_onboarding")
    # a batch may pay a screen-out partially
    b3 = make_batch(onboarding="quiz", slug="third", pay_cents=100, exit_pay={"screened_out": {"pay": "partial",
                                                                                               "cents": 20}})
    _, url3 = enter_ready(b3, "ann")
    assert (me(url3).pay, me(url3).pay_cents) == ("partial", 20)


def test_a_pass_is_reused_in_another_batch_of_the_game_only():
    b = make_batch(onboarding="quiz")
    c, url = enter_ready(b, "ann")
    quiz(c, url, WRONG)
    quiz(c, url, RIGHT)                      # second attempt passes
    assert me(url).state == "waiting"
    _, url2 = enter_ready(make_batch(onboarding="quiz", slug="again"), "ann")
    assert me(url2).state == "waiting"       # no quiz this time
    _, url3 = enter_ready(make_batch(onboarding="quiz", slug="gw", game_id="guesswhich_v1",
                                     pairing="human-agent", agents={"answerer": "alice_exact"},
                                     human_roles=["questioner"], config={}), "ann")
    assert me(url3).state == "onboarding"   # another game: its own quiz
    _, url4 = enter_ready(make_batch(slug="plain"), "ann")
    assert me(url4).state == "waiting"       # a batch without onboarding


def test_the_batch_form_refuses_an_onboarding_the_game_cannot_run():
    assert onboarding.onboarding_problems(game_id="colors_v1", kind="exam")
    assert onboarding.onboarding_problems(game_id="codraw_v1", kind="quiz")
    assert onboarding.onboarding_problems(game_id="colors_v1", kind="quiz") == []
    assert [c for c, _ in BatchForm().fields["onboarding"].choices] == ["", "quiz", "practice"]


def test_the_consent_page_says_what_failing_the_onboarding_earns():
    plain = make_batch(slug="plain-consent")
    c = Client()
    page = c.get(c.get(lab_url(plain, "ann")).url).content.decode()
    assert "terms-screened-out" not in page
    for kind, words in (("quiz", "answer a short quiz"), ("practice", "play a short practice round")):
        b = make_batch(slug=f"consent-{kind}", onboarding=kind, pay_cents=100,
                       exit_pay={"screened_out": {"pay": "partial", "cents": 25}})
        c = Client()
        page = c.get(c.get(lab_url(b, "ann")).url).content.decode()
        assert words in page and 'id="terms-screened-out">a partial payment of $0.25<' in page
