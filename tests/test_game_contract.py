"""One contract suite run for every registered game (PettingZoo's api_test and seed_test).

Each game is played to the end by its registered agents through the pure rules alone:
``apply`` never mutates its input, every event and view survives JSON, the same seed gives the
same trace, keys declared in ``STATIC_STATE_KEYS`` never change, the log replays to the live state, nonsense is refused with a typed error and leaves
the state as it was, and the rules modules import no Django.
"""
from __future__ import annotations

import ast
import copy
import json
import random
from collections import Counter
from pathlib import Path

import pytest

from agents.registry import all_agents
from games.base import SYSTEM, IllegalAction
from games.hidden import leaks
from games.registry import GAMES
from tests import leak_audit

GAME_IDS = sorted(GAMES)


def agents_for(game_id: str) -> dict[str, str]:
    chosen = {}
    for name, spec in sorted(all_agents().items()):
        if spec.game_id == game_id and spec.device == "cpu":
            chosen.setdefault(spec.role, name)
    return chosen


def play(game_id: str, seed: int, max_steps: int = 5000):
    spec = GAMES[game_id]
    rules = spec.rules
    names = agents_for(game_id)
    if set(names) != set(rules.ROLES):
        pytest.skip(f"{game_id} has no agent for every role yet: {sorted(names)}")
    built = {role: all_agents()[n].build() for role, n in names.items()}
    config = dict(spec.default_config)
    config.update({"rounds": min(config.get("rounds", 5), 5)} if "rounds" in config else {})
    content = spec.content.generate(seed, config)
    state = rules.initial_state(content, seed, config)
    static = {k: copy.deepcopy(state[k]) for k in getattr(rules, "STATIC_STATE_KEYS", ())}
    trace = [[e.to_json() for e in rules.start_events(state)]]
    actions = []
    clock = 1_800_000_000_000
    for step in range(max_steps):
        if rules.is_over(state):
            break
        for role in rules.ROLES:
            json.loads(json.dumps(rules.view_for(state, role)))
        moved = False
        for role in rules.to_act(state):
            action = built[role].act(rules.view_for(state, role))
            if action is None:
                continue
            clock += 1500
            stamped = {**action, "at": clock}
            before = json.dumps(state, sort_keys=True)
            state_copy = copy.deepcopy(state)
            new_state, events = rules.apply(state, role, stamped)
            assert json.dumps(state, sort_keys=True) == before, "apply mutated its input state"
            assert state == state_copy
            wire = [e.to_json() for e in events]
            assert json.loads(json.dumps(wire)) == wire
            trace.append(wire)
            actions.append((role, stamped))
            state = new_state
            # keys declared static are stored once per match, not with every snapshot
            assert {k: state[k] for k in static} == static, "a STATIC_STATE_KEYS key changed"
            moved = True
            break
        assert moved, f"no agent moves in {rules.to_act(state)} at step {step}"
    assert rules.is_over(state), f"{game_id} did not end in {max_steps} moves"
    json.loads(json.dumps(rules.outcome(state)))
    return content, config, state, actions, trace


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_agents_play_to_the_end_and_the_log_replays(game_id):
    rules = GAMES[game_id].rules
    content, config, state, actions, trace = play(game_id, seed=11)
    replayed = rules.initial_state(content, 11, config)
    for role, action in actions:
        replayed, _ = rules.apply(replayed, role, action)
    assert replayed == state


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_same_seed_same_trace(game_id):
    assert play(game_id, seed=5)[4] == play(game_id, seed=5)[4]


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_nonsense_is_refused_and_changes_nothing(game_id):
    spec = GAMES[game_id]
    rules = spec.rules
    content = spec.content.generate(3, dict(spec.default_config))
    state = rules.initial_state(content, 3, dict(spec.default_config))
    before = json.dumps(state, sort_keys=True)
    for role in (*rules.ROLES, SYSTEM):
        for bad in ({"type": "no-such-move", "at": 1}, {"at": 1}, {"type": 7, "at": 1}):
            with pytest.raises(IllegalAction) as exc:
                rules.apply(state, role, bad)
            assert exc.value.code and exc.value.message
    assert json.dumps(state, sort_keys=True) == before


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_rules_and_content_are_pure(game_id):
    package = Path(GAMES[game_id].rules.__file__).parent
    for name in ("rules.py", "content.py"):
        tree = ast.parse((package / name).read_text())
        imported = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                imported |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module)
        assert not any(m == "django" or m.startswith("django.") for m in imported), f"{package.name}/{name}"
        assert not any(m.startswith(("games.models", "live.services", "channels", "celery")) for m in imported)


# ------------------------------------------------------------------------------ hidden information
# Each game declares in games/<game>/hidden.py what each role must not know (games/hidden.py).
# The pure checks below play every game with one seat random and the other its agent; the leak
# audit (tests/leak_audit.py) then plays them through the real websocket and HTTP server.
def random_vs_agent(game_id: str, random_role: str, seed: int, max_steps: int = 3000):
    """The states of one game: ``random_role`` plays the game's random legal moves, the other
    roles their agents (the states after every action, the first included)."""
    spec = GAMES[game_id]
    rules, hidden = spec.rules, spec.hidden
    names = leak_audit.agents_for(game_id)
    built = {role: all_agents()[n].build() for role, n in names.items() if role != random_role}
    config = dict(spec.default_config)
    if "rounds" in config:
        config["rounds"] = min(config["rounds"], 3)
    state = rules.initial_state(spec.content.generate(seed, config), seed, config)
    rng = random.Random(seed)
    states, clock = [state], 1_800_000_000_000
    for _ in range(max_steps):
        if rules.is_over(state):
            break
        for role in rules.ROLES:
            view = rules.view_for(state, role)
            action = hidden.random_action(view, rng) if role == random_role else built[role].act(view)
            if action is None:
                continue
            clock += 700
            try:
                state, _ = rules.apply(state, role, {**action, "at": clock})
            except IllegalAction:
                continue
            states.append(state)
    return states


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_every_role_plays_random_legal_moves_to_the_end(game_id):
    rules = GAMES[game_id].rules
    for role in rules.ROLES:
        states = random_vs_agent(game_id, role, seed=21)
        assert rules.is_over(states[-1]), f"{game_id}: a random {role} against the agent did not finish"
        assert len(states) > 3


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_a_seat_s_projection_holds_no_declared_hidden_value(game_id):
    """``view_for`` and ``outcome_for`` of a role never hold what ``hidden_from`` declares for it,
    while the full record (``outcome``) or the other seat's view does at some point: the
    declaration names real values the audit can find (the old frames, which carried
    ``match.outcome``, fail it for the GuessWhich questioner and the CoDraw Drawer)."""
    spec = GAMES[game_id]
    rules, hidden = spec.rules, spec.hidden
    caught = Counter()
    for random_role in rules.ROLES:
        for state in random_vs_agent(game_id, random_role, seed=33):
            for role in rules.ROLES:
                secrets = hidden.hidden_from(state, role)
                own = {"view": rules.view_for(state, role), "outcome": rules.outcome_for(state, role)}
                assert leaks(own, secrets) == [], f"{game_id} {role}: {leaks(own, secrets)}"
                others = {"outcome": rules.outcome(state),
                          "views": [rules.view_for(state, r) for r in rules.ROLES if r != role]}
                caught[role] += bool(leaks(others, secrets))
    declared = {"colors_v1": ("speaker", "listener"), "guesswhich_v1": ("questioner",),
                "visdial_v1": ("questioner",), "codraw_v1": ("teller", "drawer")}[game_id]
    for role in declared:
        assert caught[role] > 0, f"{game_id}: what {role} must not know is never found anywhere"
    if game_id in ("guesswhich_v1", "codraw_v1"):   # the old joined frame: the whole match.outcome
        role = {"guesswhich_v1": "questioner", "codraw_v1": "drawer"}[game_id]
        state = random_vs_agent(game_id, role, seed=33)[4]
        assert leaks({"outcome": rules.outcome(state)}, hidden.hidden_from(state, role))


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_what_a_role_must_not_know_does_not_change_what_it_sees(game_id):
    """Non-interference: the state with the hidden part varied (another target colour, secret
    image, image, target scene) gives the role the same view and outcome. This catches small
    values no value scan can (a position 0..2, the number of target pieces); it has teeth: the
    varied part shows in the full record or the other seat's view."""
    spec = GAMES[game_id]
    rules, hidden = spec.rules, spec.hidden
    rng = random.Random(7)
    varied = Counter()
    differs = Counter()
    for random_role in rules.ROLES:
        for index, state in enumerate(random_vs_agent(game_id, random_role, seed=44)):
            for role in rules.ROLES:
                other = hidden.vary(state, role, rng)
                if other is None:
                    continue
                varied[role] += 1
                if index == 0:   # the start events, as this role's socket gets them
                    assert ([e.for_role(role) for e in rules.start_events(other)]
                            == [e.for_role(role) for e in rules.start_events(state)]), f"{game_id} {role}: start"
                assert rules.view_for(other, role) == rules.view_for(state, role), f"{game_id} {role}: view"
                assert rules.outcome_for(other, role) == rules.outcome_for(state, role), f"{game_id} {role}: outcome"
                differs[role] += (rules.outcome(other) != rules.outcome(state)
                                  or any(rules.view_for(other, r) != rules.view_for(state, r) for r in rules.ROLES))
    assert varied, f"{game_id}: nothing is ever hidden from any role"
    for role, n in varied.items():
        assert differs[role] > 0, f"{game_id}: varying what {role} must not know changed nothing anywhere"


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("game_id", GAME_IDS)
def test_leak_audit_through_the_socket_and_http(game_id, live_server_url, record_property):
    """The leak audit (tests/leak_audit.py): for every role, matches through the real server with
    this seat random and the other its agent; every frame and page checked against the values
    the game declares hidden. The coverage (frames per role and kind) is printed for the report."""
    rules = GAMES[game_id].rules
    problems, coverage = [], {}
    for random_role in rules.ROLES:
        for seed in (1, 2):
            result = leak_audit.audit_match(live_server_url, game_id, random_role, seed)
            assert result.finished, f"{game_id}: the audited match with a random {random_role} did not end"
            problems += result.leaks
            for role, log in result.seats.items():
                entry = coverage.setdefault(role, Counter())
                entry.update(log.kinds())
                entry["pages"] += len(log.pages)
                entry["end_pages"] += log.end_pages
                entry["images"] += len(log.image_headers)
            coverage.setdefault("_states", Counter())["checked"] += result.states_checked
    print(f"\nleak audit coverage {game_id}: " + json.dumps({r: dict(c) for r, c in coverage.items()}))
    record_property("leak_audit_coverage", json.dumps({r: dict(c) for r, c in coverage.items()}))
    assert not problems, "\n".join(problems[:30])
    for role in rules.ROLES:   # every kind of frame and page was reached
        kinds = coverage[role]
        assert kinds["joined"] and kinds["events"] and kinds["error"] and kinds["pong"] and kinds["end_pages"], kinds
        assert kinds["ack"] and kinds["presence"], kinds


@pytest.mark.django_db
@pytest.mark.parametrize("game_id", GAME_IDS)
def test_the_leak_audit_fails_a_leaky_server(game_id):
    """The audit's check, fed the frames a leaky server would send, fails: the old ``joined``
    frame (the whole ``Match.outcome``), another seat's view, a page naming a hidden string."""
    rules = GAMES[game_id].rules
    match, seats = leak_audit.make_match(game_id, seed=3)
    state = match.state
    for role in rules.ROLES:
        hidden = GAMES[game_id].hidden.hidden_from(state, role)
        if not hidden:
            continue
        other = next(r for r in rules.ROLES if r != role)
        log = leak_audit.SeatLog(role)
        log.frames = [{"type": "joined", "seq": match.seq, "view": rules.view_for(state, other), "events": [],
                       "outcome": rules.outcome(state)}]
        log.seen_before = [0]
        found, _ = leak_audit.check(match, {role: log})
        assert found, f"{game_id}: the {other}'s view and the full outcome sent to the {role} went unnoticed"
        strings = [h.value for h in hidden if isinstance(h.value, str)]
        if strings:
            log = leak_audit.SeatLog(role)
            log.pages = [("start", "/p/x/", 200, f"<p data-x='{strings[0]}'>hello</p>")]
            assert leak_audit.check(match, {role: log})[0], f"{game_id}: a page naming {strings[0]} went unnoticed"
    if game_id in ("guesswhich_v1", "codraw_v1"):
        role = {"guesswhich_v1": "questioner", "codraw_v1": "drawer"}[game_id]
        log = leak_audit.SeatLog(role)
        log.frames = [{"type": "joined", "seq": match.seq, "outcome": match.outcome, "events": []}]
        log.seen_before = [0]
        assert leak_audit.check(match, {role: log})[0], f"{game_id}: the old joined frame went unnoticed"
