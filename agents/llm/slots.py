"""``max_concurrency``: how many calls are in flight to one model at one endpoint, shared by every
agent worker.

Redis (the full stack, ``REDIS_URL``): one sorted set per endpoint and model
(``gt:llm:slots:<sha1 of base_url and model>``) whose members are the calls holding a slot, each
scored with when its lease ends. Taking a slot is one Lua script, atomic and timed by Redis's
clock: drop the leases that ended, then add this call if fewer than ``limit`` remain. The lease
is longer than any call may last (the agent's ``timeout_s`` and a margin), so a worker killed in
the middle of a call frees its slot when the lease ends rather than never. A caller that finds
every slot taken polls again (10 ms, doubling to 100 ms, with jitter) until its deadline; the
waiting counts within the agent's ``timeout_s``.

Without Redis (the embedded mode: one process runs every agent) a process-local semaphore per
endpoint and model does the same. Redis that cannot be reached while the full stack runs falls
back to the process-local count for that call (logged): never stricter than the shared limit.
"""
from __future__ import annotations

import hashlib
import logging
import random
import threading
import time
import uuid
from contextlib import contextmanager

import redis
from django.conf import settings

log = logging.getLogger(__name__)
LEASE_MARGIN_S = 10.0
POLL_FIRST_S, POLL_MAX_S = 0.01, 0.1

# KEYS[1] the set; ARGV: limit, lease seconds, token. 1: taken, 0: full.
ACQUIRE = """
if redis.replicate_commands then pcall(redis.replicate_commands) end
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then
  return 0
end
local lease = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], now + lease, ARGV[3])
local ttl = math.ceil(lease * 1000)
if redis.call('PTTL', KEYS[1]) < ttl then
  redis.call('PEXPIRE', KEYS[1], ttl)
end
return 1
"""


class NoSlot(TimeoutError):
    """No slot came free before the deadline."""


def key_for(base_url: str, model: str) -> str:
    return "gt:llm:slots:" + hashlib.sha1(f"{base_url}\n{model}".encode("utf-8")).hexdigest()[:20]


_local: dict[str, threading.BoundedSemaphore] = {}
_local_lock = threading.Lock()
_client: redis.Redis | None = None
_script = None
_client_lock = threading.Lock()


def _redis():
    global _client, _script
    with _client_lock:
        if _client is None:
            _client = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2)
            _script = _client.register_script(ACQUIRE)
        return _client, _script


def in_flight(key: str) -> int:
    """Calls holding a slot of ``key`` now (Redis; leases that ended are not counted)."""
    client, _ = _redis()
    return int(client.zcount(key, time.time(), "+inf"))


@contextmanager
def slot(key: str, limit: int, *, deadline: float, lease_s: float):
    """Hold one of ``limit`` slots of ``key`` for the block; wait for one until ``deadline``
    (``time.monotonic()``), then :class:`NoSlot`. ``limit`` 0: no limit. Yields the seconds waited."""
    if limit <= 0:
        yield 0.0
        return
    started = time.monotonic()
    if settings.REDIS_URL:
        token = _acquire_redis(key, limit, deadline, lease_s + LEASE_MARGIN_S)
        if token is not None:
            try:
                yield time.monotonic() - started
            finally:
                _release_redis(key, token)
            return
    semaphore = _local_semaphore(key, limit)
    if not semaphore.acquire(timeout=max(0.0, deadline - time.monotonic())):
        raise NoSlot(f"no free slot of {limit} within the time left")
    try:
        yield time.monotonic() - started
    finally:
        semaphore.release()


def _local_semaphore(key: str, limit: int) -> threading.BoundedSemaphore:
    with _local_lock:
        semaphore = _local.get(key)
        if semaphore is None:
            semaphore = _local[key] = threading.BoundedSemaphore(limit)
        return semaphore


def _acquire_redis(key: str, limit: int, deadline: float, lease_s: float) -> str | None:
    """The token of the slot taken; None when Redis cannot be reached (count locally)."""
    token = uuid.uuid4().hex
    pause = POLL_FIRST_S
    while True:
        try:
            client, script = _redis()
            if script(keys=[key], args=[limit, lease_s, token], client=client) == 1:
                return token
        except redis.RedisError as exc:
            log.warning("LLM call slots: Redis cannot be reached (%r); counting in this process", exc)
            return None
        left = deadline - time.monotonic()
        if left <= 0:
            raise NoSlot(f"no free slot of {limit} within the time left")
        time.sleep(min(left, pause * random.uniform(0.5, 1.0)))
        pause = min(POLL_MAX_S, pause * 2)


def _release_redis(key: str, token: str) -> None:
    try:
        client, _ = _redis()
        client.zrem(key, token)
    except redis.RedisError as exc:   # its lease ends it
        log.warning("LLM call slot not released (%r); its lease frees it", exc)
