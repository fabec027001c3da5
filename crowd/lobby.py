"""The lobby: crowd-platform entry, consent, waiting, pairing, exit (services: they write).

Pairing is correct across several server processes because it happens inside one transaction
that holds a lock on the batch row (``SELECT ... FOR UPDATE``) while it reads the waiting workers
and creates the match: a waiting worker is never given twice; a worker is one participant per batch (unique
``(batch, platform, worker_id)``), so no worker sits in both seats; and a worker is only put back
in the queue while ``games_played < games_per_worker``.

Only workers whose waiting page is open are paired (crowd/presence.py): each poll records the
worker as present; one not heard from for ``GT_PRESENCE_S`` is neither paired nor timed out, and
is asked "are you still there?" when the page polls again (``participant_present`` answers it).
"""
from __future__ import annotations

import hashlib
import ipaddress
import random
from dataclasses import dataclass

from django.db import connection, transaction
from django.db.models import Count, Q
from django.utils import timezone

from crowd import (end_questions, entry as crowd_entry, identity, onboarding as crowd_onboarding, platform_ids,
                   studies as crowd_studies, verify)
from crowd.outcomes import participant_exit
from crowd import presence
from crowd.models import Participant
from live import arms as batch_arms
from live import ratelimit
from live.models import Batch, Content, Match, Seat
from games.registry import get_game
from live.services import SeatSpec, match_abort, match_create
from groundtalk_web.loopback import is_loopback
from live.batches import batch_problems

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

    try:
        return _parse_entry(query, get)
    except platform_ids.BadId as exc:   # ids in one canonical form, or refused (crowd/platform_ids.py)
        raise EntryError(str(exc)) from None


def _parse_entry(query: dict, get) -> EntryParams:
    if query.get("assignmentId") is not None:
        params = EntryParams("mturk", get("workerId"), get("assignmentId"), get("hitId"),
                             get("turkSubmitTo", 300))
        if params.is_preview:
            return params
        if not params.worker_id:
            raise EntryError("The link is missing MTurk's workerId.")
        if not (params.assignment_id and params.hit_id):
            raise EntryError("The link is missing MTurk's assignmentId or hitId: please open the study from the HIT.")
        if params.submit_to and not params.submit_to.startswith(("https://", "http://")):
            raise EntryError("turkSubmitTo must be an http(s) address.")
        return EntryParams("mturk", platform_ids.mturk_worker(params.worker_id),
                           platform_ids.mturk_entity(params.assignment_id, "assignment id"),
                           platform_ids.mturk_entity(params.hit_id, "HIT id"), params.submit_to)
    if query.get("PROLIFIC_PID") is not None:
        params = EntryParams("prolific", get("PROLIFIC_PID"), study_id=get("STUDY_ID"), session_id=get("SESSION_ID"))
        if not params.worker_id:
            raise EntryError("The link is missing Prolific's PROLIFIC_PID.")
        if not (params.study_id and params.session_id):
            raise EntryError("The link is missing Prolific's STUDY_ID or SESSION_ID: please open the study from "
                             "Prolific.")
        return EntryParams("prolific", platform_ids.prolific(params.worker_id, "Prolific participant id"),
                           study_id=platform_ids.prolific(params.study_id, "Prolific study id"),
                           session_id=platform_ids.prolific(params.session_id, "Prolific session id"))
    if query.get("lab") is not None:
        token = get("lab", 400)
        if not token:
            raise EntryError("The lab link has no token.")
        return EntryParams("lab", "", lab_token=token)
    worker = get("worker") or ""
    if not worker:
        raise EntryError("The link names no participant (workerId, PROLIFIC_PID or a lab link's token).")
    return EntryParams("demo", platform_ids.name(worker, "demo name"))


UNAVAILABLE = ("This study is not available at the moment. Please do not start it: return the task, "
               "or contact the researcher.")


class BatchCannotRun(EntryError):
    """The batch fails live.batches.batch_problems (e.g. its agent is no longer registered)."""


def check_runnable(batch: Batch) -> None:
    if batch_problems(batch):
        raise BatchCannotRun(UNAVAILABLE)


class OtherBrowser(EntryError):
    """The participant exists and belongs to another browser (crowd.identity): this one gets the
    refusal page, never the participant's page or seat."""

    def __init__(self, participant: Participant):
        super().__init__("This study is open in another browser.")
        self.participant = participant


class AlreadyTookPart(crowd_entry.EntryRefused):
    """The worker finished (or left) this batch and came back with another assignment or session."""


ALREADY_TOOK_PART = ("You have already taken part in this study, with another {what}. Each person can take part "
                     "once, so this {what} cannot be used: please return it ({how}) so that it does not count "
                     "against you. Your earlier one is kept and reviewed as usual. Thank you!")


class AssignmentInUse(crowd_entry.EntryRefused):
    """The MTurk assignment is held by another worker id's participant in this batch."""


ASSIGNMENT_IN_USE = ("This MTurk assignment is already in use in this study, under another worker id. An assignment "
                     "belongs to one worker, and MTurk confirms whose it is only once it is submitted, so it can be "
                     "used here once. If you accepted this HIT yourself and opened it from MTurk, please return it "
                     "(“Return” on MTurk) and write to the researcher with your worker id and assignment id "
                     "({assignment}): the study staff see who used it and nobody is paid for an assignment that is "
                     "not theirs.")


def _other_assignment(p: Participant, params: EntryParams) -> bool:
    if params.platform == "mturk":
        return params.assignment_id != p.assignment_id
    if params.platform == "prolific":
        return params.session_id != p.session_id
    return False


def _note_assignment(p: Participant, params: EntryParams, why: str) -> None:
    """Keep the assignment (or session) the worker came with in the participant's list, on its
    locked row: the lab sees every one (the review page)."""
    with transaction.atomic():
        row = Participant.objects.select_for_update().get(pk=p.pk)
        seen = list(row.assignments or [])
        entry = {"assignment_id": params.assignment_id, "hit_id": params.hit_id,
                 "session_id": params.session_id, "study_id": params.study_id}
        if not any(all(old.get(k) == v for k, v in entry.items()) for old in seen):
            seen.append({**entry, "at": timezone.now().isoformat(), "why": why})
            row.assignments = seen[-50:]
            row.save(update_fields=["assignments"])
        p.assignments = row.assignments


def _browser_of(session) -> str:
    """A digest of the browser's session key (the session is saved here if it has no key yet);
    '' for a plain dict (code calling the service directly)."""
    if not hasattr(session, "session_key"):
        return ""
    if not session.session_key:
        session.save()
    return hashlib.sha256(f"groundtalk.browser:{session.session_key}".encode()).hexdigest()[:32]


def _address(client_addr: str) -> str | None:
    try:
        return str(ipaddress.ip_address((client_addr or "").strip()))
    except ValueError:
        return None


def _lock_worker(platform: str, worker_id: str) -> None:
    """Entries of one worker (canonical id), in any batch, one at a time: a PostgreSQL advisory
    lock held until the transaction ends, so an exclusion check and the participant it lets in
    are one step (SQLite, the single-process embedded server, has one writer anyway)."""
    if connection.vendor != "postgresql":
        return
    digest = hashlib.blake2b(f"groundtalk.entry:{platform}:{worker_id}".encode(), digest_size=8).digest()
    with connection.cursor() as cur:
        cur.execute("SELECT pg_advisory_xact_lock(%s)", [int.from_bytes(digest, "big", signed=True)])


def _check_assignment_free(batch: Batch, params: EntryParams, worker_id: str, check) -> None:
    """One participant per MTurk assignment per batch (issue 21): before submission MTurk confirms
    only that an assignment exists (crowd/verify.py, ``pending``), not whose it is, so a made-up
    worker id with someone's real assignment is refused while another worker id holds it. The
    first holder keeps it; whoever it really belongs to is known, and checked, before any pay.
    Not when MTurk has named this worker as the assignment's (``verified``): the holder is then
    the one whose id is wrong, and is refused at pay. Called under the worker's lock, with the
    assignment's own (taken after the worker's, always in that order)."""
    if params.platform != "mturk" or not params.assignment_id:
        return
    if check is not None and check.status == verify.VERIFIED:
        return
    _lock_worker("mturk-assignment", f"{batch.pk}:{params.assignment_id}")
    held = Participant.objects.filter(batch=batch, platform="mturk", assignment_id=params.assignment_id) \
        .exclude(worker_id=worker_id).exists()
    if held:
        raise AssignmentInUse(ASSIGNMENT_IN_USE.format(assignment=params.assignment_id))


def _stronger_claim(p: Participant, params: EntryParams, check) -> bool:
    """May this browser take the worker's participant from the browser that holds it? Only while
    the platform has not confirmed the holder's worker id (unverified, or MTurk's pending), and
    the platform says at least as much of this link: its assignment names this worker
    (``verified``), or it is a real assignment in progress (``pending``) other than the holder's
    (a known worker's id entered first with someone else's assignment cannot lock them out; what
    MTurk says of whichever assignment stays is checked before any pay). The same link from
    another browser is not a stronger claim: that is the transfer code's case (crowd.identity)."""
    if p.verification not in (verify.UNVERIFIED, verify.PENDING) or check is None:
        return False
    if check.status == verify.VERIFIED:
        return True
    return check.status == verify.PENDING and (p.verification == verify.UNVERIFIED
                                               or params.assignment_id != p.assignment_id)


def participant_enter(*, batch: Batch, params: EntryParams, session, client_addr: str = "") -> Participant:
    """The participant for this worker in this batch, created on first entry and bound to this
    browser's ``session``; a re-entry from that browser resumes. The platform is asked first
    (crowd/verify.py). Raises ``EntryRefused`` (a kind the batch does not take, a bad lab token,
    ``verify.NotVerified``, ``AlreadyTookPart``, an excluded worker) and ``OtherBrowser`` (the
    worker's participant belongs to another browser)."""
    if batch.status != Batch.Status.OPEN:
        raise EntryError("This batch is closed.")
    check_runnable(batch)  # before a participant exists
    crowd_entry.check_kind(batch, params.platform)
    worker_id = crowd_entry.lab_person(batch, params.lab_token) if params.platform == "lab" else params.worker_id
    existing = Participant.objects.filter(batch=batch, platform=params.platform, worker_id=worker_id).first()
    if existing is not None and _other_assignment(existing, params) and existing.state in (
            Participant.State.DONE, Participant.State.DECLINED):
        # one participant per worker per batch: a second assignment never replaces the first
        _note_assignment(existing, params, "came back after finishing")
        raise AlreadyTookPart(ALREADY_TOOK_PART.format(
            what="assignment" if params.platform == "mturk" else "session",
            how="“Return” on MTurk" if params.platform == "mturk" else "“Return” on Prolific"))
    check = None
    if existing is None or _other_assignment(existing, params) or existing.verification == verify.UNVERIFIED:
        check = verify.check_entry(batch, params)   # NotVerified: refused, nothing created
        if existing is None and not check.active:
            raise verify.NotVerified(verify.PROLIFIC_REFUSED.format(why=f"it is {check.note.lower()}, not active"))
    with transaction.atomic():
        _lock_worker(params.platform, worker_id)
        crowd_studies.check_not_excluded(batch, platform=params.platform, worker_id=worker_id)  # before a participant
        _check_assignment_free(batch, params, worker_id, check)
        defaults = {"assignment_id": params.assignment_id, "hit_id": params.hit_id, "submit_to": params.submit_to,
                    "study_id": params.study_id, "session_id": params.session_id,
                    "owner_key": identity.new_owner_key(), "browser": _browser_of(session),
                    "client_addr": _address(client_addr)}
        if check is not None:
            stub = Participant()
            verify.record(stub, check)
            defaults.update(verification=stub.verification, verify_tried_at=stub.verify_tried_at,
                            verify_note=stub.verify_note, verified_at=stub.verified_at)
        participant, created = Participant.objects.get_or_create(
            batch=batch, platform=params.platform, worker_id=worker_id, defaults=defaults)
    if created:
        identity.session_bind(session, participant)
        return participant
    if not identity.participant_claim(session=session, participant=participant):
        if not _stronger_claim(participant, params, check):
            raise OtherBrowser(participant)
        # the platform vouches for this browser's link at least as much as for the first one's
        participant = identity.participant_takeover(session=session, participant_id=participant.pk)
    if check is not None and participant.verification != check.status:
        Participant.objects.filter(pk=participant.pk).update(
            **{f: getattr(participant, f) for f in verify.record(participant, check)})
    if params.platform in ("mturk", "prolific") and _other_assignment(participant, params):
        # the same worker took the HIT again (a new assignment) before finishing: go on with that
        # one, and keep the earlier one listed
        old = EntryParams(params.platform, participant.worker_id, participant.assignment_id, participant.hit_id,
                          study_id=participant.study_id, session_id=participant.session_id)
        _note_assignment(participant, old, "replaced by a new one before finishing")
        participant.assignment_id, participant.hit_id = params.assignment_id, params.hit_id
        participant.study_id, participant.session_id = params.study_id, params.session_id
        participant.submit_to = params.submit_to
        participant.save(update_fields=["assignment_id", "hit_id", "submit_to", "study_id", "session_id"])
    elif params.platform == "mturk" and check is not None and params.submit_to != participant.submit_to:
        # turkSubmitTo names the endpoint of a HIT made by hand (verify.mturk_endpoint): it changes
        # only with the check that asked MTurk on it, so entry and pay ask the same endpoint
        participant.submit_to = params.submit_to
        participant.save(update_fields=["submit_to"])
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
    (crowd.presence.participant_back)."""
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

    return (Content.objects.filter(pk__in=batch.content_pool)
            .annotate(uses=Count("match", filter=Q(match__batch=batch)))
            .order_by("uses", "pk").first())


def _match_with_agents(batch: Batch, humans: dict[str, Participant], draw: batch_arms.Draw | None = None) -> Match:
    """The match for these people; the other seats are the arm's agents (``draw``: the arm drawn
    for this seating, live/arms.py), else the batch's own (a batch without arms, or a seating
    outside the randomisation: on_timeout's or an unconfirmed worker's agent)."""
    agents = draw.arm.agents if draw is not None else (batch.agents or {})
    seats = {}
    for role in get_game(batch.game_id).roles:
        if role in humans:
            seats[role] = SeatSpec(Seat.Kind.HUMAN, participant=humans[role])
        elif agents.get(role):
            seats[role] = SeatSpec(Seat.Kind.AGENT, agent_name=agents[role])
        else:
            raise EntryError(f"Batch {batch.slug} names no agent for the {role} seat.")
    content = _content_for(batch)
    if draw is not None:
        arm, assignment = draw.arm.name, draw.assignment
    elif batch.arms:   # outside the randomisation: counted in no arm
        arm, assignment = "", {"unit": "fallback", "seed": batch.arm_seed}
    else:              # the one implicit arm, named after the agents that play
        arm = batch_arms.implicit_name({r: s.agent_name for r, s in seats.items() if s.kind == Seat.Kind.AGENT})
        assignment = {"unit": "implicit", "seed": batch.arm_seed}
    match = match_create(game_id=batch.game_id, seats=seats, batch=batch,
                         content=content.data if content else None, content_ref=content,
                         config=draw.arm.config if draw is not None else None, arm=arm, assignment=assignment,
                         blind=batch_arms.is_blind(batch))
    Participant.objects.filter(pk__in=[p.pk for p in humans.values()]).update(state=Participant.State.PLAYING)
    return match


def _status(p: Participant, seat: Seat | None = None, away: bool = False) -> LobbyStatus:
    until = presence.heard_at(p) if away else timezone.now()   # away: the time waited while present
    waited = (until - p.waiting_since).total_seconds() if p.waiting_since else 0.0
    return LobbyStatus(p.state, str(seat.match_id) if seat else None, seat.token if seat else None,
                       waited, p.batch.max_wait_s, p.games_played, p.batch.games_per_worker, away)


def lobby_poll(*, participant_id: int, gap_s: float | None = None) -> LobbyStatus:
    """Called by the waiting page about once a second: pair this worker if a partner is there,
    give up on the partner after the batch's wait, or report the match it was put in. A worker
    away too long (crowd/presence.py) is only told so; a present one is recorded as present.

    ``gap_s``: how long the page itself waited since its previous poll's answer, beyond any wait
    the server asked of it (the page's own clock; None when it does not say). A page that says it
    kept polling within the presence limit was there all along, however late its polls reached
    the server (a loaded server, a slow network): it is not asked "are you still there?"."""
    now = timezone.now()
    p = Participant.objects.select_related("batch").get(pk=participant_id)
    if p.state == Participant.State.WAITING:
        # what the game imports on first use is loaded in the background while this worker waits,
        # not inside the pairing below (the match's content), under the batch row's lock
        get_game(p.batch.game_id).warm_up_soon()
        if presence.is_away(p, now) and not presence.kept_polling(gap_s):
            return _status(p, away=True)
        presence.participant_seen(p.pk, now)   # its own write, before any lock below
        _verify_again(p)                       # unverified: ask the platform again (crowd/verify.py)
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
        if _held(p):   # an end-of-match question to answer first (crowd/end_questions.py)
            return _status(p)
        roles = _human_roles(batch)
        if batch.arms and batch.pairing != Batch.Pairing.AGENT_AGENT:
            return _poll_arms(p, batch, now)
        if batch.pairing == Batch.Pairing.HUMAN_AGENT:
            if _unconfirmed(p) and batch.unverified_pairing == "none":
                return _wait_unconfirmed(p)
            locked = Participant.objects.select_for_update().filter(pk=p.pk, state=Participant.State.WAITING).first()
            if locked is None:
                return lobby_poll(participant_id=participant_id, gap_s=gap_s)
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
        if _unconfirmed(me):   # only with an agent, or not at all (Batch.unverified_pairing)
            return _pair_unconfirmed(me, batch, roles)
        partner = next((other for other in (
            Participant.objects
            .filter(batch=batch, state=Participant.State.WAITING, games_played__lt=batch.games_per_worker)
            .filter(presence.present_q(now))   # nobody whose waiting page has gone quiet
            .exclude(pk=me.pk).exclude(worker_id=me.worker_id)
            .exclude(_not_partners_q(me, batch))   # unconfirmed ids, one browser or address
            .select_related("batch").order_by("waiting_since", "id")[:50])
            if not _held(other) and not _shares_address(me, other, batch)), None)
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


def _poll_arms(p: Participant, batch: Batch, now) -> LobbyStatus:
    """A waiting person in a batch with arms (live/arms.py), inside lobby_poll's transaction. The
    batch's counter row is locked first: seatings in the batch are serialised (in every process),
    and the arm is drawn, and spent, only when a match is created here. A human-agent arm seats the
    person at once; a human-human arm pairs them with a waiting person (within subjects: one whose
    next arm is the same) or keeps them waiting, the slot unspent, until the batch's wait runs out
    (then ``on_timeout``: leave, or a match with the batch's agents that counts in no arm)."""
    if _unconfirmed(p) and batch.unverified_pairing == "none":
        return _wait_unconfirmed(p)
    row = batch_arms.counter(batch)
    me = Participant.objects.get(pk=p.pk)
    if me.state == Participant.State.PLAYING:
        return _status(me, _current_seat(me))
    if me.state != Participant.State.WAITING:
        return _status(me)
    draw = batch_arms.draw(batch, row, me)
    roles = [r for r in get_game(batch.game_id).roles if r in draw.arm.human_roles] if draw.arm.human_roles \
        else list(get_game(batch.game_id).roles)
    if not draw.arm.human_human:
        if batch_arms.is_blind(batch):   # seated after a wait like a person partner's arrival
            waited = (now - me.waiting_since).total_seconds() if me.waiting_since else 0.0
            wait = batch_arms.blind_wait_s(batch, me, me.waiting_since)
            if waited < wait:
                return _status(me)   # the slot stays unspent: drawn again at the next poll
            draw.assignment = {**draw.assignment, "blind_wait_s": wait, "waited_s": round(waited, 1)}
        people = [r for r in roles if not draw.arm.agents.get(r)] or roles
        role = people[me.games_played % len(people)]
        match = _match_with_agents(batch, {role: me}, draw)
        batch_arms.spend(row, draw)
        return _status(Participant.objects.get(pk=p.pk), Seat.objects.get(match=match, role=role))
    partner, partner_draw = None, None
    if not _unconfirmed(me) and len(roles) >= 2:
        candidates = (Participant.objects
                      .filter(batch=batch, state=Participant.State.WAITING, games_played__lt=batch.games_per_worker)
                      .filter(presence.present_q(now))
                      .exclude(pk=me.pk).exclude(worker_id=me.worker_id)
                      .exclude(_not_partners_q(me, batch))
                      .select_related("batch").order_by("waiting_since", "id"))
        for other in candidates[:50]:
            if _held(other) or _shares_address(me, other, batch):
                continue
            theirs = batch_arms.draw(batch, row, other, new_before=draw.people)
            if theirs.arm.name == draw.arm.name:
                partner, partner_draw = other, theirs
                break
    if partner is not None:
        order = roles[:2] if random.random() < 0.5 else roles[1::-1]
        mine = draw.assignment
        # each person's wait before this seating: what a blind batch's agent arms imitate
        draw.assignment = {**mine, "waits_s": {
            str(x.pk): round(max((now - x.waiting_since).total_seconds(), 0.0), 1) if x.waiting_since else 0.0
            for x in (partner, me)}}
        match = _match_with_agents(batch, {order[0]: partner, order[1]: me}, draw)
        if batch_arms.within(batch):   # each person's own row and position
            Match.objects.filter(pk=match.pk).update(assignment={**draw.assignment, "people": {
                str(me.pk): mine, str(partner.pk): partner_draw.assignment}})
        batch_arms.spend(row, draw, partner_draw)
        return _status(Participant.objects.get(pk=p.pk), Seat.objects.get(match=match, participant=me))
    waited = (timezone.now() - me.waiting_since).total_seconds() if me.waiting_since else 0.0
    if waited >= batch.max_wait_s:
        role = roles[me.games_played % len(roles)]
        if batch.on_timeout == Batch.OnTimeout.AGENT and all(
                (batch.agents or {}).get(r) for r in get_game(batch.game_id).roles if r != role):
            match = _match_with_agents(batch, {role: me})
            return _status(Participant.objects.get(pk=p.pk), Seat.objects.get(match=match, role=role))
        me.save(update_fields=participant_exit(me, "no_partner"))
        return _status(me)
    return _status(p)


def _held(p: Participant) -> bool:
    """Not seated, nor anyone's partner, while an end-of-match question is due (only in a batch
    that asks one: no query otherwise)."""
    return end_questions.asks(p.batch) and end_questions.due(p) is not None


def _unconfirmed(p: Participant) -> bool:
    """The platform could not confirm the worker's id (or said no since): never paired with a person."""
    return p.verification in (verify.UNVERIFIED, verify.REFUSED)


def _verify_again(p: Participant) -> None:
    if p.verification == verify.UNVERIFIED:
        try:
            verify.recheck(p)   # at most every verify.RECHECK_S; records what the platform says
        except verify.NotVerified:
            pass                # recorded as refused: never paired with a person, never paid


def _wait_unconfirmed(me: Participant) -> LobbyStatus:
    """Not paired: waits while the platform is asked again, then leaves as with no partner."""
    waited = (timezone.now() - me.waiting_since).total_seconds() if me.waiting_since else 0.0
    if waited >= me.batch.max_wait_s:
        me.save(update_fields=participant_exit(me, "no_partner"))
    return _status(me)


def _pair_unconfirmed(me: Participant, batch: Batch, roles: list[str]) -> LobbyStatus:
    if batch.unverified_pairing == "agent" and roles:
        role = roles[me.games_played % len(roles)]
        if all((batch.agents or {}).get(r) for r in get_game(batch.game_id).roles if r != role):
            match = _match_with_agents(batch, {role: me})
            return _status(Participant.objects.get(pk=me.pk), Seat.objects.get(match=match, role=role))
    return _wait_unconfirmed(me)


def _not_partners_q(me: Participant, batch: Batch) -> Q:
    """Who may not be ``me``'s partner (issue 21): a person whose id the platform did not confirm,
    and one who entered from the same browser or the same client address (unless the batch allows
    a shared address, as in a lab; a loopback address is the server's own or a proxy's, never a
    person's). Demo people share a browser by design (two tabs, both seats)."""
    q = Q(verification__in=(verify.UNVERIFIED, verify.REFUSED))
    if me.browser and me.platform != "demo":
        q |= Q(browser=me.browser)
    if me.client_addr and not batch.allow_shared_address and not is_loopback(me.client_addr):
        q |= Q(client_addr=me.client_addr)
    return q


def _shares_address(me: Participant, other: Participant, batch: Batch) -> bool:
    """``other`` entered from ``me``'s client where ``_not_partners_q``'s exact
    comparison cannot tell: two addresses of one IPv6 /64, or an address and its IPv4-mapped form
    (the client as the rate limits count it, ``live.ratelimit.address_key``)."""
    if batch.allow_shared_address or not me.client_addr or not other.client_addr or is_loopback(me.client_addr):
        return False
    return ratelimit.address_key(me.client_addr) == ratelimit.address_key(other.client_addr)


def match_partner_gone(*, seat: Seat, gone_after_s: int) -> bool:
    """End the match when every other human seat has been disconnected for ``gone_after_s``.

    The remaining worker's game counts (they are paid); everything logged so far is kept.
    """
    others = Seat.objects.filter(match_id=seat.match_id, kind=Seat.Kind.HUMAN).exclude(pk=seat.pk)
    now = timezone.now()
    gone = [o for o in others if o.connected == 0 and o.left_at and (now - o.left_at).total_seconds() >= gone_after_s]
    if not others or len(gone) != len(others):
        return False
    match_abort(match_id=seat.match_id, reason="partner_left", role=seat.role)
    return True
