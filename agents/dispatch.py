"""Where agent turns run: Celery model workers (full stack) or a thread pool in the web process
(embedded; a torch agent's turn is posted from there to the model server, agents/serving/server.py). The web process never waits on a model: this only enqueues. Live matches call it
through their ``agent_turns_due`` signal after each commit (``wake_on_commit``, connected in
agents/apps.py), so live/ imports no agent code.

Waking an agent is best effort: the broker may be down or may lose the message (a Redis restart
without persistence). No turn depends on it. The watchdog (live/watchdog.py) finds every match
whose agent has been due for longer than its timeout from PostgreSQL alone and lets the agent's
fallback act.
"""
from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor

from django.conf import settings
from django.db import close_old_connections

from agents import services, tasks
from agents import model_client
from agents.registry import get_agent_spec

log = logging.getLogger(__name__)
_pools: dict[str, ThreadPoolExecutor] = {}
_pool_lock = threading.Lock()
# The embedded mode's threads: the rule agents' (CPU, fast), and the LLM agents' apart (agents/llm/:
# a turn waits seconds on its endpoint, and must not hold up the rule agents of other matches), and
# the torch agents' (each waits on the model server, which batches the turns of concurrent matches:
# as many threads as turns one batch may hold).
POOL_SIZES = {"agent": 4, "llm": 32, "model": 32}


def _executor(kind: str = "agent") -> ThreadPoolExecutor:
    with _pool_lock:
        if kind not in _pools:
            _pools[kind] = ThreadPoolExecutor(max_workers=POOL_SIZES[kind], thread_name_prefix=kind)
        return _pools[kind]


def _run_inprocess(func, **kwargs) -> None:
    try:
        func(**kwargs)
    except Exception:
        log.exception("in-process agent turn failed: %s", kwargs)
    finally:
        close_old_connections()


def wake_agents(*, match_id, seq: int, roles: list[str], agent_seats: dict[str, str]) -> None:
    """Ask the agent of each role in ``roles`` to act on the state at ``seq``. Never raises."""
    for role in roles:
        try:
            spec = get_agent_spec(agent_seats[role])
            if settings.GT_AGENT_MODE == "celery":
                tasks.agent_take_turn.apply_async((str(match_id), role, seq), queue=spec.queue_name,
                                                  retry=False)
            elif spec.model is not None and spec.model.kind == "torch":
                # the web process never loads a model: the embedded mode's model server plays the
                # turn (agents/serving/server.py), posted to from a thread here as a bridge agent's
                _executor("model").submit(
                    _run_inprocess, services.agent_take_turn, match_id=str(match_id), role=role, expected_seq=seq,
                    agent=model_client.agent_for(spec.model))
            else:
                llm = spec.model is not None and spec.model.kind == "openai"
                _executor("llm" if llm else "agent").submit(
                    _run_inprocess, services.agent_take_turn, match_id=str(match_id), role=role, expected_seq=seq)
        except Exception as exc:   # the broker is down: the watchdog moves the match on
            log.warning("could not wake agent %s of match %s at seq %s: %r", role, match_id, seq, exc)


def wake_on_commit(sender, *, match_id, seq: int, roles: list[str], agent_seats: dict[str, str], **_) -> None:
    """The receiver of ``live.services.agent_turns_due`` (connected in agents/apps.py): an action
    was committed and agent seats are to act."""
    wake_agents(match_id=match_id, seq=seq, roles=roles, agent_seats=agent_seats)
