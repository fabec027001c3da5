"""What makes a batch runnable: one check shared by the admin's batch form and the entry views.

``problems(...)`` returns a list of ``(field, message)`` pairs (field: ``game_id``, ``pairing``,
``human_roles``, ``agents`` or ``agents.<role>``, ``config`` or ``config.<setting>``);
``batch_problems(batch)`` the messages; empty means the batch can run
(its game is registered, its roles are the game's, every agent it names is registered for that
game and role, its pairing has the agents it needs, and its settings are the game's settings).
A batch saved before an agent was removed from the registry fails the same check, so the home
page, the entry link and the lobby refuse it instead of serving a 500; so does a batch whose
agent has no live worker (``worker_problems``, agents/liveness.py), until one starts. Saving such
a batch is allowed (its workers may start later); it is shown as "cannot run" meanwhile.
"""
from __future__ import annotations

from games.registry import GAMES
from live import agent_seats
from live.models import Batch

_POSITIVE_INTS = {"rounds", "pool_size", "time_limit_s", "max_message_len", "min_pieces", "max_pieces"}


def config_schema(game_id: str) -> dict[str, tuple[type, ...]]:
    """The settings a game accepts, with their types (its spec's ``default_config`` keys, typed by
    their defaults, plus its ``extra_config``)."""
    return GAMES[game_id].config_schema()


def config_choices(game_id: str) -> dict[str, tuple[str, ...]]:
    """The game's settings that take one of a few values (setting -> values; its spec's
    ``config_choices``)."""
    return dict(GAMES[game_id].config_choices)


def _type_ok(value, types: tuple[type, ...]) -> bool:
    if bool not in types and isinstance(value, bool):
        return False  # True is an int to Python, not a number of rounds
    return isinstance(value, types)


def problems(*, game_id, pairing, human_roles, agents, on_timeout, config) -> list[tuple[str, str]]:
    if game_id not in GAMES:
        return [("game_id", f"Unknown game {game_id!r}; registered games: {', '.join(sorted(GAMES))}.")]
    out: list[tuple[str, str]] = []
    roles = list(GAMES[game_id].roles)
    allowed_roles = ", ".join(roles)

    if not isinstance(human_roles, list) or not all(isinstance(r, str) for r in human_roles):
        out.append(("human_roles", f"human_roles must be a JSON list of role names from: {allowed_roles}."))
        human_roles = []
    for r in human_roles:
        if r not in roles:
            out.append(("human_roles", f"{r!r} is not a role of {game_id}; its roles are: {allowed_roles}."))

    if not isinstance(agents, dict):
        out.append(("agents", 'agents must be a JSON object {role: agent name}, e.g. {"%s": "..."}.' % roles[0]))
        agents = {}
    known = agent_seats.all_agents()
    for role, name in agents.items():
        if role not in roles:
            out.append(("agents", f"{role!r} is not a role of {game_id}; its roles are: {allowed_roles}."))
            continue
        if not name:
            continue   # no agent for this seat (the pairing check below says whether one is needed)
        fits = sorted(n for n, s in known.items() if s.game_id == game_id and s.role == role)
        spec = known.get(name) if isinstance(name, str) else None
        if spec is None or spec.game_id != game_id or spec.role != role:
            why = "is not a registered agent" if spec is None else f"plays {spec.game_id}/{spec.role}"
            out.append((f"agents.{role}", f"Agent {name!r} for the {role} seat {why}; agents for {game_id}/{role}: "
                                  f"{', '.join(fits) or 'none registered'}."))

    humans = [r for r in roles if r in human_roles] if human_roles else roles
    if pairing == Batch.Pairing.HUMAN_AGENT:
        # the lobby gives a worker one of the human roles in turn and agents every other seat
        need = [r for r in roles if r not in humans] if len(humans) == 1 else roles
        missing = [r for r in need if not agents.get(r)]
        if missing:
            out.append((f"agents.{missing[0]}",
                        f"A human-agent batch needs an agent for the {', '.join(missing)} seat(s)."))
    elif pairing == Batch.Pairing.AGENT_AGENT:
        missing = [r for r in roles if not agents.get(r)]
        if missing:
            out.append((f"agents.{missing[0]}",
                        f"An agent-agent batch needs an agent for every role; missing: {', '.join(missing)}."))
    elif pairing == Batch.Pairing.HUMAN_HUMAN:
        if len(humans) < 2:
            out.append(("human_roles", f"A human-human batch needs two human roles (empty: all of {allowed_roles})."))
    else:
        out.append(("pairing", f"Unknown pairing {pairing!r}; one of: {', '.join(Batch.Pairing.values)}."))
    if on_timeout == Batch.OnTimeout.AGENT and pairing == Batch.Pairing.HUMAN_HUMAN:
        missing = [r for r in humans if not agents.get(r)]
        if missing:
            out.append((f"agents.{missing[0]}", f"on_timeout=agent pairs a worker with an agent: name an agent for the "
                                  f"{', '.join(missing)} seat(s)."))

    if not isinstance(config, dict):
        out.append(("config", "config must be a JSON object of game settings."))
        config = {}
    schema, choices = config_schema(game_id), config_choices(game_id)
    for key, value in config.items():
        if key not in schema:
            out.append(("config", f"Unknown setting {key!r} for {game_id}; its settings are: "
                                  f"{', '.join(sorted(schema))}."))
        elif not _type_ok(value, schema[key]):
            out.append((f"config.{key}", f"Setting {key!r} must be {' or '.join(t.__name__ for t in schema[key])}, "
                                  f"not {value!r}."))
        elif key in _POSITIVE_INTS and value < 1:
            out.append((f"config.{key}", f"Setting {key!r} must be a positive integer, not {value!r}."))
        elif key in choices and value not in choices[key]:
            out.append((f"config.{key}", f"Setting {key!r} must be one of {', '.join(choices[key])}, "
                                         f"not {value!r}."))
    return out


def worker_problems(agents: dict) -> list[str]:
    """The batch's agents whose Celery queue has no live worker (agents/liveness.py)."""
    known = agent_seats.all_agents()
    queues = {name: known[name].queue_name for name in set(agents.values()) if name in known}
    dead = agent_seats.dead_queues(sorted(set(queues.values()))) or []
    return [f"No worker is running for agent {name!r} (queue {queue}): start " + _worker_command(known[name])
            for name, queue in sorted(queues.items()) if queue in dead]


def _worker_command(spec) -> str:
    if spec.model is not None and spec.model.kind == "torch":   # a model family's batched worker
        return (f"`manage.py model_worker --family {spec.model.family_key}` (the full stack: model agents "
                f"do not run in the web process).")
    return f"`manage.py agent_worker --agents {spec.name}`{' --gpu' if spec.device == 'gpu' else ''}."


def batch_problems(batch, *, live: bool = True) -> list[str]:
    """Why this batch cannot run (empty: it can). ``live``: also ask whether its agents' workers run."""
    out = [msg for _, msg in problems(game_id=batch.game_id, pairing=batch.pairing, human_roles=batch.human_roles,
                                      agents=batch.agents, on_timeout=batch.on_timeout, config=batch.config)]
    uses_agents = batch.pairing != "human-human" or batch.on_timeout == "agent"
    if not out and live and uses_agents:
        out += worker_problems(batch.agents)
    return out


def runnable(batches) -> list:
    return [b for b in batches if not batch_problems(b)]
