"""The websocket consumer for a seat: thin (parse, call one service or selector, reply).

Protocol (JSON text frames; docs/protocol.md has the full list):

client -> server
  {"type": "join", "token": SEAT_TOKEN, "last_seq": N | null}
  {"type": "action", "id": CLIENT_ACTION_ID, "action": {"type": ..., ...}}
  {"type": "resume", "last_seq": N}
  {"type": "ping"}
server -> client
  {"type": "joined", "role", "match_id", "game_id", "seq", "status", "view", "events", "reset"}
  {"type": "events", "seq", "status", "view", "events": [{"seq", "type", "actor", "payload", "t"}]}
  {"type": "ack", "id", "seq", "duplicate"}
  {"type": "error", "code", "message", "id"?}
  {"type": "presence", "role", "connected"}      (a partner's socket opened or closed)
  {"type": "typing", "role", "text"}             (an LLM partner writing its reply: the words so far;
                                                  ephemeral, never logged; the final line comes as an event)

Events reach a seat in ``seq`` order with no gaps: the consumer remembers the last seq it sent,
holds a batch that arrives ahead of a missing one for a moment (commits of two seats can publish
out of order), and fills a gap that is still open then (a dropped message) from PostgreSQL.
"""
from __future__ import annotations

import asyncio
import logging
import time
from functools import partial

import orjson
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from channels.consumer import get_handler_name
from django.conf import settings

from live import match_store, ratelimit, selectors, services
from games.base import IllegalAction
from live.broadcast import group_for, set_main_loop
from live.channel_layer import seat_gone, seat_listening
from live.services import project_event
from live import seat_owners

# Database work runs in a thread pool, not the single thread-sensitive thread, so one slow
# query does not hold up every seat of the process.
db = partial(database_sync_to_async, thread_sensitive=False)
logger = logging.getLogger(__name__)


class TokenBucket:
    def __init__(self, rate: float, burst: int):
        self.rate, self.burst = rate, burst
        self.tokens, self.stamp = float(burst), time.monotonic()

    def take(self) -> bool:
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


REORDER_WAIT_S = 0.25
FLOOD_CLOSE_CODE = 4008   # the connection sent more frames than GT_WS_FRAME_RATE/GT_WS_FRAME_BURST allow
JOIN_RATE, JOIN_BURST = 1, 3   # join attempts per connection (each costs a database read)


def _browser_owns(scope, seat) -> bool:
    """Whether the handshake's session cookie is the browser the seat's participant is bound to
    (crowd/identity.py, through live/seat_owners.py); a worker thread: it reads the session store."""
    return seat_owners.seat_allowed(seat_owners.session_from_scope(scope), seat, claim=False)


class MatchConsumer(AsyncWebsocketConsumer):
    seat = None
    seat_alone = False
    sent_seq = 0
    gap_check_pending = False
    flooded = False

    async def dispatch(self, message):
        """Channels' dispatch, without its per-message ``close_old_connections`` hop.

        Channels 4 runs ``close_old_connections`` through the single thread-sensitive sync thread
        before every handler, for every websocket frame and every group message. This consumer
        never touches the database from the event loop's thread (all its queries run through
        ``db(...)``, which closes stale connections in the worker thread itself), so that hop only
        serialised every seat of the process behind one thread: seconds of delay under load
        (docs/bench.md).
        """
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)

    async def connect(self):
        self.match_id = self.scope["url_route"]["kwargs"]["match_id"]
        # Actions, resumes and pings are limited per seat (live/ratelimit.py); these two per connection.
        self.frames = TokenBucket(settings.GT_WS_FRAME_RATE, settings.GT_WS_FRAME_BURST)
        self.joins = TokenBucket(JOIN_RATE, JOIN_BURST)
        self.early: dict[int, dict] = {}
        self.action_lock = asyncio.Lock()
        self.action_tasks: set[asyncio.Task] = set()
        set_main_loop(asyncio.get_running_loop())
        await self.accept()

    async def disconnect(self, code):
        if self.seat is not None:
            seat_gone(self.channel_name)
            try:   # forgotten locally first; the unsubscribe may fail while Redis is away
                await self.channel_layer.group_discard(group_for(self.seat.match_id), self.channel_name)
            except Exception as exc:
                logger.info("group_discard failed: %r", exc)
            remaining = await db(services.seat_presence)(seat_id=self.seat.pk, connected=False)
            if remaining == 0:  # the seat's last connection closed (not a reload that reopened)
                await self._announce_presence(False)

    async def _announce_presence(self, connected: bool) -> None:
        """Tell the partner this seat's socket opened or closed: best effort (not part of the
        game; a broker that is down must not stop a seat from joining)."""
        try:
            await self.channel_layer.group_send(group_for(self.seat.match_id), {
                "type": "match.presence", "role": self.seat.role, "connected": connected,
                "channel": self.channel_name})
        except Exception as exc:
            logger.info("presence of %s not announced: %r", self.seat.role, exc)

    async def send_json(self, data: dict) -> None:
        await self.send(text_data=orjson.dumps(data, option=orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY).decode())

    async def error(self, code: str, message: str, action_id=None) -> None:
        data = {"type": "error", "code": code, "message": message}
        if action_id is not None:
            data["id"] = action_id
        await self.send_json(data)

    async def receive(self, text_data=None, bytes_data=None):
        if self.flooded:   # closing: frames still queued are dropped unread
            return
        if not self.frames.take():   # any frame counts, before it is even parsed
            self.flooded = True
            await self.error("too_many_frames", "Too many messages on this connection; it is closed.")
            return await self.close(code=FLOOD_CLOSE_CODE)
        if text_data is None:
            return await self.error("bad_frame", "Send JSON text frames, not binary.")
        if len(text_data) > settings.GT_WS_MAX_FRAME:
            return await self.error("too_large", f"A message may be at most {settings.GT_WS_MAX_FRAME} bytes.")
        try:
            message = orjson.loads(text_data)
        except orjson.JSONDecodeError:
            return await self.error("bad_json", "That was not valid JSON.")
        if not isinstance(message, dict) or not isinstance(message.get("type"), str):
            return await self.error("bad_message", "A message must be a JSON object with a \"type\".")
        handler = {"join": self.on_join, "action": self.on_action, "resume": self.on_resume,
                   "ping": self.on_ping}.get(message["type"])
        if handler is None:
            return await self.error("unknown_message", f"Unknown message type {message['type'][:40]!r}.")
        await handler(message)

    @staticmethod
    def _last_seq(message: dict):
        value = message.get("last_seq")
        if value is None:
            return None
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise IllegalAction("bad_last_seq", "last_seq must be a whole number of at least 0, or null.")
        return value

    async def on_join(self, message: dict) -> None:
        if self.seat is not None:
            return await self.error("already_joined", "This connection already holds a seat.")
        if not self.joins.take():
            return await self.error("rate_limited", "Too many join attempts on this connection.")
        try:
            last_seq = self._last_seq(message)
        except IllegalAction as exc:
            return await self.error(exc.code, exc.message)
        seat = await db(selectors.seat_by_token)(message.get("token"))
        if seat is None:
            return await self.error("bad_token", "That seat token is not valid.")
        if seat.match_id.hex != self.match_id.replace("-", ""):
            return await self.error("wrong_match", "That seat token belongs to another match.")
        if seat.kind != "human":
            return await self.error("agent_seat", "That seat is played by an agent.")
        if seat.participant_id is not None and not await db(_browser_owns)(self.scope, seat):
            return await self.error("other_browser", "This study is open in another browser.")
        self.seat = seat
        await self.channel_layer.group_add(group_for(seat.match_id), self.channel_name)
        seat_listening(self.channel_name)   # resynced after a Redis restart (live/channel_layer.py)
        connections = await db(services.seat_presence)(seat_id=seat.pk, connected=True)
        self.seat_alone = connections <= 1   # the seat's limits count here, not in Redis (ratelimit.seat_hit)
        await self._announce_presence(True)
        snap = await db(selectors.seat_snapshot)(seat=seat, after_seq=last_seq)
        self.sent_seq = snap["seq"]
        await self.send_json({"type": "joined", "role": seat.role, "match_id": str(seat.match_id),
                              "game_id": seat.match.game_id, **snap})

    async def on_resume(self, message: dict) -> None:
        if self.seat is None:
            return await self.error("not_joined", "Join a seat first.")
        decision = await ratelimit.seat_hit("ws_resume", self.seat.pk, alone=self.seat_alone)   # before the database read
        if not decision.allowed:
            return await self.send_json(ratelimit.ws_error(decision, "Too many resume requests; slow down."))
        try:
            last_seq = self._last_seq(message)
        except IllegalAction as exc:
            return await self.error(exc.code, exc.message)
        snap = await db(selectors.seat_snapshot)(seat=self.seat, after_seq=last_seq)
        self.sent_seq = snap["seq"]
        await self.send_json({"type": "joined", "role": self.seat.role, "match_id": str(self.seat.match_id),
                              "game_id": self.seat.match.game_id, **snap})

    async def on_ping(self, message: dict) -> None:
        if self.seat is not None:   # before joining, only the per-connection frame cap applies
            decision = await ratelimit.seat_hit("ws_ping", self.seat.pk, alone=self.seat_alone)
            if not decision.allowed:
                return await self.send_json(ratelimit.ws_error(decision, "Too many pings; slow down."))
        await self.send_json({"type": "pong", "seq": self.sent_seq})

    async def on_action(self, message: dict) -> None:
        """Check the envelope here; apply the action in a task of its own.

        Channels hands a consumer one message at a time. Were the action awaited here, the
        partner's events (``match_events``) for this seat would wait behind this seat's own
        PostgreSQL transaction. So the action runs as a task; the seat's actions still run one at a
        time and in the order they arrived (``action_lock``), and the task is not cancelled when
        the socket closes: an action that reached the server is applied even if its ack cannot be
        delivered (the client re-sends it on reconnect and gets ``duplicate: true``).
        """
        action_id = await self._accept_action(message)
        if action_id is None:
            return
        task = asyncio.get_running_loop().create_task(self._apply_action(action_id, message.get("action")))
        self.action_tasks.add(task)
        task.add_done_callback(self.action_tasks.discard)

    async def _accept_action(self, message: dict) -> str | None:
        """The action's id if the envelope is acceptable (joined, an id, within the rate); else
        the error is sent and None returned."""
        action_id = message.get("id")
        if self.seat is None:
            return await self.error("not_joined", "Join a seat first.", action_id)
        if not isinstance(action_id, str) or not (1 <= len(action_id) <= 64):
            return await self.error("bad_action_id", "Every action needs an \"id\": text of 1 to 64 characters.")
        decision = await ratelimit.seat_hit("ws_action", self.seat.pk, alone=self.seat_alone)   # shared by the seat's sockets
        if not decision.allowed:
            return await self.send_json(ratelimit.ws_error(decision, "Too many actions at once; slow down.", action_id))
        return action_id

    async def _apply_action(self, action_id: str, action) -> None:
        """Apply one action and send exactly one answer for it: ``ack`` when it is committed, the
        rules' or the service's ``error`` when it was refused (nothing changed), and otherwise
        (the database or the broker failed, a bug) whatever the log says: an ``ack`` if the
        action's id is there after all, else ``error`` with ``retryable: true`` (code
        ``unavailable``) when the log could not be read, or a final ``internal_error`` when it
        was read and the action is not in it. A client re-sends a retryable action with the
        same id, and the duplicate check decides."""
        async with self.action_lock:
            try:
                result = await services.match_apply_action_async(
                    match_id=self.seat.match_id, role=self.seat.role, action=action, client_action_id=action_id)
            except IllegalAction as exc:
                reply = {"type": "error", "code": exc.code, "message": exc.message, "id": action_id}
            except Exception as exc:
                reply = await self._answer_after_failure(action_id, exc)
            else:
                reply = {"type": "ack", "id": action_id, "seq": result.last_seq, "duplicate": result.duplicate}
        try:
            await self.send_json(reply)
        except Exception:  # the socket closed meanwhile; the action stands, the client re-sends it
            logger.info("ack for %s not delivered: connection closed", action_id)

    async def _answer_after_failure(self, action_id: str, exc: Exception) -> dict:
        try:
            seq = await db(services.action_outcome)(match_id=self.seat.match_id, role=self.seat.role,
                                                    client_action_id=action_id)
        except Exception as lookup_exc:
            logger.warning("action %s of match %s: %r; the log cannot be read (%r): asking for a retry",
                           action_id, self.seat.match_id, exc, lookup_exc)
            return {"type": "error", "code": "unavailable", "retryable": True, "id": action_id,
                    "message": "The server could not confirm this action; it is being sent again."}
        if seq is not None:
            logger.warning("action %s of match %s was committed before %r", action_id, self.seat.match_id, exc)
            return {"type": "ack", "id": action_id, "seq": seq, "duplicate": True}
        if isinstance(exc, services.TRANSIENT_ERRORS):
            return {"type": "error", "code": "unavailable", "retryable": True, "id": action_id,
                    "message": "The server could not take this action just now; it is being sent again."}
        logger.exception("action %s of match %s failed and was not applied", action_id, self.seat.match_id,
                         exc_info=exc)
        return {"type": "error", "code": "internal_error", "retryable": False, "id": action_id,
                "message": "The server could not apply this action. Please try something else."}

    async def match_owner_changed(self, message: dict) -> None:
        """A seat's participant moved to another browser (crowd/identity.py): a socket of the
        seat whose browser no longer owns it is told so and closed."""
        if self.seat is None or self.seat.pk != message.get("seat"):
            return
        if not await db(_browser_owns)(self.scope, self.seat):
            await self.error("other_browser", "This study is now open in another browser.")
            await self.close(code=4003)

    async def match_presence(self, message: dict) -> None:
        """A partner's connection opened or closed (not logged: presence is not part of the game)."""
        if self.seat is None:
            return
        if message["role"] == self.seat.role:   # another socket of this seat: count its limits in Redis
            if message["connected"] and message.get("channel") != self.channel_name:
                self.seat_alone = False
            return
        await self.send_json({"type": "presence", "role": message["role"], "connected": message["connected"]})

    async def match_typing(self, message: dict) -> None:
        """An agent partner is writing its reply (agents/llm/: the partial text of its role's
        ``stream_field``, or "" while it thinks): forwarded to the OTHER seats' sockets only, as it
        is; never logged, never part of the match's log or exports."""
        if self.seat is None or message.get("role") == self.seat.role:
            return
        await self.send_json({"type": "typing", "role": message.get("role"), "text": message.get("text") or ""})

    async def match_events(self, message: dict) -> None:
        """A committed batch of events from the channel layer: it may arrive late, twice, out of
        order (two seats' commits race to publish) or not at all.

        Batches are sent in seq order. A batch that arrives ahead of a missing one waits up to
        ``REORDER_WAIT_S`` for it; then the gap is filled from the log.
        """
        if self.seat is None:
            return
        # Perhaps a commit by another process: keep the snapshot that came with it for this
        # process's next conditional write on the match (or forget the out-of-date one).
        match_store.remember_broadcast(self.seat.match_id, message["seq"], message.get("snapshot"))
        if message["seq"] <= self.sent_seq:
            return
        if message["events"][0]["seq"] > self.sent_seq + 1:
            self.early[message["seq"]] = message
            if not self.gap_check_pending:
                self.gap_check_pending = True
                loop = asyncio.get_running_loop()
                loop.call_later(REORDER_WAIT_S, lambda: loop.create_task(
                    self.channel_layer.send(self.channel_name, {"type": "match.gap_check"})))
            return
        await self._send_batch(message)
        await self._send_early()

    async def _send_batch(self, message: dict) -> None:
        role = self.seat.role
        events = [e for e in message["events"] if e["seq"] > self.sent_seq]
        self.sent_seq = message["seq"]
        await self.send_json({"type": "events", "seq": message["seq"], "status": message["status"],
                              "view": message["views"].get(role),
                              "events": [project_event(e, role) for e in events]})

    async def _send_early(self) -> None:
        """Send held batches that have become contiguous; drop ones already covered."""
        while self.early:
            first = min(self.early)
            if first <= self.sent_seq:
                del self.early[first]
                continue
            if self.early[first]["events"][0]["seq"] > self.sent_seq + 1:
                return
            await self._send_batch(self.early.pop(first))

    async def match_resync(self, message: dict) -> None:
        """The channel layer's Redis connection was lost and is back (live/channel_layer.py):
        events may have been published while this process was not listening. Read them from the
        log, as for a gap."""
        if self.seat is None:
            return
        self.early.clear()
        await self._fill_from_log()

    async def match_gap_check(self, message: dict) -> None:
        """The wait for a missing batch is over: read what is still missing from the log."""
        self.gap_check_pending = False
        if not self.early or self.seat is None:
            return
        self.early.clear()
        await self._fill_from_log()

    async def _fill_from_log(self) -> None:
        """Send this seat every event after ``sent_seq`` from the log (or a fresh snapshot)."""
        snap = await db(selectors.seat_snapshot)(seat=self.seat, after_seq=self.sent_seq)
        if snap["seq"] <= self.sent_seq:
            return
        self.sent_seq = snap["seq"]
        if snap["reset"]:
            return await self.send_json({"type": "joined", "role": self.seat.role, "match_id": str(self.seat.match_id),
                                         "game_id": self.seat.match.game_id, **snap})
        await self.send_json({"type": "events", "seq": snap["seq"], "status": snap["status"], "view": snap["view"],
                              "events": snap["events"]})
