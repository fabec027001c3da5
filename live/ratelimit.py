"""Rate limits: per seat on the websocket, per client address and per participant over HTTP.

Every limit is a GCRA (the "generic cell rate algorithm", a token bucket kept as one number: the
theoretical arrival time of the next request): ``rate`` requests per second sustained and at most
``burst`` at once, so a fresh key allows ``burst`` requests straight away and then one every
``1 / rate`` seconds.

Backends (``GT_RL_BACKEND``):

* ``redis`` (the default when ``REDIS_URL`` is set): one Lua script per check, atomic in Redis and
  timed by Redis's clock, so the limit of a seat or an address is shared by all its sockets and
  requests in every server process. Keys: ``gt:rl:<database>:<kind>:<key>`` (``GT_RL_PREFIX``
  replaces ``gt:rl:<database>:``), each expiring once its bucket is full again. Consumers use
  redis-py's asyncio client (one small blocking pool per event loop), views the sync client (one
  per process); every socket operation and every wait for a pooled connection gives up after
  ``GT_RL_REDIS_TIMEOUT_MS``.
* ``memory``: the same algorithm in a dict of this process (embedded mode; unit tests).

Redis unreachable or slow: the check FAILS OPEN to this process's memory backend (the same
limits, counted per process, so never stricter than the shared ones), for ``REDIS_RETRY_S``
before Redis is tried again, with one warning a minute in the log. A Redis restart never refuses
a player and never holds up the event loop for more than one timeout.
"""
from __future__ import annotations

import asyncio
import hashlib
import ipaddress
import logging
import math
import random
import threading
import time
from dataclasses import dataclass

import redis
import redis.asyncio
from django.conf import settings
from django.db import connections
from django.http import JsonResponse
from django.shortcuts import render
from redis.asyncio.retry import Retry as AsyncRetry
from redis.backoff import NoBackoff
from redis.retry import Retry

log = logging.getLogger(__name__)

REDIS_RETRY_S = 1.0      # after a Redis failure, count in this process for this long
WARN_EVERY_S = 60.0      # at most one "Redis unreachable" warning per this many seconds
MEMORY_MAX_KEYS = 100_000
MEMORY_SWEEP_MS = 10_000.0


@dataclass(frozen=True)
class Limit:
    kind: str
    rate: float   # requests per second, sustained; 0: no limit
    burst: int    # requests at once


@dataclass(frozen=True)
class Decision:
    allowed: bool
    retry_after: float = 0.0   # seconds until one more request would be allowed

    @property
    def retry_after_s(self) -> int:
        """Whole seconds for a ``Retry-After`` header (at least 1)."""
        return max(1, math.ceil(self.retry_after))


ALLOW = Decision(True)

# kind: (rate setting, seconds the rate is counted over, burst setting)
KINDS = {
    "ws_action": ("GT_WS_RATE", 1, "GT_WS_BURST"),
    "ws_resume": ("GT_WS_RESUME_RATE", 1, "GT_WS_RESUME_BURST"),
    "ws_ping": ("GT_WS_PING_RATE", 1, "GT_WS_PING_BURST"),
    "entry": ("GT_RL_ENTRY_PER_MIN", 60, "GT_RL_ENTRY_BURST"),
    "step": ("GT_RL_STEP_PER_MIN", 60, "GT_RL_STEP_BURST"),
    "poll": ("GT_RL_POLL_PER_MIN", 60, "GT_RL_POLL_BURST"),
    "participant_poll": ("GT_RL_PARTICIPANT_POLL_PER_MIN", 60, "GT_RL_PARTICIPANT_POLL_BURST"),
}


def limit(kind: str) -> Limit:
    """The limit of ``kind`` as the settings give it now."""
    rate_name, per_s, burst_name = KINDS[kind]
    return Limit(kind, float(getattr(settings, rate_name)) / per_s, max(1, int(getattr(settings, burst_name))))


def _gcra(tats: dict, checks: list[tuple[str, Limit]], now_ms: float) -> Decision:
    """All of ``checks`` or none: the same steps as ``GCRA_LUA``, on a dict of arrival times."""
    new, wait = [], 0.0
    for key, lim in checks:
        interval = 1000.0 / lim.rate
        tat = max(tats.get(key, now_ms), now_ms) + interval
        allow_at = tat - lim.burst * interval
        if now_ms < allow_at:
            wait = max(wait, allow_at - now_ms)
        new.append((key, tat))
    if wait > 0:
        return Decision(False, wait / 1000.0)
    tats.update(new)
    return ALLOW


# KEYS: one per limit; ARGV: interval (ms) and burst per key. Either every key takes one request
# or none does (a refused poll does not use up its participant's allowance). Redis's own clock, so
# processes on several machines agree. Returns {1, "0"} or {0, "<ms until one more is allowed>"}.
GCRA_LUA = """
if redis.replicate_commands then pcall(redis.replicate_commands) end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local new = {}
local wait = 0
for i = 1, #KEYS do
  local interval = tonumber(ARGV[2 * i - 1])
  local burst = tonumber(ARGV[2 * i])
  local tat = tonumber(redis.call('GET', KEYS[i])) or now
  if tat < now then tat = now end
  tat = tat + interval
  local allow_at = tat - burst * interval
  if now < allow_at and allow_at - now > wait then wait = allow_at - now end
  new[i] = tat
end
if wait > 0 then return {0, string.format('%.3f', wait)} end
for i = 1, #KEYS do
  redis.call('SET', KEYS[i], string.format('%.3f', new[i]), 'PX', math.max(1, math.ceil(new[i] - now)))
end
return {1, '0'}
"""


class MemoryBackend:
    """GCRA in this process (thread-safe; the lock is held for microseconds)."""

    def __init__(self, clock=time.monotonic):
        self.clock = clock
        self.tats: dict[str, float] = {}
        self.lock = threading.Lock()
        self.next_sweep = 0.0

    def hit(self, checks: list[tuple[str, Limit]]) -> Decision:
        now = self.clock() * 1000.0
        with self.lock:
            if now >= self.next_sweep or len(self.tats) > MEMORY_MAX_KEYS:
                self._sweep(now)
            return _gcra(self.tats, checks, now)

    def _sweep(self, now: float) -> None:
        """Forget keys whose bucket is full again (they behave exactly like absent ones)."""
        self.next_sweep = now + MEMORY_SWEEP_MS
        for key in [k for k, tat in self.tats.items() if tat <= now]:
            del self.tats[key]
        if len(self.tats) > MEMORY_MAX_KEYS:   # a flood of distinct keys: bounded memory beats exact limits
            log.warning("rate limiter: %d live keys in memory; forgetting them all", len(self.tats))
            self.tats.clear()


def _redis_errors() -> tuple:
    return (redis.exceptions.RedisError, OSError, asyncio.TimeoutError, TimeoutError)


class RedisBackend:
    """GCRA in Redis: a sync client for views, an asyncio client per event loop for consumers."""

    def __init__(self, url: str, *, pool_size: int, timeout_s: float):
        self.url, self.pool_size, self.timeout_s = url, pool_size, timeout_s
        self._sync = None
        self._async: dict[asyncio.AbstractEventLoop, object] = {}
        self.lock = threading.Lock()

    def _pool_kwargs(self, retry) -> dict:
        # BlockingConnectionPool: a full pool waits up to ``timeout`` for a connection instead of
        # raising at once (redis-py's plain pool) or opening without bound; no retries, so one
        # check costs at most about one timeout before it fails open.
        return {"max_connections": self.pool_size, "timeout": self.timeout_s, "socket_timeout": self.timeout_s,
                "socket_connect_timeout": self.timeout_s, "retry": retry, "health_check_interval": 0}

    @staticmethod
    def _args(checks: list[tuple[str, Limit]]) -> tuple[list, list]:
        args = []
        for _, lim in checks:
            args += [repr(1000.0 / lim.rate), lim.burst]
        return [key for key, _ in checks], args

    @staticmethod
    def _decision(reply) -> Decision:
        allowed, wait_ms = reply
        return ALLOW if int(allowed) else Decision(False, float(wait_ms) / 1000.0)

    def _sync_script(self):
        if self._sync is None:
            with self.lock:
                if self._sync is None:
                    pool = redis.BlockingConnectionPool.from_url(self.url, **self._pool_kwargs(Retry(NoBackoff(), 0)))
                    self._sync = redis.Redis(connection_pool=pool).register_script(GCRA_LUA)
        return self._sync

    def _async_script(self):
        loop = asyncio.get_running_loop()
        script = self._async.get(loop)
        if script is None:
            for other in [other for other in self._async if other.is_closed()]:   # loops that ended (tests)
                del self._async[other]
            pool = redis.asyncio.BlockingConnectionPool.from_url(self.url, **self._pool_kwargs(AsyncRetry(NoBackoff(), 0)))
            script = self._async[loop] = redis.asyncio.Redis(connection_pool=pool).register_script(GCRA_LUA)
        return script

    def hit(self, checks: list[tuple[str, Limit]]) -> Decision:
        keys, args = self._args(checks)
        return self._decision(self._sync_script()(keys=keys, args=args))

    async def ahit(self, checks: list[tuple[str, Limit]]) -> Decision:
        keys, args = self._args(checks)
        return self._decision(await self._async_script()(keys=keys, args=args))

    async def aclose(self) -> None:
        """Close this event loop's connections (tests; a server shutting down)."""
        script = self._async.pop(asyncio.get_running_loop(), None)
        if script is not None:
            await script.registered_client.aclose()
            await script.registered_client.connection_pool.disconnect()

    def close(self) -> None:
        if self._sync is not None:
            self._sync.registered_client.close()
            self._sync.registered_client.connection_pool.disconnect()
            self._sync = None


class Limiter:
    """Checks limits through Redis when configured, else (and while Redis fails) in memory."""

    def __init__(self, *, backend: str, prefix: str, redis_url: str = "", pool_size: int = 16,
                 timeout_s: float = 0.1, clock=time.monotonic):
        if backend not in ("redis", "memory"):
            raise ValueError(f"unknown rate-limit backend {backend!r}")
        self.prefix = prefix
        self.memory = MemoryBackend(clock)   # the backend itself, or the fallback while Redis fails
        self.redis = RedisBackend(redis_url, pool_size=pool_size, timeout_s=timeout_s) if backend == "redis" else None
        self.errors = _redis_errors() if self.redis is not None else ()
        self.redis_down_until = 0.0
        self.last_warning = -math.inf
        self.failures = 0

    def _checks(self, items) -> list[tuple[str, Limit]]:
        return [(f"{self.prefix}{lim.kind}:{key}", lim) for lim, key in items if lim.rate > 0 and key]

    def redis_ready(self) -> bool:
        """Whether checks go to Redis now (configured, and not in a pause after a failure)."""
        return self._use_redis()

    def _use_redis(self) -> bool:
        return self.redis is not None and time.monotonic() >= self.redis_down_until

    def _redis_failed(self, exc: BaseException) -> None:
        now = time.monotonic()
        self.redis_down_until = now + REDIS_RETRY_S
        self.failures += 1
        if now - self.last_warning >= WARN_EVERY_S:
            self.last_warning = now
            log.warning("rate limiter: Redis unreachable (%s: %s); counting per process (%d failures so far)",
                        type(exc).__name__, exc, self.failures)

    def hit(self, *items: tuple[Limit, str]) -> Decision:
        """One request against every ``(limit, key)``: all take it, or none (then the longest wait)."""
        checks = self._checks(items)
        if not checks:
            return ALLOW
        if self._use_redis():
            try:
                return self.redis.hit(checks)
            except self.errors as exc:
                self._redis_failed(exc)
        return self.memory.hit(checks)

    def local_hit(self, *items: tuple[Limit, str]) -> Decision:
        """``hit`` counted in this process's memory only (see ``seat_hit``)."""
        checks = self._checks(items)
        return self.memory.hit(checks) if checks else ALLOW

    async def ahit(self, *items: tuple[Limit, str], counted_here: Decision | None = None) -> Decision:
        """``hit`` for the event loop: Redis through the asyncio client. ``counted_here``: the
        caller already counted these items in memory (``local_hit``), so a Redis failure returns
        that decision instead of counting them twice."""
        checks = self._checks(items)
        if not checks:
            return ALLOW
        if self._use_redis():
            try:
                return await self.redis.ahit(checks)
            except self.errors as exc:
                self._redis_failed(exc)
        return counted_here if counted_here is not None else self.memory.hit(checks)


_limiter: Limiter | None = None
_limiter_lock = threading.Lock()


def default_prefix() -> str:
    """``gt:rl:<database name>:``: seat and participant ids are only unique within one database,
    so deployments (or test runs) that share a Redis do not share limits."""
    if settings.GT_RL_PREFIX:
        return settings.GT_RL_PREFIX

    name = str(connections["default"].settings_dict.get("NAME") or "default")
    return f"gt:rl:{name.replace('/', '_')[-80:]}:"


def get_limiter() -> Limiter:
    global _limiter
    if _limiter is None:
        with _limiter_lock:
            if _limiter is None:
                _limiter = Limiter(backend=settings.GT_RL_BACKEND, prefix=default_prefix(),
                                   redis_url=settings.REDIS_URL, pool_size=settings.GT_RL_REDIS_POOL,
                                   timeout_s=settings.GT_RL_REDIS_TIMEOUT_MS / 1000.0)
    return _limiter


def set_limiter(limiter: Limiter | None) -> None:
    """Use ``limiter`` from now on (tests); None: build one from the settings at the next check."""
    global _limiter
    _limiter = limiter


# --- the websocket ------------------------------------------------------------------------------

async def seat_hit(kind: str, seat_id, *, alone: bool = False) -> Decision:
    """One ``ws_action``/``ws_resume``/``ws_ping`` of a seat, counted for all its sockets.

    ``alone``: the caller's socket is the seat's only connection (the consumer knows it from the
    seat's connection count when it joined, and learns of a later second socket from its
    presence broadcast). Then this process sees every frame of the seat and counts it in its own
    memory, with no Redis round trip per action (about 4 % of the server's CPU per action at
    saturation, docs/bench.md). Once a seat has two sockets, each frame is counted in this
    process's memory too (so sockets of one seat on one process share one count at once) and then,
    if that allows it, in Redis (shared by every process). Until the first socket hears of the
    second, the seat may get up to one extra allowance if they sit on different processes."""
    limiter = get_limiter()
    item = (limit(kind), str(seat_id))
    local = limiter.local_hit(item)
    if alone or not local.allowed or not limiter.redis_ready():
        return local
    return await limiter.ahit(item, counted_here=local)


def ws_error(decision: Decision, message: str, action_id=None) -> dict:
    data = {"type": "error", "code": "rate_limited", "message": message,
            "retry_after_s": round(decision.retry_after, 3)}
    if action_id is not None:
        data["id"] = action_id
    return data


# --- HTTP ---------------------------------------------------------------------------------------

def client_address(request) -> str:
    """The client's address as uvicorn reports it (``--proxy-headers``/``--forwarded-allow-ips``
    decide whether a proxy's ``X-Forwarded-For`` is believed). IPv6 clients count per /64, the
    block one host is usually given. "" when unknown (a unix socket without proxy headers): then
    no per-address limit applies."""
    return address_key(request.META.get("REMOTE_ADDR") or "")


def address_key(addr) -> str:
    """The client an address stands for: an IPv4 address as it is; an IPv6 address's /64; an
    IPv4-mapped IPv6 address's IPv4 address. "" when it is not an address."""
    try:
        ip = ipaddress.ip_address(str(addr).strip())
    except ValueError:
        return ""
    if ip.version == 6:
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


def _token_key(token: str) -> str:
    """Participant tokens are secrets: keys carry a digest, never the token."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def http_check(request, kind: str, *, participant_token: str | None = None) -> Decision:
    """One request of ``kind`` from this client address (and, for polls, this participant)."""
    items = [(limit(kind), client_address(request))]
    if participant_token is not None:
        items.append((limit("participant_poll"), _token_key(participant_token)))
    return get_limiter().hit(*items)


def too_many_requests(request, decision: Decision, *, as_json: bool = False):
    """HTTP 429 with ``Retry-After``: JSON for the poll, else a page that tries again by itself."""
    wait = decision.retry_after_s
    if as_json:
        response = JsonResponse({"error": "rate_limited", "retry_after_s": wait}, status=429)
    else:
        response = render(request, "lobby/rate_limited.html",
                          {"retry_after_s": wait, "refresh_s": wait + random.randint(1, 3),
                           "again_url": request.get_full_path() if request.method == "GET" else request.path},
                          status=429)
    response["Retry-After"] = str(wait)
    response["Cache-Control"] = "no-store"
    return response


def http_limited(request, kind: str, *, participant_token: str | None = None, as_json: bool = False):
    """None when the request may go on, else the 429 response to return."""
    decision = http_check(request, kind, participant_token=participant_token)
    return None if decision.allowed else too_many_requests(request, decision, as_json=as_json)
