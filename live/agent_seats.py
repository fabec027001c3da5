"""The agents that play agent seats, as live matches see them.

A seat names its agent (``Seat.agent_name``); live asks here for the registered agents (their
timeout, fallback, model, queue), for a fallback's move when an agent is overdue (the watchdog)
and whether an agent's workers run (a batch's problems). The agents app registers what answers
when Django starts (``AgentsConfig.ready``: agents/for_live.py), and connects its wake-up to
``live.services.agent_turns_due``; so live imports no agent code (the import contracts in
pyproject.toml, docs/architecture.md "Dependencies between apps").
"""
from __future__ import annotations

from typing import Any, Mapping, Protocol

from django.core.exceptions import ImproperlyConfigured


class Provider(Protocol):
    DEFAULT_TIMEOUT_S: float

    def all_agents(self) -> Mapping[str, Any]:
        """Every registered agent by name (an ``AgentSpec``: ``game_id``, ``role``, ``timeout_s``,
        ``fallback``, ``device``, ``model``, ``queue_name``)."""

    def fallback_turn(self, *, match_id, role: str, expected_seq: int) -> str:
        """The overdue agent's fallback acts for it: ``fallback``, ``answered`` (the agent acted
        after all) or why no fallback could act."""

    def dead_queues(self, queues: list[str]) -> list[str] | None:
        """The queues with no live worker (None: unknown)."""


_provider: Provider | None = None


def register(provider: Provider) -> None:
    global _provider
    _provider = provider


def _get() -> Provider:
    if _provider is None:
        raise ImproperlyConfigured("No agents provider: the agents app is not installed (INSTALLED_APPS).")
    return _provider


def all_agents() -> Mapping[str, Any]:
    return _get().all_agents()


def agent_spec(name: str):
    """The agent named ``name``, or None when this process does not know it."""
    return _get().all_agents().get(name)


def default_timeout_s() -> float:
    """The timeout of an agent that names none (``AgentSpec.timeout_s``'s default)."""
    return _get().DEFAULT_TIMEOUT_S


def fallback_turn(*, match_id, role: str, expected_seq: int) -> str:
    return _get().fallback_turn(match_id=match_id, role=role, expected_seq=expected_seq)


def dead_queues(queues: list[str]) -> list[str] | None:
    return _get().dead_queues(queues)


def queue_problem(queue: str) -> str | None:
    """Why a dead queue has no worker, when the provider can say more than that (the embedded
    mode's model server: a family still loading, or one that could not load, and why)."""
    explain = getattr(_get(), "queue_problem", None)
    return explain(queue) if callable(explain) else None
