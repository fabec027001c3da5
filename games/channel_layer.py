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
(games/consumers.py).

Selected by ``GT_CHANNEL_LAYER=pubsub`` (the default of the full stack); ``core`` selects
``channels_redis.core.RedisChannelLayer`` instead.
"""
from __future__ import annotations

import asyncio

from channels_redis.pubsub import RedisPubSubChannelLayer, RedisPubSubLoopLayer, _wrap_close


class ConcurrentPublishLoopLayer(RedisPubSubLoopLayer):
    """The per-event-loop half of the layer (channels_redis keeps one per loop)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._slots: dict[int, asyncio.Semaphore] = {}   # per shard: publishes that may run at once

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
