"""Send committed events to the seats' websocket consumers through the channel layer.

The channel layer only carries notifications: it may drop a message (Channels delivers at most
once). Consumers notice a gap in ``seq`` and fill it from PostgreSQL, so nothing is lost.

Sends run on the server's event loop when there is one (registered by the first consumer), so the
in-memory layer of the embedded mode and the Redis connections are used from their own loop. In a
process without one (a Celery worker, a management command) a private background loop is used,
which keeps one set of Redis connections for the life of the process.
"""
from __future__ import annotations

import asyncio
import logging
import threading

from channels.layers import get_channel_layer

log = logging.getLogger(__name__)
_main_loop: asyncio.AbstractEventLoop | None = None
_own_loop: asyncio.AbstractEventLoop | None = None
_own_lock = threading.Lock()


def group_for(match_id) -> str:
    return f"match.{getattr(match_id, 'hex', str(match_id).replace('-', ''))}"


def set_main_loop(loop: asyncio.AbstractEventLoop) -> None:
    global _main_loop
    _main_loop = loop


def _loop() -> asyncio.AbstractEventLoop:
    global _own_loop
    if _main_loop is not None and _main_loop.is_running():
        return _main_loop
    with _own_lock:
        if _own_loop is None or not _own_loop.is_running():
            _own_loop = asyncio.new_event_loop()
            threading.Thread(target=_own_loop.run_forever, name="broadcast-loop", daemon=True).start()
        return _own_loop


PUBLISH_RETRY_DELAYS_S = (0.1, 0.2, 0.4, 0.8, 1.6, 2.0, 2.0, 2.0)


async def _publish(layer, group: str, message: dict) -> None:
    """``group_send``, tried again over about 9 s while Redis cannot be reached. A batch that is
    lost anyway is read from the log by the seats: the channel layer resyncs its consumers when
    its connection comes back (live/channel_layer.py), and a client that holds an ack for a seq
    it has not seen asks to resume. A repeat is harmless: seats drop a seq they already have."""
    for delay in PUBLISH_RETRY_DELAYS_S:
        try:
            return await layer.group_send(group, message)
        except Exception as exc:
            log.info("publish to %s failed (%r); again in %.1f s", group, exc, delay)
            await asyncio.sleep(delay)
    await layer.group_send(group, message)


def broadcast_events(*, match_id, events: list[dict], views: dict, seq: int, status: str,
                     snapshot: dict | None = None) -> None:
    """Publish one committed batch without waiting for it; never raises.

    The caller (a database thread) does not wait for Redis: order across concurrent commits is
    not guaranteed anyway, and consumers put events back in seq order from the log when they
    see a gap. A failed publish is logged; clients recover from the log.

    ``snapshot`` (server-side only, never sent to a client) is the match's state at ``seq`` as
    ``live.match_store.snapshot_for_broadcast`` makes it, for the other server processes'
    snapshot caches.
    """
    layer = get_channel_layer()
    message = {"type": "match.events", "events": events, "views": views, "seq": seq, "status": status}
    if snapshot is not None:
        message["snapshot"] = snapshot
    loop = _loop()
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    coroutine = _publish(layer, group_for(match_id), message)
    if running is loop:   # called on the event loop itself (the consumer's own write)
        future = loop.create_task(coroutine)
    else:
        future = asyncio.run_coroutine_threadsafe(coroutine, loop)
    future.add_done_callback(lambda f: f.cancelled() or (f.exception() and log.error(
        "broadcast of match %s seq %s failed: %r", match_id, seq, f.exception())))


def publish_notice(*, match_id, message: dict, retry: bool = True) -> None:
    """Publish a notice that is not part of the game (e.g. ``match.owner_changed``: a seat's
    participant moved to another browser) to a match's sockets, without waiting; never raises.
    ``retry=False``: one try (an ephemeral frame, e.g. ``match.typing``, that the next overtakes)."""
    layer = get_channel_layer()
    group = group_for(match_id)
    coroutine = _publish(layer, group, message) if retry else layer.group_send(group, message)
    future = asyncio.run_coroutine_threadsafe(coroutine, _loop())
    future.add_done_callback(lambda f: f.cancelled() or (f.exception() and log.info(
        "notice to match %s failed: %r", match_id, f.exception())))
