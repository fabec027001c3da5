"""The post-game questionnaire (issue 12, item 3).

A batch's ``questionnaire`` is a list of questions; left null it is the game's default
(``QUESTIONNAIRE`` in ``games/<game>/onboarding.py``: GuessWhich's six feedback ratings of the
partner and a comment), ``[]`` asks nothing. A question::

    {"id": "fluency", "kind": "likert" | "text", "text": "The answers were fluent",
     "about": "partner" | "study", "required": true, "min": 1, "max": 5,      # likert
     "max_length": 1000,                                                      # text
     "roles": ["questioner"]}                                                 # optional

It is shown after the worker's last game, before the completion page (only to workers whose part
ended with a game: completed or timed out), validated on the server, and stored once per
participant in ``QuestionnaireResponse`` with the match the ``partner`` questions are about (the
worker's last match). Each item is asked once: an item the game itself asked in that match
(``asked_in_game`` in the game's onboarding module: GuessWhich's feedback ratings, once the
questioner reached the feedback phase) is left out. The exports carry both: a ``questionnaire``
entry in each match's jsonl record and ``manage.py export --format questionnaire-csv``, where an
item answered in the game is marked ``asked_in: game`` (research/records.py writes both).
"""
from __future__ import annotations

from django.db import IntegrityError, transaction

from crowd.models import Participant, QuestionnaireResponse
from live.models import Seat
from games.registry import get_game

KINDS = ("likert", "text")
ABOUT = ("partner", "study")
ASKED_AFTER = ("completed", "time_up")


def _onboarding(game_id: str):
    return get_game(game_id).onboarding   # GameSpec.onboarding: None when the game has none


def game_default(game_id: str) -> list[dict]:
    # copies: the questionnaire page adds its working fields (error, value) to the dicts it gets
    return [dict(q) for q in getattr(_onboarding(game_id), "QUESTIONNAIRE", [])]


def asked_in_game(seat: Seat | None) -> dict:
    """The questionnaire items the game itself asked this seat (by question id, with the answer it
    got, ``None`` where skipped): ``asked_in_game(state, role)`` in ``games/<game>/onboarding.py``,
    GuessWhich's feedback ratings. The questionnaire does not ask them again."""
    if seat is None:
        return {}
    hook = getattr(_onboarding(seat.match.game_id), "asked_in_game", None)
    return dict(hook(seat.match.state, seat.role)) if hook else {}


def questions_for(batch) -> list[dict]:
    return game_default(batch.game_id) if batch.questionnaire is None else [dict(q) for q in batch.questionnaire]


def questionnaire_problems(questions) -> list[str]:
    """Why a batch's questionnaire is not usable (the batch form shows it)."""
    if questions is None:
        return []
    if not isinstance(questions, list) or not all(isinstance(q, dict) for q in questions):
        return ["The questionnaire is a list of questions (JSON objects)."]
    out, ids = [], set()
    for q in questions:
        qid = q.get("id")
        if not isinstance(qid, str) or not qid.isidentifier() or qid in ids:
            out.append(f"Each question needs its own id (letters, digits, _): {qid!r}.")
        ids.add(qid)
        if q.get("kind") not in KINDS:
            out.append(f"{qid}: kind must be one of {', '.join(KINDS)}.")
        if not isinstance(q.get("text"), str) or not q.get("text"):
            out.append(f"{qid}: a question needs its text.")
        if q.get("about", "study") not in ABOUT:
            out.append(f"{qid}: about must be partner or study.")
        if q.get("kind") == "likert":
            lo, hi = q.get("min", 1), q.get("max", 5)
            if not (isinstance(lo, int) and isinstance(hi, int) and lo < hi <= lo + 10):
                out.append(f"{qid}: a rating scale goes from min to max (integers, at most 11 points).")
    return out


def last_seat(p: Participant) -> Seat | None:
    return (Seat.objects.filter(participant=p).select_related("match")
            .order_by("-match__created_at").first())


def for_role(questions: list[dict], role: str | None) -> list[dict]:
    return [q for q in questions if not q.get("roles") or role in q["roles"]]


def questions_asked(p: Participant, seat: Seat | None = None) -> list[dict]:
    """The questions ``p`` is asked: those for its role in its last match, less those the game
    already asked in that match (``asked_in_game``: each item is asked once)."""
    seat = seat if seat is not None else last_seat(p)
    in_game = asked_in_game(seat)
    return [q for q in for_role(questions_for(p.batch), seat.role if seat else None) if q["id"] not in in_game]


def pending(p: Participant) -> bool:
    """Whether ``p`` must answer the questionnaire before the completion page (selector)."""
    if p.state != Participant.State.DONE or p.exit_reason not in ASKED_AFTER:
        return False
    if QuestionnaireResponse.objects.filter(participant=p).exists():
        return False
    return bool(questions_asked(p))


class AnswersInvalid(ValueError):
    def __init__(self, errors: dict[str, str]):
        super().__init__("; ".join(errors.values()))
        self.errors = errors


def validate(questions: list[dict], data) -> dict:
    """The answers, typed (int ratings, stripped text); ``AnswersInvalid`` with a message per question."""
    answers, errors = {}, {}
    for q in questions:
        raw = (data.get(q["id"]) or "").strip()
        if not raw:
            if q.get("required", q["kind"] == "likert"):
                errors[q["id"]] = "Please answer this question."
            continue
        if q["kind"] == "likert":
            lo, hi = q.get("min", 1), q.get("max", 5)
            try:
                value = int(raw)
            except ValueError:
                value = None
            if value is None or not lo <= value <= hi:
                errors[q["id"]] = f"Choose a rating from {lo} to {hi}."
                continue
            answers[q["id"]] = value
        else:
            limit = int(q.get("max_length", 1000))
            if len(raw) > limit or any(ord(c) < 32 and c not in "\n\r\t" for c in raw):
                errors[q["id"]] = f"At most {limit} characters of plain text."
                continue
            answers[q["id"]] = raw
    if errors:
        raise AnswersInvalid(errors)
    return answers


@transaction.atomic
def questionnaire_submit(*, participant_id: int, data) -> QuestionnaireResponse:
    """Validate and store ``p``'s answers (once: a second submission keeps the first).
    ``AnswersInvalid`` stores nothing."""
    p = Participant.objects.select_for_update().select_related("batch").get(pk=participant_id)
    existing = QuestionnaireResponse.objects.filter(participant=p).first()
    if existing is not None:
        return existing
    seat = last_seat(p)
    questions = questions_asked(p, seat)
    answers = validate(questions, data)
    try:
        with transaction.atomic():
            return QuestionnaireResponse.objects.create(
                participant=p, match=seat.match if seat else None, questions=questions, answers=answers)
    except IntegrityError:
        return QuestionnaireResponse.objects.get(participant=p)
