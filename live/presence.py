"""Ghost partners (issue 20, item 2), the match side: a seat that never opens its game does not
hold its partner. (The waiting room's side, only people who are there are paired, is the crowd's:
crowd/presence.py.)

A match of two or more people in which a person paired from the waiting room (``waiting_since``
set; not a match a tool made with its own participants) has had no websocket (``Seat.last_seen_at``
is still empty) ``GT_SEAT_GRACE_S`` after the match was made, and has not acted, is aborted with
reason ``partner_never_joined`` (``absent_seats_sweep``, run by the watchdog in every server process
from the database alone: matches are claimed with ``SELECT ... FOR UPDATE SKIP LOCKED`` and the
abort is a no-op on a match no longer active). The log is kept. What becomes of its workers is the
crowd's (``live.services.match_finished``; crowd/after_match.py): the worker who never came ends as
``never_joined`` (outcome ``returned_early``); the one who came either goes back to the waiting room
keeping their original ``waiting_since`` (so ahead of everyone who began to wait later; the game is
not counted) or, when the batch's ``on_partner_absent`` is ``end``, ends as ``partner_never_joined``
(outcome ``partner_left``).
"""
from __future__ import annotations

import logging
from collections import Counter
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Exists, OuterRef, Q
from django.utils import timezone

from live.models import Match, MatchEvent, Seat
from live.services import ABSENT_REASON, match_abort, never_connected

log = logging.getLogger(__name__)

CLAIM_LIMIT = 50
# Matches made longer ago than this are left to the inactivity limit (keeps the sweep's scan to
# recent matches, on the created_at index).
LOOK_BACK = timedelta(hours=1)


def absent_seats_sweep(*, now=None) -> Counter:
    """Abort every match of people in which a seat never connected within ``GT_SEAT_GRACE_S``
    (see the module docstring); returns what it did (``partner_never_joined``)."""
    done: Counter = Counter()
    if not settings.GT_SEAT_GRACE_S:
        return done
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=settings.GT_SEAT_GRACE_S)
    people = Q(seats__kind=Seat.Kind.HUMAN, seats__participant__isnull=False)
    never = Seat.objects.filter(match=OuterRef("pk"), kind=Seat.Kind.HUMAN, connected=0, last_seen_at__isnull=True,
                                participant__waiting_since__isnull=False)   # paired from the waiting room
    candidates = list(Match.objects.filter(status=Match.Status.ACTIVE, batch__isnull=False,
                                           created_at__lte=cutoff, created_at__gte=cutoff - LOOK_BACK)
                      .filter(Exists(never)).annotate(people=Count("seats", filter=people))
                      .filter(people__gte=2).values_list("id", flat=True)[:CLAIM_LIMIT])
    for match_id in candidates:
        try:
            if _abort_if_absent(match_id):
                done[ABSENT_REASON] += 1
        except Exception:
            log.exception("presence: match %s", match_id)
            done["error"] += 1
    return done


@transaction.atomic
def _abort_if_absent(match_id) -> bool:
    match = (Match.objects.select_for_update(skip_locked=True).filter(pk=match_id, status=Match.Status.ACTIVE)
             .only("id").first())
    if match is None:
        return False   # another process has it, or it ended
    seats = list(Seat.objects.select_for_update(of=("self",)).filter(match_id=match_id, kind=Seat.Kind.HUMAN)
                 .exclude(participant=None).select_related("participant"))
    acted = set(MatchEvent.objects.filter(match_id=match_id, actor__in=[s.role for s in seats])
                .values_list("actor", flat=True).distinct())
    if len(seats) < 2 or not any(never_connected(s) and s.role not in acted and s.participant.waiting_since
                                 for s in seats):
        return False
    log.info("presence: match %s: %s never connected; aborting", match_id,
             ", ".join(s.role for s in seats if never_connected(s)))
    match_abort(match_id=match_id, reason=ABSENT_REASON)
    return True
