"""The watchdog: moves on every match that waits for something that did not happen, from the
database alone.

* An agent seat overdue: ``Match.agent_due_since`` (written by every action in the same statement
  as the snapshot) is older than that agent's ``timeout_s``. The agent's fallback acts for it
  (``agents.services.agent_fallback_turn``: an ``agent_timed_out`` notice and the fallback's move
  in one transaction); when nothing can act, the match is aborted (``agent_failed``), so no match
  waits forever.
* A game clock run out: ``Match.deadline_at`` has passed; the rules' ``time_up`` action ends it
  (status ``timed_out``; a game whose rules have no clock is aborted with reason ``time_up``).
* An abandoned match: no action for longer than ``Match.inactivity_limit`` (the batch's
  ``inactivity_limit_s``): aborted with reason ``inactive``, and its workers are let go
  (exit reason ``match_inactive``) rather than sent back to the waiting room.
* A person who stalls: the seat the game waits on has not taken its turn within
  ``Match.turn_limit`` (the batch's ``turn_limit_s``; ``Match.turn_since``, restarted only by the
  awaited action, never by chat): recorded as ``stalled_role`` with a ``turn_timed_out`` event
  (``live.services.match_turn_timed_out``), which offers the partner to end the game with full pay.
* A seat of a person that never connected within ``GT_SEAT_GRACE_S`` of the match being made
  (``live.presence.absent_seats_sweep``): aborted with reason ``partner_never_joined``.

It is not a Celery task: it runs in every web process (an asyncio task started when the server
starts, ``groundtalk_web/asgi.py``), every ``GT_WATCHDOG_S`` seconds. So it fires when no model
worker is left, when Redis lost the message that asked an agent to act, and when the broker is
down. Several processes sweep at once safely: matches are claimed with ``SELECT ... FOR UPDATE
SKIP LOCKED`` and the actions' client ids (``fallback:<role>:<seq>``, ``time_up``) turn any
repeat into a no-op. A fallback acts between ``timeout_s`` and ``timeout_s + GT_WATCHDOG_S``
after the agent became due.
"""
from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import DateTimeField, Exists, ExpressionWrapper, F, OuterRef, Q
from django.utils import timezone
from channels.db import database_sync_to_async

from live.agent_seats import agent_spec, default_timeout_s, fallback_turn
from live.models import Match, Seat
from live.presence import absent_seats_sweep
from live.services import match_abort, match_time_up, match_turn_timed_out

log = logging.getLogger(__name__)
CLAIM_LIMIT = 50


# No agent times out sooner than this; each candidate's own timeout is checked in ``_move_on``.
# (A floor rather than the registry's shortest timeout: reading the registry imports every
# game's agents, which a web process serving only human matches never needs.)
MIN_AGENT_TIMEOUT_S = 1.0


def _overdue(now) -> Q:
    return (Q(agent_due_since__lte=now - timedelta(seconds=MIN_AGENT_TIMEOUT_S))
            | Q(deadline_at__lte=now))


def watchdog_sweep(*, now=None) -> Counter:
    """One pass over the overdue matches; returns what it did (``fallback``, ``time_up``, ...)."""
    now = now or timezone.now()
    active = Match.objects.filter(status=Match.Status.ACTIVE)
    done: Counter = absent_seats_sweep(now=now)   # seats that never connected (live/presence.py)
    # One read without locks (usually empty); only matches past their own agent's timeout are
    # then locked, so a match whose agent is still within its timeout is never held up.
    candidates = active.filter(_overdue(now)).values_list("id", "agent_seats", "agent_due_since", "deadline_at")
    due = [pk for pk, seats, since, deadline in candidates[:CLAIM_LIMIT * 4] if _is_due(seats, since, deadline, now)]
    due += [pk for pk in _idle(active, now).values_list("id", flat=True)[:CLAIM_LIMIT] if pk not in due]
    due += [pk for pk in _stalled(active, now).values_list("id", flat=True)[:CLAIM_LIMIT] if pk not in due]
    if not due:
        return done
    with transaction.atomic():
        claimed = list(active.select_for_update(skip_locked=True).filter(pk__in=due[:CLAIM_LIMIT])
                       .only("id", "seq", "agent_seats", "agent_due_since", "deadline_at", "updated_at",
                             "inactivity_limit", "turn_since", "turn_limit", "stalled_role"))
        for match in claimed:
            try:
                with transaction.atomic():
                    done[_move_on(match, now)] += 1
            except Exception:
                log.exception("watchdog: match %s", match.id)
                done["error"] += 1
    return done


def _idle(active, now):
    """Active matches with no action for longer than their inactivity limit."""
    return (active.filter(inactivity_limit__isnull=False)
            .alias(idle_at=ExpressionWrapper(F("updated_at") + F("inactivity_limit"), output_field=DateTimeField()))
            .filter(idle_at__lte=now))


def _stalled(active, now):
    """Active matches whose human seat due has not taken its turn within the turn limit, not yet
    recorded. A match with a person gone is left to the partner-gone check (the partner may have
    left first: ``match_staller`` decides when it ends)."""
    gone = Seat.objects.filter(match=OuterRef("pk"), kind=Seat.Kind.HUMAN, connected=0, left_at__isnull=False)
    return (active.filter(turn_since__isnull=False, turn_limit__isnull=False, stalled_role="")
            .alias(ran_out=ExpressionWrapper(F("turn_since") + F("turn_limit"), output_field=DateTimeField()))
            .filter(ran_out__lte=now).exclude(Exists(gone)))


def _timeout_s(name: str) -> tuple[float, bool]:
    """An agent's timeout, and whether this process knows the agent. An agent this process does
    not know (another process's models file, a rolling deploy, a removed agent) gets the default
    timeout before its match is aborted: the process that knows it may still answer."""
    spec = agent_spec(name)
    if spec is not None:
        return spec.timeout_s, True
    default = default_timeout_s()
    cap = settings.GT_AGENT_TIMEOUT_S
    return (min(default, cap) if cap else default), False


def _is_due(agent_seats: dict, since, deadline, now) -> bool:
    """Whether the watchdog must act: the game clock ran out, or an agent seat has been due for
    longer than that agent's timeout (an unknown agent: the default timeout, then its match is aborted)."""
    if deadline is not None and deadline <= now:
        return True
    if since is None:
        return False
    for name in agent_seats.values():
        if since + timedelta(seconds=_timeout_s(name)[0]) <= now:
            return True
    return not agent_seats   # due with no agent seat: clear it (``_move_on``)


def _move_on(match: Match, now) -> str:
    """What the watchdog does for one claimed match (its row is locked by the caller)."""
    if match.inactivity_limit is not None and match.updated_at + match.inactivity_limit <= now:
        match_abort(match_id=match.id, reason="inactive")   # everyone has left
        return "inactive"
    if match.deadline_at is not None and match.deadline_at <= now:
        if match_time_up(match_id=match.id) not in ("ended", "already"):
            match_abort(match_id=match.id, reason="time_up")   # rules without a clock of their own
        return "time_up"
    if (match.turn_since is not None and match.turn_limit is not None and not match.stalled_role
            and match.turn_since + match.turn_limit <= now
            and match_turn_timed_out(match_id=match.id, now=now) == "turn_timed_out"):   # not if the partner left first
        return "turn_timed_out"
    if match.agent_due_since is None:
        return "not_due"
    waiting = False
    for role, name in sorted(match.agent_seats.items()):
        timeout_s, known = _timeout_s(name)
        if match.agent_due_since + timedelta(seconds=timeout_s) > now:
            waiting = True   # due, but within its timeout
            continue
        if not known:
            log.warning("watchdog: match %s has an agent %r this process does not know, due for %.0f s; "
                        "aborting", match.id, name, timeout_s)
            match_abort(match_id=match.id, reason="agent_failed")
            return "aborted"
        result = fallback_turn(match_id=match.id, role=role, expected_seq=match.seq)
        if result == "fallback":
            return "fallback"
        if result != "answered":   # no fallback could act, or it made an illegal move
            log.warning("watchdog: agent %s of match %s could not be replaced (%s); aborting", name, match.id,
                        result)
            match_abort(match_id=match.id, reason="agent_failed")
            return "aborted"
    if not waiting:   # no agent seat is due after all: stop looking at this match
        Match.objects.filter(pk=match.pk, seq=match.seq).update(agent_due_since=None)
    return "waiting" if waiting else "not_due"


async def run_watchdog(interval_s: float) -> None:
    """Sweep every ``interval_s`` seconds until cancelled (a failed sweep is logged and retried:
    the database may be restarting)."""
    sweep = database_sync_to_async(watchdog_sweep, thread_sensitive=False)
    last_error = 0.0
    while True:
        try:
            done = await sweep()
            if done:
                log.info("watchdog: %s", dict(done))
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if time.monotonic() - last_error > 30:
                log.warning("watchdog sweep failed (retrying every %.1f s): %r", interval_s, exc)
                last_error = time.monotonic()
        await asyncio.sleep(interval_s)


def start(loop: asyncio.AbstractEventLoop, interval_s: float) -> asyncio.Task:
    return loop.create_task(run_watchdog(interval_s), name="groundtalk-watchdog")


__all__ = ["watchdog_sweep", "run_watchdog", "start"]
