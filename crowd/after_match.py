"""After a match: its workers go on (issue 22, item 3: the crowd's side of a match's end).

``participants_after_match`` receives ``live.services.match_finished``, which live sends inside the
transaction that ends a match (``match_apply_action`` when the rules end it, ``match_abort``); the
crowd app connects it (crowd/apps.py). So a worker's ``games_played``, next game or exit commit
with the match's end, atomically: both or neither.
"""
from __future__ import annotations

from django.utils import timezone

from crowd.models import Participant
from crowd.outcomes import participant_exit
from games.registry import get_game
from live.models import Batch, Match, Seat
from live.services import ABSENT_REASON, match_staller, never_connected

# Aborts after which the match's workers are not sent on to another game: they have left.
LET_GO_REASONS = {"inactive": "match_inactive"}
# The exit reason of a worker whose last game ended this way (crowd/outcomes.py maps each to
# what it earns): an abort's reason, or the game's clock for a match the rules ended as timed_out.
LAST_GAME_REASONS = {"partner_left": "partner_left", "agent_failed": "agent_failed", "time_up": "time_up",
                     "partner_stalled": "partner_timed_out"}
# Aborts whose outcomes a stall decides (``match_staller``): whoever stalled gets ``timed_out``,
# whoever waited on them the partner's pay, whichever of them ended the game.
STALL_DECIDES = {"partner_left", "partner_stalled", *LET_GO_REASONS}


def _roles_due_at_abort(match: Match) -> list[str]:
    """The roles the rules were waiting on when the match was aborted (from the snapshot before
    the abort: ``match.state`` is not changed by an abort)."""
    return list(get_game(match.game_id).rules.to_act(match.state))


def _participants_after_absent(match: Match) -> None:
    """After an abort for ``ABSENT_REASON`` (called by ``participants_after_match``,
    inside ``match_abort``'s transaction): the workers whose seat never connected end as
    ``never_joined``; the others go back to the waiting room first in the queue (their original
    ``waiting_since``; the game is not counted) or, as the batch asks, end as ``partner_never_joined``."""
    now = timezone.now()
    seats = {s.participant_id: s for s in Seat.objects.filter(match=match, kind=Seat.Kind.HUMAN)
             .exclude(participant=None)}
    for p in Participant.objects.select_for_update().filter(pk__in=seats).select_related("batch"):
        if p.state != Participant.State.PLAYING:
            continue
        seat = seats[p.pk]
        if never_connected(seat):
            p.save(update_fields=participant_exit(p, "never_joined"))
        elif p.batch.on_partner_absent == Batch.OnPartnerAbsent.END:
            p.save(update_fields=participant_exit(p, "partner_never_joined"))
        else:
            p.state = Participant.State.WAITING
            # present if their game page is open now; else as of when it closed
            p.last_seen_at = now if seat.connected else seat.last_seen_at
            if p.waiting_since is None:
                p.waiting_since = now
            p.save(update_fields=["state", "last_seen_at", "waiting_since"])


def participants_after_match(sender=None, *, match: Match, aborted_as: str = "", by: str = "", **kwargs) -> None:
    """Count the game for every human seat and send each worker on: another game or done, with
    the exit reason of how this game ended (the receiver of ``live.services.match_finished``, in
    the transaction that ends the match). Aborted as ``partner_left`` by the seat that stayed
    (``by``, ``match_abort``'s ``role``), the seats that had left end their part (``left_match``, the game
    not counted). Aborted because nobody acted (``LET_GO_REASONS``), every worker's part ends
    and the game is not counted: ``match_inactive`` for the seats the game was waiting on,
    ``partner_inactive`` for the others (``agent_failed`` when it waited on an agent only).

    When a person stalled the match (``match_staller``: did not take their turn within the turn
    limit) and it was aborted as ``partner_left``, ``partner_stalled`` or ``inactive``, the stall
    decides whoever pressed the button: the staller ends as ``timed_out``; the partner who ended it
    goes on (its game counts; ``partner_timed_out`` if it was the last), a partner who had left
    since ends as ``partner_timed_out``, and the inactivity limit lets it go as ``partner_inactive``."""
    if aborted_as == ABSENT_REASON:   # a seat never opened the game: live/presence.py
        return _participants_after_absent(match)
    seat_rows = list(Seat.objects.filter(match=match, kind=Seat.Kind.HUMAN).exclude(participant=None)
                     .values_list("participant_id", "role"))
    role_of = dict(seat_rows)
    due = set(_roles_due_at_abort(match)) if aborted_as in LET_GO_REASONS else set()
    humans_due = due & set(role_of.values())
    staller = match_staller(match, human_roles=set(role_of.values())) if aborted_as in STALL_DECIDES else ""
    for p in Participant.objects.select_for_update().filter(pk__in=role_of).select_related("batch"):
        role = role_of[p.pk]
        ended_as = aborted_as
        if staller:
            # Who stalled decides, not who pressed the button: the staller timed out; a partner who
            # waited and left since is paid as the partner of a staller; the one who ended it goes on.
            if role == staller or (role != by and aborted_as not in LET_GO_REASONS):
                p.save(update_fields=participant_exit(p, "timed_out" if role == staller else "partner_timed_out"))
                continue
            if aborted_as in LET_GO_REASONS:
                p.save(update_fields=participant_exit(p, "partner_inactive"))
                continue
            ended_as = "partner_stalled"   # the partner who waited ended the game: it counts
        if aborted_as in LET_GO_REASONS:
            reason = ("partner_inactive" if humans_due and role not in due
                      else "agent_failed" if due and not humans_due else LET_GO_REASONS[aborted_as])
            p.save(update_fields=participant_exit(p, reason))
            continue
        if aborted_as == "partner_left" and by in role_of.values() and role != by:
            p.save(update_fields=participant_exit(p, "left_match"))
            continue
        p.games_played += 1
        fields = ["games_played", "state", "waiting_since"]
        if p.games_played >= p.batch.games_per_worker:
            last = LAST_GAME_REASONS.get(ended_as) or (
                "time_up" if match.status == Match.Status.TIMED_OUT else "completed")
            fields += participant_exit(p, last)
        else:
            p.state = Participant.State.WAITING
            p.waiting_since = timezone.now()
        p.save(update_fields=sorted(set(fields)))
