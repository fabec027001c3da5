"""The game contract as a test library: a game author calls it on a :class:`~games.registry.GameSpec`.

In the spirit of PettingZoo's ``api_test`` and ``seed_test``: one call, :func:`check_game`, runs
every pure check of the contract (games/base.py, games/hidden.py, games/actions.py) on one game
and raises :class:`ContractError` (an ``AssertionError``, so pytest shows it as a failed assert)
naming the first promise broken. ``tests/test_game_contract.py`` runs each check, parametrised
over every registered game; a new game's own tests can call it the same way::

    from games import testing

    def test_my_game_keeps_the_contract():
        testing.check_game(MY_SPEC)

The checks (each also callable alone, all pure: no database, no server):

* :func:`check_rules_import_no_django`: ``rules.py``, ``content.py`` and ``actions.py`` import no
  Django, no models, no service, no channels or celery;
* :func:`check_agents_play_to_the_end` (``play``): the game's agents play a match to the end through
  ``apply`` alone; ``apply`` never mutates the state it is given; every view, event and the
  outcome survive JSON; keys in ``STATIC_STATE_KEYS`` never change; every seat's ``to_act`` turn
  gets a move; ``is_over`` holds at the end, ``to_act`` is then empty, and ``outcome_for`` of every
  role survives JSON;
* :func:`check_log_replays`: content + seed + the logged actions replay to the live state;
* :func:`check_same_seed_same_trace`: two plays with one seed give identical event traces;
* :func:`check_nonsense_is_refused`: actions with no, a wrong or an unknown ``type`` are refused
  by every role (and :data:`~games.base.SYSTEM`) with a typed :class:`~games.base.IllegalAction`
  and change nothing;
* :func:`check_action_schema`: the typed schema (``<package>.actions.SCHEMA``) has exactly the
  rules' action types, every model names its roles and forbids unknown keys strictly, and every
  action the agents play validates and normalises to exactly what was sent;
* :func:`check_random_legal_play_ends`: each role playing the game's random legal moves
  (``hidden.random_action``) against the agents of the others finishes the game;
* :func:`check_hidden_declarations`: the module declares ``SECRET_ROLES``; no seat's projection
  (``view_for``, ``outcome_for``) ever holds a value ``hidden_from`` declares for it, while the
  full record or another seat's view does hold it at some point (the declaration names real
  values); the full record holds the secrets of the roles in ``OUTCOME_HIDES_FROM``;
* :func:`check_non_interference`: varying what a role must not know (``hidden.vary``) changes
  neither its view, its start events nor its outcome, and changes something elsewhere;
* :func:`check_llm_roles`: every role with an LLM adapter (``<package>.llm.ROLES``,
  :mod:`games.llm`), over played matches: its prompt renders, its turns end with a "user" turn,
  its decision schema is a strict object schema, decisions generated from the schema become
  actions the game's schema and rules accept, wrong decisions raise
  :class:`~games.llm.DecisionError`, the request is a function of the view alone, and no value
  hidden from the role is in it.

What needs the real server (the websocket and HTTP leak audit) is not here: it plays matches
through the platform's services and pages (``tests/support/leak_audit.py``), which the game SDK does not
import.

Agents: every check that plays takes ``agents``, a mapping of role to a built agent (an object with
``act(view)``); left out, the first CPU agent per role (by name) of the game's own
``<package>.agents.AGENTS`` is built.
"""
from __future__ import annotations

import ast
import dataclasses
import copy
import json
import random
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from games.base import SYSTEM, IllegalAction
from games.hidden import leaks
from games.llm import DecisionError, Image, LlmRole, render_system

try:   # the JSON Schema meta-check of the decision schemas; the structural checks run without it
    import jsonschema
except ImportError:  # pragma: no cover - a test dependency (pyproject's "test" extra)
    jsonschema = None

START_CLOCK_MS = 1_800_000_000_000
FORBIDDEN_IMPORTS = ("games.models", "live.", "crowd.", "research.", "channels", "celery")


class ContractError(AssertionError):
    """A promise of the game contract the game does not keep."""


def _check(condition: Any, message: str) -> None:
    if not condition:
        raise ContractError(message)


def _json_round_trip(value: Any, what: str) -> None:
    try:
        again = json.loads(json.dumps(value))
    except (TypeError, ValueError) as exc:
        raise ContractError(f"{what} is not JSON-safe: {exc}") from None
    _check(again == value, f"{what} changes through JSON")


# ----------------------------------------------------------------------------------------- agents
def default_agents(spec) -> dict[str, Any]:
    """The first CPU agent per role, by name, of the game's own ``AGENTS``, built."""
    chosen = {}
    for agent in sorted(getattr(spec.agents, "AGENTS", []), key=lambda a: a.name):
        if agent.game_id == spec.id and agent.device == "cpu":
            chosen.setdefault(agent.role, agent)
    return {role: agent.build() for role, agent in chosen.items()}


def _agents(spec, agents: Mapping[str, Any] | None) -> Mapping[str, Any]:
    agents = default_agents(spec) if agents is None else agents
    missing = set(spec.rules.ROLES) - set(agents)
    _check(not missing, f"{spec.id}: no agent for role(s) {sorted(missing)}; every role needs one to play")
    return agents


def small_config(spec, rounds: int) -> dict:
    """The game's default config with ``rounds`` capped (a short match)."""
    config = dict(spec.default_config)
    if "rounds" in config:
        config["rounds"] = min(config["rounds"], rounds)
    return config


# ------------------------------------------------------------------------------------------ purity
def check_rules_import_no_django(spec) -> None:
    """``rules.py`` and ``content.py`` (and ``actions.py``, if the package has one) import no Django
    and nothing of the platform: they are pure, so content + seed + the log replay anywhere."""
    package = Path(spec.rules.__file__).parent
    for name in ("rules.py", "content.py", "actions.py"):
        path = package / name
        if name == "actions.py" and not path.exists():
            continue
        imported = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                imported |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module)
        _check(not any(m == "django" or m.startswith("django.") for m in imported),
               f"{package.name}/{name} imports Django")
        bad = sorted(m for m in imported if m.startswith(FORBIDDEN_IMPORTS))
        _check(not bad, f"{package.name}/{name} imports the platform: {bad}")


# -------------------------------------------------------------------------------------------- play
@dataclass
class Play:
    """One match played through the pure rules: what :func:`play` returns."""

    content: dict
    config: dict
    state: dict
    actions: list[tuple[str, dict]]     # (role, action with its "at"), in order
    trace: list[list[dict]]             # the start events, then each action's events (as JSON)


def play(spec, seed: int, *, agents: Mapping[str, Any] | None = None, rounds: int = 5,
         max_steps: int = 5000) -> Play:
    """Play one match of ``spec`` to the end with ``agents`` through the pure rules, checking every
    step (see the module docstring). At most ``rounds`` rounds when the game's config has any."""
    rules = spec.rules
    agents = _agents(spec, agents)
    config = small_config(spec, rounds)
    content = spec.content.generate(seed, config)
    _json_round_trip(content, f"{spec.id}: the content")
    state = rules.initial_state(content, seed, config)
    _json_round_trip(state, f"{spec.id}: the initial state")
    static = {k: copy.deepcopy(state[k]) for k in getattr(rules, "STATIC_STATE_KEYS", ())}
    trace = [[e.to_json() for e in rules.start_events(state)]]
    _json_round_trip(trace[0], f"{spec.id}: the start events")
    actions: list[tuple[str, dict]] = []
    clock = START_CLOCK_MS
    for step in range(max_steps):
        if rules.is_over(state):
            break
        for role in rules.ROLES:
            _json_round_trip(rules.view_for(state, role), f"{spec.id}: the {role}'s view")
        moved = False
        waiting = tuple(rules.to_act(state))
        _check(waiting and set(waiting) <= set(rules.ROLES) | {SYSTEM},
               f"{spec.id}: a game not over waits on {waiting!r}, not on its roles")
        for role in waiting:
            if role == SYSTEM:
                continue
            action = agents[role].act(rules.view_for(state, role))
            if action is None:
                continue
            clock += 1500
            stamped = {**action, "at": clock}
            before = json.dumps(state, sort_keys=True)
            state_copy = copy.deepcopy(state)
            try:
                new_state, events = rules.apply(state, role, stamped)
            except IllegalAction as exc:
                raise ContractError(f"{spec.id}: the {role}'s agent played an illegal move {action!r}: "
                                    f"{exc.code}: {exc.message}") from None
            _check(json.dumps(state, sort_keys=True) == before and state == state_copy,
                   f"{spec.id}: apply mutated its input state")
            wire = [e.to_json() for e in events]
            _json_round_trip(wire, f"{spec.id}: the events of {action.get('type')!r}")
            _json_round_trip(new_state, f"{spec.id}: the state after {action.get('type')!r}")
            trace.append(wire)
            actions.append((role, stamped))
            state = new_state
            # keys declared static are stored once per match, not with every snapshot
            _check({k: state[k] for k in static} == static, f"{spec.id}: a STATIC_STATE_KEYS key changed")
            moved = True
            break
        _check(moved, f"{spec.id}: no agent moves in {rules.to_act(state)} at step {step}")
    _check(rules.is_over(state), f"{spec.id} did not end in {max_steps} moves")
    _check(tuple(rules.to_act(state)) == (), f"{spec.id}: the game is over but waits on {rules.to_act(state)}")
    _json_round_trip(rules.outcome(state), f"{spec.id}: the outcome")
    for role in rules.ROLES:
        _json_round_trip(rules.outcome_for(state, role), f"{spec.id}: the {role}'s outcome")
    return Play(content, config, state, actions, trace)


def check_agents_play_to_the_end(spec, *, agents=None, seed: int = 11) -> Play:
    """The agents play a match to the end, every step checked (:func:`play`)."""
    return play(spec, seed, agents=agents)


def check_log_replays(spec, *, agents=None, seed: int = 11) -> None:
    """Content + seed + the logged actions replay to the live state."""
    rules = spec.rules
    done = play(spec, seed, agents=agents)
    replayed = rules.initial_state(done.content, seed, done.config)
    for role, action in done.actions:
        replayed, _ = rules.apply(replayed, role, action)
    _check(replayed == done.state, f"{spec.id}: the log replayed does not give the live state")


def check_same_seed_same_trace(spec, *, agents=None, agents_again=None, seed: int = 5) -> None:
    """Two plays with one seed give identical traces (``agents_again``: a second set of agents for
    the second play; left out, the same ones, which must then keep no state between calls)."""
    first = play(spec, seed, agents=agents).trace
    second = play(spec, seed, agents=agents_again if agents_again is not None else agents).trace
    _check(first == second, f"{spec.id}: the same seed gave two different traces")


def check_nonsense_is_refused(spec, *, seed: int = 3) -> None:
    """No, a wrong or an unknown ``type``: refused by every role and the system with a typed
    :class:`IllegalAction`, the state unchanged."""
    rules = spec.rules
    config = dict(spec.default_config)
    state = rules.initial_state(spec.content.generate(seed, config), seed, config)
    before = json.dumps(state, sort_keys=True)
    for role in (*rules.ROLES, SYSTEM):
        for bad in ({"type": "no-such-move", "at": 1}, {"at": 1}, {"type": 7, "at": 1}):
            try:
                rules.apply(state, role, bad)
            except IllegalAction as exc:
                _check(exc.code and exc.message, f"{spec.id}: {bad!r} refused without a code or message")
            else:
                raise ContractError(f"{spec.id}: {role} playing {bad!r} was not refused")
    _check(json.dumps(state, sort_keys=True) == before, f"{spec.id}: a refused action changed the state")


# ---------------------------------------------------------------------------------- action schema
def rules_action_types(spec) -> tuple[str, ...]:
    rules = spec.rules
    return tuple(getattr(rules, "ACTIONS", None) or rules.C.ACTIONS)


def validates_as_sent(spec, action: dict) -> None:
    """``action`` (its "at" left out) validates and normalises to exactly what was sent."""
    sent = {key: value for key, value in action.items() if key != "at"}
    try:
        normalised = spec.actions.validate(sent)
    except IllegalAction as exc:
        raise ContractError(f"{spec.id}: {sent!r} refused by the schema: {exc.code}: {exc.message}") from None
    _check(normalised == sent, f"{spec.id}: {sent!r} normalised to {normalised!r}")
    _json_round_trip(normalised, f"{spec.id}: the normalised {sent.get('type')!r}")


def check_action_schema(spec, *, agents=None, seed: int = 11) -> None:
    """The schema has exactly the rules' action types; each model names roles of the game and is
    strict, frozen and forbids unknown keys; every action the agents play validates as sent."""
    schema = spec.actions
    _check(set(schema.types) == set(rules_action_types(spec)),
           f"{spec.id}: the schema's types {sorted(schema.types)} are not the rules' "
           f"{sorted(rules_action_types(spec))}")
    roles = set(spec.rules.ROLES) | {SYSTEM}
    for model in schema.models.values():
        _check(model.ROLES and set(model.ROLES) <= roles, f"{spec.id}: {model.__name__}.ROLES {model.ROLES}")
        _check(model.model_config["extra"] == "forbid" and model.model_config["strict"]
               and model.model_config["frozen"], f"{spec.id}: {model.__name__} is not strict, frozen, extra=forbid")
    played = play(spec, seed, agents=agents).actions
    _check(played, f"{spec.id}: the agents played no action")
    for _role, action in played:
        validates_as_sent(spec, action)


# ------------------------------------------------------------------------------ hidden information
def random_vs_agent(spec, random_role: str, seed: int, *, agents=None, rounds: int = 3,
                    max_steps: int = 3000) -> list[dict]:
    """The states of one match (the first included): ``random_role`` plays the game's random
    legal moves (``hidden.random_action``), the other roles their agents; illegal random moves are
    skipped. Each role is offered a move in turn, whoever the rules wait on."""
    rules, hidden = spec.rules, spec.hidden
    agents = _agents(spec, agents)
    config = small_config(spec, rounds)
    state = rules.initial_state(spec.content.generate(seed, config), seed, config)
    rng = random.Random(seed)
    states, clock = [state], START_CLOCK_MS
    for _ in range(max_steps):
        if rules.is_over(state):
            break
        for role in rules.ROLES:
            view = rules.view_for(state, role)
            action = hidden.random_action(view, rng) if role == random_role else agents[role].act(view)
            if action is None:
                continue
            clock += 700
            try:
                state, _ = rules.apply(state, role, {**action, "at": clock})
            except IllegalAction:
                continue
            states.append(state)
    return states


def check_random_legal_play_ends(spec, *, agents=None, seed: int = 21) -> None:
    """Each role playing random legal moves against the others' agents finishes the game."""
    rules = spec.rules
    for role in rules.ROLES:
        states = random_vs_agent(spec, role, seed, agents=agents)
        _check(rules.is_over(states[-1]), f"{spec.id}: a random {role} against the agent did not finish")
        _check(len(states) > 3, f"{spec.id}: a random {role} game ended after {len(states) - 1} moves")


def check_hidden_declarations(spec, *, agents=None, seed: int = 33) -> None:
    """``view_for`` and ``outcome_for`` of a role never hold what ``hidden_from`` declares for it,
    while the full record (``outcome``) or another seat's view does at some point, for every role
    in ``hidden.SECRET_ROLES``: the declaration names real values the leak audit can find. For the
    roles in ``hidden.OUTCOME_HIDES_FROM`` the full record itself holds their secrets early in a
    match (it must never be sent to them as it is)."""
    rules, hidden = spec.rules, spec.hidden
    secret_roles = getattr(hidden, "SECRET_ROLES", None)
    _check(secret_roles is not None, f"{spec.id}: {hidden.__name__} declares no SECRET_ROLES "
                                     "(the roles something is hidden from; () when none)")
    _check(set(secret_roles) <= set(rules.ROLES), f"{spec.id}: SECRET_ROLES {secret_roles} are not all roles")
    caught = Counter()
    for random_role in rules.ROLES:
        for state in random_vs_agent(spec, random_role, seed, agents=agents):
            for role in rules.ROLES:
                secrets = hidden.hidden_from(state, role)
                own = {"view": rules.view_for(state, role), "outcome": rules.outcome_for(state, role)}
                found = leaks(own, secrets)
                _check(found == [], f"{spec.id} {role}: {[str(leak) for leak in found]}")
                others = {"outcome": rules.outcome(state),
                          "views": [rules.view_for(state, r) for r in rules.ROLES if r != role]}
                caught[role] += bool(leaks(others, secrets))
    for role in secret_roles:
        _check(caught[role] > 0, f"{spec.id}: what {role} must not know is never found anywhere")
    for role in getattr(hidden, "OUTCOME_HIDES_FROM", ()):
        state = random_vs_agent(spec, role, seed, agents=agents)[4]
        _check(leaks({"outcome": rules.outcome(state)}, hidden.hidden_from(state, role)),
               f"{spec.id}: OUTCOME_HIDES_FROM names {role}, but the full record holds none of its secrets")


def check_non_interference(spec, *, agents=None, seed: int = 44) -> None:
    """The state with the hidden part varied (``hidden.vary``) gives the role the same start
    events, view and outcome; and the varied part shows in the full record or another seat's
    view (the check has teeth). Catches small values no value scan can (a position 0..2)."""
    rules, hidden = spec.rules, spec.hidden
    rng = random.Random(7)
    varied = Counter()
    differs = Counter()
    for random_role in rules.ROLES:
        for index, state in enumerate(random_vs_agent(spec, random_role, seed, agents=agents)):
            for role in rules.ROLES:
                other = hidden.vary(state, role, rng)
                if other is None:
                    continue
                varied[role] += 1
                if index == 0:   # the start events, as this role's socket gets them
                    _check([e.for_role(role) for e in rules.start_events(other)]
                           == [e.for_role(role) for e in rules.start_events(state)], f"{spec.id} {role}: start")
                _check(rules.view_for(other, role) == rules.view_for(state, role), f"{spec.id} {role}: view")
                _check(rules.outcome_for(other, role) == rules.outcome_for(state, role),
                       f"{spec.id} {role}: outcome")
                differs[role] += (rules.outcome(other) != rules.outcome(state)
                                  or any(rules.view_for(other, r) != rules.view_for(state, r) for r in rules.ROLES))
    _check(varied, f"{spec.id}: nothing is ever hidden from any role")
    for role in varied:
        _check(differs[role] > 0, f"{spec.id}: varying what {role} must not know changed nothing anywhere")


# -------------------------------------------------------------------------------------- everything
def check_game(spec, *, agents=None, agents_again=None) -> None:
    """Every pure check of the contract on one game (see the module docstring)."""
    check_rules_import_no_django(spec)
    check_nonsense_is_refused(spec)
    check_agents_play_to_the_end(spec, agents=agents)
    check_log_replays(spec, agents=agents)
    check_same_seed_same_trace(spec, agents=agents, agents_again=agents_again)
    check_action_schema(spec, agents=agents)
    check_random_legal_play_ends(spec, agents=agents)
    check_hidden_declarations(spec, agents=agents)
    check_non_interference(spec, agents=agents)
    check_llm_roles(spec, agents=agents)


# -------------------------------------------------------------------------------------- LLM roles
#: Keywords a decision schema may use: what strict structured outputs accept (OpenAI's subset, which
#: vLLM, TGI and Ollama also honour), plus the string and array bounds the open servers enforce.
SCHEMA_KEYWORDS = frozenset({
    "type", "properties", "required", "additionalProperties", "items", "enum", "const", "anyOf",
    "$defs", "$ref", "description", "title", "minimum", "maximum", "exclusiveMinimum",
    "exclusiveMaximum", "multipleOf", "pattern", "format", "minLength", "maxLength", "minItems",
    "maxItems",
})
SCHEMA_TYPES = frozenset({"object", "array", "string", "integer", "number", "boolean", "null"})
_WORDS = ("the", "left", "bright", "one", "is", "there", "a", "small", "red", "cube", "yes", "no",
          "two", "blue", "near", "darker", "green", "metal", "sphere", "what")


def check_decision_schema(schema: Any, what: str = "the decision schema") -> None:
    """``schema`` is a JSON Schema object schema in strict form: JSON-safe, ``type: object`` at the
    root, every object's properties all ``required`` and ``additionalProperties: false``, only
    :data:`SCHEMA_KEYWORDS`; and a valid schema for the ``jsonschema`` library's meta-check."""
    _json_round_trip(schema, what)
    _check(isinstance(schema, dict) and schema.get("type") == "object",
           f"{what} must be an object schema (type: object at the root): {schema!r}"[:300])
    _strict_node(schema, what, "$")
    if jsonschema is not None:
        try:
            jsonschema.Draft202012Validator.check_schema(schema)
        except jsonschema.SchemaError as exc:
            raise ContractError(f"{what} is not a valid JSON Schema: {exc.message}") from None


def _strict_node(node: Any, what: str, path: str) -> None:
    _check(isinstance(node, dict), f"{what} at {path}: a schema must be an object, not {node!r}"[:300])
    unknown = sorted(set(node) - SCHEMA_KEYWORDS)
    _check(not unknown, f"{what} at {path}: keywords strict structured outputs do not accept: {unknown}")
    kinds = node.get("type")
    kinds = [kinds] if isinstance(kinds, str) else kinds
    if kinds is not None:
        _check(isinstance(kinds, list) and kinds and set(kinds) <= SCHEMA_TYPES,
               f"{what} at {path}: type {node.get('type')!r}")
    _check(kinds is not None or any(k in node for k in ("enum", "const", "anyOf", "$ref")),
           f"{what} at {path}: no type, enum, const, anyOf or $ref")
    if "enum" in node:
        _check(isinstance(node["enum"], list) and node["enum"], f"{what} at {path}: enum must be a non-empty list")
    if kinds and "object" in kinds:
        props = node.get("properties")
        _check(isinstance(props, dict) and props, f"{what} at {path}: an object needs properties")
        _check(isinstance(node.get("required"), list) and set(node["required"]) == set(props)
               and len(node["required"]) == len(props),
               f"{what} at {path}: strict form needs every property required: "
               f"required {node.get('required')!r}, properties {sorted(props)}")
        _check(node.get("additionalProperties") is False,
               f"{what} at {path}: strict form needs additionalProperties: false")
        for name, child in props.items():
            _strict_node(child, what, f"{path}.{name}")
    if kinds and "array" in kinds:
        _check("items" in node, f"{what} at {path}: an array needs items")
        _strict_node(node["items"], what, f"{path}[]")
    for index, branch in enumerate(node.get("anyOf") or ()):
        _strict_node(branch, what, f"{path}.anyOf[{index}]")
    for name, child in (node.get("$defs") or {}).items():
        _strict_node(child, what, f"{path}.$defs.{name}")


def _resolve_ref(node: dict, root: dict) -> dict:
    while isinstance(node, dict) and "$ref" in node:
        ref = node["$ref"]
        _check(isinstance(ref, str) and ref.startswith("#/"), f"only local $refs are supported, not {ref!r}")
        target: Any = root
        for part in ref[2:].split("/"):
            target = target[part]
        node = target
    return node


def example_decision(schema: dict, rng: random.Random | None = None, *, root: dict | None = None) -> Any:
    """A value that follows ``schema`` (the subset :func:`check_decision_schema` accepts): with no
    ``rng`` the plain one (the first enum value or anyOf branch, the minimum, a short sentence,
    the fewest items); with one, a random one (any enum value, any bound-respecting number, a few
    random words). ``pattern`` is not honoured."""
    root = schema if root is None else root
    node = _resolve_ref(schema, root)
    if "const" in node:
        return copy.deepcopy(node["const"])
    if "enum" in node:
        return copy.deepcopy(rng.choice(node["enum"]) if rng else node["enum"][0])
    if "anyOf" in node:
        branches = node["anyOf"]
        return example_decision(rng.choice(branches) if rng else branches[0], rng, root=root)
    kinds = node.get("type")
    kinds = [kinds] if isinstance(kinds, str) else list(kinds)
    real = [k for k in kinds if k != "null"] or ["null"]
    kind = rng.choice(real) if rng else real[0]
    if kind == "object":
        return {name: example_decision(child, rng, root=root) for name, child in node["properties"].items()}
    if kind == "array":
        lo = int(node.get("minItems", 0))
        hi = int(node.get("maxItems", lo + 3))
        count = rng.randint(lo, max(lo, min(hi, lo + 3))) if rng else max(lo, min(1, hi))
        return [example_decision(node["items"], rng, root=root) for _ in range(count)]
    if kind == "string":
        lo, hi = int(node.get("minLength", 1)), int(node.get("maxLength", 200))
        text = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 8))) if rng else "the small one on the left"
        text = text + "x" * (lo - len(text)) if len(text) < lo else text
        return text[:hi]
    if kind in ("integer", "number"):
        lo = node.get("minimum", node.get("exclusiveMinimum", -1) + 1 if "exclusiveMinimum" in node else 0)
        hi = node.get("maximum", node.get("exclusiveMaximum", lo + 11) - 1 if "exclusiveMaximum" in node else lo + 10)
        value = rng.randint(int(lo), int(hi)) if rng else int(lo)
        return value if kind == "integer" else float(value)
    if kind == "boolean":
        return rng.random() < 0.5 if rng else False
    return None


def _wrong_decisions(schema: dict, good: dict) -> list[tuple[str, dict]]:
    """Decisions that break ``schema``: none of its fields, each field left out, each field of the
    wrong type, each enum field outside its enum, each bounded string too long."""
    wrong: list[tuple[str, dict]] = [("an empty object", {})]
    for name, child in schema["properties"].items():
        child = _resolve_ref(child, schema)
        wrong.append((f"without {name!r}", {k: v for k, v in good.items() if k != name}))
        kinds = child.get("type")
        kinds = [kinds] if isinstance(kinds, str) else list(kinds or ())
        odd = [v for v in ([1, 2], {"x": 1}, 7, "seven") if _type_of(v) not in kinds
               and not ("number" in kinds and _type_of(v) == "integer")]
        if "enum" not in child or not any(_type_of(v) == _type_of(odd[0]) for v in child["enum"]):
            wrong.append((f"{name!r} of the wrong type", {**good, name: odd[0]}))
        if "enum" in child:
            outside = next(v for v in ("no-such-choice", 987654, [0]) if v not in child["enum"])
            wrong.append((f"{name!r} outside its enum", {**good, name: outside}))
        if kinds and set(kinds) <= {"integer", "number"} and "enum" not in child:
            for bound, step in (("minimum", -1), ("maximum", 1)):
                if bound in child:
                    wrong.append((f"{name!r} out of range", {**good, name: child[bound] + step}))
        if "string" in kinds and "maxLength" in child:
            wrong.append((f"{name!r} too long", {**good, name: "x" * (int(child["maxLength"]) + 1)}))
    return wrong


def _type_of(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    return {float: "number", str: "string", list: "array", dict: "object"}.get(type(value), "null")


def _request(adapter: LlmRole, view: dict) -> dict:
    """What the game decides of a request for ``view``: the rendered system prompt, the turns, the
    decision schema, the images' captions and sha256 (checked on the way)."""
    view = copy.deepcopy(view)    # an adapter must not need (or change) the caller's dict
    variables = adapter.variables(view)
    _check(isinstance(variables, dict) and all(isinstance(k, str) for k in variables),
           f"variables(view) must be a dict of names, not {type(variables).__name__}")
    try:
        system = render_system(adapter.template_text(), variables)
    except ValueError as exc:
        raise ContractError(f"the prompt template does not render: {exc}") from None
    turns = adapter.turns(view)
    _check(isinstance(turns, list) and turns, "turns(view) must be a non-empty list of chat turns")
    for turn in turns:
        _check(isinstance(turn, dict) and set(turn) == {"role", "content"} and turn["role"] in ("user", "assistant")
               and isinstance(turn["content"], str) and turn["content"].strip(),
               f"a turn must be {{'role': 'user'|'assistant', 'content': non-empty str}}, not {turn!r}"[:300])
    _check(turns[-1]["role"] == "user", f"the turns must end with a 'user' turn asking for the decision: {turns[-1]!r}"[:300])
    schema = adapter.schema(view)
    check_decision_schema(schema)
    images = []
    if adapter.images is not None:
        pictures = adapter.images(view)
        _check(isinstance(pictures, list), "images(view) must be a list of games.llm.Image")
        for picture in pictures:
            _check(isinstance(picture, Image) and isinstance(picture.caption, str) and picture.caption.strip(),
                   f"images(view) gave {picture!r} (an Image with a caption is needed)"[:300])
            _check(picture.png[:8] == b"\x89PNG\r\n\x1a\n", f"the image {picture.caption!r} is not a PNG")
            images.append({"caption": picture.caption, "sha256": picture.sha256})
    return {"system": system, "turns": turns, "schema": schema, "images": images}


def _hidden_in_request(hidden, request: dict, view: dict) -> list:
    """Leaks of ``hidden`` in ``request``. A value the seat's own view holds in its allowed places
    (the GuessWhich secret as one image of the pool, the colour target as one of the listener's
    three colours) may be named by the request in any form: text cannot tell a pool listed from a
    secret told, so those are the request's non-interference check's (the request is a function of
    the view, and the view does not change when the secret does)."""
    held = [item for item in hidden
            if item.allowed_in and not leaks(view, [item]) and leaks(view, [dataclasses.replace(item, allowed_in=())])]
    return leaks(request, [item for item in hidden if item not in held])


def check_llm_roles(spec, *, agents=None, seed: int = 55, variants: int = 3) -> int:
    """Every role of the game with an LLM adapter (``spec.llm_role(role)``), over the states of
    matches played with each role random (:func:`random_vs_agent`), wherever the role is to act:

    * the prompt template (the game's default file) renders with ``variables(view)``; ``turns``
      are chat turns ending with a "user" turn; ``images`` are captioned PNGs;
    * ``schema(view)`` is a strict object schema (:func:`check_decision_schema`); ``stream_field``,
      where the schema has it (a turn whose decision lacks it streams nothing), is a string
      property, and some turn's schema has it;
    * the plain decision the schema allows and ``variants`` random ones
      (:func:`example_decision`) become, through ``to_action``, actions the game's schema
      validates as sent and its rules accept (or :class:`~games.llm.DecisionError`, for a random
      one the rules would refuse); decisions that break the schema raise ``DecisionError`` and
      nothing else;
    * the request is a function of the view alone (built twice, and from the state with what the
      role must not know varied, it is the same), and holds no value ``hidden_from`` declares
      for the role (:func:`_hidden_in_request`).

    Returns how many (state, role) requests were checked; 0 when the game has no LLM adapter."""
    roles_module = getattr(spec, "llm", None)
    adapters = dict(getattr(roles_module, "ROLES", {}) or {}) if roles_module is not None else {}
    if not adapters:
        return 0
    rules, hidden = spec.rules, spec.hidden
    _check(set(adapters) <= set(rules.ROLES), f"{spec.id}: llm.ROLES names {sorted(set(adapters) - set(rules.ROLES))}, "
                                               f"not roles of the game {rules.ROLES}")
    for role, adapter in adapters.items():
        _check(isinstance(adapter, LlmRole), f"{spec.id} {role}: llm.ROLES holds {adapter!r}, not a games.llm.LlmRole")
        _check(isinstance(adapter.version, str) and adapter.version.strip(), f"{spec.id} {role}: the adapter has no version")
        try:
            adapter.template_text()
        except (OSError, ValueError) as exc:
            raise ContractError(f"{spec.id} {role}: the default prompt template cannot be read: {exc}") from None
    rng = random.Random(seed)
    checked, streamed = Counter(), set()
    clock = START_CLOCK_MS + 10**9
    for random_role in rules.ROLES:
        for state in random_vs_agent(spec, random_role, seed, agents=agents):
            for role, adapter in adapters.items():
                if role not in rules.to_act(state):
                    continue
                view = rules.view_for(state, role)
                where = f"{spec.id} {role} (round {view.get('round', state.get('round'))!r})"
                try:
                    request = _request(adapter, view)
                except ContractError as exc:
                    raise ContractError(f"{where}: {exc}") from None
                _check(_request(adapter, view) == request, f"{where}: the request differs when built twice from one view")
                found = _hidden_in_request(hidden.hidden_from(state, role), request, view)
                _check(found == [], f"{where}: the request holds what the role must not know: "
                                    f"{[str(leak) for leak in found]}")
                other = hidden.vary(state, role, random.Random(rng.random()))
                if other is not None:
                    _check(_request(adapter, rules.view_for(other, role)) == request,
                           f"{where}: the request changes with what the role must not know (hidden.vary)")
                schema = request["schema"]
                if adapter.stream_field in schema["properties"]:   # a turn without it streams nothing
                    field_schema = _resolve_ref(schema["properties"][adapter.stream_field], schema)
                    _check(field_schema.get("type") == "string",
                           f"{where}: stream_field {adapter.stream_field!r} is not a string property of the decision")
                    streamed.add(role)
                decisions = [example_decision(schema)] + [example_decision(schema, rng) for _ in range(variants)]
                for index, decision in enumerate(decisions):
                    if jsonschema is not None:
                        jsonschema.validate(decision, schema)
                    clock += 1000
                    _check_decision(spec, adapter, state, role, view, decision, clock, must_act=index == 0,
                                    where=where)
                for label, decision in _wrong_decisions(schema, decisions[0]):
                    try:
                        action = adapter.to_action(copy.deepcopy(decision), copy.deepcopy(view))
                    except DecisionError as exc:
                        _check(str(exc).strip(), f"{where}: a DecisionError without a message for {label}")
                        continue
                    except Exception as exc:
                        raise ContractError(f"{where}: a decision {label} ({decision!r}) raised "
                                            f"{type(exc).__name__}: {exc}, not games.llm.DecisionError"[:400]) from None
                    raise ContractError(f"{where}: a decision {label} ({decision!r}) became {action!r}; "
                                        f"it must raise games.llm.DecisionError"[:400])
                checked[role] += 1
    missing = sorted(set(adapters) - set(checked))
    _check(not missing, f"{spec.id}: the played matches never let {missing} act")
    never = sorted(role for role, adapter in adapters.items() if adapter.stream_field is not None and role not in streamed)
    _check(not never, f"{spec.id}: the stream_field of {never} is in none of the decision schemas met")
    return sum(checked.values())


def _check_decision(spec, adapter, state, role, view, decision, clock, *, must_act, where) -> None:
    """``decision`` becomes an action the game's schema and rules accept; a random decision may
    instead raise DecisionError (its message non-empty), never another exception."""
    try:
        action = adapter.to_action(copy.deepcopy(decision), copy.deepcopy(view))
    except DecisionError as exc:
        _check(not must_act, f"{where}: the plain decision {decision!r} was refused: {exc}"[:400])
        _check(str(exc).strip(), f"{where}: a DecisionError without a message for {decision!r}")
        return
    except Exception as exc:
        raise ContractError(f"{where}: to_action({decision!r}) raised {type(exc).__name__}: {exc}"[:400]) from None
    _check(isinstance(action, dict) and "at" not in action,
           f"{where}: to_action({decision!r}) gave {action!r}; an action as the browser sends it (no 'at')"[:400])
    try:
        validates_as_sent(spec, action)
    except ContractError as exc:
        raise ContractError(f"{where}: to_action({decision!r}): {exc}"[:400]) from None
    try:
        spec.rules.apply(state, role, {**action, "at": clock})
    except IllegalAction as exc:
        raise ContractError(f"{where}: to_action({decision!r}) gave {action!r}, which the rules refuse: "
                            f"{exc.code}: {exc.message}"[:400]) from None
