"""Where agent turns run: Celery model workers (full stack) or a thread pool in the web process
(embedded). The web process never waits on a model: this only enqueues."""
from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor

from django.conf import settings
from django.db import close_old_connections

from agents.registry import get_agent_spec

log = logging.getLogger(__name__)
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="agent")
        return _pool


def _run_inprocess(func, **kwargs) -> None:
    try:
        func(**kwargs)
    except Exception:
        log.exception("in-process agent turn failed: %s", kwargs)
    finally:
        close_old_connections()


def wake_agents(*, match_id, seq: int, roles: list[str], agent_seats: dict[str, str]) -> None:
    """Ask the agent of each role in ``roles`` to act on the state at ``seq``, with a watchdog."""
    from agents import services, tasks

    for role in roles:
        spec = get_agent_spec(agent_seats[role])
        args = (str(match_id), role, seq)
        if settings.GT_AGENT_MODE == "celery":
            tasks.agent_take_turn.apply_async(args, queue=spec.queue_name)
            tasks.agent_fallback_turn.apply_async(args, queue="control", countdown=spec.timeout_s)
        else:
            kwargs = {"match_id": str(match_id), "role": role, "expected_seq": seq}
            _executor().submit(_run_inprocess, services.agent_take_turn, **kwargs)
            timer = threading.Timer(spec.timeout_s, lambda kw=kwargs: _executor().submit(
                _run_inprocess, services.agent_fallback_turn, **kw))
            timer.daemon = True
            timer.start()
