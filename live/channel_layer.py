"""The full stack's channel layer: channels_redis's pub/sub layer whose publishes run side by side.

``RedisPubSubChannelLayer`` (channels_redis 4.3) sends every ``send`` and ``group_send`` through
``RedisSingleShardConnection.publish``, which holds the shard's ``asyncio.Lock`` across the Redis
round trip: one publish in flight per server process, every other one queued behind it (and behind
the subscribe or unsubscribe of a seat that joins or leaves). Under load that queue, not Redis, was
most of the delay between a commit and the partner seeing it (docs/bench.md: the partner's p50 at
saturation halved without it).

Here a publish goes straight through the shard's ``redis.asyncio.Redis`` client, whose connection
pool (``max_connections`` in the host config) lets many run at once; beyond the pool's size a
publish waits for a free connection. The lock still guards
subscriptions, which share one pub/sub connection. Publishing concurrently changes no guarantee the
project relies on: Redis pub/sub never promised delivery or order across publishers, and the
consumer already puts batches back in ``seq`` order and fills gaps from the log
(live/consumers.py).

A Redis restart: channels_redis's receive loop logs the lost connection and keeps polling a
pub/sub object that may never subscribe again (a restart left 26 of 50 matches without live
events). Here the receive loop of each shard, on any error, opens a new pub/sub connection
(retrying with backoff while Redis is away), subscribes again to every channel and group this
process holds, and then tells every consumer of the process (a ``match.resync`` message on its
channel) to read from the log what was published while it was not listening.

Selected by ``GT_CHANNEL_LAYER=pubsub`` (the default of the full stack); ``core`` selects
``channels_redis.core.RedisChannelLayer`` instead (neither ``core`` nor ``pubsub-stock`` has
this recovery).
"""
from __future__ import annotations

import asyncio
import logging

from channels_redis.pubsub import (RedisPubSubChannelLayer, RedisPubSubLoopLayer, RedisSingleShardConnection,
                                   _wrap_close)

log = logging.getLogger(__name__)
RESYNC = {"type": "match.resync"}


class ResilientShardConnection(RedisSingleShardConnection):
    """One Redis shard's publish client and pub/sub receiver, which recovers from a lost
    connection by itself (module docstring)."""

    async def _do_receiving(self):
        while True:
            try:
                if self._pubsub is not None and self._subscribed_to and not self._pubsub.subscribed:
                    raise ConnectionError("the pub/sub connection lost its subscriptions")
                if self._pubsub is not None and self._pubsub.subscribed:
                    message = await self._pubsub.get_message(ignore_subscribe_messages=True, timeout=0.1)
                    self._receive_message(message)
                else:
                    await asyncio.sleep(0.1)
            except (asyncio.CancelledError, asyncio.TimeoutError, GeneratorExit):
                raise
            except Exception as exc:
                log.warning("channel layer: pub/sub connection lost (%r); reconnecting", exc)
                await self._reconnect()

    def _names_here(self) -> set[str]:
        layer = self.channel_layer
        names = set(layer.channels) | set(layer.groups)
        return {name for name in names if layer._get_shard(name) is self}

    async def _reconnect(self) -> None:
        delay = 0.05
        while True:
            try:
                async with self._lock:
                    old, self._pubsub = self._pubsub, None
                    if old is not None:
                        try:
                            await old.aclose()
                        except Exception:
                            pass
                    self._ensure_redis()
                    self._pubsub = self._redis.pubsub()
                    names = sorted(self._names_here())
                    if names:
                        await self._pubsub.subscribe(*names)
                    self._subscribed_to = set(names)
                break
            except (asyncio.CancelledError, GeneratorExit):
                raise
            except Exception as exc:
                log.info("channel layer: Redis not reachable yet (%r); next try in %.2f s", exc, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 1.0)
        log.warning("channel layer: reconnected, %d subscriptions restored", len(self._subscribed_to))
        self.channel_layer.resync_consumers()


class ConcurrentPublishLoopLayer(RedisPubSubLoopLayer):
    """The per-event-loop half of the layer (channels_redis keeps one per loop)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._shards = [ResilientShardConnection(shard.host, self) for shard in self._shards]
        self._slots: dict[int, asyncio.Semaphore] = {}   # per shard: publishes that may run at once

    def resync_consumers(self) -> None:
        """Ask every consumer of this process to fill from the log what it may have missed."""
        data = self.channel_layer.serialize(RESYNC)
        for queue in list(self.channels.values()):
            queue.put_nowait(data)

    async def _publish(self, channel: str, message: dict) -> None:
        shard = self._get_shard(channel)
        shard._ensure_redis()  # creates the client and its pool on first use; synchronous, so no race
        slots = self._slots.get(id(shard))
        if slots is None:
            # redis-py's asyncio pool raises MaxConnectionsError when it is exhausted instead of
            # waiting; publishes beyond the pool wait here. One connection is left for pub/sub.
            size = shard._redis.connection_pool.max_connections
            slots = self._slots[id(shard)] = asyncio.Semaphore(max(1, min(size - 1, 10_000)))
        data = self.channel_layer.serialize(message)
        async with slots:
            await shard._redis.publish(channel, data)

    async def send(self, channel, message):
        await self._publish(channel, message)

    async def group_send(self, group, message):
        await self._publish(self._get_group_channel_name(group), message)


class ConcurrentPublishChannelLayer(RedisPubSubChannelLayer):
    def _get_layer(self):
        loop = asyncio.get_running_loop()
        try:
            return self._layers[loop]
        except KeyError:
            layer = ConcurrentPublishLoopLayer(*self._args, **self._kwargs, channel_layer=self)
            self._layers[loop] = layer
            _wrap_close(self, loop)
            return layer
