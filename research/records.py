"""What an export holds of a match: its record (``match_record``: seats, events, outcome, and the
workers' questionnaire answers about it) and the questionnaire CSV (``questionnaire-csv``).
See docs/exports.md. The questions themselves and their answers are crowd's (crowd/questionnaire.py)."""
from __future__ import annotations

from typing import Iterator

from django.db.models import Q

from crowd.models import PartnerKindAnswer, PreferenceAnswer, QuestionnaireResponse
from crowd.end_questions import PREFERENCE_QUESTIONS
from crowd.questionnaire import asked_in_game, for_role, questions_for
from groundtalk_web import csvsafe
from research.agent_calls import match_call_records
from live.models import Match, MatchEvent, Seat
from live.selectors import export_matches, pseudonym
from live.services import event_row_to_wire


def match_records(*, game_id: str | None = None, batch_slug: str | None = None, since=None, until=None,
                  status: str = "all", pseudonymise: bool = True, chunk_size: int = 200) -> Iterator[dict]:
    """Every match as an export record (see docs/exports.md), streamed in constant memory."""
    matches = export_matches(game_id=game_id, batch_slug=batch_slug, since=since, until=until, status=status)
    for match in matches.iterator(chunk_size=chunk_size):
        yield match_record(match, pseudonymise=pseudonymise)


def match_record(match: Match, *, pseudonymise: bool = True) -> dict:
    seats = {}
    for seat in Seat.objects.filter(match=match).select_related("participant"):
        worker = seat.participant.worker_id if seat.participant else None
        seats[seat.role] = {"kind": seat.kind, "worker": pseudonym(worker) if pseudonymise else worker,
                            "agent": seat.agent_name or None,
                            # a model agent's version and checkpoint hash (Seat.agent_model), else None
                            "model": seat.agent_model or None}
    events = []
    for row in MatchEvent.objects.filter(match=match).order_by("seq").iterator(chunk_size=2000):
        event = event_row_to_wire(row)
        event["action"] = row.action
        event.setdefault("private", None)
        events.append(event)
    return {
        "match_id": str(match.id), "game_id": match.game_id,
        "batch": match.batch.slug if match.batch else None,
        "seed": match.seed, "content": match.content, "config": match.config,
        "created_at": match.created_at.isoformat(),
        "finished_at": match.finished_at.isoformat() if match.finished_at else None,
        "status": match.status, "seats": seats, "events": events, "outcome": match.outcome,
        # the batch's arm (live/arms.py; "" outside the randomisation) and how it was drawn: the
        # person's order of arms and position in it (within subjects), the randomisation seed
        "arm": match.arm, "arm_order": match.assignment.get("order"),
        "arm_position": match.assignment.get("position"), "arm_seed": match.assignment.get("seed"),
        "assignment": match.assignment,
        "questionnaire": questionnaire_entry(match, pseudonymise=pseudonymise),
        # the end questions (crowd/end_questions.py): "was your partner a person or an AI?" about
        # this match, and the pairwise preferences between this match's partner and another's
        "partner_kind_answers": partner_kind_entry(match, pseudonymise=pseudonymise),
        "preferences": preferences_entry(match, pseudonymise=pseudonymise),
        # an LLM agent's calls as recorded (agents.models.AgentCall; research/agent_calls.py): the
        # request with its images as sha256, the raw answer, tokens, times, cost; [] for other matches
        "agent_calls": match_call_records(match),
    }


def _worker(participant, pseudonymise: bool) -> str:
    return pseudonym(participant.worker_id) if pseudonymise else participant.worker_id


def partner_kind_entry(match, *, pseudonymise: bool = True) -> list[dict]:
    """The ``partner_kind_answers`` of a match's record, oldest first: each person's answer to "was
    your partner a person or an AI?" about this match (``said_person``; ``confidence`` 1 a guess ..
    5 certain), with the arm as recorded when it was asked and the person's pseudonymised id."""
    rows = PartnerKindAnswer.objects.filter(match=match).select_related("participant").order_by("created", "id")
    return [{"worker": _worker(a.participant, pseudonymise), "arm": a.arm, "said_person": a.said_person,
             "confidence": a.confidence, "answered_at": a.created.isoformat()} for a in rows]


def preferences_entry(match, *, pseudonymise: bool = True) -> list[dict]:
    """The ``preferences`` of a match's record, oldest first: each pairwise answer (ACUTE-Eval
    style) one of whose two partners was this match's: ``match_a`` (met first, shown as "your
    first partner") and ``match_b`` with their arms, the ``question`` (its key and ``text``), the
    ``choice`` ("a", "b" or "none") and the arm it names (``preferred_arm``, None for none). An
    answer is in the records of both its matches."""
    rows = (PreferenceAnswer.objects.filter(Q(match_a=match) | Q(match_b=match)).select_related("participant")
            .order_by("created", "id"))
    return [{"worker": _worker(a.participant, pseudonymise), "match_a": str(a.match_a_id), "match_b": str(a.match_b_id),
             "arm_a": a.arm_a, "arm_b": a.arm_b, "question": a.question,
             "text": PREFERENCE_QUESTIONS.get(a.question, a.question), "choice": a.choice,
             "preferred_arm": {"a": a.arm_a, "b": a.arm_b}.get(a.choice), "answered_at": a.created.isoformat()}
            for a in rows]


def questionnaire_entry(match, *, pseudonymise: bool = True) -> list[dict]:
    """The ``questionnaire`` entry of a match's export record, one per worker: the answers of each
    worker whose questionnaire is about this match (its last match), with the questions as asked,
    plus the batch's questionnaire items the game itself asked this worker in this match
    (``asked_in_game``; their questions carry ``"asked_in": "game"``), so an item answered in the
    game is in the questionnaire export as before. ``answered_at`` is null for a worker with only
    in-game answers."""
    responses = {r.participant_id: r for r in QuestionnaireResponse.objects.filter(match=match).select_related("participant")}
    seats = (Seat.objects.filter(match=match, participant__isnull=False).select_related("participant", "match")
             .order_by("participant_id"))
    questions = questions_for(match.batch) if match.batch_id else []
    out = []
    for seat in seats:
        r = responses.pop(seat.participant_id, None)
        asked, answers = (list(r.questions), dict(r.answers)) if r else ([], {})
        in_game = asked_in_game(seat)
        for q in for_role(questions, seat.role):
            if q["id"] in in_game and in_game[q["id"]] is not None and q["id"] not in answers:
                asked.append({**q, "asked_in": "game"})
                answers[q["id"]] = in_game[q["id"]]
        if r is None and not answers:
            continue
        worker = seat.participant.worker_id
        out.append({"role": seat.role, "worker": pseudonym(worker) if pseudonymise else worker,
                    "answers": answers, "questions": asked,
                    "answered_at": r.created_at.isoformat() if r else None})
    for r in responses.values():   # a response about this match from a worker with no seat in it (none today)
        worker = r.participant.worker_id
        out.append({"role": None, "worker": pseudonym(worker) if pseudonymise else worker,
                    "answers": r.answers, "questions": r.questions, "answered_at": r.created_at.isoformat()})
    return out


QUESTIONNAIRE_CSV_FIELDS = ["match_id", "batch", "game_id", "role", "worker", "question_id", "about", "kind", "question", "answer",
              "asked_in"]


def write_questionnaire_csv(records, out) -> int:
    """``export --format questionnaire-csv``: one row per answer, joined to the dialogs by match id
    and the pseudonymised worker id (the same as in the jsonl export); ``asked_in`` says whether
    the item was answered in the game (GuessWhich's feedback ratings) or in the questionnaire;
    returns the rows written. Every cell is quoted and a free-text answer that a spreadsheet would
    take for a formula is escaped (groundtalk_web.csvsafe, docs/exports.md)."""
    writer = csvsafe.DictWriter(out, QUESTIONNAIRE_CSV_FIELDS)
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
                                 "answer": entry["answers"][q["id"]],
                                 "asked_in": q.get("asked_in", "questionnaire")})
                n += 1
    return n
