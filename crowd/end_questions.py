"""Questions at the end of a match (issue 24, items 2 and 4; docs/crowd.md, "Arms").

Two optional questions, each a batch setting:

* ``Batch.ask_partner_kind``: after each match that ended (finished or timed out), "Was your
  partner a person or an AI?" with a confidence from 1 to 5, stored once per person and match
  (``PartnerKindAnswer``, with the match's arm).
* ``Batch.ask_preference``: after a person has played two arms one after the other (their latest
  ended match and the one before it, in different arms: within subjects, every step of their
  Latin-square row), two questions in the style of ACUTE-Eval, "Which partner would you rather play
  with again?" and "Which partner understood you better?", the two partners named only by the order
  the person met them ("your first partner", "your second partner"), never by arm; stored once per
  person, pair and question (``PreferenceAnswer``; "none": no preference).

A question is *due* (:func:`due`) when the person's latest match in the batch has ended and it has
not been answered; the participant page asks it before anything else (the next game, the
questionnaire, the code), and the lobby does not seat a person with a question due (nor pair anyone
with them), so the question never comes before the match ends and the next match never starts
before the question is answered. Answering starts the person's wait afresh.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from django.db import IntegrityError, transaction
from django.utils import timezone

from crowd.models import Participant, PartnerKindAnswer, PreferenceAnswer
from live.models import Batch, Match, Seat

ENDED = (Match.Status.FINISHED, Match.Status.TIMED_OUT)
PARTNER_KIND = "partner_kind"
PREFERENCE = "preference"
PREFERENCE_QUESTIONS = {
    "play_again": "Which partner would you rather play with again?",
    "understood": "Which partner understood you better?",
}
PARTNER_KIND_CHOICES = {"person": "A person", "ai": "An AI"}
CONFIDENCE = range(1, 6)
ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")


def asks(batch: Batch) -> bool:
    return bool(batch.ask_partner_kind or batch.ask_preference)


def partner_label(position: int) -> str:
    """The person's ``position``-th partner (0-based) as the page names it: never by arm."""
    return f"your {ORDINALS[position]} partner" if position < len(ORDINALS) else f"your partner in game {position + 1}"


@dataclass(frozen=True)
class Due:
    """The question a person must answer now: ``kind`` PARTNER_KIND about ``match``, or PREFERENCE
    about ``match_a`` (met first, ``label_a``) and ``match_b`` (``label_b``), ``questions`` the
    preference questions not yet answered for the pair."""

    kind: str
    match: Match
    match_a: Match | None = None
    label_a: str = ""
    label_b: str = ""
    questions: tuple = field(default=())


def _matches(p: Participant) -> list[Match]:
    """The person's matches in their batch, oldest first (practice rounds never count)."""
    ids = (Seat.objects.filter(participant=p, match__batch_id=p.batch_id, match__practice__isnull=True)
           .values_list("match_id", flat=True))
    return list(Match.objects.filter(pk__in=ids).only("id", "arm", "status", "created_at").order_by("created_at", "id"))


def due(p: Participant) -> Due | None:
    """The end-of-match question ``p`` must answer before going on, or None (selector)."""
    batch = p.batch
    if not asks(batch) or p.state in (Participant.State.CONSENT, Participant.State.INSTRUCTIONS,
                                      Participant.State.ONBOARDING, Participant.State.DECLINED):
        return None
    matches = _matches(p)
    if not matches or matches[-1].status not in ENDED:
        return None
    last = matches[-1]
    if batch.ask_partner_kind and not PartnerKindAnswer.objects.filter(participant=p, match=last).exists():
        return Due(PARTNER_KIND, last)
    if batch.ask_preference and len(matches) >= 2:
        before = matches[-2]
        if before.status in ENDED and before.arm and last.arm and before.arm != last.arm:
            answered = set(PreferenceAnswer.objects.filter(participant=p, match_a=before, match_b=last)
                           .values_list("question", flat=True))
            left = tuple(q for q in PREFERENCE_QUESTIONS if q not in answered)
            if left:
                n = len(matches)
                return Due(PREFERENCE, last, before, partner_label(n - 2), partner_label(n - 1), left)
    return None


class AnswersInvalid(ValueError):
    def __init__(self, errors: dict[str, str]):
        super().__init__("; ".join(errors.values()))
        self.errors = errors


class Stale(ValueError):
    """The form answers a question that is not the one due (answered already, or another match's)."""


def _check_form(d: Due, data) -> None:
    if d.kind == PARTNER_KIND:
        ok = data.get("match") == str(d.match.pk)
    else:
        ok = data.get("match_a") == str(d.match_a.pk) and data.get("match_b") == str(d.match.pk)
    if data.get("kind") != d.kind or not ok:
        raise Stale("This question has been answered already, or is about another game.")


def validate(d: Due, data) -> dict:
    """The answers of the form for ``d``, typed; ``AnswersInvalid`` with a message per field."""
    errors, out = {}, {}
    if d.kind == PARTNER_KIND:
        kind = (data.get("partner_kind") or "").strip()
        if kind not in PARTNER_KIND_CHOICES:
            errors["partner_kind"] = "Please say whether you think your partner was a person or an AI."
        else:
            out["said_person"] = kind == "person"
        raw = (data.get("confidence") or "").strip()
        if not (raw.isdigit() and int(raw) in CONFIDENCE):
            errors["confidence"] = "Please choose how sure you are, from 1 to 5."
        else:
            out["confidence"] = int(raw)
    else:
        for q in d.questions:
            choice = (data.get(q) or "").strip()
            if choice not in ("a", "b", "none"):
                errors[q] = "Please choose one of the answers."
            else:
                out[q] = choice
    if errors:
        raise AnswersInvalid(errors)
    return out


@transaction.atomic
def end_questions_submit(*, participant_id: int, data) -> Due | None:
    """Store the answers to the question due now (the form names it: ``kind`` and its match ids).
    ``Stale`` for a form about another question, ``AnswersInvalid`` for a bad answer: either way
    nothing is stored. A person waiting for their next game starts their wait afresh. Returns the
    next question due, or None."""
    p = Participant.objects.select_for_update().select_related("batch").get(pk=participant_id)
    d = due(p)
    if d is None:
        raise Stale("There is no question to answer now.")
    _check_form(d, data)
    answers = validate(d, data)
    try:
        with transaction.atomic():
            if d.kind == PARTNER_KIND:
                PartnerKindAnswer.objects.create(participant=p, batch=p.batch, match=d.match, arm=d.match.arm,
                                                 **answers)
            else:
                PreferenceAnswer.objects.bulk_create([
                    PreferenceAnswer(participant=p, batch=p.batch, match_a=d.match_a, match_b=d.match,
                                     arm_a=d.match_a.arm, arm_b=d.match.arm, question=q, choice=c)
                    for q, c in answers.items()])
    except IntegrityError:   # answered meanwhile (another tab): the first answer stays
        pass
    if p.state == Participant.State.WAITING:
        now = timezone.now()
        p.waiting_since, p.last_seen_at = now, now
        p.save(update_fields=["waiting_since", "last_seen_at"])
    return due(p)
