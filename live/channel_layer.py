"""What the full stack adds to channels_redis's stock pub/sub layer: a resync after Redis comes back.

The layer is ``channels_redis.pubsub.RedisPubSubChannelLayer`` as shipped (groundtalk_web/settings.py),
configured with the same Redis listed ``GT_LAYER_SHARDS`` times: each shard publishes one message at
a time, so that many publishes are in flight per process (public configuration, no subclass).
When Redis restarts, redis-py reconnects the layer's pub/sub connection by itself and subscribes
it again to every channel and group it had (``PubSub.on_connect``), but whatever was published
while it was away is gone: a seat that missed the last event of its match would wait for it
forever (a restart once left 26 of 50 matches without live events).

The hook is redis-py's public ``redis_connect_func`` connection option, given in the layer's host
config: redis-py calls :func:`on_connect` instead of ``Connection.on_connect`` each time one of
the layer's connections connects. A connection that connects while seats listen may follow a
lost session (Redis restarted, the network broke, Redis dropped the subscriber), so every seat
consumer of this process is sent a ``match.resync`` message (live/consumers.py) and reads from the log what was published
while it was not listening (as for a gap in ``seq``).
"""
from __future__ import annotations

import asyncio
import logging

log = logging.getLogger(__name__)
RESYNC = {"type": "match.resync"}
RESYNC_AFTER_S = 1.5   # the layer's receiver polls every 0.1 s, and waits 1 s after an error
# The resync itself travels through Redis to the seat's channel, on that channel's shard: a shard
# whose pub/sub connection subscribes again later than the others would drop it. So it is sent
# once more this much later (reading the log again finds nothing when the first one arrived).
RESYNC_AGAIN_S = 5.0

_seats: dict[asyncio.AbstractEventLoop, set[str]] = {}   # per event loop: consumers holding a seat
_pending: dict[asyncio.AbstractEventLoop, asyncio.TimerHandle] = {}


def seat_listening(channel_name: str) -> None:
    """A consumer of this loop holds a seat and listens to its match's group."""
    _seats.setdefault(asyncio.get_running_loop(), set()).add(channel_name)


def seat_gone(channel_name: str) -> None:
    _seats.get(asyncio.get_running_loop(), set()).discard(channel_name)


async def on_connect(connection) -> None:
    """redis-py's ``redis_connect_func``: set the connection up as redis-py does by default, then,
    if this loop already holds seats, resync them ``RESYNC_AFTER_S`` later.

    Any connection that connects while seats listen counts, not only one connecting a second time:
    when Redis drops the pub/sub connection alone (a restart, or Redis closing a subscriber whose
    output buffer overflowed), channels_redis opens a new pub/sub object, which may take a
    connection the pool never used before. A connect that lost nothing (a shard's first publish
    connection while seats already listen) costs one read of the log per seat, which finds
    nothing new."""
    await connection.on_connect()
    loop = asyncio.get_running_loop()
    if not _seats.get(loop):
        return
    log.info("channel layer: a Redis connection (re)connected while seats listen; resyncing this process's seats")
    # After a restart every connection of the layer reconnects, the pub/sub one when its receiver
    # next polls; each reconnect puts the resync off, so it runs once, after the pub/sub
    # connection has subscribed again (redis-py does that right after this function returns).
    pending = _pending.pop(loop, None)
    if pending is not None:
        pending.cancel()
    _pending[loop] = loop.call_later(RESYNC_AFTER_S, lambda: loop.create_task(resync_seats(again=True)))


async def resync_seats(again: bool = False) -> None:
    """Ask every seat consumer of this loop to fill from the log what it may have missed; with
    ``again``, once more ``RESYNC_AGAIN_S`` later (unless a newer reconnect scheduled its own)."""
    from channels.layers import get_channel_layer   # here: settings.py imports this module

    loop = asyncio.get_running_loop()
    if again:
        _pending[loop] = loop.call_later(RESYNC_AGAIN_S, lambda: loop.create_task(resync_seats()))
    layer = get_channel_layer()
    for name in list(_seats.get(loop, ())):
        try:
            await layer.send(name, RESYNC)
        except Exception as exc:   # Redis away again: the next reconnect resyncs
            log.info("resync of %s not sent: %r", name, exc)
            return
