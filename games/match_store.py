"""The hot-path reads and writes of ``match_apply_action``.

On PostgreSQL these are four hand-written statements (lock the match row, look up a repeated
client action, insert the events, update the snapshot): the ORM's query building was about a
third of the CPU an action cost (docs/bench.md). Other databases (the embedded SQLite) use the
ORM. Both keep the same invariants; the caller holds the transaction.
"""
from __future__ import annotations

import json
import uuid

from django.db import connection
from django.utils import timezone

from games.models import Match, MatchEvent

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def _pg() -> bool:
    return connection.vendor == "postgresql"


def lock_match(match_id) -> Match | None:
    """The match row, locked until the transaction ends (``SELECT ... FOR UPDATE``), or None."""
    try:
        key = match_id if isinstance(match_id, uuid.UUID) else uuid.UUID(str(match_id))
    except ValueError:
        return None
    if not _pg():
        return (Match.objects.select_for_update()
                .only("id", "batch_id", "game_id", "state", "seq", "status", "agent_seats").filter(pk=key).first())
    with connection.cursor() as cur:
        cur.execute("SELECT batch_id, game_id, state, seq, status, agent_seats FROM games_match "
                    "WHERE id = %s FOR UPDATE", [key])
        row = cur.fetchone()
    if row is None:
        return None
    batch_id, game_id, state, seq, status, agent_seats = row
    match = Match(id=key, batch_id=batch_id, game_id=game_id, seq=seq, status=status,
                  state=json.loads(state) if isinstance(state, str) else state,
                  agent_seats=json.loads(agent_seats) if isinstance(agent_seats, str) else agent_seats)
    match._state.adding = False
    return match


def previous_action_seq(match_id, role: str, client_action_id: str) -> int | None:
    """The first seq of the action this seat already sent with this id, if any."""
    if not _pg():
        found = list(MatchEvent.objects.filter(match_id=match_id, actor=role, client_action_id=client_action_id)
                     .values_list("seq", flat=True)[:1])
        return found[0] if found else None
    with connection.cursor() as cur:
        cur.execute("SELECT seq FROM games_matchevent WHERE match_id = %s AND actor = %s AND client_action_id = %s "
                    "LIMIT 1", [match_id, role, client_action_id])
        row = cur.fetchone()
    return row[0] if row else None


def insert_events(rows: list[MatchEvent]) -> None:
    if not _pg():
        MatchEvent.objects.bulk_create(rows)
        return
    values, params = [], []
    for r in rows:
        values.append("(%s, %s, %s, %s, %s::jsonb, %s::jsonb, %s::jsonb, %s, %s)")
        params += [r.match_id, r.seq, r.type, r.actor, _dumps(r.payload),
                   None if r.private is None else _dumps(r.private),
                   None if r.action is None else _dumps(r.action), r.client_action_id, r.t]
    with connection.cursor() as cur:
        cur.execute("INSERT INTO games_matchevent (match_id, seq, type, actor, payload, private, action, "
                    "client_action_id, t) VALUES " + ", ".join(values), params)


def save_progress(match: Match, *, finished: bool) -> None:
    """Store the new snapshot, seq and outcome (and the end, when ``finished``)."""
    if not _pg():
        fields = ["state", "seq", "outcome", "updated_at"] + (["status", "finished_at"] if finished else [])
        match.save(update_fields=fields)
        return
    sql = "UPDATE games_match SET state = %s::jsonb, seq = %s, outcome = %s::jsonb, updated_at = %s"
    params = [_dumps(match.state), match.seq, _dumps(match.outcome), timezone.now()]
    if finished:
        sql += ", status = %s, finished_at = %s"
        params += [match.status, match.finished_at]
    with connection.cursor() as cur:
        cur.execute(sql + " WHERE id = %s", params + [match.id])
