"""What makes a batch runnable: one check shared by the admin's batch form and the entry views.

``problems(...)`` returns a list of ``(field, message)`` pairs (field: ``game_id``, ``pairing``,
``human_roles``, ``agents`` or ``agents.<role>``, ``config`` or ``config.<setting>``, ``assignment``,
and for a batch with arms ``arms[i]`` or ``arms[i].<field>``, e.g. ``arms[1].agents.listener``,
whose message starts with that field and the arm's name: a batch whose arms cannot all run is
refused like one whose agents cannot);
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
from live.arms import ARM_KEYS, arms_of
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


def problems(*, game_id, pairing, human_roles, agents, on_timeout, config, arms=None,
             assignment: str = "between", games_per_worker: int = 1) -> list[tuple[str, str]]:
    if game_id not in GAMES:
        return [("game_id", f"Unknown game {game_id!r}; registered games: {', '.join(sorted(GAMES))}.")]
    if arms:
        return _batch_with_arms(game_id=game_id, pairing=pairing, human_roles=human_roles, agents=agents,
                                on_timeout=on_timeout, config=config, arms=arms, assignment=assignment,
                                games_per_worker=games_per_worker)
    out = _problems(game_id=game_id, pairing=pairing, human_roles=human_roles, agents=agents, on_timeout=on_timeout,
                    config=config)
    if assignment not in Batch.Assignment.values:
        out.append(("assignment", f"Unknown assignment {assignment!r}; one of: {', '.join(Batch.Assignment.values)}."))
    return out


def _batch_with_arms(*, game_id, pairing, human_roles, agents, on_timeout, config, arms, assignment,
                     games_per_worker) -> list[tuple[str, str]]:
    """A batch with arms: its own roles, settings and on_timeout agents (a person who waited too
    long for a human-human arm's partner) are checked as a batch's; each arm as a batch of its own
    (its pairing: agent-agent in an agent-agent batch, human-human when it names no agent, else
    human-agent), its problems named ``arms[i].<field>`` with the arm's name."""
    base = _problems(game_id=game_id, pairing=Batch.Pairing.HUMAN_HUMAN, human_roles=[], agents=agents,
                     on_timeout=on_timeout, config=config)
    out = [(f, m) for f, m in _problems(game_id=game_id, pairing=Batch.Pairing.HUMAN_AGENT, human_roles=human_roles,
                                        agents={}, on_timeout=Batch.OnTimeout.LEAVE, config={})
           if f == "human_roles"]
    out += [(f, m) for f, m in base if f in ("game_id", "config") or f.startswith("config.")
            or (on_timeout == Batch.OnTimeout.AGENT and f.startswith("agents"))]
    if pairing not in Batch.Pairing.values:
        out.append(("pairing", f"Unknown pairing {pairing!r}; one of: {', '.join(Batch.Pairing.values)}."))
    if assignment not in Batch.Assignment.values:
        out.append(("assignment", f"Unknown assignment {assignment!r}; one of: {', '.join(Batch.Assignment.values)}."))
    elif assignment == Batch.Assignment.WITHIN and (games_per_worker or 1) < 2:
        out.append(("assignment", "Within-subjects assignment needs games per worker > 1 (each person plays "
                                  "the arms in turn); set games per worker, or assign between subjects."))
    if not isinstance(arms, list):
        return out + [("arms", "arms must be a JSON list of arms, each {\"name\", \"agents\", \"config\", "
                               "\"weight\"}.")]
    names: set[str] = set()
    for i, arm in enumerate(arms):
        where = f"arms[{i}]"
        if not isinstance(arm, dict):
            out.append((where, f"{where}: an arm must be a JSON object with a name and its agents."))
            continue
        name = arm.get("name")
        named = f" (arm {name!r})" if isinstance(name, str) and name.strip() else ""

        def add(fld: str, msg: str, named=named) -> None:
            out.append((fld, f"{fld}{named}: {msg}"))

        unknown = sorted(set(arm) - set(ARM_KEYS))
        if unknown:
            add(where, f"unknown key(s) {', '.join(unknown)}; an arm has: {', '.join(ARM_KEYS)}.")
        if not isinstance(name, str) or not name.strip():
            add(f"{where}.name", "every arm needs a name (what the exports and the monitor call it).")
        elif len(name) > 64:
            add(f"{where}.name", "an arm's name is at most 64 characters.")
        elif name in names:
            add(f"{where}.name", f"two arms are named {name!r}; arm names must differ.")
        else:
            names.add(name)
        weight = arm.get("weight", 1)
        if isinstance(weight, bool) or not isinstance(weight, int) or weight < 1:
            add(f"{where}.weight", f"weight must be a positive integer, not {weight!r}.")
        arm_agents = arm.get("agents", {})
        if not isinstance(arm_agents, dict):
            add(f"{where}.agents", "agents must be a JSON object {role: agent name}.")
            continue
        # a human-human arm: people in every role unless it says which; else the batch's roles for people
        arm_roles = arm.get("human_roles") or ([] if not any(arm_agents.values()) else human_roles)
        arm_config = arm.get("config", {})
        if pairing == Batch.Pairing.AGENT_AGENT:
            arm_pairing = Batch.Pairing.AGENT_AGENT
        else:
            arm_pairing = Batch.Pairing.HUMAN_AGENT if any(arm_agents.values()) else Batch.Pairing.HUMAN_HUMAN
        for fld, msg in _problems(game_id=game_id, pairing=arm_pairing, human_roles=arm_roles, agents=arm_agents,
                                  on_timeout=Batch.OnTimeout.LEAVE, config=arm_config):
            add(f"{where}.{fld}", msg)
    return out


def _problems(*, game_id, pairing, human_roles, agents, on_timeout, config) -> list[tuple[str, str]]:
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
    out = []
    for name, queue in sorted(queues.items()):
        if queue not in dead:
            continue
        why = agent_seats.queue_problem(queue)   # the embedded mode's model server says why
        out.append(f"Model agent {name!r} cannot run (queue {queue}): {why}." if why else
                   f"No worker is running for agent {name!r} (queue {queue}): start " + _worker_command(known[name]))
    return out


def _worker_command(spec) -> str:
    if spec.model is not None and spec.model.kind == "torch":   # a model family's batched worker
        return (f"`manage.py model_worker --family {spec.model.family_key}` (the full stack: model agents "
                f"do not run in the web process).")
    return f"`manage.py agent_worker --agents {spec.name}`{' --gpu' if spec.device == 'gpu' else ''}."


def batch_problems(batch, *, live: bool = True) -> list[str]:
    """Why this batch cannot run (empty: it can). ``live``: also ask whether its agents' workers run."""
    out = [msg for _, msg in problems(game_id=batch.game_id, pairing=batch.pairing, human_roles=batch.human_roles,
                                      agents=batch.agents, on_timeout=batch.on_timeout, config=batch.config,
                                      arms=batch.arms, assignment=batch.assignment,
                                      games_per_worker=batch.games_per_worker)]
    if out or not live:
        return out
    if batch.arms:   # every arm's agents, and the batch's own when on_timeout seats a person with them
        used = {f"{arm.name}.{role}": name for arm in arms_of(batch) for role, name in arm.agents.items() if name}
        if batch.on_timeout == "agent":
            used.update({f".{role}": name for role, name in (batch.agents or {}).items() if name})
        return worker_problems(used)
    if batch.pairing != "human-human" or batch.on_timeout == "agent":
        out += worker_problems(batch.agents)
    return out


def runnable(batches) -> list:
    return [b for b in batches if not batch_problems(b)]
