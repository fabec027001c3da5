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
worker's last match). The exports carry it: a ``questionnaire`` entry in each match's jsonl record
and ``manage.py export --format questionnaire-csv``.
"""
from __future__ import annotations

from importlib import import_module

from django.db import IntegrityError, transaction

from games.models import Participant, QuestionnaireResponse, Seat
from games.registry import get_game

KINDS = ("likert", "text")
ABOUT = ("partner", "study")
ASKED_AFTER = ("completed", "timed_out")


def game_default(game_id: str) -> list[dict]:
    try:
        module = import_module(f"{get_game(game_id).package}.onboarding")
    except ModuleNotFoundError:
        return []
    return list(getattr(module, "QUESTIONNAIRE", []))


def questions_for(batch) -> list[dict]:
    return game_default(batch.game_id) if batch.questionnaire is None else list(batch.questionnaire)


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


def questions_asked(p: Participant, seat: Seat | None = None) -> list[dict]:
    """The questions ``p`` is asked (those for its role in its last match)."""
    seat = seat if seat is not None else last_seat(p)
    role = seat.role if seat else None
    return [q for q in questions_for(p.batch) if not q.get("roles") or role in q["roles"]]


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


def export_entry(match, *, pseudonymise: bool = True) -> list[dict]:
    """The ``questionnaire`` entry of a match's export record: the answers of each worker whose
    questionnaire is about this match (its last match), with the questions as asked."""
    from games.selectors import pseudonym

    out = []
    rows = (QuestionnaireResponse.objects.filter(match=match).select_related("participant")
            .order_by("participant_id"))
    roles = dict(Seat.objects.filter(match=match, participant__isnull=False).values_list("participant_id", "role"))
    for r in rows:
        worker = r.participant.worker_id
        out.append({"role": roles.get(r.participant_id), "worker": pseudonym(worker) if pseudonymise else worker,
                    "answers": r.answers, "questions": r.questions, "answered_at": r.created_at.isoformat()})
    return out


CSV_FIELDS = ["match_id", "batch", "game_id", "role", "worker", "question_id", "about", "kind", "question", "answer"]


def write_csv(records, out) -> int:
    """``export --format questionnaire-csv``: one row per answer, joined to the dialogs by match id
    and the pseudonymised worker id (the same as in the jsonl export); returns the rows written."""
    import csv

    writer = csv.DictWriter(out, fieldnames=CSV_FIELDS)
    writer.writeheader()
    n = 0
    for record in records:
        for entry in record.get("questionnaire") or []:
            for q in entry["questions"]:
                if q["id"] not in entry["answers"]:
                    continue
                writer.writerow({"match_id": record["match_id"], "batch": record["batch"], "game_id": record["game_id"],
                                 "role": entry["role"], "worker": entry["worker"], "question_id": q["id"],
                                 "about": q.get("about", "study"), "kind": q["kind"], "question": q["text"],
                                 "answer": entry["answers"][q["id"]]})
                n += 1
    return n
