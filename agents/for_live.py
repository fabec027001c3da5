"""What the agents app answers for live matches (live/agent_seats.py), registered in
``AgentsConfig.ready``; ``wake_on_commit`` (agents/dispatch.py) is connected there too. Each call
looks its function up when it runs, so the registry's cache and the tests' stand-ins apply."""
from __future__ import annotations

from django.conf import settings

from agents import liveness, registry, services
from agents.base import AgentSpec

DEFAULT_TIMEOUT_S: float = AgentSpec.__dataclass_fields__["timeout_s"].default


def all_agents():
    return registry.all_agents()


def fallback_turn(*, match_id, role: str, expected_seq: int) -> str:
    return services.agent_fallback_turn(match_id=match_id, role=role, expected_seq=expected_seq)


def dead_queues(queues: list[str]) -> list[str] | None:
    return liveness.dead_queues(queues)


def queue_problem(queue: str) -> str | None:
    """The embedded mode's torch agents: what the model server says about the queue's family."""
    if settings.GT_AGENT_MODE == "celery" or not queue.startswith("model."):
        return None
    return liveness.model_queue_problem(queue)
