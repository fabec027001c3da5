"""Read-only queries (HackSoft: selectors read)."""
from __future__ import annotations

import hashlib
import hmac

from django.conf import settings
from django.db.models import Count, Q

from live import match_store
from live.models import Batch, Match, MatchEvent, Seat
from games.registry import get_game
from live.services import event_row_to_wire, project_event


def seat_by_token(token: str) -> Seat | None:
    if not isinstance(token, str) or not token or len(token) > 64 or "\x00" in token:  # PostgreSQL refuses NUL
        return None
    return Seat.objects.select_related("match").filter(token=token).first()


def seat_snapshot(*, seat: Seat, after_seq: int | None, max_events: int = 1000) -> dict:
    """A seat's current view plus the events it has not seen (``after_seq``), projected for it.

    If the client is too far behind (or says nothing), ``events`` is empty and ``reset`` is true:
    the view alone is the truth. Only the seat's role's projection leaves here (games/base.py):
    ``outcome`` is ``rules.outcome_for`` once the match is no longer active, else None; never
    ``match.outcome``, the platform's full record.
    """
    match = (Match.objects.only("id", "batch_id", "game_id", "state", "state_static", "seq", "status")
             .get(pk=seat.match_id))
    match_store.remember_loaded(match)   # this process's snapshot cache: the seat's next action writes in one step
    spec = get_game(match.game_id)
    view = spec.rules.view_for(match.state, seat.role)
    events: list[dict] = []
    reset = after_seq is None or after_seq > match.seq or match.seq - after_seq > max_events
    if not reset and after_seq < match.seq:
        rows = MatchEvent.objects.filter(match_id=match.id, seq__gt=after_seq, seq__lte=match.seq).order_by("seq")
        events = [project_event(event_row_to_wire(r), seat.role) for r in rows]
    return {"seq": match.seq, "status": match.status, "view": view, "events": events, "reset": reset,
            "outcome": seat_outcome(match, seat.role)}


def seat_outcome(match: Match, role: str) -> dict | None:
    """What ``role`` may see of ``match``'s outcome: None while the match is active, then the
    rules' ``outcome_for`` (games/base.py)."""
    if match.status == Match.Status.ACTIVE:
        return None
    return get_game(match.game_id).rules.outcome_for(match.state, role)


def pseudonym(worker_id: str | None) -> str | None:
    """A stable pseudonym for a worker id (HMAC-SHA256 with the deployment's key)."""
    if not worker_id:
        return None
    digest = hmac.new(settings.GT_PSEUDONYM_KEY.encode(), worker_id.encode(), hashlib.sha256).hexdigest()
    return "W" + digest[:16]


def export_matches(*, game_id: str | None = None, batch_slug: str | None = None, since=None, until=None,
                   status: str = "all"):
    """The matches an export selects; ``status`` is ``finished``, ``aborted``, ``active`` or ``all``."""
    # a worker's practice round (crowd/onboarding.py) is no game of any study: never exported
    matches = Match.objects.filter(practice__isnull=True).select_related("batch").order_by("created_at", "id")
    if status and status != "all":
        matches = matches.filter(status=status)
    if game_id:
        matches = matches.filter(game_id=game_id)
    if batch_slug:
        matches = matches.filter(batch__slug=batch_slug)
    if since:
        matches = matches.filter(created_at__gte=since)
    if until:
        matches = matches.filter(created_at__lt=until)
    return matches


def batch_progress(batch: Batch) -> dict:
    """Counts and live scores of one batch, for the researcher's monitor."""
    participants = batch.participants.values("state").annotate(n=Count("id"))
    matches = batch.matches.aggregate(
        active=Count("id", filter=Q(status=Match.Status.ACTIVE)),
        finished=Count("id", filter=Q(status=Match.Status.FINISHED)),
        timed_out=Count("id", filter=Q(status=Match.Status.TIMED_OUT)),
        aborted=Count("id", filter=Q(status=Match.Status.ABORTED)),
    )
    recent = [
        {"id": str(m.id), "status": m.status, "seq": m.seq, "outcome": m.outcome,
         "created_at": m.created_at.isoformat(), "updated_at": m.updated_at.isoformat()}
        for m in batch.matches.order_by("-updated_at")[:50]
    ]
    return {"batch": batch.slug, "game_id": batch.game_id, "participants": {p["state"]: p["n"] for p in participants},
            "matches": matches, "recent": recent}
