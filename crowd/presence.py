"""Ghost partners (issue 20, item 2), the waiting room's side: only people who are there are paired.

Every poll of the waiting page (``crowd.lobby.lobby_poll``) writes ``Participant.last_seen_at``. A
waiting worker not heard from for ``GT_PRESENCE_S`` (since that poll, or since they were sent back
to wait after a game) is *away*: nobody is paired with them (unless its page says it kept polling
all along: ``kept_polling``, the poll's ``gap`` parameter), their wait does not run out, and when
their page polls again it asks "are you still there?"; answering (``crowd.lobby.participant_present``)
puts them back in the queue with the time they had waited while present (the time away does not
count). A seat that never opens its game is the match's side: live/presence.py.
"""
from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from crowd.models import Participant


def presence_limit() -> timedelta:
    return timedelta(seconds=settings.GT_PRESENCE_S)


def heard_at(p: Participant):
    """When the waiting room last heard from ``p`` (None: never polled, e.g. a row made before
    presence was recorded, which counts as present)."""
    if p.last_seen_at is None:
        return None
    return max(p.last_seen_at, p.waiting_since) if p.waiting_since else p.last_seen_at


def is_away(p: Participant, now) -> bool:
    heard = heard_at(p)
    return heard is not None and now - heard > presence_limit()


def kept_polling(gap_s: float | None) -> bool:
    """The page says it polled again within the presence limit of its previous answer (its own
    clock, server-asked back-offs excluded): its polls were late to arrive, it was not away."""
    return gap_s is not None and 0 <= gap_s <= settings.GT_PRESENCE_S


def present_q(now) -> Q:
    """Waiting participants heard from within the presence limit (a filter for pairing)."""
    cutoff = now - presence_limit()
    return Q(last_seen_at__isnull=True) | Q(last_seen_at__gte=cutoff) | Q(waiting_since__gte=cutoff)


def participant_seen(participant_id: int, now) -> None:
    """Record a poll (its own short write, before the pairing transaction takes the batch lock)."""
    Participant.objects.filter(pk=participant_id, state=Participant.State.WAITING).update(last_seen_at=now)


@transaction.atomic
def participant_back(participant_id: int) -> Participant:
    """The worker answered "are you still there?": present again, with the time waited while
    present (the time away is not counted, so it neither runs out their wait nor moves them up)."""
    p = Participant.objects.select_for_update().get(pk=participant_id)
    now = timezone.now()
    if p.state == Participant.State.WAITING and is_away(p, now):
        if p.waiting_since is not None:
            p.waiting_since = now - (heard_at(p) - p.waiting_since)
        p.last_seen_at = now
        p.save(update_fields=["waiting_since", "last_seen_at"])
    return p
