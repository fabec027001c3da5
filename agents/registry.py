"""The registry of named agents: every registered game's ``agents.AGENTS`` list."""
from __future__ import annotations

import logging
import threading
import time
from dataclasses import replace
from functools import lru_cache

from django.conf import settings

from agents.base import Agent, AgentSpec
from agents.model_config import ModelAgentConfig, ModelConfigError, agent_specs, models_file, read_entries
from games.registry import GAMES


log = logging.getLogger(__name__)


class UnknownAgent(KeyError):
    pass


@lru_cache(maxsize=1)
def all_agents() -> dict[str, AgentSpec]:
    """Every registered agent by name: each game's ``AGENTS``, then the model agents of the models
    file (agents/model_config.py). ``GT_AGENT_TIMEOUT_S``, when set, caps every agent's
    ``timeout_s`` (a deployment that wants the fallback sooner; the fault tests)."""
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
_building: dict[str, threading.Lock] = {}


def agent_instance(name: str) -> Agent:
    """One built agent per name and process (models load once, after the worker starts). Each
    name is built under its own lock: a turn for one agent never waits for another's building
    (the warm-up at a worker's start builds them one after the other)."""
    agent = _built.get(name)
    if agent is not None:
        return agent
    with _lock:
        building = _building.setdefault(name, threading.Lock())
    with building:
        if name not in _built:
            _built[name] = get_agent_spec(name).build()
        return _built[name]


def warm_up(names) -> dict[str, float]:
    """Build the named agents in this process now (:func:`agent_instance`), so that what an agent
    prepares when it is built (the CoDraw nearest-neighbour agents generate their database of
    dialogs, seconds of CPU) is ready before its first turn rather than inside it; first their
    games' ``warm_up`` (colour-science for colour agents). Returns the seconds each took (a game's
    as ``"game <id>"``); an agent that fails to build is logged and left to its first turn."""
    took: dict[str, float] = {}
    for game_id in sorted({get_agent_spec(name).game_id for name in names}):
        game = GAMES[game_id]
        if game.warm_up:   # what the game imports on first use (games/spec.py ``warm_up``)
            started = time.monotonic()
            try:
                game.resolve(game.warm_up)()
            except Exception:
                log.exception("game %s could not be warmed up", game_id)
                continue
            took[f"game {game_id}"] = time.monotonic() - started
    for name in names:
        started = time.monotonic()
        try:
            agent_instance(name)
        except Exception:
            log.exception("agent %s could not be built at warm-up", name)
            continue
        took[name] = time.monotonic() - started
    return took


def worker_agents(queues) -> list[str]:
    """The in-process agents (a game's own, not the models file's) whose queue is in ``queues``."""
    queues = set(queues)
    return [name for name, spec in all_agents().items()
            if spec.model is None and spec.device == "cpu" and spec.queue_name in queues]


def warm_up_for_worker(consumer) -> threading.Thread:
    """``worker_ready`` handler (groundtalk_web/celery.py): build the in-process agents of the
    queues this worker consumes, in a background thread (the worker answers pings and turns
    meanwhile; a turn for an agent still being built waits for it, as a first turn did)."""
    queues = list(consumer.app.amqp.queues.consume_from or consumer.app.amqp.queues)
    names = worker_agents(queues)

    def run() -> None:
        took = warm_up(names)
        log.info("agents warmed up: %s", ", ".join(f"{n} {s:.1f} s" for n, s in took.items()) or "none")

    thread = threading.Thread(target=run, name="gt-agent-warm-up", daemon=True)
    thread.start()
    return thread


def family_configs(family_key: str) -> list[ModelAgentConfig]:
    """The torch agents of one family (the model worker's), checked against the registry."""
    configs = [s.model for s in all_agents().values() if s.model is not None and s.model.kind == "torch"
               and s.model.family_key == family_key]
    if not configs:
        path, _ = models_file()
        known = sorted({s.model.family_key for s in all_agents().values()
                        if s.model is not None and s.model.kind == "torch"})
        raise ModelConfigError(f"No torch agent of family {family_key!r} in {path}; families: "
                               f"{', '.join(known) or '(none)'}.")
    return configs


def check_at_startup() -> None:
    """Raise :class:`ModelConfigError` when the models file is bad (agents/model_config.py;
    ``agents.apps.AgentsConfig.ready``). A file with no agent costs nothing; one with agents is checked against the whole registry."""
    _, entries = read_entries()
    if entries:
        all_agents()
