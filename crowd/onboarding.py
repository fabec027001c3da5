"""Onboarding before pairing (issue 12, item 3): an instructions quiz or a practice round
against an agent, per game.

A batch may require its game's quiz (``Batch.onboarding == "quiz"``) or practice round
(``"practice"``), both defined with the game in ``games/<game>/onboarding.py`` (``QUIZ``: a
version, a pass mark, the attempts allowed and a few multiple-choice questions; ``PRACTICE``: a
version, the worker's role, the agents, a short config, the attempts and the score to reach).
After the instructions, a worker who has not passed is put in the ``onboarding`` state
(``participant_ready``); the lobby pairs only ``waiting`` workers, so nobody is paired before
passing. A practice match has no batch and its seat no participant (``PracticeRound`` keeps who
plays it): it is no game of the batch, is not exported and not counted by the monitor.

The result is stored per (platform, worker id, game, kind, version) in ``OnboardingResult`` and
reused by every batch that asks for the same quiz: a worker who passed goes straight to the
waiting room; one who used up the attempts is let go at once with the exit reason
``failed_onboarding`` (outcome ``screened_out`` in crowd/outcomes.py: no pay by default, a batch may
set partial pay).
The quiz (issue 21, item 7): each attempt draws ``ask`` questions from the game's bank and
shuffles them and their choices with a seed of its own, recorded on a ``QuizAttempt`` row with
what was drawn, so the answers are scored on the server against the page that was shown (the
form's values are positions on that page; a form of another attempt is refused and changes
nothing). The correct answers never leave the server, and the worker learns only "passed" or
"not passed", never how many were right. Attempts are limited per person (the quiz's
``max_attempts``, per platform and worker id) and per client address (``quiz_attempt_open``:
``GT_QUIZ_ATTEMPTS_PER_ADDRESS`` quizzes of a game per ``GT_QUIZ_ADDRESS_WINDOW_H`` hours, whatever
worker ids they come with; only MTurk and Prolific entries count: lab links are signed by the
researcher, demo names serve this machine only).
"""
from __future__ import annotations

import hashlib
import random
import secrets
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from crowd.models import OnboardingResult, Participant, PracticeRound, QuizAttempt
from games.registry import get_game
from agents.registry import all_agents
from crowd.outcomes import participant_exit
from live.models import Match, Seat
from live.services import SeatSpec, match_create

QUIZ, PRACTICE = "quiz", "practice"
KINDS = (QUIZ, PRACTICE)


def definition(game_id: str, kind: str) -> dict | None:
    """The game's ``QUIZ`` or ``PRACTICE`` (its spec's ``onboarding`` module,
    ``games/<game>/onboarding.py``), or None."""
    return getattr(get_game(game_id).onboarding, {QUIZ: "QUIZ", PRACTICE: "PRACTICE"}.get(kind, "-"), None)


def game_quiz(game_id: str) -> dict | None:
    """The game's quiz (its spec's ``onboarding`` module), or None when the game has none."""
    return getattr(get_game(game_id).onboarding, "QUIZ", None)


def quiz_problems(quiz: dict) -> list[str]:
    """Why a quiz definition is not usable (tests check every game's quiz with it)."""
    out = []
    questions = quiz.get("questions") or []
    if not questions:
        out.append("A quiz needs at least one question.")
    if not str(quiz.get("version") or ""):
        out.append("A quiz needs a version.")
    if not 1 <= int(quiz.get("pass_mark") or 0) <= asked(quiz) <= len(questions):
        out.append("The pass mark must be between 1 and the number of questions asked (ask), at most the bank's.")
    if int(quiz.get("max_attempts") or 0) < 1:
        out.append("max_attempts must be at least 1.")
    ids = [q.get("id") for q in questions]
    if len(set(ids)) != len(ids) or not all(ids):
        out.append("Each question needs its own id.")
    for q in questions:
        if len(q.get("choices") or []) < 2 or not 0 <= q.get("answer", -1) < len(q.get("choices") or []):
            out.append(f"Question {q.get('id')!r}: at least two choices and an answer among them.")
    return out


def onboarding_problems(*, game_id: str, kind: str) -> list[str]:
    """Why a batch's onboarding cannot run (the batch form shows it)."""
    if not kind:
        return []
    if kind not in KINDS:
        return [f"Onboarding {kind!r} is not available; choose the instructions quiz, the practice round or none."]
    found = definition(game_id, kind)
    if found is None:
        what = "quiz" if kind == QUIZ else "practice round"
        return [f"The game {game_id} has no onboarding {what} (games/<game>/onboarding.py): choose another."]
    return quiz_problems(found) if kind == QUIZ else practice_problems(game_id, found)


def practice_problems(game_id: str, practice: dict) -> list[str]:
    roles = list(get_game(game_id).roles)
    out = []
    if practice.get("role") not in roles:
        out.append(f"The practice role must be one of {', '.join(roles)}.")
    agents = all_agents()
    for role in roles:
        if role != practice.get("role") and (practice.get("agents") or {}).get(role) not in agents:
            out.append(f"The practice round needs a registered agent for the {role} seat.")
    if int(practice.get("max_attempts") or 0) < 1:
        out.append("max_attempts must be at least 1.")
    return out


def asked(quiz: dict) -> int:
    """How many questions an attempt asks: ``ask`` of the bank, or all of them."""
    return int(quiz.get("ask") or len(quiz.get("questions") or []))


def draw(quiz: dict, seed: int) -> list[dict]:
    """The questions of one attempt: ``ask`` of the bank in a shuffled order, each with its choices
    shuffled; ``[{"id", "order": [the bank's choice indexes in the order shown]}]``. The same seed
    gives the same draw."""
    rng = random.Random(seed)
    out = []
    for q in rng.sample(quiz["questions"], asked(quiz)):
        order = list(range(len(q["choices"])))
        rng.shuffle(order)
        out.append({"id": q["id"], "order": order})
    return out


def quiz_public(quiz: dict, drawn: list[dict]) -> list[dict]:
    """An attempt's questions as the page shows them: no answers; each choice's value is its
    position on the page."""
    bank = {q["id"]: q for q in quiz["questions"]}
    return [{"id": d["id"], "text": bank[d["id"]]["text"],
             "choices": [(position, bank[d["id"]]["choices"][index]) for position, index in enumerate(d["order"])]}
            for d in drawn if d["id"] in bank]


def result_for(p: Participant) -> OnboardingResult | None:
    """The stored result of the onboarding ``p``'s batch requires (selector)."""
    found = definition(p.batch.game_id, p.batch.onboarding) if p.batch.onboarding else None
    if found is None:
        return None
    return OnboardingResult.objects.filter(platform=p.platform, worker_id=p.worker_id, game_id=p.batch.game_id,
                                           kind=p.batch.onboarding, version=str(found["version"])).first()


def needed(p: Participant) -> str:
    """``""`` when ``p`` may wait for a partner, ``"take"`` when it must take the quiz, ``"failed"``
    when the stored result says it used up its attempts."""
    if not p.batch.onboarding:
        return ""
    result = result_for(p)
    if result is None:
        return "take"
    if result.passed:
        return ""
    found = definition(p.batch.game_id, p.batch.onboarding)
    return "failed" if result.attempts >= int(found["max_attempts"]) else "take"


class QuizInvalid(ValueError):
    """The form does not answer every question with one of its choices (nothing is recorded)."""


class QuizStale(ValueError):
    """The form is of another attempt (an old tab, a page from before a retry): nothing is recorded."""


class QuizLimit(Exception):
    """This client address opened as many quizzes of the game as GT_QUIZ_ATTEMPTS_PER_ADDRESS allows."""


def grade(quiz: dict, drawn: list[dict], answers: dict) -> tuple[int, dict]:
    """(correct answers, the answers as the bank's choice indexes) of one attempt; ``answers`` holds
    each drawn question's position on the page. ``QuizInvalid`` for a missing or unknown answer."""
    bank = {q["id"]: q for q in quiz["questions"]}
    chosen = {}
    for d in drawn:
        raw = answers.get(d["id"])
        try:
            position = int(raw)
        except (TypeError, ValueError):
            raise QuizInvalid("Please answer every question.") from None
        if not 0 <= position < len(d["order"]):
            raise QuizInvalid("Please choose one of the answers given.")
        chosen[d["id"]] = d["order"][position]
    return sum(chosen[d["id"]] == bank[d["id"]]["answer"] for d in drawn), chosen


def _lock_address(game_id: str, client_addr: str) -> None:
    """Quizzes of one game opened from one address, one at a time (a PostgreSQL advisory lock held
    until the transaction ends), so two ids opening at once cannot both take the address's last
    attempt (SQLite, the single-process embedded server, has one writer anyway)."""
    if connection.vendor != "postgresql":
        return
    digest = hashlib.blake2b(f"groundtalk.quiz:{game_id}:{client_addr}".encode(), digest_size=8).digest()
    with connection.cursor() as cur:
        cur.execute("SELECT pg_advisory_xact_lock(%s)", [int.from_bytes(digest, "big", signed=True)])


def _address_attempts(game_id: str, client_addr: str) -> int:
    since = timezone.now() - timedelta(hours=settings.GT_QUIZ_ADDRESS_WINDOW_H)
    return QuizAttempt.objects.filter(game_id=game_id, client_addr=client_addr, counted=True,
                                      created_at__gte=since).count()


def open_attempt(result: OnboardingResult) -> QuizAttempt | None:
    """The result's attempt shown and not yet answered, if any (selector)."""
    return QuizAttempt.objects.filter(result=result, submitted_at__isnull=True).order_by("-number").first()


@transaction.atomic
def quiz_attempt_open(*, participant_id: int, client_addr: str) -> QuizAttempt | None:
    """The quiz page's attempt: the one open for this worker, else a new draw (a fresh seed,
    recorded). None when the worker need not take the quiz: not in onboarding, or decided (passed
    or out of attempts, say in another batch meanwhile), and then moved on as ``quiz_submit``
    would. ``QuizLimit`` when ``client_addr`` opened ``GT_QUIZ_ATTEMPTS_PER_ADDRESS``
    quizzes of this game in the window, whatever worker ids they came with (MTurk and Prolific
    entries count; lab links and demo names do not). Locks the participant row, then the result row."""
    p = Participant.objects.select_for_update().select_related("batch").get(pk=participant_id)
    quiz = game_quiz(p.batch.game_id)
    if p.state != Participant.State.ONBOARDING:
        return None
    if quiz is None:   # the game lost its quiz after the worker started it: nothing to take
        p.state, p.waiting_since = Participant.State.WAITING, timezone.now()
        p.save(update_fields=["state", "waiting_since"])
        return None
    result = _result_row(p, QUIZ, str(quiz["version"]))
    if result.passed:
        p.state, p.waiting_since = Participant.State.WAITING, timezone.now()
        p.save(update_fields=["state", "waiting_since"])
        return None
    if result.attempts >= int(quiz["max_attempts"]):
        p.save(update_fields=participant_exit(p, "failed_onboarding"))
        return None
    current = open_attempt(result)
    if current is not None:
        return current
    counted = p.platform in ("mturk", "prolific")   # a lab link is signed by the researcher, a demo is local
    limit = settings.GT_QUIZ_ATTEMPTS_PER_ADDRESS
    if counted and limit and client_addr:
        _lock_address(p.batch.game_id, client_addr)
        if _address_attempts(p.batch.game_id, client_addr) >= limit:
            raise QuizLimit()
    seed = secrets.randbits(62)
    return QuizAttempt.objects.create(result=result, participant=p, number=result.attempts + 1, seed=seed,
                                      drawn=draw(quiz, seed), game_id=p.batch.game_id, client_addr=client_addr,
                                      counted=counted)


@transaction.atomic
def quiz_submit(*, participant_id: int, attempt_id, answers: dict) -> tuple[Participant, OnboardingResult]:
    """Grade the answers to the open attempt ``attempt_id`` against what it drew and record them:
    passed -> waiting; failed with attempts left -> stays in onboarding (the next page draws
    again); the last attempt failed -> exit ``failed_onboarding``. ``QuizInvalid`` and
    ``QuizStale`` change nothing."""
    p = Participant.objects.select_for_update().select_related("batch").get(pk=participant_id)
    quiz = game_quiz(p.batch.game_id)
    if p.state != Participant.State.ONBOARDING or quiz is None:
        return p, result_for(p)
    result = _result_row(p, QUIZ, str(quiz["version"]))
    attempt = open_attempt(result)
    if attempt is None or str(attempt.pk) != str(attempt_id or ""):
        if not (result.passed or result.attempts >= int(quiz["max_attempts"])):
            raise QuizStale("This quiz page was out of date. Here are your questions: please answer them again.")
    elif not (result.passed or result.attempts >= int(quiz["max_attempts"])):
        correct, chosen = grade(quiz, attempt.drawn, answers)
        passed = correct >= int(quiz["pass_mark"])
        attempt.answers, attempt.correct, attempt.passed = chosen, correct, passed
        attempt.submitted_at = timezone.now()
        attempt.save(update_fields=["answers", "correct", "passed", "submitted_at"])
        result.attempts += 1
        result.passed = passed
        result.score = correct / len(attempt.drawn)
        result.batch = p.batch
        result.detail = {**result.detail, f"attempt_{result.attempts}": {
            "answers": chosen, "correct": correct, "seed": attempt.seed, "attempt_id": attempt.pk}}
        result.save()
    if result.passed:
        p.state, p.waiting_since = Participant.State.WAITING, timezone.now()
        p.save(update_fields=["state", "waiting_since"])
    elif result.attempts >= int(quiz["max_attempts"]):
        p.save(update_fields=participant_exit(p, "failed_onboarding"))
    return p, result


def after_instructions(p: Participant) -> list[str]:
    """Called by ``participant_ready`` under the participant's row lock: put ``p`` where its
    onboarding says (waiting, onboarding, or let go); returns the fields to save."""
    status = needed(p)
    if status == "take":
        p.state = Participant.State.ONBOARDING
        return ["state"]
    if status == "failed":
        return participant_exit(p, "failed_onboarding")
    p.state, p.waiting_since = Participant.State.WAITING, timezone.now()
    return ["state", "waiting_since"]


# ------------------------------------------------------------------------------ the practice round
def _result_row(p: Participant, kind: str, version: str) -> OnboardingResult:
    key = dict(platform=p.platform, worker_id=p.worker_id, game_id=p.batch.game_id, kind=kind, version=version)
    try:
        with transaction.atomic():
            result, _ = OnboardingResult.objects.get_or_create(**key, defaults={"batch": p.batch})
    except IntegrityError:
        result = OnboardingResult.objects.get(**key)
    return OnboardingResult.objects.select_for_update().get(pk=result.pk)


def current_practice(p: Participant):
    """The worker's practice round not yet graded, if any (selector)."""
    return PracticeRound.objects.filter(participant=p, graded=False).select_related("match").order_by("-pk").first()


@transaction.atomic
def practice_start(*, participant_id: int):
    """The worker's practice match against the game's agent: the one under way, or a new one.
    Its seat has no participant (the match is no game of the batch: it is not counted, has no
    batch and is left out of the exports); its token is kept on the PracticeRound."""
    p = Participant.objects.select_for_update().select_related("batch").get(pk=participant_id)
    practice = definition(p.batch.game_id, PRACTICE)
    if p.state != Participant.State.ONBOARDING or p.batch.onboarding != PRACTICE or practice is None:
        return None
    running = current_practice(p)
    if running is not None:
        return running
    result = _result_row(p, PRACTICE, str(practice["version"]))
    seats = {role: SeatSpec(Seat.Kind.HUMAN) if role == practice["role"]
             else SeatSpec(Seat.Kind.AGENT, agent_name=practice["agents"][role])
             for role in get_game(p.batch.game_id).roles}
    match = match_create(game_id=p.batch.game_id, seats=seats, config=dict(practice.get("config") or {}))
    token = Seat.objects.get(match=match, role=practice["role"]).token
    return PracticeRound.objects.create(result=result, participant=p, match=match, seat_token=token)


@transaction.atomic
def practice_check(*, participant_id: int) -> Participant:
    """Grade the worker's practice match once it has ended: passed (played to its end with the
    score asked) -> waiting; failed with attempts left -> stays in onboarding; the last attempt
    failed -> exit ``failed_onboarding``. A match still running changes nothing."""
    p = Participant.objects.select_for_update().select_related("batch").get(pk=participant_id)
    practice = definition(p.batch.game_id, PRACTICE)
    rnd = current_practice(p)
    if p.state != Participant.State.ONBOARDING or practice is None or rnd is None:
        return p
    match = Match.objects.get(pk=rnd.match_id)
    if match.status == Match.Status.ACTIVE:
        return p
    result = OnboardingResult.objects.select_for_update().get(pk=rnd.result_id)
    score = (match.outcome or {}).get(practice.get("score_key", ""), None)
    played_out = match.status == Match.Status.FINISHED
    passed = played_out and (practice.get("min_score") is None or (score or 0) >= practice["min_score"])
    rnd.graded = True
    rnd.save(update_fields=["graded"])
    if not (result.passed or result.attempts >= int(practice["max_attempts"])):
        result.attempts += 1
        result.passed = passed
        result.score = score
        result.batch = p.batch
        result.detail = {**result.detail, f"attempt_{result.attempts}": {
            "match_id": str(match.id), "status": match.status, "score": score, "passed": passed}}
        result.save()
    if result.passed:
        p.state, p.waiting_since = Participant.State.WAITING, timezone.now()
        p.save(update_fields=["state", "waiting_since"])
    elif result.attempts >= int(practice["max_attempts"]):
        p.save(update_fields=participant_exit(p, "failed_onboarding"))
    return p


def practice_next_url(match) -> str | None:
    """Where a practice match's page sends the worker when it ends: back to their page."""
    rnd = PracticeRound.objects.filter(match=match).select_related("participant").first()
    return f"/p/{rnd.participant.token}/" if rnd else None
