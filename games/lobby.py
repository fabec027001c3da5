"""The lobby: crowd-platform entry, consent, waiting, pairing, exit (services: they write).

Pairing is correct across several server processes because it happens inside one transaction
that holds a lock on the batch row (``SELECT ... FOR UPDATE``) while it reads the waiting workers
and creates the match: a waiting worker is never given twice; a worker is one participant per batch (unique
``(batch, platform, worker_id)``), so no worker sits in both seats; and a worker is only put back
in the queue while ``games_played < games_per_worker``.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from games.models import Batch, Content, Match, Participant, Seat
from games.registry import get_game
from games.services import SeatSpec, match_create

PREVIEW_ASSIGNMENT = "ASSIGNMENT_ID_NOT_AVAILABLE"


class EntryError(ValueError):
    """A bad entry link (missing or over-long crowd-platform parameters, closed batch)."""


@dataclass(frozen=True)
class EntryParams:
    platform: str
    worker_id: str
    assignment_id: str = ""
    hit_id: str = ""
    submit_to: str = ""
    study_id: str = ""
    session_id: str = ""

    @property
    def is_preview(self) -> bool:
        return self.platform == "mturk" and self.assignment_id == PREVIEW_ASSIGNMENT


def parse_entry(query: dict) -> EntryParams:
    """Read MTurk (workerId, assignmentId, hitId, turkSubmitTo), Prolific (PROLIFIC_PID, STUDY_ID,
    SESSION_ID) or lab (worker) parameters from an entry link."""
    def get(name: str, limit: int = 128) -> str:
        value = (query.get(name) or "").strip()
        if len(value) > limit:
            raise EntryError(f"The {name} parameter is too long.")
        if any(ord(c) < 32 or c == "\x7f" for c in value):  # NUL: PostgreSQL refuses it in text
            raise EntryError(f"The {name} parameter contains characters a link cannot hold.")
        return value

    if query.get("assignmentId") is not None:
        params = EntryParams("mturk", get("workerId"), get("assignmentId"), get("hitId"),
                             get("turkSubmitTo", 300))
        if not params.is_preview and not params.worker_id:
            raise EntryError("The link is missing MTurk's workerId.")
        if params.submit_to and not params.submit_to.startswith(("https://", "http://")):
            raise EntryError("turkSubmitTo must be an http(s) address.")
        return params
    if query.get("PROLIFIC_PID") is not None:
        params = EntryParams("prolific", get("PROLIFIC_PID"), study_id=get("STUDY_ID"), session_id=get("SESSION_ID"))
        if not params.worker_id:
            raise EntryError("The link is missing Prolific's PROLIFIC_PID.")
        return params
    worker = get("worker") or ""
    if not worker:
        raise EntryError("The link names no participant (workerId, PROLIFIC_PID or worker).")
    return EntryParams("lab", worker)


UNAVAILABLE = ("This study is not available at the moment. Please do not start it: return the task, "
               "or contact the researcher.")


class BatchCannotRun(EntryError):
    """The batch fails games.batches.batch_problems (e.g. its agent is no longer registered)."""


def check_runnable(batch: Batch) -> None:
    from games.batches import batch_problems

    if batch_problems(batch):
        raise BatchCannotRun(UNAVAILABLE)


def participant_enter(*, batch: Batch, params: EntryParams) -> Participant:
    """The participant for this worker in this batch, created on first entry (a re-entry resumes)."""
    if batch.status != Batch.Status.OPEN:
        raise EntryError("This batch is closed.")
    check_runnable(batch)  # before a participant exists
    participant, _ = Participant.objects.get_or_create(
        batch=batch, platform=params.platform, worker_id=params.worker_id,
        defaults={"assignment_id": params.assignment_id, "hit_id": params.hit_id, "submit_to": params.submit_to,
                  "study_id": params.study_id, "session_id": params.session_id},
    )
    return participant


@transaction.atomic
def participant_consent(*, participant_id: int, agree: bool) -> Participant:
    p = Participant.objects.select_for_update().get(pk=participant_id)
    if p.state == Participant.State.CONSENT:
        p.consented_at = timezone.now() if agree else None
        p.state = Participant.State.INSTRUCTIONS if agree else Participant.State.DECLINED
        if not agree:
            p.exit_reason = "declined"
        p.save(update_fields=["state", "consented_at", "exit_reason"])
    return p


@transaction.atomic
def participant_ready(*, participant_id: int) -> Participant:
    """Instructions read: join the waiting queue."""
    p = Participant.objects.select_for_update().get(pk=participant_id)
    if p.state == Participant.State.INSTRUCTIONS:
        p.state = Participant.State.WAITING
        p.waiting_since = timezone.now()
        p.save(update_fields=["state", "waiting_since"])
    return p


@transaction.atomic
def participant_leave(*, participant_id: int, reason: str = "left_waiting") -> Participant:
    """Leave the waiting room with pay for the time waited (the way out)."""
    p = Participant.objects.select_for_update().get(pk=participant_id)
    if p.state == Participant.State.WAITING:
        p.state = Participant.State.DONE
        p.exit_reason = reason
        p.finished_at = timezone.now()
        p.save(update_fields=["state", "exit_reason", "finished_at"])
    return p


@dataclass(frozen=True)
class LobbyStatus:
    state: str
    match_id: str | None = None
    seat_token: str | None = None
    waited_s: float = 0.0
    max_wait_s: int = 0
    games_played: int = 0
    games_per_worker: int = 1


def _current_seat(p: Participant) -> Seat | None:
    return (Seat.objects.filter(participant=p, match__status=Match.Status.ACTIVE)
            .select_related("match").order_by("-match__created_at").first())


def _human_roles(batch: Batch) -> list[str]:
    roles = list(get_game(batch.game_id).roles)
    return [r for r in roles if r in batch.human_roles] if batch.human_roles else roles


def _agent_for(batch: Batch, role: str) -> str:
    name = (batch.agents or {}).get(role)
    if not name:
        raise EntryError(f"Batch {batch.slug} names no agent for the {role} seat.")
    return name


def _content_for(batch: Batch):
    """The next item of the batch's content pool (the least used so far), or None to generate."""
    if not batch.content_pool:
        return None
    from django.db.models import Count, Q

    return (Content.objects.filter(pk__in=batch.content_pool)
            .annotate(uses=Count("match", filter=Q(match__batch=batch)))
            .order_by("uses", "pk").first())


def _match_with_agents(batch: Batch, humans: dict[str, Participant]) -> Match:
    seats = {}
    for role in get_game(batch.game_id).roles:
        if role in humans:
            seats[role] = SeatSpec(Seat.Kind.HUMAN, participant=humans[role])
        else:
            seats[role] = SeatSpec(Seat.Kind.AGENT, agent_name=_agent_for(batch, role))
    content = _content_for(batch)
    match = match_create(game_id=batch.game_id, seats=seats, batch=batch,
                         content=content.data if content else None, content_ref=content)
    Participant.objects.filter(pk__in=[p.pk for p in humans.values()]).update(state=Participant.State.PLAYING)
    return match


def _status(p: Participant, seat: Seat | None = None) -> LobbyStatus:
    waited = (timezone.now() - p.waiting_since).total_seconds() if p.waiting_since else 0.0
    return LobbyStatus(p.state, str(seat.match_id) if seat else None, seat.token if seat else None,
                       waited, p.batch.max_wait_s, p.games_played, p.batch.games_per_worker)


def lobby_poll(*, participant_id: int) -> LobbyStatus:
    """Called by the waiting page about once a second: pair this worker if a partner is there,
    give up on the partner after the batch's wait, or report the match it was put in."""
    with transaction.atomic():
        p = Participant.objects.select_related("batch").get(pk=participant_id)
        batch = p.batch
        if p.state == Participant.State.PLAYING:
            seat = _current_seat(p)
            if seat is not None:
                return _status(p, seat)
        if p.state != Participant.State.WAITING:
            return _status(p)
        if p.games_played >= batch.games_per_worker:
            p.state, p.exit_reason, p.finished_at = Participant.State.DONE, "completed", timezone.now()
            p.save(update_fields=["state", "exit_reason", "finished_at"])
            return _status(p)
        check_runnable(batch)  # never pair into a batch that cannot run (raises BatchCannotRun)
        roles = _human_roles(batch)
        if batch.pairing == Batch.Pairing.HUMAN_AGENT:
            locked = Participant.objects.select_for_update().filter(pk=p.pk, state=Participant.State.WAITING).first()
            if locked is None:
                return lobby_poll(participant_id=participant_id)
            role = roles[p.games_played % len(roles)]
            match = _match_with_agents(batch, {role: locked})
            return _status(Participant.objects.get(pk=p.pk), Seat.objects.get(match=match, role=role))
        # human-human: pairing in a batch is serialised by a lock on the batch row, so two
        # processes never hand out the same waiting worker.
        Batch.objects.select_for_update().only("id").get(pk=batch.pk)
        me = Participant.objects.get(pk=p.pk)
        if me.state == Participant.State.PLAYING:
            return _status(me, _current_seat(me))
        if me.state != Participant.State.WAITING:
            return _status(me)
        partner = (Participant.objects
                   .filter(batch=batch, state=Participant.State.WAITING, games_played__lt=batch.games_per_worker)
                   .exclude(pk=me.pk).exclude(worker_id=me.worker_id)
                   .order_by("waiting_since", "id").first())
        if partner is not None and len(roles) >= 2:
            order = roles[:2] if random.random() < 0.5 else roles[1::-1]
            match = _match_with_agents(batch, {order[0]: partner, order[1]: me})
            return _status(Participant.objects.get(pk=p.pk), Seat.objects.get(match=match, participant=me))
        waited = (timezone.now() - me.waiting_since).total_seconds()
        if waited >= batch.max_wait_s:
            if batch.on_timeout == Batch.OnTimeout.AGENT:
                role = roles[me.games_played % len(roles)]
                match = _match_with_agents(batch, {role: me})
                return _status(Participant.objects.get(pk=p.pk), Seat.objects.get(match=match, role=role))
            me.state, me.exit_reason, me.finished_at = Participant.State.DONE, "no_partner", timezone.now()
            me.save(update_fields=["state", "exit_reason", "finished_at"])
            return _status(me)
        return _status(p)


def match_partner_gone(*, seat: Seat, gone_after_s: int) -> bool:
    """End the match when every other human seat has been disconnected for ``gone_after_s``.

    The remaining worker's game counts (they are paid); everything logged so far is kept.
    """
    from games.services import match_abort

    others = Seat.objects.filter(match_id=seat.match_id, kind=Seat.Kind.HUMAN).exclude(pk=seat.pk)
    now = timezone.now()
    gone = [o for o in others if o.connected == 0 and o.left_at and (now - o.left_at).total_seconds() >= gone_after_s]
    if not others or len(gone) != len(others):
        return False
    match_abort(match_id=seat.match_id, reason="partner_left", role=seat.role)
    return True
