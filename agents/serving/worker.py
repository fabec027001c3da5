"""The model worker: one model family per process, warmed up before it takes a turn, turns of
concurrent matches batched into one ``act_batch`` call (``manage.py model_worker --family KEY``).

Why a consumer loop of its own rather than a Celery worker (docs/agents.md, "The model worker"):
Celery hands a worker one message per task call; the messages it has prefetched sit in its
consumer's buffer, out of a task's reach, so a task cannot wait a few milliseconds for the turns of
other matches and run them together. ``celery-batches`` buffers requests and flushes them on a
periodic timer (not a window that opens with the first turn, as Triton's and TorchServe's dynamic
batching do), calls itself experimental, and a Celery worker consumes as soon as it starts, before a
warm-up could have run. So the worker reads the same queue with kombu (Celery's own messaging
library) directly:

* the turns are the usual Celery task messages (``agents.agent_take_turn`` with
  ``(match_id, role, seq)``), published by ``agents.dispatch.wake_agents`` on the family's queue
  ``model.<family_key>``: nothing changes on the web side, and any ordinary worker could serve the
  queue too (one turn at a time);
* the family is loaded and warmed up first; only then does the worker declare the queue, start
  consuming and heartbeat (agents/liveness.py: a model queue has a worker once it is warm);
* the first turn opens a window of ``wait_ms``; when it closes, the turns already waiting in the
  queue are taken too (one Redis round trip each, until none is there at once), and the batch runs
  with up to ``batch_size`` turns. Turns that queued while a batch ran
  thus join the next one instead of waiting for windows of their own;
* the batch's matches are read in ONE statement (``match_store.load_matches``: a snapshot this
  process already holds at that seq is not sent again, nor a static part it has); each turn is
  checked against the match as it is now (still active, still at the turn's seq, the role still
  to act; otherwise stale and dropped), the views go to ONE ``act_batch`` call, and the answers
  are submitted through ``live.services.match_apply_actions`` with each turn's ``expected_seq``
  (client id ``agent:<role>:<seq>``: a redelivered turn is a no-op);
* the batch's answers are written in ONE transaction (one commit: on a small server the commits'
  flushes are most of a write's cost; matches in id order so that two workers never wait on each
  other), with the model's record on seats it plays for the first time: from the snapshot the
  batch read, ONE statement writes every answer whose match is still at that snapshot (each with
  its own condition, as a person's action on the server's fast path: a stale one does not hold
  back the others), and the rest take the locked way one by one (and are then answered as stale,
  duplicate or refused, as alone); the broadcasts and the next turns' wake-ups are sent once it
  commits (write, then send). A person acting on one of these matches meanwhile waits for that
  commit. Should the transaction fail as a whole (the database restarted, a deadlock), each turn
  is submitted again on its own (``match_apply_action``): the client ids make that safe;
* a model that raises, or answers the wrong number of actions, or an answer the rules refuse:
  the agent's fallback (a rule agent) acts at once (``agent_fallback_turn``, reason ``error`` or
  ``illegal``; the person sees the notice). A model that is slow is overtaken by the watchdog's
  fallback in the web process after ``timeout_s``; its late answer is then stale;
* messages are taken without acknowledgements (``no_ack``). kombu's Redis transport emulates
  acknowledgements with two more Redis round trips per message (an unacked index written on
  delivery, cleared on ack), which on a busy small server were half of a large batch's time; and
  what they would buy does not apply here: a message of a worker that died comes back only after
  the visibility timeout (an hour), long after the watchdog's fallback played that turn
  (``timeout_s``; the person is told). A worker that is stopped plays the turns it holds before it
  exits; one that loses the broker still plays them (they need only the database).

Each turn writes one timing line (JSON, logger ``agents.serving.timings`` at INFO, and the file
``--timings`` names): ``queue_ms`` (due, ``Match.agent_due_since``, to picked up), ``window_ms``
(picked up to the batch's start), ``read_ms`` (the batch's database read), ``model_ms`` (the
batch's ``act_batch``), ``submit_ms`` (the batch's writes, this turn's among them, before the
commit; a fallback's write added; turn by turn: this turn's write), ``total_ms`` (due to committed) and
``overhead_ms`` (``total_ms - model_ms``); each batch writes one ``batch`` line with its size,
``read_ms``, ``model_ms``, ``submit_ms`` (all its writes and the commit, with the broadcasts sent
on it) and ``total_ms``.
"""
from __future__ import annotations

import json
import logging
import os
import signal
import socket
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone

from django.conf import settings
from django.db import DatabaseError, close_old_connections, transaction
from kombu import Connection, Consumer, Exchange, Queue

from agents import liveness
from agents.registry import family_configs
from agents.model_config import ModelAgentConfig
from agents.serving.family import LoadedFamily, load_family, warm_up
from agents.seats import seats_record_model
from live import match_store
from live.models import Match
from games.registry import get_game
from agents.services import agent_fallback_turn
from games.base import IllegalAction
from live.services import ActionRequest, ActionResult, match_apply_action, match_apply_actions

log = logging.getLogger(__name__)
timings_log = logging.getLogger("agents.serving.timings")
TASK_NAME = "agents.agent_take_turn"
RECORDED_SEATS_KEPT = 100_000
DRAIN_POLL_S = 0.002   # after the window: a turn not delivered within this is not "already waiting"


@dataclass
class Turn:
    message: object               # the kombu message (taken without acknowledgement)
    match_id: str
    role: str
    seq: int
    picked_at: float              # time.time() when the worker received it
    picked_mono: float
    timing: dict = field(default_factory=dict)


class ModelWorker:
    """Serve one family's queue (see the module docstring). ``run()`` until ``stop()``."""

    def __init__(self, family_key: str, *, broker_url: str | None = None, timings_path: str | None = None,
                 hostname: str | None = None):
        self.family_key = family_key
        self.configs: list[ModelAgentConfig] = family_configs(family_key)
        self.by_name = {cfg.name: cfg for cfg in self.configs}
        first = self.configs[0]
        self.queue_name = first.queue
        self.batch_size = first.batch_size
        self.wait_s = first.wait_ms / 1000.0
        self.broker_url = broker_url or settings.CELERY_BROKER_URL
        self.timings_path = timings_path
        self.hostname = hostname or f"model.{family_key}@{socket.gethostname()}"
        self.family: LoadedFamily | None = None
        self.stopping = threading.Event()
        self.pending: list[Turn] = []
        self.recorded: set[tuple[str, str]] = set()   # seats this process recorded the model on
        self.batches = 0
        self.heartbeat: liveness.Heartbeat | None = None
        self._timings_file = None

    # ------------------------------------------------------------------------------- start
    def load(self) -> None:
        """Load the family and run the warm-up pass (before any turn is taken)."""
        self.family = load_family(self.configs[0])
        warm_s = warm_up(self.family, self.configs)
        log.warning("model worker %s: %s loaded from %s (sha256 %s) on %s in %.2f s, warm-up %.2f s; agents: %s",
                    self.family_key, self.configs[0].family, self.configs[0].checkpoint, self.family.sha256,
                    self.configs[0].device, self.family.load_s, warm_s, ", ".join(self.by_name))
        self._timing({"event": "ready", "family": self.family_key, "sha256": self.family.sha256,
                      "load_s": round(self.family.load_s, 4), "warmup_s": round(warm_s, 4), "pid": os.getpid()})

    def stop(self, *_args) -> None:
        self.stopping.set()

    # ------------------------------------------------------------------------------- the loop
    def run(self) -> None:
        """Load, warm up, then consume until stopped; reconnects to the broker with a backoff."""
        if self.family is None:
            self.load()
        pause = 0.5
        probe = Connection(self.broker_url)
        lost = (OSError, *probe.connection_errors, *probe.channel_errors)
        probe.release()
        try:
            while not self.stopping.is_set():
                try:
                    with Connection(self.broker_url, heartbeat=0) as conn:
                        conn.ensure_connection(max_retries=1)
                        pause = 0.5
                        self._consume(conn)
                except lost as exc:
                    if self.stopping.is_set():
                        break
                    if self.pending:   # taken already: they need only the database
                        self._run_batch()
                    log.warning("model worker %s: broker connection lost (%r); reconnecting in %.1f s",
                                self.family_key, exc, pause)
                    self.stopping.wait(pause)
                    pause = min(pause * 2, 10.0)
        finally:
            if self.heartbeat is not None:
                self.heartbeat.stop()
            if self._timings_file is not None:
                self._timings_file.close()

    def _consume(self, conn) -> None:
        queue = Queue(self.queue_name, Exchange(self.queue_name, type="direct"), routing_key=self.queue_name)
        with Consumer(conn, queues=[queue], callbacks=[self._on_message], accept=["json"], no_ack=True):
            if self.heartbeat is None:   # warm and consuming: now the queue has a worker
                self.heartbeat = liveness.Heartbeat([self.queue_name], self.hostname)
                self.heartbeat.start()
                log.warning("model worker %s: consuming %s (batch_size %d, wait_ms %g)", self.family_key,
                            self.queue_name, self.batch_size, self.wait_s * 1000)
            while not self.stopping.is_set():
                if self.pending:
                    left = self.pending[0].picked_mono + self.wait_s - time.monotonic()
                    if len(self.pending) >= self.batch_size or left <= 0:
                        self._take_waiting(conn)
                        self._run_batch()
                        continue
                    timeout = max(left, 0.0005)
                else:
                    timeout = 1.0
                try:
                    conn.drain_events(timeout=timeout)
                except socket.timeout:
                    if self.pending and self.wait_s == 0:
                        self._run_batch()
            if self.pending:   # stopping: play the turns taken already
                self._run_batch()

    def _take_waiting(self, conn) -> None:
        """The window closed: add the turns already in the queue (each one round trip), up to
        ``batch_size``, stopping at the first poll that finds none at once."""
        while len(self.pending) < self.batch_size and not self.stopping.is_set():
            before = len(self.pending)
            try:
                conn.drain_events(timeout=DRAIN_POLL_S)
            except socket.timeout:
                return
            if len(self.pending) == before:
                return

    def _on_message(self, body, message) -> None:
        picked, mono = time.time(), time.monotonic()
        try:
            if message.headers.get("task") != TASK_NAME:
                raise ValueError(f"not a {TASK_NAME} message: {message.headers.get('task')!r}")
            args = body[0] if isinstance(body, (list, tuple)) else body.get("args")
            match_id, role, seq = str(args[0]), str(args[1]), int(args[2])
        except Exception as exc:
            log.error("model worker %s: dropping a message it cannot read (%r)", self.family_key, exc)
            return
        self.pending.append(Turn(message, match_id, role, seq, picked, mono))

    # ------------------------------------------------------------------------------- one batch
    def _run_batch(self) -> None:
        turns, self.pending = self.pending, []
        started = time.monotonic()
        close_old_connections()   # a database that restarted: a fresh connection
        # one statement; the answers' conditional writes start from this snapshot (kept in the cache)
        matches = match_store.load_matches({t.match_id for t in turns})
        due, seen, results = [], set(), {}
        for turn in turns:
            match = matches.get(turn.match_id)
            key = (turn.match_id, turn.role, turn.seq)
            if key in seen:
                results[id(turn)] = "duplicate"
                continue
            seen.add(key)
            if (match is None or match.status != Match.Status.ACTIVE or match.seq != turn.seq
                    or turn.role not in get_game(match.game_id).rules.to_act(match.state)):
                results[id(turn)] = "stale"
                continue
            if match.agent_seats.get(turn.role) not in self.by_name:
                log.error("model worker %s: match %s seat %s is played by %r, not by this family", self.family_key,
                          turn.match_id, turn.role, match.agent_seats.get(turn.role))
                results[id(turn)] = "not_ours"
                continue
            due.append((turn, match))
        read_s = time.monotonic() - started
        views = [get_game(m.game_id).rules.view_for(m.state, t.role) for t, m in due]
        model_s, answers, failure = 0.0, [None] * len(due), None
        if due:
            model_started = time.monotonic()
            try:
                answers = self.family.instance.act_batch(views)
                if not isinstance(answers, list) or len(answers) != len(views):
                    raise TypeError(f"act_batch returned {type(answers).__name__} of length "
                                    f"{len(answers) if isinstance(answers, list) else '?'} for {len(views)} views")
            except Exception as exc:
                failure = exc
                log.exception("model worker %s: act_batch failed on %d views; the fallbacks act", self.family_key,
                              len(views))
            model_s = time.monotonic() - model_started
        submit_started = time.monotonic()
        self._submit_all(due, answers, failure, results)
        submitted = time.monotonic()
        self.batches += 1
        self._timing({"event": "batch", "family": self.family_key, "batch": self.batches, "size": len(due),
                      "messages": len(turns), "read_ms": round(1000 * read_s, 3),
                      "model_ms": round(1000 * model_s, 3),
                      "submit_ms": round(1000 * (submitted - submit_started), 3),   # with the commit
                      "total_ms": round(1000 * (time.monotonic() - started), 3),
                      "error": repr(failure) if failure is not None else None})
        due_ids = {id(t) for t, _ in due}
        for turn in turns:
            match = matches.get(turn.match_id)
            since = match.agent_due_since.timestamp() if match is not None and match.agent_due_since else None
            line = {"event": "turn", "family": self.family_key, "batch": self.batches, "match": turn.match_id,
                    "role": turn.role, "seq": turn.seq, "result": results.get(id(turn)), "batch_size": len(due),
                    "window_ms": round(1000 * (started - turn.picked_mono), 3),
                    "read_ms": round(1000 * read_s, 3)}
            if since is not None:
                line["queue_ms"] = round(1000 * (turn.picked_at - since), 3)
            if id(turn) in due_ids:
                line["model_ms"] = round(1000 * model_s, 3)
                line["submit_ms"] = round(turn.timing.get("submit_ms", 0.0), 3)
                if since is not None and "committed_at" in turn.timing:
                    total = 1000 * (turn.timing["committed_at"] - since)
                    line["total_ms"] = round(total, 3)
                    line["overhead_ms"] = round(total - 1000 * model_s, 3)
            self._timing(line)

    def _submit_all(self, due: list, answers: list, failure, results: dict) -> None:
        """Write the batch's answers, and the model on the seats it played for the first time, in
        one transaction (see the module docstring); should that transaction fail as a whole, each
        turn again on its own."""
        order = sorted(range(len(due)), key=lambda i: str(due[i][1].id))   # one lock order for all workers
        try:
            with transaction.atomic():
                acted = self._submit_batch([due[i] for i in order], [answers[i] for i in order], failure, results)
                self._record_seats(acted, in_batch=True)
        except DatabaseError as exc:
            log.warning("model worker %s: the batch's transaction failed (%r); submitting its %d turns one by one",
                        self.family_key, exc, len(due))
            close_old_connections()
            acted = [key for i in order if (key := self._submit_one(*due[i], answers[i], failure, results,
                                                                    in_batch=False))]
            self._record_seats(acted, in_batch=False)
        committed = time.time()
        for turn, _ in due:
            turn.timing["committed_at"] = committed

    def _submit_batch(self, due: list, answers: list, failure, results: dict) -> list[tuple[str, str]]:
        """Inside the batch's transaction: the answers through ``live.services.match_apply_actions``
        (those this process can write from the snapshot the batch read: ONE statement; the others
        the locked way, one by one), then the fallbacks of the answers the rules refused. A database
        error is raised (to :meth:`_submit_all`). Returns the ``(match_id, role)`` the model played."""
        if failure is not None:   # the model failed: every turn's fallback, one by one
            return [key for (turn, match) in due
                    if (key := self._submit_one(turn, match, None, failure, results, in_batch=True))]
        started = time.monotonic()
        playing = [(turn, match, answer) for (turn, match), answer in zip(due, answers) if answer is not None]
        for (turn, _match), answer in zip(due, answers):
            if answer is None:
                results[id(turn)] = "idle"
        outcomes = match_apply_actions([
            ActionRequest(match_id=match.id, role=turn.role, action=answer,
                          client_action_id=f"agent:{turn.role}:{turn.seq}", expected_seq=turn.seq)
            for turn, match, answer in playing])
        written_ms = 1000 * (time.monotonic() - started)
        acted = []
        for (turn, match, _answer), outcome in zip(playing, outcomes):
            turn.timing["submit_ms"] = written_ms   # the batch's writes, this turn's among them
            if isinstance(outcome, ActionResult):
                results[id(turn)] = "acted"
                acted.append((turn.match_id, turn.role))
            elif isinstance(outcome, IllegalAction) and outcome.code in {"stale", "game_over"}:
                results[id(turn)] = "stale"
            elif isinstance(outcome, IllegalAction):
                log.warning("model worker %s: illegal answer in %s (%s: %s); the fallback acts",
                            self.family_key, turn.match_id, outcome.code, outcome)
                fallback_started = time.monotonic()
                results[id(turn)] = "fallback:" + agent_fallback_turn(
                    match_id=match.id, role=turn.role, expected_seq=turn.seq, reason="illegal")
                turn.timing["submit_ms"] = written_ms + 1000 * (time.monotonic() - fallback_started)
            else:
                log.error("model worker %s: turn %s/%s/%s failed: %r", self.family_key, turn.match_id, turn.role,
                          turn.seq, outcome)
                results[id(turn)] = "error"
        return acted

    def _submit_one(self, turn: Turn, match, answer, failure, results: dict, *, in_batch: bool) -> tuple | None:
        """One turn's answer (or its fallback). Each write of ``match_apply_action`` is one
        statement or an atomic block of its own, so a turn that fails leaves nothing behind; a
        database error inside the batch's transaction ends that transaction (``in_batch``: raised
        to :meth:`_submit_all`, which starts again turn by turn). Returns ``(match_id, role)`` when
        the model's answer was played."""
        started, acted = time.monotonic(), None
        try:
            if failure is not None:
                results[id(turn)] = "fallback:" + agent_fallback_turn(
                    match_id=match.id, role=turn.role, expected_seq=turn.seq, reason="error")
            elif answer is None:
                results[id(turn)] = "idle"
            else:
                try:
                    match_apply_action(match_id=match.id, role=turn.role, action=answer,
                                       client_action_id=f"agent:{turn.role}:{turn.seq}", expected_seq=turn.seq)
                    results[id(turn)] = "acted"
                    acted = (turn.match_id, turn.role)
                except IllegalAction as exc:
                    if exc.code in {"stale", "game_over"}:
                        results[id(turn)] = "stale"
                    else:
                        log.warning("model worker %s: illegal answer in %s (%s: %s); the fallback acts",
                                    self.family_key, turn.match_id, exc.code, exc)
                        results[id(turn)] = "fallback:" + agent_fallback_turn(
                            match_id=match.id, role=turn.role, expected_seq=turn.seq, reason="illegal")
        except DatabaseError:
            if in_batch:
                raise
            log.exception("model worker %s: turn %s/%s/%s failed", self.family_key, turn.match_id, turn.role,
                          turn.seq)
            results[id(turn)] = "error"
        except Exception:
            log.exception("model worker %s: turn %s/%s/%s failed", self.family_key, turn.match_id, turn.role,
                          turn.seq)
            results[id(turn)] = "error"
        turn.timing["submit_ms"] = 1000 * (time.monotonic() - started)
        return acted

    def _record_seats(self, acted: list[tuple[str, str]], *, in_batch: bool) -> None:
        """The model's record (checkpoint hash, version) on the seats it played; each seat once per
        process (``self.recorded``), so a batch of seats seen before costs no query."""
        fresh = [key for key in acted if key not in self.recorded]
        try:
            seats_record_model(turns=fresh, record=self.family.seat_record())
        except DatabaseError:
            if in_batch:
                raise
            log.exception("model worker %s: could not record the model on %d seats", self.family_key, len(fresh))
            return
        except Exception:
            log.exception("model worker %s: could not record the model on %d seats", self.family_key, len(fresh))
            return
        if len(self.recorded) > RECORDED_SEATS_KEPT:
            self.recorded.clear()
        self.recorded.update(fresh)

    def _timing(self, line: dict) -> None:
        line = {"at": datetime.now(timezone.utc).isoformat(timespec="milliseconds"), **line}
        text = json.dumps(line, separators=(",", ":"))
        timings_log.info(text)
        if self.timings_path:
            if self._timings_file is None:
                self._timings_file = open(self.timings_path, "a", buffering=1, encoding="utf-8")
            self._timings_file.write(text + "\n")


def serve(family_key: str, *, timings_path: str | None = None) -> None:
    """Run a model worker in this process until SIGTERM or SIGINT."""
    worker = ModelWorker(family_key, timings_path=timings_path)
    signal.signal(signal.SIGTERM, worker.stop)
    signal.signal(signal.SIGINT, worker.stop)
    worker.run()
