"""Rate limits on the seat websocket and the limiter itself (live/ratelimit.py).

The algorithm on a fake clock; the Redis backend against the real Redis (keys under a prefix of
this test only, deleted afterwards); limits per seat shared by two sockets; resume and ping floods
refused before any database read; a hostile frame flood closes the socket; a Redis that is down
(or restarts) never refuses a player.
"""
from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import socket
import subprocess
import time
import uuid
from unittest import mock

import pytest
from channels.db import database_sync_to_async
from django.conf import settings

from live import ratelimit, selectors
from live.ratelimit import Decision, Limit, Limiter, MemoryBackend

from tests.support.factories import colors_match
from tests.live.test_consumers import connect as consumer_connect

REDIS_URL = settings.REDIS_URL
needs_redis = pytest.mark.skipif(not REDIS_URL, reason="needs REDIS_URL (the full stack, test.sh)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def delete_prefix(url: str, prefix: str) -> None:
    import redis

    client = redis.Redis.from_url(url, socket_timeout=2)
    try:
        keys = list(client.scan_iter(match=prefix + "*", count=1000))
        if keys:
            client.delete(*keys)
    finally:
        client.close()


@pytest.fixture
async def fresh_limiter():
    """The configured backend with keys of this test only; put back (and cleaned up) afterwards."""
    prefix = f"gt:rl:test-{uuid.uuid4().hex[:12]}:"
    limiter = Limiter(backend=settings.GT_RL_BACKEND, prefix=prefix, redis_url=REDIS_URL,
                      pool_size=settings.GT_RL_REDIS_POOL, timeout_s=settings.GT_RL_REDIS_TIMEOUT_MS / 1000)
    ratelimit.set_limiter(limiter)
    yield limiter
    ratelimit.set_limiter(None)
    if limiter.redis is not None:
        await limiter.redis.aclose()
        limiter.redis.close()
        delete_prefix(REDIS_URL, prefix)


# --- the algorithm ----------------------------------------------------------------------------

class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def test_gcra_allows_the_burst_then_the_rate_and_says_how_long_to_wait():
    clock = Clock()
    mem = MemoryBackend(clock)
    lim = Limit("t", rate=2.0, burst=3)
    assert [mem.hit([("k", lim)]).allowed for _ in range(4)] == [True, True, True, False]
    refused = mem.hit([("k", lim)])
    assert not refused.allowed and refused.retry_after == pytest.approx(0.5)
    assert refused.retry_after_s == 1
    clock.now += 0.49
    assert not mem.hit([("k", lim)]).allowed         # a refusal does not use anything up ...
    clock.now += 0.01
    assert mem.hit([("k", lim)]).allowed             # ... so one more is allowed exactly on time
    assert not mem.hit([("k", lim)]).allowed
    clock.now += 10                                   # a long pause refills the burst, no more
    assert [mem.hit([("k", lim)]).allowed for _ in range(4)] == [True, True, True, False]
    assert mem.hit([("other", lim)]).allowed          # keys are independent


def test_gcra_sustained_rate_is_exact_over_a_long_run():
    clock = Clock()
    mem = MemoryBackend(clock)
    lim = Limit("t", rate=8.0, burst=16)
    allowed = 0
    for _ in range(10_000):                            # 100 per second for 100 s
        allowed += mem.hit([("k", lim)]).allowed
        clock.now += 0.01
    assert allowed == pytest.approx(16 + 8 * 100, abs=1)


def test_several_limits_are_taken_all_or_none():
    clock = Clock()
    mem = MemoryBackend(clock)
    wide, narrow = Limit("a", rate=1.0, burst=10), Limit("b", rate=1.0, burst=2)
    results = [mem.hit([("addr", wide), ("me", narrow)]).allowed for _ in range(3)]
    assert results == [True, True, False]
    # the refused third did not use up the address's allowance: 8 left for someone else
    assert [mem.hit([("addr", wide), (f"other{i}", narrow)]).allowed for i in range(9)] == [True] * 8 + [False]


def test_memory_backend_forgets_full_buckets():
    clock = Clock()
    mem = MemoryBackend(clock)
    lim = Limit("t", rate=10.0, burst=1)
    for i in range(100):
        mem.hit([(f"k{i}", lim)])
    clock.now += 60
    mem.hit([("last", lim)])
    assert list(mem.tats) == ["last"]


def test_rate_zero_or_no_key_means_no_limit():
    limiter = Limiter(backend="memory", prefix="x:")
    off = Limit("t", rate=0, burst=1)
    assert all(limiter.hit((off, "k")).allowed for _ in range(100))
    assert all(limiter.hit((Limit("t", 1, 1), "")).allowed for _ in range(100))


def test_limits_come_from_the_settings(settings):
    settings.GT_RL_ENTRY_PER_MIN, settings.GT_RL_ENTRY_BURST = 90, 7
    assert ratelimit.limit("entry") == Limit("entry", 1.5, 7)
    settings.GT_WS_RATE, settings.GT_WS_BURST = 8.0, 16
    assert ratelimit.limit("ws_action") == Limit("ws_action", 8.0, 16)


# --- Redis ------------------------------------------------------------------------------------

@needs_redis
def test_redis_backend_shares_one_count_between_sync_and_async_clients():
    prefix = f"gt:rl:test-{uuid.uuid4().hex[:12]}:"
    limiter = Limiter(backend="redis", prefix=prefix, redis_url=REDIS_URL, pool_size=4, timeout_s=0.5)
    lim = Limit("t", rate=1.0, burst=3)
    try:
        assert [limiter.hit((lim, "k")).allowed for _ in range(2)] == [True, True]

        async def rest():
            return [(await limiter.ahit((lim, "k"))) for _ in range(2)]

        third, fourth = asyncio.run(rest())
        assert third.allowed and not fourth.allowed
        assert 0.9 < fourth.retry_after <= 1.0
        assert limiter.failures == 0                          # every answer came from Redis
        import redis

        client = redis.Redis.from_url(REDIS_URL)
        ttl = client.pttl(prefix + "t:k")
        assert 2000 < ttl <= 3000                             # the key lives until the bucket is full again
        # all or none in Redis too
        narrow = Limit("n", rate=1.0, burst=1)
        assert limiter.hit((lim, "fresh"), (narrow, "me")).allowed
        assert not limiter.hit((lim, "fresh"), (narrow, "me")).allowed
        assert float(client.get(prefix + "t:fresh")) == pytest.approx(float(client.get(prefix + "n:me")), abs=50)
        client.close()
    finally:
        limiter.redis.close()
        delete_prefix(REDIS_URL, prefix)


@needs_redis
def test_redis_backend_is_exact_under_concurrent_async_checks():
    prefix = f"gt:rl:test-{uuid.uuid4().hex[:12]}:"
    limiter = Limiter(backend="redis", prefix=prefix, redis_url=REDIS_URL, pool_size=4, timeout_s=0.5)
    lim = Limit("t", rate=0.01, burst=25)

    async def many():
        results = await asyncio.gather(*[limiter.ahit((lim, "k")) for _ in range(200)])
        await limiter.redis.aclose()
        return results

    try:
        results = asyncio.run(many())   # 200 checks at once through a pool of 4: they wait, none fails
        assert sum(r.allowed for r in results) == 25 and limiter.failures == 0
    finally:
        limiter.redis.close()
        delete_prefix(REDIS_URL, prefix)


def test_fails_open_quickly_when_redis_is_unreachable(caplog):
    closed = f"redis://127.0.0.1:{free_port()}/0"   # nothing listens there
    limiter = Limiter(backend="redis", prefix="gt:rl:test-down:", redis_url=closed, timeout_s=0.1)
    lim = Limit("t", rate=1.0, burst=50)
    caplog.set_level(logging.WARNING, logger="live.ratelimit")
    start = time.monotonic()
    assert all(limiter.hit((lim, "k")).allowed for _ in range(20))

    async def a():
        return [(await limiter.ahit((lim, "k"))).allowed for _ in range(20)]

    assert all(asyncio.run(a()))
    assert time.monotonic() - start < 1.0                 # one failed try, then the per-process count
    warnings = [r for r in caplog.records if "Redis unreachable" in r.getMessage()]
    assert len(warnings) == 1                             # logged once, not once per request
    # still a limit, counted in this process: a flood is refused even while Redis is away
    assert not all(limiter.hit((lim, "k")).allowed for _ in range(20))


@pytest.mark.skipif(not shutil.which("redis-server"), reason="needs redis-server")
def test_a_redis_restart_never_refuses_and_the_shared_count_comes_back():
    port = free_port()
    url = f"redis://127.0.0.1:{port}/0"

    def start():
        proc = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                                 "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    return proc
            time.sleep(0.05)
        proc.kill()
        raise RuntimeError("redis-server did not start")

    import redis

    proc = start()
    limiter = Limiter(backend="redis", prefix="gt:rl:t:", redis_url=url, timeout_s=0.1)
    lim = Limit("t", rate=1.0, burst=1000)    # each check keeps the key for a second
    try:
        assert limiter.hit((lim, "seat1")).allowed
        assert redis.Redis.from_url(url).exists("gt:rl:t:t:seat1") and limiter.failures == 0
        proc.terminate()
        proc.wait(5)
        start_t = time.monotonic()
        assert all(limiter.hit((lim, "seat1")).allowed for _ in range(50))      # down: allowed
        assert time.monotonic() - start_t < 1.0
        proc = start()
        time.sleep(ratelimit.REDIS_RETRY_S + 0.1)
        failures = limiter.failures
        assert failures >= 1
        assert limiter.hit((lim, "seat1")).allowed
        assert redis.Redis.from_url(url).exists("gt:rl:t:t:seat1")             # counting in Redis again
        assert limiter.failures == failures
    finally:
        limiter.redis.close()
        proc.terminate()
        proc.wait(5)


# --- the seat websocket -----------------------------------------------------------------------

async def connect(match_id, token=None):
    """A socket joined to the seat (if ``token``), through the consumer tests' helper."""
    comm, _ = await consumer_connect(match_id, token)
    return comm


async def replies(comm, n, timeout=10, skip=("events", "presence")):
    got = []
    while len(got) < n:
        msg = await comm.receive_json_from(timeout=timeout)
        if msg["type"] not in skip:
            got.append(msg)
    return got


async def drain(comm, quiet=0.3):
    out = []
    while not await comm.receive_nothing(timeout=quiet):
        out.append(await comm.receive_output())
    return out


@database_sync_to_async
def make_match():
    return colors_match(rounds=3)


@pytest.mark.django_db(transaction=True)
async def test_two_sockets_of_one_seat_share_the_action_limit(settings, fresh_limiter):
    settings.GT_WS_RATE, settings.GT_WS_BURST = 0.01, 6
    match, seats = await make_match()
    first = await connect(match.id, seats["speaker"].token)
    second = await connect(match.id, seats["speaker"].token)
    for i in range(6):
        for j, comm in enumerate((first, second)):
            await comm.send_json_to({"type": "action", "id": f"a{j}-{i}", "action": {"type": "chat", "text": f"m{i}"}})
    got = await replies(first, 6) + await replies(second, 6)
    acks = [m for m in got if m["type"] == "ack"]
    limited = [m for m in got if m["type"] == "error" and m["code"] == "rate_limited"]
    assert len(acks) == 6 and len(limited) == 6        # one burst for the seat, not one per socket
    assert all(m["id"] and m["retry_after_s"] > 0 for m in limited)
    # the listener's seat has its own allowance
    listener = await connect(match.id, seats["listener"].token)
    await listener.send_json_to({"type": "action", "id": "l1", "action": {"type": "click", "position": 0, "round": 1}})
    assert (await replies(listener, 1))[0]["type"] == "ack"
    for comm in (first, second, listener):
        await comm.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_resume_and_ping_floods_are_refused_without_reading_the_database(fresh_limiter):
    match, seats = await make_match()
    comm = await connect(match.id, seats["listener"].token)
    reads = []
    real = selectors.seat_snapshot

    def counting(**kw):
        reads.append(kw)
        return real(**kw)

    start = time.monotonic()
    with mock.patch.object(selectors, "seat_snapshot", side_effect=counting):
        for _ in range(40):
            await comm.send_json_to({"type": "resume", "last_seq": 0})
        got = await replies(comm, 40)
    elapsed = time.monotonic() - start
    joined = [m for m in got if m["type"] == "joined"]
    limited = [m for m in got if m["type"] == "error" and m["code"] == "rate_limited"]
    assert len(joined) + len(limited) == 40
    allowance = settings.GT_WS_RESUME_BURST + settings.GT_WS_RESUME_RATE * elapsed
    assert settings.GT_WS_RESUME_BURST <= len(joined) <= allowance + 1
    assert len(reads) == len(joined)                   # a refused resume reads nothing
    assert all("id" not in m for m in limited)

    start = time.monotonic()
    for _ in range(100):
        await comm.send_json_to({"type": "ping"})
    got = await replies(comm, 100)
    elapsed = time.monotonic() - start
    pongs = [m for m in got if m["type"] == "pong"]
    assert settings.GT_WS_PING_BURST <= len(pongs) <= settings.GT_WS_PING_BURST + settings.GT_WS_PING_RATE * elapsed + 1
    assert all(m["type"] == "pong" or m["code"] == "rate_limited" for m in got)
    await comm.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_a_resume_after_a_pause_is_answered_again(settings, fresh_limiter):
    settings.GT_WS_RESUME_RATE, settings.GT_WS_RESUME_BURST = 5, 1
    match, seats = await make_match()
    comm = await connect(match.id, seats["listener"].token)
    await comm.send_json_to({"type": "resume", "last_seq": 0})
    await comm.send_json_to({"type": "resume", "last_seq": 0})
    first, second = await replies(comm, 2)
    assert first["type"] == "joined" and second["code"] == "rate_limited"
    await asyncio.sleep(second["retry_after_s"] + 0.05)
    await comm.send_json_to({"type": "resume", "last_seq": 0})
    assert (await replies(comm, 1))[0]["type"] == "joined"
    await comm.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_a_hostile_frame_flood_closes_the_socket(fresh_limiter):
    match, seats = await make_match()
    comm = await connect(match.id)
    token_reads = []
    real = selectors.seat_by_token

    def counting(token):
        token_reads.append(token)
        return real(token)

    frames = ["{not json", "[1]", json.dumps({"type": "teleport"}), json.dumps({"type": "join", "token": "nope"}),
              json.dumps({"type": "resume", "last_seq": 1}), json.dumps({"type": "action", "id": "x", "action": {}})]
    start = time.monotonic()
    with mock.patch.object(selectors, "seat_by_token", side_effect=counting):
        for i in range(3000):
            await comm.send_to(text_data=frames[i % len(frames)])
        await comm.send_to(bytes_data=b"\x00" * 10)
        out = []
        while True:
            msg = await comm.receive_output(timeout=10)
            out.append(msg)
            if msg["type"] == "websocket.close":
                break
        out += await drain(comm)
    elapsed = time.monotonic() - start
    assert {"type": "websocket.close", "code": 4008} in out
    sent = [json.loads(m["text"]) for m in out if m["type"] == "websocket.send"]
    assert sent[-1]["code"] == "too_many_frames" and sent[-1]["message"]
    # only the frames within the cap were answered; everything after the close was dropped unread
    assert len(sent) - 1 <= settings.GT_WS_FRAME_BURST + settings.GT_WS_FRAME_RATE * elapsed + 1
    assert len(token_reads) <= 3 + elapsed + 1        # join attempts on one connection: 3, then 1 a second
    await comm.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_a_normal_pace_is_never_limited(fresh_limiter):
    match, seats = await make_match()
    speaker = await connect(match.id, seats["speaker"].token)
    for i in range(16):   # brisker than anyone types: a message and a ping 5 times a second, a resume every 0.8 s
        await speaker.send_json_to({"type": "action", "id": f"n{i}", "action": {"type": "chat", "text": f"m{i}"}})
        await speaker.send_json_to({"type": "ping"})
        if i % 4 == 0:
            await speaker.send_json_to({"type": "resume", "last_seq": None})
        got = await replies(speaker, 3 if i % 4 == 0 else 2)
        assert not [m for m in got if m["type"] == "error"], got
        await asyncio.sleep(0.2)
    await speaker.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_the_websocket_keeps_working_when_redis_is_unreachable(settings):
    closed = f"redis://127.0.0.1:{free_port()}/0"
    ratelimit.set_limiter(Limiter(backend="redis", prefix="gt:rl:test-down:", redis_url=closed, timeout_s=0.1))
    try:
        match, seats = await make_match()
        speaker = await connect(match.id, seats["speaker"].token)
        start = time.monotonic()
        for i in range(5):
            await speaker.send_json_to({"type": "action", "id": f"d{i}", "action": {"type": "chat", "text": "hi"}})
        await speaker.send_json_to({"type": "ping"})
        await speaker.send_json_to({"type": "resume", "last_seq": None})
        got = await replies(speaker, 7)
        assert sorted(m["type"] for m in got) == ["ack"] * 5 + ["joined", "pong"]   # acks come from tasks
        assert time.monotonic() - start < 3
        await speaker.disconnect()
    finally:
        ratelimit.set_limiter(None)


@pytest.mark.django_db(transaction=True)
async def test_a_seats_only_socket_counts_here_and_a_second_socket_moves_it_to_redis(fresh_limiter, monkeypatch):
    """One socket per seat (every normal game) costs no Redis round trip per action; as soon as
    the seat has a second socket, both count in Redis (shared by every process)."""
    if fresh_limiter.redis is None:
        pytest.skip("the Redis backend is not configured")
    calls = []
    real = fresh_limiter.redis.ahit

    async def counting(checks):
        calls.append([key for key, _ in checks])
        return await real(checks)

    monkeypatch.setattr(fresh_limiter.redis, "ahit", counting)
    match, seats = await make_match()
    first = await connect(match.id, seats["speaker"].token)
    await first.send_json_to({"type": "action", "id": "alone", "action": {"type": "chat", "text": "teal"}})
    assert [m["type"] for m in await replies(first, 1)] == ["ack"]
    assert calls == []
    second = await connect(match.id, seats["speaker"].token)
    await second.send_json_to({"type": "action", "id": "two", "action": {"type": "chat", "text": "blue"}})
    assert [m["type"] for m in await replies(second, 1)] == ["ack"]
    assert len(calls) == 1
    for _ in range(50):   # the first socket hears of the second through its presence broadcast
        await asyncio.sleep(0.1)
        await first.send_json_to({"type": "ping"})
        await replies(first, 1)
        if len(calls) > 1:
            break
    assert len(calls) > 1, "the first socket kept counting only in its own process"
    await first.disconnect()
    await second.disconnect()
