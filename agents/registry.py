"""The registry of named agents: every registered game's ``agents.AGENTS`` list."""
from __future__ import annotations

import threading
from dataclasses import replace
from functools import lru_cache

from agents.base import Agent, AgentSpec
from games.registry import GAMES


class UnknownAgent(KeyError):
    pass


@lru_cache(maxsize=1)
def all_agents() -> dict[str, AgentSpec]:
    """Every registered agent by name: each game's ``AGENTS``, then the model agents of the models
    file (agents/serving/config.py). ``GT_AGENT_TIMEOUT_S``, when set, caps every agent's
    ``timeout_s`` (a deployment that wants the fallback sooner; the fault tests)."""
    from django.conf import settings

    from agents.serving.config import agent_specs

    cap = settings.GT_AGENT_TIMEOUT_S
    specs: dict[str, AgentSpec] = {}
    for game in GAMES.values():
        for spec in getattr(game.agents, "AGENTS", []):
            if spec.name in specs:
                raise ValueError(f"Agent name {spec.name!r} registered twice")
            if cap and spec.timeout_s > cap:
                spec = replace(spec, timeout_s=cap)
            specs[spec.name] = spec
    for spec in agent_specs(dict(specs)):
        if cap and spec.timeout_s > cap:
            spec = replace(spec, timeout_s=cap)
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
