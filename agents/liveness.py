"""Which agent queues have a live Celery worker: heartbeats in Redis, read by the batch checks.

Every Celery worker started for GroundTalk (``manage.py agent_worker``) runs a small thread once it
is ready: every ``HEARTBEAT_S`` seconds it writes ``now`` for its hostname into a sorted set per
queue it consumes (``gt:workers:<queue>``). A queue is alive while some worker wrote within
``settings.GT_WORKER_TTL_S`` (20 s by default: a supervised worker that restarts after a Redis
restart or a crash comes back well within it). A worker that shuts down cleanly removes itself at
once; one that is killed ages out.

``live.batches.batch_problems`` asks :func:`dead_queues` for the queues of a batch's agents, so a
batch whose agent has no worker is shown as such in the admin and is not served (home page, entry
link, lobby). The answer is "unknown" (never "dead") when Redis cannot be read: agents cannot be
woken then anyway, and the watchdog (live/watchdog.py) lets their fallbacks act from PostgreSQL.
With agents in the web process (``GT_AGENT_MODE=inprocess``, the embedded mode) every queue is alive
but the torch agents' ``model.<family_key>``: those are alive while the model server
(agents/serving/server.py) reports the family ready.
"""
from __future__ import annotations

import logging
import os
import socket
import threading
import time

from django.conf import settings
import redis

from agents import model_client

log = logging.getLogger(__name__)

HEARTBEAT_S = 5.0
KEY = "gt:workers:{queue}"


def _client():
    url = settings.CELERY_BROKER_URL
    if not url.startswith(("redis://", "rediss://", "unix://")):
        return None
    return redis.Redis.from_url(url, socket_timeout=0.5, socket_connect_timeout=0.5)


def beat(client, queues: list[str], hostname: str, now: float | None = None) -> None:
    """Record one heartbeat of ``hostname`` on each of ``queues`` (and drop workers long gone)."""
    now = time.time() if now is None else now
    pipe = client.pipeline(transaction=False)
    for queue in queues:
        key = KEY.format(queue=queue)
        pipe.zadd(key, {hostname: now})
        pipe.zremrangebyscore(key, "-inf", now - 10 * settings.GT_WORKER_TTL_S)
        pipe.expire(key, int(10 * settings.GT_WORKER_TTL_S))
    pipe.execute()


def forget(client, queues: list[str], hostname: str) -> None:
    pipe = client.pipeline(transaction=False)
    for queue in queues:
        pipe.zrem(KEY.format(queue=queue), hostname)
    pipe.execute()


def dead_queues(queues: list[str]) -> list[str] | None:
    """The queues among ``queues`` that no worker consumed within GT_WORKER_TTL_S; None: cannot tell."""
    if settings.GT_AGENT_MODE != "celery":
        # in-process agents are always served; torch model agents (``model.<family>`` queues) while
        # the embedded mode's model server reports their family ready (agents/serving/server.py)
        return [q for q in queues if q.startswith("model.") and model_queue_problem(q) is not None]
    if not queues:
        return []
    client = _client()
    if client is None:
        return None
    since = time.time() - settings.GT_WORKER_TTL_S
    try:
        pipe = client.pipeline(transaction=False)
        for queue in queues:
            pipe.zcount(KEY.format(queue=queue), since, "+inf")
        counts = pipe.execute()
    except Exception as exc:   # Redis away: say nothing rather than turn every batch away
        log.info("worker liveness unknown (Redis: %r)", exc)
        return None
    finally:
        client.close()
    return [q for q, n in zip(queues, counts) if not n]


def model_queue_problem(queue: str) -> str | None:
    """The embedded mode: why the model server does not serve the family of ``model.<family_key>``
    (None: it does). Its ``/health`` answer is cached for 2 s and asked with a 0.5 s timeout
    (agents/model_client.py)."""
    return model_client.family_problem(queue.removeprefix("model."))


class Heartbeat(threading.Thread):
    """The worker-side thread (started by the ``worker_ready`` signal, stopped on shutdown)."""

    def __init__(self, queues: list[str], hostname: str):
        super().__init__(name="gt-heartbeat", daemon=True)
        self.queues, self.hostname = sorted(queues), hostname
        self.stopped = threading.Event()

    def run(self) -> None:
        client = _client()
        if client is None:
            return
        while not self.stopped.is_set():
            try:
                beat(client, self.queues, self.hostname)
            except Exception as exc:   # Redis restarting: the next beat will do
                log.info("heartbeat not written: %r", exc)
            self.stopped.wait(HEARTBEAT_S)
        try:
            forget(client, self.queues, self.hostname)
        except Exception:
            pass
        client.close()

    def stop(self) -> None:
        self.stopped.set()
        self.join(timeout=2)


_heartbeat: Heartbeat | None = None


def start_for_worker(consumer) -> None:
    """``worker_ready`` handler: beat for the queues this worker consumes."""
    global _heartbeat
    queues = list(consumer.app.amqp.queues.consume_from or consumer.app.amqp.queues)
    hostname = getattr(consumer, "hostname", None) or f"{socket.gethostname()}:{os.getpid()}"
    _heartbeat = Heartbeat(queues, f"{hostname}:{os.getpid()}")
    _heartbeat.start()


def stop_for_worker(**_) -> None:
    if _heartbeat is not None:
        _heartbeat.stop()
