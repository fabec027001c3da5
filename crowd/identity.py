"""A participant belongs to one browser (issue 11, item 1).

At first entry the participant gets a random ``owner_key`` and the browser's Django session (a
signed, HttpOnly cookie naming a server-side session; the project's session and cookie settings
apply) stores ``{participant id: owner_key}`` under ``SESSION_KEY``. Every page of the participant
(``/p/<token>/``, its status poll), its game page (``/m/<match>/?seat=``), the seat's websocket,
the partner-gone call and the seat's images serve only a browser whose session holds that key:
a worker id, a lab link or a copied ``/p/`` or ``/m/`` address opened in another browser gets
the "open in another browser" page (403) and no seat token.

Moving to another device, when the batch allows it (``Batch.allow_device_change``): the first
browser asks for a one-time code (``transfer_start``: 8 characters, valid ``TRANSFER_TTL``); the
worker opens the same entry link on the new device, which shows the refusal page with a field for
the code; ``transfer_finish`` checks it (``TRANSFER_MAX_MISSES`` wrong codes end it), gives the
participant a new ``owner_key`` and binds it to the new browser, so the first browser loses it.

A participant with no ``owner_key`` (made before this existed, or by code rather than an entry
link) is bound to the first browser that opens one of its pages.
"""
from __future__ import annotations

import hmac
import secrets
from datetime import timedelta

from django.core import signing
from django.db import transaction
from django.utils import timezone

from crowd.models import Participant
from live.broadcast import publish_notice
from live.models import Match, Seat

SESSION_KEY = "gt_owned"
TRANSFER_TTL = timedelta(minutes=10)
TRANSFER_MAX_MISSES = 5
TRANSFER_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"   # no 0/O, 1/I: read off one screen, typed on another
TRANSFER_SALT = "groundtalk.transfer"


def new_owner_key() -> str:
    return secrets.token_urlsafe(24)


def session_bind(session, participant: Participant) -> None:
    owned = dict(session.get(SESSION_KEY) or {})
    owned[str(participant.pk)] = participant.owner_key
    session[SESSION_KEY] = owned


def session_owns(session, participant: Participant) -> bool:
    """Whether this session holds the participant's current owner key (no side effect)."""
    if session is None or not participant.owner_key:
        return False
    held = (session.get(SESSION_KEY) or {}).get(str(participant.pk), "")
    return isinstance(held, str) and hmac.compare_digest(held.encode(), participant.owner_key.encode())


def participant_claim(*, session, participant: Participant) -> bool:
    """True when this browser owns the participant; a participant that has no owner yet is bound
    to it here (one browser wins a race: the key is set only where it is still empty)."""
    if participant.owner_key:
        return session_owns(session, participant)
    key = new_owner_key()
    if Participant.objects.filter(pk=participant.pk, owner_key="").update(owner_key=key):
        participant.owner_key = key
        session_bind(session, participant)
        return True
    participant.refresh_from_db(fields=["owner_key"])
    return session_owns(session, participant)


def seat_allowed(session, seat, *, claim: bool = True) -> bool:
    """Whether this browser may use the seat: a seat with a participant only for its owner (an
    unbound participant is bound here when ``claim``: HTTP requests, whose session is saved); a
    seat with no participant (made by simulate, the benchmark or tests) by its token alone.
    Registered with live when Django starts (``CrowdConfig.ready``; live/seat_owners.py)."""
    if seat.participant_id is None:
        return True
    participant = Participant.objects.only("id", "owner_key").get(pk=seat.participant_id)
    if claim:
        return participant_claim(session=session, participant=participant)
    return session_owns(session, participant)


# ------------------------------------------------------------------------------- another device
class TransferError(ValueError):
    """A wrong, expired or used-up transfer code, or a batch that does not allow moving."""


def transfer_ticket(participant: Participant) -> str:
    """A signed reference to the participant for the refusal page's code form (not its token)."""
    return signing.dumps(participant.pk, salt=TRANSFER_SALT)


def transfer_participant(ticket: str) -> Participant | None:
    try:
        pk = signing.loads(ticket, salt=TRANSFER_SALT, max_age=TRANSFER_TTL * 3)
    except signing.BadSignature:
        return None
    return Participant.objects.select_related("batch").filter(pk=pk).first() if isinstance(pk, int) else None


@transaction.atomic
def transfer_start(*, participant_id: int) -> Participant:
    """A fresh one-time code for moving this participant to another browser (the caller has
    checked that this browser owns it)."""
    p = Participant.objects.select_for_update().select_related("batch").get(pk=participant_id)
    if not p.batch.allow_device_change:
        raise TransferError("This study does not allow moving to another device.")
    p.transfer_code = "".join(secrets.choice(TRANSFER_ALPHABET) for _ in range(8))
    p.transfer_expires_at = timezone.now() + TRANSFER_TTL
    p.transfer_misses = 0
    p.save(update_fields=["transfer_code", "transfer_expires_at", "transfer_misses"])
    return p


def transfer_finish(*, session, participant_id: int, code: str) -> Participant:
    """Bind the participant to this browser if ``code`` is its current transfer code; the code
    is used up, and the browser that had the participant no longer has it. A wrong code is
    counted (and kept counted: the error is raised after the transaction commits)."""
    with transaction.atomic():
        p = Participant.objects.select_for_update().select_related("batch").get(pk=participant_id)
        error = _transfer_check(p, code)
        if error is None:
            p.owner_key = new_owner_key()
            p.transfer_code, p.transfer_expires_at, p.transfer_misses = "", None, 0
            p.save(update_fields=["owner_key", "transfer_code", "transfer_expires_at", "transfer_misses"])
    if error is not None:
        raise TransferError(error)
    session_bind(session, p)
    _tell_open_seats(p)
    return p


def participant_takeover(*, session, participant_id: int) -> Participant:
    """Bind an unverified (or pending) participant to this browser, whose link the platform has just confirmed
    (crowd/verify.py; crowd.lobby.participant_enter): the browser that entered first with an id
    the platform could not confirm loses it, as after a device change."""
    with transaction.atomic():
        p = Participant.objects.select_for_update().select_related("batch").get(pk=participant_id)
        p.owner_key = new_owner_key()
        p.save(update_fields=["owner_key"])
    session_bind(session, p)
    _tell_open_seats(p)
    return p


def _tell_open_seats(p: Participant) -> None:
    """Sockets of the participant's active seats check again whose they are (the old browser's
    are closed: live.consumers.MatchConsumer.match_owner_changed)."""
    for seat_id, match_id in Seat.objects.filter(participant=p, match__status=Match.Status.ACTIVE) \
            .values_list("pk", "match_id"):
        publish_notice(match_id=match_id, message={"type": "match.owner_changed", "seat": seat_id})


def _transfer_check(p: Participant, code: str) -> str | None:
    """None when ``code`` is right; else why not (a miss is saved on the locked row)."""
    if not p.batch.allow_device_change:
        return "This study does not allow moving to another device."
    if not p.transfer_code or p.transfer_expires_at is None or p.transfer_expires_at <= timezone.now():
        return "There is no valid code. Ask for a new one in the browser where the study is open."
    typed = "".join((code or "").split()).upper()[:32]
    if hmac.compare_digest(typed.encode(), p.transfer_code.encode()):
        return None
    p.transfer_misses += 1
    if p.transfer_misses >= TRANSFER_MAX_MISSES:
        p.transfer_code, p.transfer_expires_at = "", None
    p.save(update_fields=["transfer_misses", "transfer_code", "transfer_expires_at"])
    if not p.transfer_code:
        return "Too many wrong codes. Ask for a new one in the browser where the study is open."
    return "That code is not right. Check it in the browser where the study is open."
