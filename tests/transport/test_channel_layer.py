"""live.channel_layer against the real Redis: pub/sub delivery, with publishes that do not queue."""
from __future__ import annotations

import asyncio

import pytest
from django.conf import settings

from live.channel_layer import ConcurrentPublishChannelLayer

pytestmark = pytest.mark.skipif(not settings.REDIS_URL, reason="needs Redis (the full stack)")


def make_layer():
    return ConcurrentPublishChannelLayer(hosts=[{"address": settings.REDIS_URL, "max_connections": 20}])  # fewer than a burst


def test_the_full_stack_uses_it():
    if settings.CHANNEL_LAYER_BACKEND == "pubsub":
        assert settings.CHANNEL_LAYERS["default"]["BACKEND"] == "live.channel_layer.ConcurrentPublishChannelLayer"


async def test_group_messages_reach_every_member_once_even_beyond_the_pool_size():
    layer = make_layer()
    try:
        a, b = await layer.new_channel(), await layer.new_channel()
        await layer.group_add("gt-test-layer", a)
        await layer.group_add("gt-test-layer", b)
        await asyncio.gather(*(layer.group_send("gt-test-layer", {"type": "x", "n": i}) for i in range(200)))
        for channel in (a, b):
            got = sorted([(await asyncio.wait_for(layer.receive(channel), 5))["n"] for _ in range(200)])
            assert got == list(range(200))
        await layer.send(a, {"type": "direct", "n": -1})
        assert (await asyncio.wait_for(layer.receive(a), 5))["n"] == -1
    finally:
        await layer.flush()


async def test_a_publish_does_not_wait_for_the_shard_lock():
    """Stock channels_redis publishes under the shard's lock: one at a time, and none while a
    subscription change holds it. Here a publish goes through while the lock is held."""
    layer = make_layer()
    try:
        channel = await layer.new_channel()
        await layer.group_add("gt-test-lock", channel)
        shard = layer._get_layer()._get_shard(layer._get_layer()._get_group_channel_name("gt-test-lock"))
        async with shard._lock:
            await asyncio.wait_for(layer.group_send("gt-test-lock", {"type": "x", "n": 1}), 2)
        assert (await asyncio.wait_for(layer.receive(channel), 5))["n"] == 1
    finally:
        await layer.flush()
