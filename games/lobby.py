"""The lobby: crowd-platform entry, consent, waiting, pairing, exit (services: they write).

Pairing is correct across several server processes because it happens inside one transaction
that holds a lock on the batch row (``SELECT ... FOR UPDATE``) while it reads the waiting workers
and creates the match: a waiting worker is never given twice; a worker is one participant per batch (unique
``(batch, platform, worker_id)``), so no worker sits in both seats; and a worker is only put back
in the queue while ``games_played < games_per_worker``.

Only workers whose waiting page is open are paired (games/presence.py): each poll records the
worker as present; one not heard from for ``GT_PRESENCE_S`` is neither paired nor timed out, and
is asked "are you still there?" when the page polls again (``participant_present`` answers it).
"""
from __future__ import annotations

import random
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from crowd import entry as crowd_entry
from crowd import identity
from crowd import onboarding as crowd_onboarding
from crowd import studies as crowd_studies
from crowd.outcomes import participant_exit
from games import presence
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
    lab_token: str = ""

    @property
    def is_preview(self) -> bool:
        return self.platform == "mturk" and self.assignment_id == PREVIEW_ASSIGNMENT


def parse_entry(query: dict) -> EntryParams:
    """Read MTurk (workerId, assignmentId, hitId, turkSubmitTo), Prolific (PROLIFIC_PID, STUDY_ID,
    SESSION_ID), lab (lab: a signed token) or demo (worker) parameters from an entry link. Whether
    the batch takes that kind, and whose a lab token is, ``participant_enter`` decides."""
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
    if query.get("lab") is not None:
        token = get("lab", 400)
        if not token:
            raise EntryError("The lab link has no token.")
        return EntryParams("lab", "", lab_token=token)
    worker = get("worker") or ""
    if not worker:
        raise EntryError("The link names no participant (workerId, PROLIFIC_PID or a lab link's token).")
    return EntryParams("demo", worker)


UNAVAILABLE = ("This study is not available at the moment. Please do not start it: return the task, "
               "or contact the researcher.")


class BatchCannotRun(EntryError):
    """The batch fails games.batches.batch_problems (e.g. its agent is no longer registered)."""


def check_runnable(batch: Batch) -> None:
    from games.batches import batch_problems

    if batch_problems(batch):
        raise BatchCannotRun(UNAVAILABLE)


class OtherBrowser(EntryError):
    """The participant exists and belongs to another browser (crowd.identity): this one gets the
    refusal page, never the participant's page or seat."""

    def __init__(self, participant: Participant):
        super().__init__("This study is open in another browser.")
        self.participant = participant


def participant_enter(*, batch: Batch, params: EntryParams, session) -> Participant:
    """The participant for this worker in this batch, created on first entry and bound to this
    browser's ``session``; a re-entry from that browser resumes. Raises ``EntryRefused`` (a kind
    the batch does not take, a bad lab token) and ``OtherBrowser`` (the worker's participant
    belongs to another browser)."""
    if batch.status != Batch.Status.OPEN:
        raise EntryError("This batch is closed.")
    check_runnable(batch)  # before a participant exists
    crowd_entry.check_kind(batch, params.platform)
    worker_id = crowd_entry.lab_person(batch, params.lab_token) if params.platform == "lab" else params.worker_id
    crowd_studies.check_not_excluded(batch, platform=params.platform, worker_id=worker_id)  # before a participant
    participant, created = Participant.objects.get_or_create(
        batch=batch, platform=params.platform, worker_id=worker_id,
        defaults={"assignment_id": params.assignment_id, "hit_id": params.hit_id, "submit_to": params.submit_to,
                  "study_id": params.study_id, "session_id": params.session_id,
                  "owner_key": identity.new_owner_key()},
    )
    if created:
        identity.session_bind(session, participant)
        return participant
    if not identity.participant_claim(session=session, participant=participant):
        raise OtherBrowser(participant)
    if params.platform == "mturk" and (params.assignment_id, params.submit_to) != (
            participant.assignment_id, participant.submit_to):
        # the same worker took the HIT again (a new assignment): submit that one
        participant.assignment_id, participant.hit_id = params.assignment_id, params.hit_id
        participant.submit_to = params.submit_to
        participant.save(update_fields=["assignment_id", "hit_id", "submit_to"])
    return participant


@transaction.atomic
def participant_consent(*, participant_id: int, agree: bool) -> Participant:
    p = Participant.objects.select_for_update().get(pk=participant_id)
    if p.state == Participant.State.CONSENT:
        p.consented_at = timezone.now() if agree else None
        p.state = Participant.State.INSTRUCTIONS if agree else Participant.State.DECLINED
        fields = ["state", "consented_at"]
        if not agree:
            fields += participant_exit(p, "declined")
            p.state = Participant.State.DECLINED   # not done: the study never started
        p.save(update_fields=sorted(set(fields)))
    return p


@transaction.atomic
def participant_ready(*, participant_id: int) -> Participant:
    """Instructions read: join the waiting queue, or first the batch's onboarding (crowd.onboarding)."""
    p = Participant.objects.select_for_update().select_related("batch").get(pk=participant_id)
    if p.state == Participant.State.INSTRUCTIONS:
        p.save(update_fields=crowd_onboarding.after_instructions(p))
    return p


@transaction.atomic
def participant_leave(*, participant_id: int, reason: str = "left_waiting") -> Participant:
    """Leave the waiting room (the way out); what that earns is the batch's pay for the
    ``returned_early`` outcome (crowd.outcomes)."""
    p = Participant.objects.select_for_update().select_related("batch").get(pk=participant_id)
    if p.state == Participant.State.WAITING:
        p.save(update_fields=participant_exit(p, reason))
    return p


def participant_present(*, participant_id: int) -> Participant:
    """The worker answered "are you still there?" on the waiting page: back in the queue
    (games.presence.participant_back)."""
    return presence.participant_back(participant_id)


@dataclass(frozen=True)
class LobbyStatus:
    state: str
    match_id: str | None = None
    seat_token: str | None = None
    waited_s: float = 0.0
    max_wait_s: int = 0
    games_played: int = 0
    games_per_worker: int = 1
    away: bool = False   # waiting, but not heard from for GT_PRESENCE_S: not paired until they answer


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


def _status(p: Participant, seat: Seat | None = None, away: bool = False) -> LobbyStatus:
    until = presence.heard_at(p) if away else timezone.now()   # away: the time waited while present
    waited = (until - p.waiting_since).total_seconds() if p.waiting_since else 0.0
    return LobbyStatus(p.state, str(seat.match_id) if seat else None, seat.token if seat else None,
                       waited, p.batch.max_wait_s, p.games_played, p.batch.games_per_worker, away)


def lobby_poll(*, participant_id: int) -> LobbyStatus:
    """Called by the waiting page about once a second: pair this worker if a partner is there,
    give up on the partner after the batch's wait, or report the match it was put in. A worker
    away too long (games/presence.py) is only told so; a present one is recorded as present."""
    now = timezone.now()
    p = Participant.objects.select_related("batch").get(pk=participant_id)
    if p.state == Participant.State.WAITING:
        if presence.is_away(p, now):
            return _status(p, away=True)
        presence.participant_seen(p.pk, now)   # its own write, before any lock below
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
            p.save(update_fields=participant_exit(p, "completed"))
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
                   .filter(presence.present_q(now))   # nobody whose waiting page has gone quiet
                   .exclude(pk=me.pk).exclude(worker_id=me.worker_id)
                   .order_by("waiting_since", "id").first())
        if partner is not None and len(roles) >= 2:
            order = roles[:2] if random.random() < 0.5 else roles[1::-1]
            match = _match_with_agents(batch, {order[0]: partner, order[1]: me})
            return _status(Participant.objects.get(pk=p.pk), Seat.objects.get(match=match, participant=me))
        waited = (timezone.now() - me.waiting_since).total_seconds() if me.waiting_since else 0.0
        if waited >= batch.max_wait_s:
            if batch.on_timeout == Batch.OnTimeout.AGENT:
                role = roles[me.games_played % len(roles)]
                match = _match_with_agents(batch, {role: me})
                return _status(Participant.objects.get(pk=p.pk), Seat.objects.get(match=match, role=role))
            me.save(update_fields=participant_exit(me, "no_partner"))
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
