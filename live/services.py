"""The one write path for matches (HackSoft: services write, selectors read).

``match_apply_action`` is how every seat acts, human or agent. Its rules (the locked way):

1. lock the match row (``SELECT ... FOR UPDATE``) and read its snapshot;
2. answer a repeated ``client_action_id`` with the original outcome (nothing applied twice);
3. refuse a stale ``expected_seq`` (agents act on the state they saw, or not at all);
4. validate the action with the game's typed schema (games/actions.py), stamp the server time
   and apply it with the game's pure rules;
5. append the events with the next sequence numbers, store the new state snapshot;
6. commit, and only then broadcast (``transaction.on_commit``) and wake agent seats.

On PostgreSQL an action first tries the conditional write (``live.match_store``): steps 4 and 5 on
the snapshot this process wrote last, and one statement that stores them only if the match is
still at that seq, still active and has no event with this seat's action id (steps 1 to 3 checked
by the database in the same step). A person's action runs it on the event loop
(:func:`match_apply_action_async`, the fastest of the ways measured in docs/bench.md); an agent's
runs it in its thread. When that condition fails, or the rules refuse the action on that
snapshot, or the action ends the match, or a platform event goes with it, the steps above run as
written; so every answer, refusals included, is the one the locked way gives.

Invariant: for every match, ``Match.state`` equals replaying its logged actions from
``rules.initial_state`` and ``Match.seq`` is the highest ``MatchEvent.seq``.
"""
from __future__ import annotations

import asyncio
import logging
import random
import time
import uuid
import weakref
from dataclasses import dataclass, field
from datetime import timedelta
from functools import partial

from django.db import DatabaseError, InterfaceError, OperationalError, transaction
from django.dispatch import Signal
from django.utils import timezone
from channels.db import database_sync_to_async
from django.db.models import F
from django.db.models.functions import Greatest

from live import agent_seats, broadcast, match_store, pg_async
from games.base import SYSTEM, Event, IllegalAction, turn_limit_s, turn_taken
from live.models import Batch, Match, MatchEvent, Seat
from games.registry import get_game


log = logging.getLogger(__name__)


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass(frozen=True)
class SeatSpec:
    kind: str  # "human" or "agent"
    participant: object | None = None   # a crowd.Participant (crowd/models.py)
    agent_name: str = ""


@dataclass
class ActionResult:
    match_id: uuid.UUID
    first_seq: int
    last_seq: int
    duplicate: bool = False
    events: list[dict] = field(default_factory=list)


def event_row_to_wire(row: MatchEvent | dict) -> dict:
    """The broadcast form of a logged event (private parts included; consumers project per role)."""
    if isinstance(row, dict):
        return row
    data = {"seq": row.seq, "type": row.type, "actor": row.actor, "payload": row.payload, "t": row.t}
    if row.private:
        data["private"] = row.private
    return data


def project_event(event: dict, role: str | None) -> dict:
    """What ``role`` sees of a wire event (``None``: an observer)."""
    private = event.get("private")
    payload = event["payload"]
    if private and role in private:
        payload = {**payload, **private[role]}
    return {"seq": event["seq"], "type": event["type"], "actor": event["actor"], "payload": payload,
            "t": event["t"]}


def _rows(match: Match, start_seq: int, events: list[Event], *, actor: str, t: int,
          action: dict | None = None, client_action_id: str = "") -> list[MatchEvent]:
    rows = []
    for offset, event in enumerate(events):
        rows.append(MatchEvent(
            match=match, seq=start_seq + offset, type=event.type, actor=actor,
            payload=event.payload, private=event.private or None,
            action=action if offset == 0 else None,
            client_action_id=client_action_id if offset == 0 else "", t=t,
        ))
    return rows


# Sent after an action's commit when agent seats are to act: ``match_id``, ``seq`` (the state
# they act on), ``roles`` (theirs) and ``agent_seats`` ({role: agent name}). The agents app
# connects its wake-up (agents/apps.py, ``agents.dispatch.wake_agents``), so live imports no agent
# code. A receiver must not raise: waking is best effort (the watchdog finds a lost wake-up).
agent_turns_due = Signal()

# Sent when a match ends (finished, timed out or aborted), INSIDE the transaction that ends it and
# before it commits, with ``match`` (its row locked, its new status and ``finished_at`` set),
# ``aborted_as`` (an abort's reason, "" when the rules ended it) and ``by`` (the role that aborted
# it, "" otherwise). The crowd app connects how the match's workers go on (crowd/apps.py,
# ``crowd.after_match.participants_after_match``: games played, another game or done, with the exit
# reason), so what becomes of them commits with the match's end, or not at all; live imports no
# crowd code. A receiver runs synchronously in that transaction: it may write (and lock rows after
# the match's), and an error it raises rolls the match's end back with it.
match_finished = Signal()


def _after_commit(match: Match, rows: list[MatchEvent]) -> None:
    """Broadcast committed events with every seat's fresh view, then wake agent seats.

    ``robust``: the action is committed whatever happens to its announcement (a broker down): an
    error there must not reach the caller as if the action had failed. Seats fill a missed
    broadcast from the log, and the watchdog finds an agent turn whose wake-up was lost."""
    transaction.on_commit(_announcement(match, rows), robust=True)


def _announcement(match: Match, rows: list[MatchEvent]):
    """What to do once ``rows`` are committed: a function that broadcasts them (with every seat's
    fresh view) and wakes the agent seats whose turn it is (``agent_turns_due``). Computed now,
    run after commit."""
    spec = get_game(match.game_id)
    state = match.state
    views = {role: spec.rules.view_for(state, role) for role in spec.roles}
    wire = [event_row_to_wire(r) for r in rows]
    match_id, seq, status, agent_seats = match.id, match.seq, match.status, dict(match.agent_seats)
    to_act = tuple(match_store.to_act_roles(match))
    snapshot = match_store.snapshot_for_broadcast(match)

    def send() -> None:
        broadcast.broadcast_events(match_id=match_id, events=wire, views=views, seq=seq, status=status, snapshot=snapshot)
        if agent_seats and to_act:
            agent_turns_due.send(sender=Match, match_id=match_id, seq=seq,
                                 roles=[r for r in to_act if r in agent_seats], agent_seats=agent_seats)

    send.wakes_agents = bool(agent_seats and to_act)   # a wake-up may block (Celery's broker)
    return send


@transaction.atomic
def match_create(*, game_id: str, seats: dict[str, SeatSpec], batch: Batch | None = None,
                 seed: int | None = None, config: dict | None = None, content: dict | None = None,
                 content_ref=None, wake_agents: bool = True, arm: str = "", assignment: dict | None = None,
                 blind: bool = False) -> Match:
    """Create a match with its seats, initial state and start events (seq 1..n).

    ``wake_agents=False`` is for a caller that drives the agent seats itself (``simulate``): the
    platform then never schedules their turns. ``arm`` and ``assignment``: the batch's arm this
    match plays and how it was drawn (live/arms.py). ``blind``: the people must not learn whether
    their partner is a person (a batch with human-human arms beside arms with agents): the
    ``match_started`` event every seat receives says ``"seat"`` for every seat instead of its kind
    (the seats' rows keep the truth).
    """
    spec = get_game(game_id)
    missing = set(spec.roles) - set(seats)
    if missing:
        raise ValueError(f"No seat given for role(s) {sorted(missing)} of {game_id}")
    unknown = set(seats) - set(spec.roles)
    if unknown:
        raise ValueError(f"{game_id} has no role(s) {sorted(unknown)}")
    humans = [s.participant.pk for s in seats.values() if s.kind == Seat.Kind.HUMAN and s.participant]
    if len(humans) != len(set(humans)):
        raise ValueError("One participant cannot hold two seats of a match")
    if seed is None:
        seed = random.SystemRandom().randrange(2**31)
    config = {**spec.default_config, **(batch.config if batch else {}), **(config or {})}
    t = now_ms()
    if config.get("time_limit_s"):
        config["start_ms"] = t  # the game clock starts with the match (rules read it from config)
    if content is None:
        content = spec.content.generate(seed, config)
    state = spec.rules.initial_state(content, seed, config)
    dynamic, static = match_store.split_static(game_id, state)
    agent_seats = {r: s.agent_name for r, s in seats.items() if s.kind == Seat.Kind.AGENT} if wake_agents else {}
    created = timezone.now()
    # the turn clock is for people: none in a match without a person (agent-agent, simulations)
    turn_limit = batch_turn_limit(batch, spec) if any(s.kind == Seat.Kind.HUMAN for s in seats.values()) else None
    match = Match.objects.create(
        batch=batch, game_id=game_id, seed=seed, config=config, content=content, content_ref=content_ref,
        state=dynamic, state_static=static, agent_seats=agent_seats,
        agent_due_since=created if any(r in agent_seats for r in spec.rules.to_act(state)) else None,
        deadline_at=(created + timedelta(seconds=float(config["time_limit_s"]) + 1)
                     if config.get("time_limit_s") else None),
        inactivity_limit=(timedelta(seconds=batch.inactivity_limit_s)
                          if batch is not None and batch.inactivity_limit_s else None),
        turn_limit=turn_limit,
        turn_since=created if turn_limit is not None and any(
            r not in agent_seats for r in spec.rules.to_act(state)) else None,
        arm=arm, assignment=assignment or {},
    )
    match.state = state   # the whole snapshot, as every load gives it (``Match.from_db``)
    match._static_stored = static is not None
    Seat.objects.bulk_create([
        Seat(match=match, role=role, kind=s.kind, participant=s.participant, agent_name=s.agent_name,
             agent_model=_agent_model(s))
        for role, s in seats.items()
    ])
    started = Event("match_started", {"game_id": game_id, "roles": list(spec.roles),
                                      "seats": {r: "seat" if blind else s.kind for r, s in seats.items()}})
    rows = _rows(match, 1, [started, *spec.rules.start_events(state)], actor=SYSTEM, t=t)
    MatchEvent.objects.bulk_create(rows)
    match.seq = len(rows)
    match.outcome = spec.rules.outcome(state)
    match.save(update_fields=["seq", "outcome"])
    _after_commit(match, rows)
    return match


def batch_turn_limit(batch: Batch | None, spec) -> timedelta | None:
    """A match's turn limit: the batch's ``turn_limit_s`` (0: none), else the game's default
    (``TURN_LIMIT_S``); None for a match outside a batch (simulations, practice rounds)."""
    if batch is None:
        return None
    seconds = batch.turn_limit_s if batch.turn_limit_s is not None else turn_limit_s(spec.rules)
    return timedelta(seconds=seconds) if seconds else None


def _agent_model(seat: SeatSpec) -> dict:
    """What a model agent's seat records at creation (version, family, checkpoint; the worker adds
    the checkpoint's hash when the model acts); {} for people and rule agents."""
    if seat.kind != Seat.Kind.AGENT or not seat.agent_name:
        return {}
    spec = agent_seats.agent_spec(seat.agent_name)
    config = spec.model if spec is not None else None
    return config.seat_record() if config is not None else {}


def match_apply_action(*, match_id, role: str, action: dict, client_action_id: str = "",
                       expected_seq: int | None = None, notice: Event | None = None,
                       try_conditional: bool = True) -> ActionResult:
    """Apply one action for ``role`` (see the module docstring for the steps).

    Raises :class:`IllegalAction` (nothing changed) when the match is over, the action is stale
    or the rules refuse it. ``notice`` is a platform event written just before the action's own
    events in the same transaction (e.g. ``agent_timed_out`` before a fallback's move).

    Locks and retries: the conditional write first (``try_conditional``; no lock held in Python,
    the UPDATE's row lock makes its check and write one step), once, with no retry; then, if it
    wrote nothing, the locked way: ``SELECT ... FOR UPDATE`` on the match row held until commit,
    so the actions of a match are applied one at a time across every process and worker. The
    locked way is not retried here: a connection-level error reaches the caller (a consumer asks
    its client to re-send with the same id, which the duplicate check makes safe).
    """
    _check_envelope(action, client_action_id)
    if try_conditional and notice is None and role != SYSTEM:
        result = _apply_if_current(match_id, role, action, client_action_id, expected_seq)
        if result is not None:
            return result
    with transaction.atomic():
        match = match_store.lock_match(match_id)
        if match is None:
            raise IllegalAction("unknown_match", "There is no such match.")
        if client_action_id:
            previous = match_store.previous_action_seq(match.id, role, client_action_id)
            if previous is not None:
                return _duplicate_result(match, previous)
        if match.status != Match.Status.ACTIVE:
            raise IllegalAction("game_over", "This game has ended.")
        if expected_seq is not None and match.seq != expected_seq:
            raise IllegalAction("stale", "The game moved on before this action arrived.")
        spec = get_game(match.game_id)
        if role != SYSTEM and role not in spec.roles:
            raise IllegalAction("wrong_role", f"{role!r} is not a seat of this game.")
        t = now_ms()
        # The game's typed schema (games/actions.py) first: what the rules apply and the log keeps
        # is the validated action, stamped with the server's time only after validation.
        stamped = {**spec.actions.validate(action), "at": t}
        new_state, events = spec.rules.apply(match.state, role, stamped)
        if not events:
            raise IllegalAction("no_effect", "That action changes nothing.")
        match._turn_taken = turn_taken(spec.rules, match.state, new_state, role, stamped["type"])
        rows = []
        if notice is not None:
            rows += _rows(match, match.seq + 1, [notice], actor=SYSTEM, t=t)
        rows += _rows(match, match.seq + 1 + len(rows), events, actor=role, t=t, action=stamped,
                      client_action_id=client_action_id)
        match.state = new_state
        match.seq = rows[-1].seq
        match.outcome = spec.rules.outcome(new_state)
        finished = spec.rules.is_over(new_state)
        if finished:
            # the game clock (a system time_up) ends a game as timed out, not finished
            timed_out = role == SYSTEM and stamped.get("type") == "time_up"
            match.status = Match.Status.TIMED_OUT if timed_out else Match.Status.FINISHED
            match.finished_at = timezone.now()
            match_finished.send(sender=Match, match=match)
        match_store.write_action(match, rows, finished=finished)
        _after_commit(match, rows)
    return ActionResult(match.id, rows[0].seq, rows[-1].seq, events=[event_row_to_wire(r) for r in rows])


@dataclass(frozen=True)
class ActionRequest:
    """One action of :func:`match_apply_actions` (the arguments of :func:`match_apply_action`)."""
    match_id: object
    role: str
    action: dict
    client_action_id: str = ""
    expected_seq: int | None = None


def match_apply_actions(requests: list[ActionRequest]) -> list:
    """Apply several seats' actions, each answered as :func:`match_apply_action` answers it alone:
    per request, in order, its :class:`ActionResult`, or the error that call would have raised
    (an :class:`IllegalAction`: nothing of that action changed; or another error of that action
    alone), returned rather than raised. For a caller holding many matches' actions at once (the
    model worker's batch, agents/serving/worker.py).

    Locks and retries: on PostgreSQL, the actions this process can apply to its snapshot of their
    match (the conditional write's conditions; one per match, the first) are written in ONE
    statement (``match_store.write_actions_if_current``: each action's own condition, its own
    outcome, so an action that is stale does not hold back the others; each UPDATE takes its
    match's row lock, held until the caller's transaction ends; give the requests in match id
    order), with no retry; every other action (refused by its condition, not prepared, a second
    one for a match, or any on another database) then takes the locked way of
    :func:`match_apply_action` one by one (``SELECT ... FOR UPDATE``, the duplicate check, the
    stale check), which gives the answer the rules give. A repeated ``client_action_id`` is
    answered as a duplicate, never applied twice. A :class:`DatabaseError` is raised, not
    returned: the caller's transaction may be unusable (the caller may apply them again one by
    one; the client ids make that safe). Broadcasts and wake-ups are sent once the caller's
    transaction commits, as for one action."""
    results: list = [None] * len(requests)
    prepared = []
    if match_store.async_ready():
        taken = set()
        for i, req in enumerate(requests):
            try:
                _check_envelope(req.action, req.client_action_id)
            except IllegalAction as exc:
                results[i] = exc
                continue
            if req.role == SYSTEM or str(req.match_id) in taken:
                continue
            try:
                ready = _prepare_if_current(req.match_id, req.role, req.action, req.client_action_id, req.expected_seq)
            except Exception:   # the locked way below raises it again, as the single call would
                ready = None
            if ready is not None:
                taken.add(str(req.match_id))
                prepared.append((i, *ready))
    if prepared:
        written = match_store.write_actions_if_current(
            [(match, rows, base_seq, requests[i].role, requests[i].client_action_id)
             for i, match, rows, base_seq in prepared])
        for (i, match, rows, _base), done in zip(prepared, written):
            if done:
                _after_commit(match, rows)
                results[i] = ActionResult(match.id, rows[0].seq, rows[-1].seq,
                                          events=[event_row_to_wire(r) for r in rows])
    for i, req in enumerate(requests):
        if results[i] is not None:
            continue
        try:
            results[i] = match_apply_action(match_id=req.match_id, role=req.role, action=req.action,
                                            client_action_id=req.client_action_id, expected_seq=req.expected_seq,
                                            try_conditional=False)
        except DatabaseError:
            raise
        except Exception as exc:
            results[i] = exc
    return results


def _check_envelope(action, client_action_id) -> None:
    if not isinstance(action, dict):
        raise IllegalAction("bad_action", "An action must be a JSON object.")
    if not isinstance(client_action_id, str) or len(client_action_id) > 64:
        raise IllegalAction("bad_action_id", "An action id must be text of at most 64 characters.")


def _prepare_if_current(match_id, role: str, action: dict, client_action_id: str,
                        expected_seq: int | None):
    """The action applied to this process's last snapshot of the match: ``(match, rows, base_seq)``
    ready for the conditional write, or None when the locked way must decide."""
    match = match_store.cached_match(match_id)
    if match is None or (expected_seq is not None and match.seq != expected_seq):
        return None
    spec = get_game(match.game_id)
    if role not in spec.roles:
        return None
    t = now_ms()
    try:
        stamped = {**spec.actions.validate(action), "at": t}
        new_state, events = spec.rules.apply(match.state, role, stamped)
    except IllegalAction:
        return None   # perhaps only on this snapshot: the locked way answers from the current one
    if not events or spec.rules.is_over(new_state):
        return None   # the end of a match also updates its participants: the locked way does it
    base_seq = match.seq
    rows = _rows(match, base_seq + 1, events, actor=role, t=t, action=stamped, client_action_id=client_action_id)
    match._turn_taken = turn_taken(spec.rules, match.state, new_state, role, stamped["type"])
    match.state = new_state
    match.seq = rows[-1].seq
    match.outcome = spec.rules.outcome(new_state)
    return match, rows, base_seq


def _apply_if_current(match_id, role: str, action: dict, client_action_id: str,
                      expected_seq: int | None) -> ActionResult | None:
    """The action written in one conditional statement; None (nothing written) when the locked
    way must decide."""
    prepared = _prepare_if_current(match_id, role, action, client_action_id, expected_seq)
    if prepared is None:
        return None
    match, rows, base_seq = prepared
    if not match_store.write_action_if_current(match, rows, base_seq=base_seq, role=role,
                                               client_action_id=client_action_id):
        return None
    _after_commit(match, rows)
    return ActionResult(match.id, rows[0].seq, rows[-1].seq, events=[event_row_to_wire(r) for r in rows])


async def match_apply_action_async(*, match_id, role: str, action: dict, client_action_id: str = "") -> ActionResult:
    """``match_apply_action`` for a seat's consumer, on the server's event loop: the one write
    path of a person's action.

    Locks and retries, in order:

    * an ``asyncio.Lock`` per match and process (``_match_locks``): one action of a match at a
      time in this process, so that two seats acting at once do not both start from the same
      snapshot (one of them would be refused and take the locked way; under load, more would);
    * up to ``LOOP_WRITE_ATTEMPTS`` conditional writes on the loop (live/pg_async.py, psycopg 3
      through psycopg_pool; autocommit, so one statement is one transaction; the UPDATE's row
      lock makes the check and the write one step, and is held only for that statement); after a
      refusal the current snapshot is read (one statement, no lock) and the action applied to it
      again;
    * otherwise (no current snapshot here, a refusal, the match's end, the pool or database
      unavailable) ``match_apply_action`` in a database thread, which takes the row lock
      (``SELECT ... FOR UPDATE``) until its commit and gives the answer the rules give.

    Nothing is retried after an error on the locked way: the consumer asks its client to re-send
    the action with the same id, and the duplicate check answers it if it was committed.
    """
    locked = partial(database_sync_to_async(match_apply_action, thread_sensitive=False), match_id=match_id,
                     role=role, action=action, client_action_id=client_action_id)
    _check_envelope(action, client_action_id)
    if role == SYSTEM or not match_store.async_ready():
        return await locked()
    # One action of a match at a time in this process: two seats acting at the same moment would
    # otherwise both start from the same snapshot, and one of them would be refused and retried
    # the expensive way (and under load, more of them would: the retries feed the backlog).
    key = (asyncio.get_running_loop(), str(match_id))   # an asyncio lock belongs to one loop
    lock = _match_locks.get(key)
    if lock is None:
        lock = _match_locks[key] = asyncio.Lock()
    async with lock:
        return await _apply_on_loop(match_id, role, action, client_action_id, locked)


_match_locks: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


LOOP_WRITE_ATTEMPTS = 3


async def _apply_on_loop(match_id, role: str, action: dict, client_action_id: str, locked) -> ActionResult:
    """Up to ``LOOP_WRITE_ATTEMPTS`` conditional writes; after a refusal, the current snapshot is
    read (one statement, no lock) and the action applied to it again. A refusal costs two
    statements on the loop instead of the locked way's transaction in a thread, which matters
    when the seats of a match are on different processes and a snapshot is often just overtaken."""
    written = False
    for _ in range(LOOP_WRITE_ATTEMPTS):
        prepared = _prepare_if_current(match_id, role, action, client_action_id, None)
        if prepared is None:
            break
        match, rows, base_seq = prepared
        try:
            written = await asyncio.shield(match_store.write_action_if_current_async(
                match, rows, base_seq=base_seq, role=role, client_action_id=client_action_id))
            # Refused: another write came first, or the match ended, or the id is a repeat. Only
            # a newer active snapshot is worth another try; the locked way answers the rest.
            if written or not await asyncio.shield(match_store.refresh_async(match_id, base_seq)):
                break
        except pg_async.Unavailable:
            break
    if not written:
        return await locked(try_conditional=False)
    send = _announcement(match, rows)
    if send.wakes_agents:
        await asyncio.get_running_loop().run_in_executor(None, send)
    else:
        send()
    return ActionResult(match.id, rows[0].seq, rows[-1].seq, events=[event_row_to_wire(r) for r in rows])


# Failures after which an action may or may not have been committed, and trying it again later
# may succeed: the client is asked to re-send it with the same id (the duplicate check decides).
# (OSError covers ConnectionError and TimeoutError.)
TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (OperationalError, InterfaceError, OSError)


def action_outcome(*, match_id, role: str, client_action_id: str) -> int | None:
    """The last seq of this seat's committed action ``client_action_id``, or None when the log
    has no such action (it was not applied). For answering an action whose write failed."""
    match = Match.objects.only("id", "seq").filter(pk=match_id).first()
    if match is None or not client_action_id:
        return None
    first = match_store.previous_action_seq(match.id, role, client_action_id)
    return None if first is None else _duplicate_result(match, first).last_seq


def _duplicate_result(match: Match, first_seq: int) -> ActionResult:
    """The outcome of an action already applied: the seq range its events took."""
    later = (MatchEvent.objects.filter(match=match, seq__gt=first_seq)
             .exclude(action=None).order_by("seq").values_list("seq", flat=True)[:1])
    last = (later[0] - 1) if later else match.seq
    return ActionResult(match.id, first_seq, last, duplicate=True)


@transaction.atomic
def match_abort(*, match_id, reason: str, role: str = SYSTEM) -> Match:
    """End a match early (a partner left, a researcher stopped it). Nothing logged is removed."""
    match = Match.objects.select_for_update().get(pk=match_id)
    if match.status != Match.Status.ACTIVE:
        return match
    rows = _rows(match, match.seq + 1, [Event("match_aborted", {"reason": reason, "by": role})],
                 actor=role, t=now_ms())
    MatchEvent.objects.bulk_create(rows)
    match.seq = rows[-1].seq
    match.status = Match.Status.ABORTED
    match.finished_at = timezone.now()
    match.save(update_fields=["seq", "status", "finished_at", "updated_at"])
    match_finished.send(sender=Match, match=match, aborted_as=reason, by=role)
    _after_commit(match, rows)
    return match


# The abort reason of a match in which a seat never connected (live/presence.py aborts it).
ABSENT_REASON = "partner_never_joined"


def never_connected(seat: Seat) -> bool:
    """A seat whose game page never opened its websocket (live/presence.py)."""
    return seat.connected == 0 and seat.last_seen_at is None


def match_staller(match: Match, *, human_roles: set[str], now=None) -> str:
    """The human seat that stalled ``match`` (loaded in full), or "": the one the watchdog recorded
    (``stalled_role``), else a seat due whose turn clock has run out by ``now`` (the watchdog has
    not come by yet). A seat whose partner had left before its clock ran out did not stall: the
    partner left first."""
    if match.stalled_role:
        return match.stalled_role if match.stalled_role in human_roles else ""
    if match.turn_limit is None or match.turn_since is None:
        return ""
    ran_out = match.turn_since + match.turn_limit
    if ran_out > (now or timezone.now()):
        return ""
    due = [r for r in get_game(match.game_id).rules.to_act(match.state) if r in human_roles]
    if not due:
        return ""
    left_first = (Seat.objects.filter(match_id=match.id, kind=Seat.Kind.HUMAN, connected=0, left_at__lte=ran_out)
                  .exclude(role=due[0]).exists())
    return "" if left_first else due[0]


@transaction.atomic
def match_turn_timed_out(*, match_id, now=None) -> str:
    """A person did not take their turn within the match's turn limit (the watchdog calls this):
    record who (``stalled_role``, ``stalled_at``) and tell both seats (a ``turn_timed_out`` event,
    which offers the partner to end the game, ``match_end_stalled``). Returns ``turn_timed_out``,
    or ``not_due`` (the turn was taken, the partner had left first, or it is already recorded).
    The inactivity clock (``updated_at``) is not restarted."""
    now = now or timezone.now()
    match = Match.objects.select_for_update().filter(pk=match_id, status=Match.Status.ACTIVE).first()
    if match is None or match.stalled_role:
        return "not_due"
    humans = set(Seat.objects.filter(match=match, kind=Seat.Kind.HUMAN).values_list("role", flat=True))
    role = match_staller(match, human_roles=humans, now=now)
    if not role:
        return "not_due"
    limit_s = int(match.turn_limit.total_seconds())
    rows = _rows(match, match.seq + 1, [Event("turn_timed_out", {"role": role, "limit_s": limit_s})],
                 actor=SYSTEM, t=now_ms())
    MatchEvent.objects.bulk_create(rows)
    match.seq = rows[-1].seq
    Match.objects.filter(pk=match.pk).update(seq=match.seq, stalled_role=role, stalled_at=now)
    log.info("match %s: the %s did not take their turn within %d s", match.id, role, limit_s)
    _after_commit(match, rows)
    return "turn_timed_out"


def stall_offer(*, match: Match, role: str, now=None) -> str:
    """The seat that ``role`` may end ``match`` over (it has stalled and is still due, its turn
    clock past the limit), or "". ``match`` loaded in full."""
    if match.status != Match.Status.ACTIVE:
        return ""
    humans = set(Seat.objects.filter(match=match, kind=Seat.Kind.HUMAN).values_list("role", flat=True))
    now = now or timezone.now()
    staller = match_staller(match, human_roles=humans, now=now)
    if not staller or staller == role or role not in humans:
        return ""
    still_due = (staller in get_game(match.game_id).rules.to_act(match.state) and match.turn_since is not None
                 and match.turn_limit is not None and match.turn_since + match.turn_limit <= now)
    return staller if still_due else ""


def match_end_stalled(*, match_id, role: str) -> bool:
    """The partner who waited (``role``) ends the match because the other seat did not take its
    turn in time: aborted as ``partner_stalled``; ``role`` is paid as the partner of a staller
    (its game counts), the staller ends as ``timed_out``. False (nothing changed) when there is
    no such offer now (the staller has taken the turn, or the match is over)."""
    with transaction.atomic():
        match = Match.objects.select_for_update().filter(pk=match_id).first()
        if match is None or not stall_offer(match=match, role=role):
            return False
        match_abort(match_id=match_id, reason="partner_stalled", role=role)
    return True


def match_time_up(*, match_id) -> str:
    """The game clock ran out: end the match through the rules (a no-op if it already ended)."""
    try:
        result = match_apply_action(match_id=match_id, role=SYSTEM, action={"type": "time_up"},
                                    client_action_id="time_up")
    except IllegalAction as exc:
        return exc.code
    return "already" if result.duplicate else "ended"


def seat_presence(*, seat_id: int, connected: bool) -> int:
    """Count a seat's open connections (a reload opens the new one before the old one closes);
    returns how many remain, so 'partner left' is only said when the last one closes."""
    now = timezone.now()
    with transaction.atomic():
        if connected:
            Seat.objects.filter(pk=seat_id).update(connected=F("connected") + 1, last_seen_at=now, left_at=None)
        else:
            Seat.objects.filter(pk=seat_id).update(connected=Greatest(F("connected") - 1, 0), last_seen_at=now)
        seat = Seat.objects.only("connected").get(pk=seat_id)
        if not connected and seat.connected == 0:
            Seat.objects.filter(pk=seat_id).update(left_at=now)
    return seat.connected


def match_replay(match: Match) -> dict:
    """Rebuild a match's state from its log alone (content + seed + logged actions)."""
    spec = get_game(match.game_id)
    state = spec.rules.initial_state(match.content, match.seed, match.config)
    for row in match.events.exclude(action=None).order_by("seq").only("actor", "action"):
        state, _ = spec.rules.apply(state, row.actor, row.action)
    return state
