"""Mining the quiz (issue 21, item 7): five throwaway ids learned the answers from "You got N of 3
right" and the real id passed first time. Now a failed attempt hears only "not passed"; each
attempt draws its questions from the game's bank and shuffles them and their choices with a seed
of its own, recorded so the answers are scored against the page shown; and one client address
opens at most GT_QUIZ_ATTEMPTS_PER_ADDRESS quizzes of a game, whatever worker ids it uses."""
from __future__ import annotations

import re
from html import unescape

import pytest
from django.test import Client

from crowd import onboarding
from crowd.models import OnboardingResult, Participant, QuizAttempt

from tests.support.factories import batch as make_batch
from tests.crowd.test_onboarding import BANK, QUIZ, RIGHT, WRONG, attempt_answers, enter_ready, me

pytestmark = pytest.mark.django_db

ADDRESS = "203.0.113.50"


def form_ids(page: str) -> list[tuple[str, list[str]]]:
    """The questions of a quiz page in their order, each with its choices' texts in their order."""
    out = []
    for qid, body in re.findall(r'<fieldset class="quiz-question" id="q-([\w-]+)">(.*?)</fieldset>', page, re.S):
        out.append((qid, [unescape(c.strip()) for c in re.findall(r'required>\s*(.*?)</label>', body, re.S)]))
    return out


def outside_the_form(page: str) -> str:
    return re.sub(r"<form.*?</form>", "", page, flags=re.S)


def mturk_worker(b, n: int, address: str = ADDRESS) -> tuple[Client, str]:
    """A throwaway MTurk id entered from ``address``, consented and ready (so in the quiz)."""
    c = Client(REMOTE_ADDR=address)
    r = c.get(f"/b/{b.slug}/?workerId=A1THROWAWAY{n:04d}&assignmentId=3ASSIGNMENT{n:020d}"
              f"&hitId=3HITQUIZMINING0000000000000000&turkSubmitTo=https://workersandbox.mturk.com")
    assert r.status_code == 302, r.content.decode()[:500]
    c.post(r.url, {"step": "consent", "agree": "yes"})
    c.post(r.url, {"step": "ready"})
    assert me(r.url).state == "onboarding"
    return c, r.url


def test_a_failed_attempt_says_only_not_passed():
    b = make_batch(onboarding="quiz")
    pages = {}
    for name, right in (("ann", QUIZ["pass_mark"] - 1), ("bob", 0)):   # one short of passing, and none right
        c, url = enter_ready(b, name)
        c.get(url)
        form = attempt_answers(url, RIGHT)
        wrong = attempt_answers(url, WRONG)
        for d in QuizAttempt.objects.get(participant=me(url)).drawn[right:]:
            form[d["id"]] = wrong[d["id"]]
        assert c.post(url, {"step": "quiz", **form}).status_code == 302
        assert QuizAttempt.objects.get(participant=me(url), number=1).correct == right
        page = c.get(url).content.decode()
        result = re.search(r'id="quiz-result"[^>]*>(.*?)</p>', page, re.S).group(1)
        assert "You did not pass this time" in result and not re.search(r"\d", result)
        assert not re.search(r"\d+ (of|out of) \d+ (right|correct)", page), page
        pages[name] = outside_the_form(page).replace(name, "NAME")
    # the two workers' pages say the same outside the questions: nothing tells 3 right from none
    strip = re.compile(r'(/p/|name="csrfmiddlewaretoken" value=")[^"/]+')
    assert strip.sub("", pages["ann"]) == strip.sub("", pages["bob"])


def test_each_attempt_draws_and_shuffles_anew_and_is_scored_against_its_own_page():
    b = make_batch(onboarding="quiz")
    c, url = enter_ready(b, "ann")
    first = form_ids(c.get(url).content.decode())
    assert len(first) == QUIZ["ask"] < len(QUIZ["questions"])
    assert form_ids(c.get(url).content.decode()) == first        # a reload shows the same attempt
    assert c.post(url, {"step": "quiz", **attempt_answers(url, WRONG)}).status_code == 302
    second = form_ids(c.get(url).content.decode())
    assert second != first                                        # another draw, another order
    a1, a2 = QuizAttempt.objects.filter(participant=me(url)).order_by("number")
    assert a1.seed != a2.seed and onboarding.draw(QUIZ, a1.seed) == a1.drawn and onboarding.draw(QUIZ, a2.seed) == a2.drawn
    # the page shows the drawn questions in the drawn order, with the choices in the drawn order
    assert second == [(d["id"], [BANK[d["id"]]["choices"][i] for i in d["order"]]) for d in a2.drawn]
    # the first attempt's form, sent again, is refused and changes nothing
    stale = {"step": "quiz", "attempt": str(a1.pk), **{d["id"]: "0" for d in a1.drawn}}
    r = c.post(url, stale)
    assert r.status_code == 200 and "out of date" in r.content.decode()
    assert OnboardingResult.objects.get().attempts == 1
    # the right answers as positions on this attempt's page pass
    assert c.post(url, {"step": "quiz", **attempt_answers(url, RIGHT)}).status_code == 302
    assert me(url).state == "waiting"
    assert QuizAttempt.objects.get(pk=a2.pk).passed is True


def test_two_workers_get_different_orders():
    b = make_batch(onboarding="quiz")
    (ca, ua), (cb, ub) = enter_ready(b, "ann"), enter_ready(b, "bob")
    assert form_ids(ca.get(ua).content.decode()) != form_ids(cb.get(ub).content.decode())


def test_the_address_limit_holds_across_throwaway_ids(settings):
    settings.GT_QUIZ_ATTEMPTS_PER_ADDRESS = 4
    b = make_batch(onboarding="quiz", entry_kinds=["mturk", "lab"], pairing="human-agent", human_roles=["listener"],
                   agents={"speaker": "colors_lexicon_speaker"})
    for n in range(2):   # two throwaway ids, each failing both its attempts to learn from the pages
        c, url = mturk_worker(b, n)
        for _ in range(2):
            assert 'id="onboarding-quiz"' in c.get(url).content.decode()
            c.post(url, {"step": "quiz", **attempt_answers(url, WRONG)})
        assert me(url).exit_reason == "failed_onboarding"
    # the third id from the same address gets no quiz: a clear page, nothing drawn
    c, url = mturk_worker(b, 2)
    r = c.get(url)
    page = r.content.decode()
    assert r.status_code == 429 and 'id="quiz-limit"' in page and "return the task" in page
    assert 'id="onboarding-quiz"' not in page and "quiz-question" not in page and "Traceback" not in page
    assert not QuizAttempt.objects.filter(participant=me(url)).exists()
    r = c.post(url, {"step": "quiz", "attempt": "1", "speaker": "0"})   # answering blind changes nothing
    assert r.status_code == 429 and not OnboardingResult.objects.filter(worker_id="A1THROWAWAY0002", attempts__gt=0).exists()
    assert QuizAttempt.objects.filter(client_addr=ADDRESS).count() == 4
    # another address is not affected; nor is a lab link (the researcher signed its name) from this one
    other, other_url = mturk_worker(b, 4, address="198.51.100.9")
    assert 'id="onboarding-quiz"' in other.get(other_url).content.decode()
    from tests.support.factories import lab_url

    lab = Client(REMOTE_ADDR=ADDRESS)
    lab_page = lab.get(lab_url(b, "ann")).url
    lab.post(lab_page, {"step": "consent", "agree": "yes"})
    lab.post(lab_page, {"step": "ready"})
    assert 'id="onboarding-quiz"' in lab.get(lab_page).content.decode()
    assert Participant.objects.filter(batch=b, platform="mturk").count() == 4


@pytest.mark.django_db(transaction=True)   # threads: each its own connection, so commits must be real
def test_ids_opening_the_quiz_at_once_share_the_address_limit(settings, monkeypatch):
    """Six throwaway ids open the quiz of one game (six batches) in the same moment from one address
    with room for two: two
    attempts are drawn (an advisory lock per game and address, not a read-then-write). The count
    is made slow, so that without the lock every thread would count before any draws."""
    import time

    from tests.support.factories import run_in_threads

    count = onboarding._address_attempts

    def slow_count(game_id, client_addr):
        n = count(game_id, client_addr)
        time.sleep(0.3)
        return n

    monkeypatch.setattr(onboarding, "_address_attempts", slow_count)
    settings.GT_QUIZ_ATTEMPTS_PER_ADDRESS = 2
    batches = [make_batch(onboarding="quiz", entry_kinds=["mturk"]) for _ in range(6)]   # the same game
    people = [Participant.objects.create(batch=batches[i], platform="mturk", worker_id=f"A1RACE{i}", assignment_id=f"3RACE{i}",
                                         hit_id="3HITRACE", state=Participant.State.ONBOARDING) for i in range(6)]
    outcomes = []

    def open_quiz(i: int) -> None:
        try:
            onboarding.quiz_attempt_open(participant_id=people[i].pk, client_addr=ADDRESS)
            outcomes.append("drawn")
        except onboarding.QuizLimit:
            outcomes.append("limit")

    run_in_threads(len(people), open_quiz)
    assert sorted(outcomes) == ["drawn"] * 2 + ["limit"] * 4
    assert QuizAttempt.objects.filter(client_addr=ADDRESS).count() == 2


def test_a_quiz_passed_in_another_batch_meanwhile_moves_the_worker_on():
    a, b = make_batch(onboarding="quiz"), make_batch(onboarding="quiz")
    ca, ua = enter_ready(a, "ann")
    ca.get(ua)                                   # batch a's quiz drawn and shown, not answered
    cb, ub = enter_ready(b, "ann")
    cb.get(ub)
    r = cb.post(ub, {"step": "quiz", **attempt_answers(ub, RIGHT)})
    assert r.status_code == 302 and me(ub).state == "waiting"
    r = ca.get(ua)                               # batch a's page: no quiz to take any more
    assert r.status_code == 302 and me(ua).state == "waiting"
