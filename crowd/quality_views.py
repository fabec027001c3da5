"""The onboarding quiz, the end-of-match questions and the post-game questionnaire pages (thin:
parse, call a service, render); crowd.pages.participant_page calls these for the ``onboarding``
state, for a worker with an end-of-match question due, and for a finished worker with a
questionnaire still to answer."""
from __future__ import annotations

from django.conf import settings
from django.shortcuts import redirect, render

from crowd import end_questions, onboarding, questionnaire
from live import ratelimit
from crowd.models import Participant
from crowd.views import terms
from games.registry import get_game


def _ctx(p: Participant) -> dict:
    return {"p": p, "batch": p.batch, "game": get_game(p.batch.game_id), "terms": terms(p.batch)}


def quiz_page(request, p: Participant, ctx: dict, *, error: str = "", status: int = 200):
    """This attempt's questions (drawn and recorded by ``quiz_attempt_open``); after a failed
    attempt only "not passed", never how many were right; the address's limit as a page of its own."""
    quiz = onboarding.game_quiz(p.batch.game_id)
    try:
        attempt = onboarding.quiz_attempt_open(participant_id=p.pk, client_addr=ratelimit.client_address(request))
    except onboarding.QuizLimit:
        return render(request, "lobby/onboarding_quiz_limit.html", {**ctx, "hours": settings.GT_QUIZ_ADDRESS_WINDOW_H},
                      status=429)
    if attempt is None:   # passed, or out of attempts, meanwhile: the participant page says where next
        return redirect("participant", token=p.token)
    return render(request, "lobby/onboarding_quiz.html", {
        **ctx, "attempt": attempt, "questions": onboarding.quiz_public(quiz, attempt.drawn),
        "pass_mark": quiz["pass_mark"], "n_questions": len(attempt.drawn),
        "attempts_left": int(quiz["max_attempts"]) - attempt.number + 1, "failed_before": attempt.number > 1,
        "error": error}, status=status)


def onboarding_page(request, p: Participant, ctx: dict):
    """The ``onboarding`` state: the quiz, or the practice round (graded here once it has ended)."""
    if p.batch.onboarding != onboarding.PRACTICE:
        return quiz_page(request, p, ctx)
    p = onboarding.practice_check(participant_id=p.pk)
    if p.state != Participant.State.ONBOARDING:
        return redirect("participant", token=p.token)
    practice = onboarding.definition(p.batch.game_id, onboarding.PRACTICE)
    result = onboarding.result_for(p)
    attempts = result.attempts if result else 0
    last = (result.detail.get(f"attempt_{attempts}") or {}) if result else {}
    running = onboarding.current_practice(p)
    return render(request, "lobby/onboarding_practice.html", {
        **ctx, "practice": practice, "attempts_left": int(practice["max_attempts"]) - attempts,
        "last": last, "running": running,
        "rounds": (practice.get("config") or {}).get("rounds")})


def practice_post(request, p: Participant):
    rnd = onboarding.practice_start(participant_id=p.pk)
    if rnd is None:
        return redirect("participant", token=p.token)
    return redirect(f"/m/{rnd.match_id}/?seat={rnd.seat_token}")


def quiz_post(request, p: Participant):
    try:
        onboarding.quiz_submit(participant_id=p.pk, attempt_id=request.POST.get("attempt"), answers=request.POST)
    except (onboarding.QuizInvalid, onboarding.QuizStale) as exc:
        # shown again with the reason, as Django re-renders an invalid form (200: a refused form is
        # the page's normal answer, and browsers log no error for it)
        return quiz_page(request, p, _ctx(p), error=str(exc))
    return redirect("participant", token=p.token)


def questionnaire_pending(p: Participant) -> bool:
    return questionnaire.pending(p)


def questionnaire_page(request, p: Participant, ctx: dict, *, errors: dict | None = None, status: int = 200):
    questions = questionnaire.questions_asked(p)
    for q in questions:
        if q["kind"] == "likert":
            q["scale"] = list(range(q.get("min", 1), q.get("max", 5) + 1))
        q["error"] = (errors or {}).get(q["id"], "")
        q["value"] = request.POST.get(q["id"], "") if request.method == "POST" else ""
    return render(request, "lobby/questionnaire.html", {**ctx, "questions": questions, "has_errors": bool(errors)},
                  status=status)


def questionnaire_post(request, p: Participant):
    if not questionnaire.pending(p):
        return redirect("participant", token=p.token)
    try:
        questionnaire.questionnaire_submit(participant_id=p.pk, data=request.POST)
    except questionnaire.AnswersInvalid as exc:
        return questionnaire_page(request, p, _ctx(p), errors=exc.errors)   # again, with the reasons
    return redirect("participant", token=p.token)


def end_questions_due(p: Participant):
    return end_questions.due(p)


def end_questions_page(request, p: Participant, ctx: dict, *, errors: dict | None = None, error: str = "",
                       status: int = 200):
    """The question due after a match (crowd/end_questions.py): the partners named only by the
    order the person met them, never by arm."""
    d = end_questions.due(p)
    if d is None:
        return redirect("participant", token=p.token)
    errors = errors or {}
    posted = request.POST if request.method == "POST" else {}
    questions = [{"id": q, "text": end_questions.PREFERENCE_QUESTIONS[q], "error": errors.get(q, ""),
                  "value": posted.get(q, "")} for q in d.questions]
    return render(request, "lobby/end_questions.html", {
        **ctx, "due": d, "questions": questions, "errors": errors, "error": error, "posted": posted,
        "kinds": end_questions.PARTNER_KIND_CHOICES, "confidence": list(end_questions.CONFIDENCE)}, status=status)


def end_questions_post(request, p: Participant):
    try:
        end_questions.end_questions_submit(participant_id=p.pk, data=request.POST)
    except end_questions.AnswersInvalid as exc:
        return end_questions_page(request, p, _ctx(p), errors=exc.errors)   # again, with the reasons
    except end_questions.Stale as exc:   # an old form: the page now due, saying why
        return end_questions_page(request, p, _ctx(p), error=str(exc)) if end_questions.due(p) else \
            redirect("participant", token=p.token)
    return redirect("participant", token=p.token)
