"""Benchmark-only ASGI entry: the project's application with the changes named in ``GT_BENCH_PATCHES``.

Used by ``bench/relay.py --patches serial,trace`` to measure a
change to the server before (or after) it is made in live/consumers.py. Patches (comma-separated):

* ``serial``: a seat's action is awaited inside the message handler, as before live/consumers.py
  ran actions as tasks; while it waits for PostgreSQL the seat's incoming events (``match_events``)
  wait too. For measuring what running actions as tasks bought.
* ``trace``: no change in behaviour; times the steps of an action inside each server process and
  writes percentiles to ``bench/out/trace-<pid>.json`` (thread-pool wait, the service call, receive
  to ack, the wait for the event loop to start a broadcast, the Redis publish, event stamped to
  consumer, event-loop lag, garbage-collection pauses by generation).
"""
import asyncio
import os

from groundtalk_web.asgi import application  # noqa: F401  (sets Django up)
from live.consumers import MatchConsumer

PATCHES = {p for p in os.environ.get("GT_BENCH_PATCHES", "").split(",") if p}

if "serial" in PATCHES:
    async def on_action(self, message: dict) -> None:
        action_id = await self._accept_action(message)
        if action_id is not None:
            await self._apply_action(action_id, message.get("action"))

    MatchConsumer.on_action = on_action


# ------------------------------------------------------------------------------------------- tracing
if "trace" in PATCHES:
    # Timing only, no change in behaviour: where does an action's time go inside one server process?
    # Writes bench/out/trace-<pid>.json every few seconds (percentiles in ms, over the whole run).
    import json
    import threading
    import time
    from pathlib import Path

    from live import broadcast, services
    _samples: dict[str, list[float]] = {}
    _lock = threading.Lock()
    _out = Path(__file__).resolve().parent / "out" / f"trace-{os.getpid()}.json"

    def _note(name: str, ms: float) -> None:
        with _lock:
            _samples.setdefault(name, []).append(ms)

    def _dump() -> None:
        import numpy as np

        with _lock:
            data = {k: list(v) for k, v in _samples.items()}
        out = {}
        for name, values in data.items():
            a = np.array(values)
            out[name] = {"n": len(a), "p50": round(float(np.percentile(a, 50)), 2),
                         "p99": round(float(np.percentile(a, 99)), 2), "max": round(float(a.max()), 2),
                         "mean": round(float(a.mean()), 2)}
        with _lock:
            out["0 action writes"] = dict(_counts)
        _out.parent.mkdir(exist_ok=True)
        _out.write_text(json.dumps(out, indent=1))

    import contextvars

    _apply = services.match_apply_action
    _called = contextvars.ContextVar("called", default=None)   # copied into the thread by asgiref

    def match_apply_action(**kwargs):
        called = _called.get()
        start = time.monotonic()
        if called is not None:
            _note("1 thread-pool queue wait", 1000 * (start - called))
        try:
            return _apply(**kwargs)
        finally:
            _note("2 match_apply_action in thread (PostgreSQL + ORM + rules)", 1000 * (time.monotonic() - start))

    services.match_apply_action = match_apply_action   # the consumer looks it up at call time

    # How actions were written: the conditional write on the event loop or in a database thread
    # (written, or refused by the database: the row had moved on), or the locked way in a thread.
    from live import match_store
    _counts = {"conditional on the event loop: written": 0, "conditional on the event loop: refused": 0,
               "conditional in a thread: written": 0, "conditional in a thread: refused": 0,
               "thread calls (locked way, or the thread's conditional try)": 0}
    _write_async, _write_sync = match_store.write_action_if_current_async, match_store.write_action_if_current

    async def write_action_if_current_async(*args, **kwargs):
        start = time.monotonic()
        written = await _write_async(*args, **kwargs)
        _note("2a conditional write on the event loop", 1000 * (time.monotonic() - start))
        with _lock:
            _counts["conditional on the event loop: " + ("written" if written else "refused")] += 1
        return written

    def write_action_if_current(*args, **kwargs):
        written = _write_sync(*args, **kwargs)
        with _lock:
            _counts["conditional in a thread: " + ("written" if written else "refused")] += 1
        return written

    def counted_apply(**kwargs):
        with _lock:
            _counts["thread calls (locked way, or the thread's conditional try)"] += 1
        return match_apply_action(**kwargs)

    match_store.write_action_if_current_async = write_action_if_current_async
    match_store.write_action_if_current = write_action_if_current
    services.match_apply_action = counted_apply
    _original_apply = MatchConsumer._apply_action

    async def traced_apply_action(self, action_id, action) -> None:
        started = time.monotonic()
        _called.set(started)
        await _original_apply(self, action_id, action)
        _note("3 action task total (queued behind the seat's earlier actions, to ack sent)",
              1000 * (time.monotonic() - started))

    MatchConsumer._apply_action = traced_apply_action

    _broadcast = broadcast.broadcast_events

    def broadcast_events(*, match_id, events, views, seq, status, snapshot=None):
        from channels.layers import get_channel_layer

        called = time.monotonic()
        layer = get_channel_layer()
        message = {"type": "match.events", "events": events, "views": views, "seq": seq, "status": status}
        if snapshot is not None:
            message["snapshot"] = snapshot

        async def send():
            begun = time.monotonic()
            _note("4 broadcast: wait for the event loop to start the publish", 1000 * (begun - called))
            await layer.group_send(broadcast.group_for(match_id), message)
            _note("5 broadcast: group_send (publish to Redis)", 1000 * (time.monotonic() - begun))

        asyncio.run_coroutine_threadsafe(send(), broadcast._loop())

    broadcast.broadcast_events = broadcast_events
    _match_events = MatchConsumer.match_events

    async def match_events(self, message: dict) -> None:
        newest = max((e.get("t") or 0) for e in message["events"]) if message["events"] else 0
        if newest:
            _note("6 event stamped -> consumer handles it (ms clock)", time.time() * 1000 - newest)
        await _match_events(self, message)

    MatchConsumer.match_events = match_events

    import gc

    _gc_started = {}

    def _gc_timer(phase: str, info: dict) -> None:
        if phase == "start":
            _gc_started["t"] = time.monotonic()
        elif "t" in _gc_started:
            _note(f"8 garbage collection, generation {info['generation']}",
                  1000 * (time.monotonic() - _gc_started.pop("t")))

    gc.callbacks.append(_gc_timer)
    _connect = MatchConsumer.connect

    async def connect(self):
        global _monitor
        if _monitor is None:
            _monitor = asyncio.ensure_future(_lag_monitor())
        await _connect(self)

    MatchConsumer.connect = connect
    _monitor = None

    async def _lag_monitor() -> None:
        last_dump = time.monotonic()
        while True:
            before = time.monotonic()
            await asyncio.sleep(0.01)
            _note("7 server event-loop lag (sleep 10 ms overshoot)", 1000 * (time.monotonic() - before - 0.01))
            if time.monotonic() - last_dump > 3:
                last_dump = time.monotonic()
                await asyncio.get_running_loop().run_in_executor(None, _dump)
