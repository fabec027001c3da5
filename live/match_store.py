"""The hot-path reads and writes of ``match_apply_action``.

On PostgreSQL these are hand-written statements; the ORM's query building was about a third of the
CPU an action cost (docs/bench.md). Other databases (the embedded SQLite) use the ORM. Both keep the
same invariants.

Two ways to write an action:

* **Locked** (``lock_match``, ``previous_action_seq``, ``write_action``; the caller holds the
  transaction): lock the match row (with the snapshot, unless this process holds the current
  one), look up a repeated client action, append the events with the new snapshot in one
  statement, commit. Three statements and a commit: four round trips.
* **Conditional** (``cached_match``, ``write_action_if_current``; PostgreSQL only): the rules are
  applied to the state this process last wrote, and one statement appends the events and stores
  the snapshot *only if* the row is still at that seq, still active, and the seat has not already
  sent this action id. One round trip. When the condition fails nothing is written and the caller
  takes the locked way, which decides with the current row.
"""
from __future__ import annotations

import threading
import uuid
from collections import OrderedDict

import orjson
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from live.models import Match, MatchEvent, Seat
from games.registry import get_game
from live import pg_async

_OPTIONS = orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY


def _dumps(value) -> str:
    # orjson: a tenth of the time of the standard library's encoder on a 15 KB snapshot, and a third
    # of its decoder (docs/bench.md); non-string dict keys become strings as json.dumps makes them.
    return orjson.dumps(value, option=_OPTIONS).decode()


def _loads(value):
    return orjson.loads(value) if isinstance(value, (str, bytes)) else value


def _pg() -> bool:
    return connection.vendor == "postgresql"


class StateCache:
    """The last state this process wrote or read per match, keyed by ``(match, seq)``.

    States are never mutated (the rules contract), so a cached dict can be handed to the next
    action as it is; a cache entry is only used when its seq equals the seq of the locked row,
    so a write by another process simply misses. Saves reading and parsing the snapshot (the
    largest cost of an action, docs/bench.md) whenever consecutive actions of a match reach the
    same server process.
    """

    def __init__(self, size: int):
        self.size = size
        self._data: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def get(self, match_id, seq: int):
        with self._lock:
            hit = self._data.get(match_id)
            if hit is None or hit[0] != seq:
                return None
            self._data.move_to_end(match_id)
            return hit[1]

    def peek(self, match_id):
        """``(seq, state)`` of the entry for this match, whatever its seq, or ``(None, None)``."""
        with self._lock:
            hit = self._data.get(match_id)
        return (None, None) if hit is None else hit[:2]

    def entry(self, match_id):
        """``(seq, state, meta)`` of the entry for this match, or None."""
        with self._lock:
            return self._data.get(match_id)

    def forget_before(self, match_id, seq: int) -> None:
        """Drop the entry for this match if it is older than ``seq`` (a write it has not seen)."""
        with self._lock:
            hit = self._data.get(match_id)
            if hit is not None and hit[0] < seq:
                del self._data[match_id]

    def put(self, match_id, seq: int, state: dict, meta=None) -> None:
        if self.size <= 0:
            return
        with self._lock:
            self._data[match_id] = (seq, state, meta)
            self._data.move_to_end(match_id)
            while len(self._data) > self.size:
                self._data.popitem(last=False)


state_cache = StateCache(settings.GT_STATE_CACHE)
# The never-changing part of each match's snapshot (``Match.state_static``), under seq 0.
static_cache = StateCache(settings.GT_STATE_CACHE)


def static_keys(game_id: str) -> tuple[str, ...]:
    """The snapshot keys the game's rules never change (``STATIC_STATE_KEYS`` in its rules module)."""
    return tuple(getattr(get_game(game_id).rules, "STATIC_STATE_KEYS", ()))


def _key(match_id) -> uuid.UUID | None:
    try:
        return match_id if isinstance(match_id, uuid.UUID) else uuid.UUID(str(match_id))
    except ValueError:
        return None


def lock_match(match_id) -> Match | None:
    """The match row, locked until the transaction ends (``SELECT ... FOR UPDATE``), or None."""
    key = _key(match_id)
    if key is None:
        return None
    if not _pg():
        return (Match.objects.select_for_update()
                .only("id", "batch_id", "game_id", "state", "state_static", "seq", "status", "agent_seats",
                      "agent_due_since", "turn_limit", "turn_since", "stalled_role")
                .filter(pk=key).first())
    cached_seq, cached_state = state_cache.peek(key)
    known_seq = -1 if cached_seq is None else cached_seq
    static = static_cache.get(key, 0)
    with connection.cursor() as cur:
        # One round trip: the snapshot comes back only when this process's copy is not the current
        # one, its static part only when this process has not got it. The CASEs are evaluated on the
        # row version the lock returns (PostgreSQL re-reads a row that changed while it waited), so
        # a hit is never stale.
        cur.execute("SELECT batch_id, game_id, seq, status, agent_seats, "
                    "CASE WHEN seq = %(seq)s THEN NULL ELSE state END, "
                    "CASE WHEN seq = %(seq)s OR %(have_static)s THEN NULL ELSE state_static END, "
                    "state_static IS NOT NULL FROM games_match WHERE id = %(id)s FOR UPDATE",
                    {"seq": known_seq, "have_static": static is not None, "id": key})
        row = cur.fetchone()
        if row is None:
            return None
        batch_id, game_id, seq, status, agent_seats, text, static_text, static_stored = row
        if text is None and seq == cached_seq:
            state = cached_state
        else:
            state = _loads(text)
            if static_stored:
                state = {**_static_part(key, static, static_text), **state}
    match = Match(id=key, batch_id=batch_id, game_id=game_id, seq=seq, status=status, state=state,
                  agent_seats=_loads(agent_seats))
    match._state.adding = False
    match._static_stored = static_stored   # write_action: store the static part only the first time
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


def write_action(match: Match, rows: list[MatchEvent], *, finished: bool) -> None:
    """Append an action's events and store the new snapshot, seq and outcome (and the end, when
    ``finished``). On PostgreSQL one statement (the insert as a data-modifying CTE of the update),
    so one round trip."""
    if not _pg():
        MatchEvent.objects.bulk_create(rows)
        due = not finished and any(r in match.agent_seats for r in to_act_roles(match))
        agent_acted = rows[-1].actor in match.agent_seats
        if not due:
            match.agent_due_since = None
        elif agent_acted or match.agent_due_since is None:
            match.agent_due_since = timezone.now()
        fields = ["state", "seq", "outcome", "updated_at", "agent_due_since"] + (
            ["status", "finished_at"] if finished else []) + _turn_clock_orm(match, finished)
        match.save(update_fields=fields)
        return
    insert_sql, insert_params = _insert_sql(rows)
    update_sql, update_params = _update_sql(match, finished, actor=rows[-1].actor)
    with connection.cursor() as cur:
        cur.execute(f"WITH appended AS ({insert_sql}) {update_sql}", insert_params + update_params)
    _cache_on_commit(match)


def _turn_clock_orm(match: Match, finished: bool) -> list[str]:
    """The turn clock of the SQL in ``_update_sql``, for the ORM (the embedded SQLite); the fields set."""
    taken = getattr(match, "_turn_taken", True)
    humans_due = not finished and any(r not in match.agent_seats for r in to_act_roles(match))
    if match.turn_limit is None or not humans_due:
        match.turn_since = None
    elif taken or match.turn_since is None:
        match.turn_since = timezone.now()
    if match.stalled_role and taken and not Seat.objects.filter(
            match_id=match.id, kind=Seat.Kind.HUMAN, connected=0, left_at__isnull=False).exists():
        match.stalled_role = ""
    return ["turn_since", "stalled_role"]


def _cache_on_commit(match: Match) -> None:
    # Cached only once the transaction commits: a rolled-back write must not be remembered. Only an
    # active match's entry can serve the conditional write.
    match_id, seq, state = match.id, match.seq, match.state
    meta = (match.game_id, match.batch_id) if match.status == Match.Status.ACTIVE else None
    transaction.on_commit(lambda: state_cache.put(match_id, seq, state, meta))


def async_ready() -> bool:
    """Whether the conditional write can run on the event loop (PostgreSQL: live/pg_async.py)."""
    return _pg()


def cached_match(match_id) -> Match | None:
    """The active match as this process last wrote it, without a query, or None (PostgreSQL only).

    It may be out of date (another process may have written since): it is only to be written back
    through :func:`write_action_if_current`, which checks its seq in the database.
    """
    if not _pg():
        return None
    key = _key(match_id)
    entry = state_cache.entry(key) if key is not None else None
    if entry is None or entry[2] is None:
        return None
    seq, state, (game_id, batch_id) = entry
    match = Match(id=key, batch_id=batch_id, game_id=game_id, seq=seq, status=Match.Status.ACTIVE,
                  state=state, agent_seats={})
    match._state.adding = False
    match._static_stored = True   # every write that filled the cache stored the static part
    return match


def write_action_if_current(match: Match, rows: list[MatchEvent], *, base_seq: int, role: str,
                            client_action_id: str) -> bool:
    """Append an action's events and store the new snapshot in one statement, if and only if the
    match row is still at ``base_seq`` and active and this seat has no event with this
    ``client_action_id``. True when written (``match.agent_seats`` is then filled from the row);
    False when the condition failed and nothing was written.

    The row lock the UPDATE takes makes the check and the write one step: a concurrent writer
    either committed before (the seq differs) or waits for this statement.
    """
    sql, params = conditional_write_sql(match, rows, base_seq=base_seq, role=role,
                                        client_action_id=client_action_id)
    with connection.cursor() as cur:
        cur.execute(sql, params)
        row = cur.fetchone()
    return conditional_write_done(match, row)


async def write_action_if_current_async(match: Match, rows: list[MatchEvent], *, base_seq: int, role: str,
                                        client_action_id: str) -> bool:
    """:func:`write_action_if_current` on the event loop (live/pg_async.py), outside any
    transaction. Raises ``pg_async.Unavailable`` (nothing written) when it cannot run there."""
    sql, params = conditional_write_sql(match, rows, base_seq=base_seq, role=role,
                                        client_action_id=client_action_id)
    row = await pg_async.fetchone(sql, params)
    return conditional_write_done(match, row, committed=True)


async def refresh_async(match_id, seq: int) -> bool:
    """Read the match's current snapshot on the event loop (no lock) into this process's cache.
    True when it is active and newer than ``seq``: a conditional write from it may succeed."""
    key = _key(match_id)
    have_static = static_cache.get(key, 0) is not None
    row = await pg_async.fetchone(
        "SELECT seq, status, game_id, batch_id, state, CASE WHEN %s THEN NULL ELSE state_static END, "
        "state_static IS NOT NULL FROM games_match WHERE id = %s", [have_static, key])
    if row is None:
        return False
    current, status, game_id, batch_id, text, static_text, static_stored = row
    if status != Match.Status.ACTIVE or current <= seq or (not static_stored and static_keys(game_id)):
        return False
    static = _static_part(key, static_cache.get(key, 0), static_text) if static_stored else {}
    _keep_if_newer(key, current, {**static, **_loads(text)}, (game_id, batch_id))
    return True


def _conditional_parts(match: Match, rows: list[MatchEvent], *, base_seq: int, role: str,
                       client_action_id: str) -> tuple[str, list, str, list]:
    """The conditional UPDATE (no RETURNING) and the typed INSERT (to be given a WHERE) of one action."""
    insert_sql, insert_params = _insert_sql(rows, typed=True)
    update_sql, update_params = _update_sql(match, finished=False, actor=role)
    update_sql += " AND seq = %s AND status = %s"
    update_params += [base_seq, Match.Status.ACTIVE]
    if client_action_id:
        update_sql += (" AND NOT EXISTS (SELECT 1 FROM games_matchevent WHERE match_id = %s AND actor = %s "
                       "AND client_action_id = %s)")
        update_params += [match.id, role, client_action_id]
    return update_sql, update_params, insert_sql, insert_params


def conditional_write_sql(match: Match, rows: list[MatchEvent], *, base_seq: int, role: str,
                          client_action_id: str) -> tuple[str, list]:
    update_sql, update_params, insert_sql, insert_params = _conditional_parts(
        match, rows, base_seq=base_seq, role=role, client_action_id=client_action_id)
    return (f"WITH updated AS ({update_sql} RETURNING agent_seats), "
            f"appended AS ({insert_sql} WHERE EXISTS (SELECT 1 FROM updated)) "
            "SELECT agent_seats FROM updated", update_params + insert_params)


def write_actions_if_current(writes: list[tuple[Match, list[MatchEvent], int, str, str]]) -> list[bool]:
    """Several actions, each on a match of its own, written as :func:`write_action_if_current`
    writes one, in ONE statement (one round trip): ``writes`` holds ``(match, rows, base_seq,
    role, client_action_id)``. Each action has its own condition (its match still at its
    ``base_seq``, active, this seat without an event of this id) and is written only if it holds,
    whatever becomes of the others; the answer is one bool per action, in order (True: written,
    its ``agent_seats`` filled from the row; its snapshot cached once the caller's transaction
    commits). PostgreSQL only.

    Each action is a pair of data-modifying CTEs (the UPDATE, then the INSERT of its events only
    if that UPDATE wrote). Locks: each UPDATE takes its match's row lock (held until the caller's
    transaction ends); give the matches in one order (by id) so that two callers never wait on each
    other. A match given twice raises ValueError: one statement may not change a row twice."""
    if not writes:
        return []
    ids = [w[0].id for w in writes]
    if len(set(ids)) != len(ids):
        raise ValueError("write_actions_if_current: one action per match")
    ctes, selects, params = [], [], []
    for i, (match, rows, base_seq, role, client_action_id) in enumerate(writes):
        update_sql, update_params, insert_sql, insert_params = _conditional_parts(
            match, rows, base_seq=base_seq, role=role, client_action_id=client_action_id)
        ctes.append(f"u{i} AS ({update_sql} RETURNING agent_seats), "
                    f"a{i} AS ({insert_sql} WHERE EXISTS (SELECT 1 FROM u{i}))")
        selects.append(f"SELECT {i}, agent_seats FROM u{i}")
        params += update_params + insert_params
    with connection.cursor() as cur:
        cur.execute("WITH " + ", ".join(ctes) + " " + " UNION ALL ".join(selects), params)
        written = {i: agent_seats for i, agent_seats in cur.fetchall()}
    return [conditional_write_done(match, (written[i],) if i in written else None)
            for i, (match, *_rest) in enumerate(writes)]


def conditional_write_done(match: Match, row, *, committed: bool = False) -> bool:
    """After the conditional statement: False when it wrote nothing; else fill ``agent_seats`` from
    its row and cache the new snapshot (now, when the statement ran outside a transaction and so
    has ``committed``; otherwise once the caller's transaction commits)."""
    if row is None:
        return False
    match.agent_seats = _loads(row[0])
    if committed:
        _keep_if_newer(match.id, match.seq, match.state, (match.game_id, match.batch_id))
    else:
        _cache_on_commit(match)
    return True


def snapshot_for_broadcast(match: Match) -> dict | None:
    """The state just written, for the broadcast of its events: the JSON text of the part each
    action rewrites (the static part is cached per process), or None (no PostgreSQL write, a match
    that is over, or a large state).

    With a match's two seats on different server processes, each process's snapshot cache would
    otherwise be out of date after every action of the other seat, and the conditional write
    would almost never apply (docs/bench.md).
    """
    written = getattr(match, "_snapshot_json", None)
    # Larger snapshots are not sent (the other processes then take the locked way next time).
    if (written is None or match.status != Match.Status.ACTIVE
            or len(written[0]) > settings.GT_BROADCAST_SNAPSHOT_MAX):
        return None
    return {"state": written[0], "split": written[1], "game_id": match.game_id, "batch_id": match.batch_id}


def remember_broadcast(match_id, seq: int, snapshot: dict | None) -> None:
    """Another process committed ``seq`` of this match: keep its snapshot when it came along (and
    this process holds the match's static part), else forget this process's older one. Called by
    the seats' consumers on the event loop; a no-op when this process already holds ``seq``."""
    entry = state_cache.entry(match_id)
    if entry is not None and entry[0] >= seq:
        return
    static = {} if snapshot is not None and not snapshot["split"] else static_cache.get(match_id, 0)
    if snapshot is None or static is None:
        state_cache.forget_before(match_id, seq)
        return
    _keep_if_newer(match_id, seq, {**static, **orjson.loads(snapshot["state"])},
                   (snapshot["game_id"], snapshot["batch_id"]))


def _insert_sql(rows: list[MatchEvent], *, typed: bool = False) -> tuple[str, list]:
    """``INSERT ... VALUES``, or with ``typed`` ``INSERT ... SELECT * FROM (VALUES ...)`` with every
    value cast (a caller appends a ``WHERE``)."""
    row_sql = ("(%s::uuid, %s::integer, %s::varchar, %s::varchar, %s::jsonb, %s::jsonb, %s::jsonb, "
               "%s::varchar, %s::bigint)" if typed else "(%s, %s, %s, %s, %s::jsonb, %s::jsonb, %s::jsonb, %s, %s)")
    values, params = [], []
    for r in rows:
        values.append(row_sql)
        params += [r.match_id, r.seq, r.type, r.actor, _dumps(r.payload),
                   None if r.private is None else _dumps(r.private),
                   None if r.action is None else _dumps(r.action), r.client_action_id, r.t]
    head = "INSERT INTO games_matchevent (match_id, seq, type, actor, payload, private, action, client_action_id, t) "
    if typed:
        return head + "SELECT * FROM (VALUES " + ", ".join(values) + ") AS appended_rows", params
    return head + "VALUES " + ", ".join(values), params


def split_static(game_id: str, state):
    """``(the part actions change, the static part)`` of a snapshot, or ``(state, None)`` when the
    game lists no ``STATIC_STATE_KEYS`` (or the state lacks one)."""
    keys = static_keys(game_id) if isinstance(state, dict) else ()
    if not keys or not all(k in state for k in keys):
        return state, None
    return {k: v for k, v in state.items() if k not in keys}, {k: state[k] for k in keys}


def remember_loaded(match: Match) -> None:
    """Keep a match just read in full (by a seat joining) as this process's snapshot of it, so
    that the seat's first action can be a conditional write. Needs ``state`` (which loads
    ``state_static``), ``seq``, ``status``, ``game_id`` and ``batch_id`` loaded; PostgreSQL only."""
    if not _pg() or match.status != Match.Status.ACTIVE:
        return
    key = match.id
    static = match.state_static
    if static is None and static_keys(match.game_id):
        return   # not split yet: the next write stores the static part, so it must take the locked way
    if static is not None and static_cache.get(key, 0) is None:
        static_cache.put(key, 0, static)
    _keep_if_newer(key, match.seq, match.state, (match.game_id, match.batch_id))


def load_matches(match_ids) -> dict[str, Match]:
    """Several matches as they are now, by id (``str``), for a caller that acts on many at once
    (the model worker's batch): ``id``, ``batch_id``, ``game_id``, ``seq``, ``status``,
    ``agent_seats``, ``agent_due_since`` and the whole ``state``; each active one kept as this
    process's snapshot (as :func:`remember_loaded` keeps it), so that its next action can be a
    conditional write. Unknown ids are left out.

    On PostgreSQL one statement with no lock, which sends a match's snapshot only when this
    process does not hold that seq already, and its static part only when this process has not got
    it (as :func:`lock_match` does); elsewhere the ORM."""
    keys = list({k for k in map(_key, match_ids) if k is not None})
    if not keys:
        return {}
    if not _pg():
        found = {}
        for match in Match.objects.only("id", "batch_id", "game_id", "state", "state_static", "seq", "status",
                                        "agent_seats", "agent_due_since").filter(pk__in=keys):
            remember_loaded(match)
            found[str(match.id)] = match
        return found
    cached = {k: state_cache.peek(k) for k in keys}   # taken once: the statement's CASEs trust them
    statics = {k: static_cache.get(k, 0) for k in keys}
    known = [-1 if cached[k][0] is None else cached[k][0] for k in keys]
    have_static = [statics[k] is not None for k in keys]
    with connection.cursor() as cur:
        cur.execute("SELECT m.id, m.batch_id, m.game_id, m.seq, m.status, m.agent_seats, m.agent_due_since, "
                    "CASE WHEN m.seq = k.seq THEN NULL ELSE m.state END, "
                    "CASE WHEN m.seq = k.seq OR k.have_static THEN NULL ELSE m.state_static END, "
                    "m.state_static IS NOT NULL "
                    "FROM unnest(%s::uuid[], %s::integer[], %s::boolean[]) AS k(id, seq, have_static) "
                    "JOIN games_match m ON m.id = k.id",
                    [keys, known, have_static])
        rows = cur.fetchall()
    found = {}
    for key, batch_id, game_id, seq, status, agent_seats, due_since, text, static_text, static_stored in rows:
        cached_seq, cached_state = cached[key]
        if text is None and seq == cached_seq:
            state = cached_state
        else:
            state = _loads(text)
            if static_stored:
                state = {**_static_part(key, statics[key], static_text), **state}
        match = Match(id=key, batch_id=batch_id, game_id=game_id, seq=seq, status=status, state=state,
                      agent_seats=_loads(agent_seats), agent_due_since=due_since)
        match._state.adding = False
        match._static_stored = static_stored
        if status == Match.Status.ACTIVE and (static_stored or not static_keys(game_id)):
            _keep_if_newer(key, seq, state, (game_id, batch_id))
        found[str(key)] = match
    return found


def _static_part(key, cached: dict | None, text) -> dict:
    """A match's static part: this process's copy, or the one just read (then kept)."""
    if cached is not None:
        return cached
    static = _loads(text)
    static_cache.put(key, 0, static)
    return static


def _keep_if_newer(key, seq: int, state: dict, meta) -> None:
    """Cache ``(seq, state)`` unless this process already holds this seq or a later one."""
    entry = state_cache.entry(key)
    if entry is None or entry[0] < seq:
        state_cache.put(key, seq, state, meta)


def _update_sql(match: Match, finished: bool, *, actor: str) -> tuple[str, list]:
    state, static = split_static(match.game_id, match.state)
    sql = "UPDATE games_match SET state = %s::jsonb, seq = %s, outcome = %s::jsonb, updated_at = %s"
    state_json = _dumps(state)
    match._snapshot_json = (state_json, static is not None)   # for snapshot_for_broadcast
    now = timezone.now()
    params = [state_json, match.seq, _dumps(match.outcome), now]
    if static is None:
        sql += ", state_static = NULL"   # the whole snapshot is in ``state``
    elif not getattr(match, "_static_stored", False):
        sql += ", state_static = %s::jsonb"
        params.append(_dumps(static))
    # The watchdog's column (live/watchdog.py), from the row's own agent_seats, so that the
    # conditional write, which does not know them beforehand, stores it in the same statement:
    # when an agent seat is (still) to act, since when. A human's action does not restart the
    # agent's clock (a chatty partner must not keep a dead agent's fallback away); the agent's
    # own action (or its fallback's) does.
    sql += (", agent_due_since = CASE WHEN NOT agent_seats ?| %s::text[] THEN NULL "
            "WHEN agent_seats ? %s THEN %s ELSE COALESCE(agent_due_since, %s) END")
    params += [[] if finished else to_act_roles(match), actor, now, now]
    # The turn clock (games.base.turn_taken), also in this statement: since when a human seat (one
    # not in agent_seats) has been due; restarted only by an action that took a turn. A stall the
    # watchdog recorded is cleared when the turn is taken while no human seat is gone (a staller
    # who plays once the partner has left is still the one who stalled).
    taken = getattr(match, "_turn_taken", True)
    sql += (", turn_since = CASE WHEN turn_limit IS NULL OR agent_seats ?& %s::text[] THEN NULL "
            "WHEN %s OR turn_since IS NULL THEN %s ELSE turn_since END"
            ", stalled_role = CASE WHEN stalled_role = '' OR NOT %s THEN stalled_role "
            "WHEN EXISTS (SELECT 1 FROM games_seat gone WHERE gone.match_id = games_match.id AND gone.kind = 'human' "
            "AND gone.connected = 0 AND gone.left_at IS NOT NULL) THEN stalled_role ELSE '' END")
    params += [[] if finished else to_act_roles(match), taken, now, taken]
    if finished:
        sql += ", status = %s, finished_at = %s"
        params += [match.status, match.finished_at]
    return sql + " WHERE id = %s", params + [match.id]


def to_act_roles(match: Match) -> list[str]:
    """The roles the rules wait for in ``match.state`` (none once it is over)."""
    if match.status != Match.Status.ACTIVE:
        return []

    return list(get_game(match.game_id).rules.to_act(match.state))

