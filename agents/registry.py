"""The registry of named agents: every registered game's ``agents.AGENTS`` list."""
from __future__ import annotations

import threading
from functools import lru_cache

from agents.base import Agent, AgentSpec
from games.registry import GAMES


class UnknownAgent(KeyError):
    pass


@lru_cache(maxsize=1)
def all_agents() -> dict[str, AgentSpec]:
    specs: dict[str, AgentSpec] = {}
    for game in GAMES.values():
        for spec in getattr(game.agents, "AGENTS", []):
            if spec.name in specs:
                raise ValueError(f"Agent name {spec.name!r} registered twice")
            specs[spec.name] = spec
    return specs


def get_agent_spec(name: str) -> AgentSpec:
    try:
        return all_agents()[name]
    except KeyError:
        raise UnknownAgent(f"Unknown agent {name!r}; known: {', '.join(sorted(all_agents()))}") from None


_built: dict[str, Agent] = {}
_lock = threading.Lock()


def agent_instance(name: str) -> Agent:
    """One built agent per name and process (models load once, after the worker starts)."""
    with _lock:
        if name not in _built:
            _built[name] = get_agent_spec(name).build()
        return _built[name]
