"""One contract suite run for every registered game (PettingZoo's api_test and seed_test).

The checks are the game SDK's contract-test library (games/testing.py), which a game author can
also call on a game of their own; this module runs each of them parametrised over the registry,
with the agents the platform would seat (the first CPU agent per role of agents.registry; the
hidden-information checks rule-based agents first, as the leak audit seats them). Each game is
played to the end by its agents through the pure rules alone: ``apply`` never mutates its input,
every event and view survives JSON, the same seed gives the same trace, keys declared in
``STATIC_STATE_KEYS`` never change, the log replays to the live state, nonsense is refused with a
typed error and leaves the state as it was, and the rules modules import no Django. Then the
hidden-information declarations (games/hidden.py): random legal play ends, no seat's projection
holds what is hidden from it, non-interference; and the leak audit through the real websocket and
HTTP server (tests/support/leak_audit.py), which needs the platform and so stays here.
"""
from __future__ import annotations

import json
from collections import Counter

import pytest

from agents.registry import all_agents
from games import testing
from games.registry import GAMES
from tests.support import leak_audit

GAME_IDS = sorted(GAMES)


def agents_for(game_id: str) -> dict[str, str]:
    """The first CPU agent per role, by name, of every registered agent (model agents included)."""
    chosen = {}
    for name, spec in sorted(all_agents().items()):
        if spec.game_id == game_id and spec.device == "cpu":
            chosen.setdefault(spec.role, name)
    return chosen


def built(names: dict[str, str], game_id: str) -> dict:
    if set(names) != set(GAMES[game_id].rules.ROLES):
        pytest.skip(f"{game_id} has no agent for every role yet: {sorted(names)}")
    return {role: all_agents()[name].build() for role, name in names.items()}


def agents(game_id: str) -> dict:
    return built(agents_for(game_id), game_id)


def audit_agents(game_id: str) -> dict:
    """The partner agents of the leak audit (rule-based first)."""
    return built(leak_audit.agents_for(game_id), game_id)


def play(game_id: str, seed: int, max_steps: int = 5000):
    """One match played by :func:`agents_for`'s agents (games.testing.play): content, config,
    final state, the actions and the event trace."""
    done = testing.play(GAMES[game_id], seed, agents=agents(game_id), max_steps=max_steps)
    return done.content, done.config, done.state, done.actions, done.trace


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_agents_play_to_the_end_and_the_log_replays(game_id):
    testing.check_log_replays(GAMES[game_id], agents=agents(game_id), seed=11)


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_same_seed_same_trace(game_id):
    testing.check_same_seed_same_trace(GAMES[game_id], agents=agents(game_id), agents_again=agents(game_id),
                                       seed=5)


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_nonsense_is_refused_and_changes_nothing(game_id):
    testing.check_nonsense_is_refused(GAMES[game_id], seed=3)


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_rules_and_content_are_pure(game_id):
    testing.check_rules_import_no_django(GAMES[game_id])


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_the_action_schema_agrees_with_the_rules_and_the_agents(game_id):
    testing.check_action_schema(GAMES[game_id], agents=agents(game_id), seed=11)


# ------------------------------------------------------------------------------ hidden information
# Each game declares in games/<game>/hidden.py what each role must not know (games/hidden.py).
# The pure checks below play every game with one seat random and the other its agent; the leak
# audit (tests/support/leak_audit.py) then plays them through the real websocket and HTTP server.
@pytest.mark.parametrize("game_id", GAME_IDS)
def test_every_role_plays_random_legal_moves_to_the_end(game_id):
    testing.check_random_legal_play_ends(GAMES[game_id], agents=audit_agents(game_id), seed=21)


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_a_seat_s_projection_holds_no_declared_hidden_value(game_id):
    """``view_for`` and ``outcome_for`` of a role never hold what ``hidden_from`` declares for it,
    while the full record (``outcome``) or the other seat's view does at some point: the
    declaration names real values the audit can find (the old frames, which carried
    ``match.outcome``, fail it for the GuessWhich questioner and the CoDraw Drawer: their
    ``OUTCOME_HIDES_FROM``)."""
    testing.check_hidden_declarations(GAMES[game_id], agents=audit_agents(game_id), seed=33)


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_what_a_role_must_not_know_does_not_change_what_it_sees(game_id):
    """Non-interference: the state with the hidden part varied (another target colour, secret
    image, image, target scene) gives the role the same view and outcome. This catches small
    values no value scan can (a position 0..2, the number of target pieces); it has teeth: the
    varied part shows in the full record or the other seat's view."""
    testing.check_non_interference(GAMES[game_id], agents=audit_agents(game_id), seed=44)


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_llm_roles_keep_the_contract(game_id):
    """Every role with an LLM adapter (games/<game>/llm.py, games/llm.py): its request renders over
    played matches, holds nothing hidden from the role, and its decisions become legal actions."""
    if not getattr(GAMES[game_id].llm, "ROLES", None):
        pytest.skip(f"{game_id} has no LLM adapter")
    assert testing.check_llm_roles(GAMES[game_id], agents=audit_agents(game_id), seed=55) > 0


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("game_id", GAME_IDS)
def test_leak_audit_through_the_socket_and_http(game_id, live_server_url, record_property):
    """The leak audit (tests/support/leak_audit.py): for every role, a match through the real server
    with this seat random and the other its agent, each role's match on a seed (content) of its own;
    both seats' frames and pages are checked in every match against the values the game declares
    hidden, so every role is audited on every seed, once as the random seat and once as the agent's.
    The coverage (frames per role and kind) is printed for the report."""
    rules = GAMES[game_id].rules
    problems, coverage = [], {}
    for seed, random_role in enumerate(rules.ROLES, start=1):
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
    for role in getattr(GAMES[game_id].hidden, "OUTCOME_HIDES_FROM", ()):
        log = leak_audit.SeatLog(role)
        log.frames = [{"type": "joined", "seq": match.seq, "outcome": match.outcome, "events": []}]
        log.seen_before = [0]
        assert leak_audit.check(match, {role: log})[0], f"{game_id}: the old joined frame went unnoticed"
