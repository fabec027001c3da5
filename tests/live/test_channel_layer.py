"""The full stack's channel layer against the real Redis: channels_redis's stock pub/sub layer, and
the resync of a process's seats when a layer connection comes back (live/channel_layer.py)."""
from __future__ import annotations

import asyncio
import uuid

import pytest
import redis.asyncio as aioredis
from channels_redis.pubsub import RedisPubSubChannelLayer
from django.conf import settings

from live import channel_layer

pytestmark = pytest.mark.skipif(not settings.REDIS_URL, reason="needs Redis (the full stack)")


def make_layer(**host):
    return RedisPubSubChannelLayer(hosts=[{"address": settings.REDIS_URL, "max_connections": 20,  # fewer than a burst
                                           "redis_connect_func": channel_layer.on_connect, **host}])


def test_the_full_stack_uses_the_stock_layer_with_the_hook():
    config = settings.CHANNEL_LAYERS["default"]
    assert config["BACKEND"] == "channels_redis.pubsub.RedisPubSubChannelLayer"
    assert config["CONFIG"]["hosts"][0]["redis_connect_func"] is channel_layer.on_connect


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


async def test_a_lost_pubsub_connection_comes_back_subscribed_and_resyncs_the_seats(monkeypatch):
    """Redis drops the layer's pub/sub connection (as a restart does; killed here by its client
    name, so that nothing else sharing this Redis is touched): the seat channels still receive
    afterwards, and each seat of the process is sent one ``match.resync``."""
    monkeypatch.setattr(channel_layer, "RESYNC_AFTER_S", 0.2)
    name = f"gt-test-{uuid.uuid4().hex[:12]}"
    layer = make_layer(client_name=name)
    monkeypatch.setattr("channels.layers.get_channel_layer", lambda alias="default": layer)
    admin = aioredis.from_url(settings.REDIS_URL)
    try:
        seat, other = await layer.new_channel(), await layer.new_channel()
        await layer.group_add("gt-test-resync", seat)
        channel_layer.seat_listening(seat)
        await layer.group_send("gt-test-resync", {"type": "x", "n": 1})
        assert (await asyncio.wait_for(layer.receive(seat), 5))["n"] == 1
        clients = await admin.client_list(_type="pubsub")
        killed = [c["id"] for c in clients if c.get("name") == name]
        assert killed, clients
        for client_id in killed:
            await admin.client_kill_filter(_id=client_id)
        got, n = [], 1
        deadline = asyncio.get_running_loop().time() + 8   # the receiver reconnects within about a second
        while asyncio.get_running_loop().time() < deadline:
            n += 1
            await layer.group_send("gt-test-resync", {"type": "x", "n": n})
            try:
                got.append(await asyncio.wait_for(layer.receive(seat), 0.2))
            except asyncio.TimeoutError:
                pass
            if any(m["type"] == "match.resync" for m in got) and any(m.get("n", 0) > 2 for m in got):
                break
        assert [m for m in got if m["type"] == "match.resync"] == [{"type": "match.resync"}]
        assert any(m["type"] == "x" for m in got)   # subscribed again
        with pytest.raises(asyncio.TimeoutError):   # nothing for a channel that holds no seat
            while True:
                message = await asyncio.wait_for(layer.receive(other), 0.3)
                assert message["type"] != "match.resync"
    finally:
        channel_layer.seat_gone(seat)
        await admin.aclose()
        await layer.flush()
