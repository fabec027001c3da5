"""The fifth game (tests/fixtures/shapes_game, ``shapes_v1``): a game is its package and one
registry line (here the ``GT_GAME_PACKAGES`` hook, since it is no part of the product).

* the contract-test library (games/testing.py) passes it, and fails broken copies of it;
* two people enter through lab links on the real server, read its instructions, are paired, open
  its game page and play to the end through the real service and socket;
* a person plays against its rule describer, whose turns a real agent worker takes;
* ``manage.py export --format shapes-csv`` writes its dataset from the event log;
* the leak audit (tests/support/leak_audit.py) finds nothing in what the real server sends each seat;
* no product module names it (the proof that it needed no platform edit).
"""
from __future__ import annotations

import csv
import io
import subprocess
import types
from collections import Counter
from pathlib import Path

import pytest
from django.core.management import call_command

from agents.registry import all_agents
from crowd.models import Participant
from games import testing
from games.registry import GAMES
from live.models import Batch, Match, MatchEvent, Seat
from tests.support import leak_audit
from tests.support.stall_client import Person

from .conftest import GAME_ID, PACKAGE

ROOT = Path(__file__).resolve().parents[3]
PACKAGE_DIR = ROOT / "tests" / "fixtures" / "shapes_game"
# The product: every folder whose files the platform is made of (a new game must touch none of them).
PRODUCT = ("games", "live", "research", "crowd", "agents", "clevr", "groundtalk_web", "templates", "static",
           "bench", "scripts", "manage.py", "pyproject.toml", "Dockerfile", "docker-compose.yml")


# ---------------------------------------------------------------------------------- the contract
def test_the_contract_library_passes_the_fifth_game(shapes_game):
    testing.check_game(shapes_game)


def broken(spec, **rules_overrides):
    """``spec`` with some of its rules functions replaced (a copy: the registered game is untouched)."""
    rules = types.ModuleType(spec.rules.__name__)
    rules.__dict__.update({k: v for k, v in vars(spec.rules).items() if not k.startswith("__")})
    rules.__file__ = spec.rules.__file__
    rules.__dict__.update(rules_overrides)
    return types.SimpleNamespace(id=spec.id, rules=rules, content=spec.content, hidden=spec.hidden,
                                 actions=spec.actions, agents=spec.agents, default_config=spec.default_config)


def test_the_contract_library_fails_a_broken_game(shapes_game):
    rules = shapes_game.rules

    def mutating_apply(state, role, action):
        new_state, events = rules.apply(state, role, action)
        state["messages"] = new_state["messages"]          # changes the state it was given
        return new_state, events

    def telling_view(state, role):                          # the guesser sees the describer's flags
        return rules.view_for(state, "describer" if role == "guesser" else role) | {"role": role}

    def lenient_apply(state, role, action):                 # nonsense accepted
        if action.get("type") not in rules.ACTIONS:
            return state, []
        return rules.apply(state, role, action)

    def deaf_outcome_for(state, role):                      # a view that is not JSON-safe
        return {**rules.outcome(state), "when": {1, 2}}

    with pytest.raises(testing.ContractError, match="mutated"):
        testing.check_agents_play_to_the_end(broken(shapes_game, apply=mutating_apply))
    with pytest.raises(testing.ContractError, match="guesser"):
        testing.check_hidden_declarations(broken(shapes_game, view_for=telling_view))
    with pytest.raises(testing.ContractError, match="not refused"):
        testing.check_nonsense_is_refused(broken(shapes_game, apply=lenient_apply))
    with pytest.raises(testing.ContractError, match="JSON-safe"):
        testing.check_agents_play_to_the_end(broken(shapes_game, outcome_for=deaf_outcome_for))
    with pytest.raises(testing.ContractError, match="no agent for role"):
        testing.play(shapes_game, 1, agents={"describer": all_agents()["shapes_rule_describer"].build()})


def test_it_is_registered_with_its_agents_and_export(shapes_game):
    assert GAMES[GAME_ID] is shapes_game and shapes_game.package == PACKAGE
    assert {n: (s.game_id, s.role) for n, s in all_agents().items() if s.game_id == GAME_ID} == {
        "shapes_rule_describer": (GAME_ID, "describer"), "shapes_rule_guesser": (GAME_ID, "guesser")}
    assert shapes_game.play_template == "shapes_game/play.html"


# ----------------------------------------------------------------------------------- the lobby
def play_out(people: dict[str, Person], joined: dict[str, dict], brains: dict) -> int:
    """Each person plays its seat with ``brains[role]`` (the game's rule agents as a person's
    choices) through its socket until the game is over; returns the last seq."""
    views = {role: joined[role]["view"] for role in people}
    seq = max(j["seq"] for j in joined.values())
    for _ in range(200):
        if all(v["over"] for v in views.values()):
            return seq
        moved = False
        for role, person in people.items():
            action = brains[role].act(views[role])
            if action is None:
                continue
            seq = person.act(action)["seq"]
            for r, p in people.items():   # both sockets get the action's events and their new view
                frame = p.wait_for(lambda f: f.get("type") in ("events", "joined") and f["seq"] >= seq)
                views[r] = frame["view"]
            moved = True
            break
        assert moved, views
    raise AssertionError("the game did not end in 200 moves")


@pytest.mark.django_db(transaction=True)
def test_two_people_pair_in_the_lobby_and_play_it_to_the_end(shapes_server):
    batch = Batch.objects.create(slug="shapes-people", title="shapes", game_id=GAME_ID,
                                 pairing=Batch.Pairing.HUMAN_HUMAN, config={"rounds": 3}, max_wait_s=60)
    ann, bob = Person(shapes_server, batch, "ann"), Person(shapes_server, batch, "bob")
    instructions = ann.http.get(ann.url)
    assert instructions.status_code == 200 and "four shapes" in instructions.text   # the game's own page
    ann.ready()
    bob.ready()
    people, joined = {}, {}
    for person in (ann, bob):
        frame = person.join()
        role = Seat.objects.get(token=person.token).role
        people[role], joined[role] = person, frame
    assert set(people) == {"describer", "guesser"}
    page = ann.http.get(shapes_server + ann.play_url())
    assert page.status_code == 200 and "games/shapes_game/shapes.js" in page.text
    script = ann.http.get(f"{shapes_server}/static/games/shapes_game/shapes.js")
    assert script.status_code == 200 and "GT.SeatClient" in script.text
    # the guesser's joined view never says which shape is the target; the describer's does
    assert not any("target" in s for s in joined["guesser"]["view"]["shapes"])
    assert sum(s["target"] for s in joined["describer"]["view"]["shapes"]) == 1

    brains = {"describer": all_agents()["shapes_rule_describer"].build(),
              "guesser": all_agents()["shapes_rule_guesser"].build()}
    play_out(people, joined, brains)
    match = Match.objects.get(pk=ann.match_id)
    assert match.status == "finished"
    assert match.outcome["played"] == 3 and match.outcome["correct"] == 3   # the rule words are unambiguous
    assert MatchEvent.objects.filter(match=match, type="round_ended").count() == 3
    for person in (ann, bob):
        person.close()
        assert Participant.objects.get(pk=person.participant.pk).state != Participant.State.PLAYING

    # the export: one row per round, from the event log
    out = io.StringIO()
    call_command("export", "--format", "shapes-csv", "--batch", batch.slug, stdout=out)
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert [int(r["round"]) for r in rows] == [1, 2, 3]
    rounds = match.content["rounds"]
    for row, content_round in zip(rows, rounds):
        target = content_round["shapes"][0]
        assert (row["target_kind"], row["target_color"], row["correct"]) == (target["kind"], target["color"], "1")
        assert row["description"] and row["match_id"] == str(match.id)


@pytest.mark.django_db(transaction=True)
def test_a_person_plays_against_its_rule_describer_through_a_real_worker(shapes_server, shapes_worker):
    batch = Batch.objects.create(slug="shapes-agent", title="shapes vs agent", game_id=GAME_ID,
                                 pairing=Batch.Pairing.HUMAN_AGENT, human_roles=["guesser"],
                                 agents={"describer": "shapes_rule_describer"}, config={"rounds": 2},
                                 max_wait_s=60)
    person = Person(shapes_server, batch, "cat")
    person.ready()
    joined = person.join()
    match = Match.objects.get(pk=person.match_id)
    assert match.agent_seats == {"describer": "shapes_rule_describer"}
    guesser = all_agents()["shapes_rule_guesser"].build()
    view = joined["view"]
    for _ in range(50):
        if view["over"]:
            break
        if not view["can_click"]:   # the worker's describer speaks; its events reach the socket
            view = person.wait_for(lambda f: f.get("type") in ("events", "joined") and f.get("view")
                                   and (f["view"]["can_click"] or f["view"]["over"]))["view"]
            continue
        seq = person.act(guesser.act(view))["seq"]
        view = person.wait_for(lambda f: f.get("type") in ("events", "joined") and f["seq"] >= seq)["view"]
    person.close()
    match.refresh_from_db()
    assert match.status == "finished" and match.outcome["played"] == 2
    spoken = MatchEvent.objects.filter(match=match, type="message_sent", actor="describer")
    assert spoken.count() == 2


@pytest.mark.django_db(transaction=True)
def test_the_leak_audit_finds_nothing_through_the_real_server(shapes_server):
    """Each role random (with illegal moves, bad frames, resumes) against the other's rule agent,
    every frame and page checked against what the game's hidden.py declares. (The whole contract
    suite, leak audit included, also runs it when the run is started with
    ``GT_GAME_PACKAGES=tests.fixtures.shapes_game``.)"""
    coverage = {role: Counter() for role in ("describer", "guesser")}
    for random_role in ("describer", "guesser"):
        result = leak_audit.audit_match(shapes_server, GAME_ID, random_role, seed=1)
        assert result.finished, f"the audited match with a random {random_role} did not end"
        assert result.leaks == [], "\n".join(result.leaks[:20])
        assert result.states_checked > 3
        for role, log in result.seats.items():
            coverage[role].update(log.kinds())
            coverage[role]["end_pages"] += log.end_pages
    for role, kinds in coverage.items():   # every kind of frame and page was reached
        assert kinds["joined"] and kinds["events"] and kinds["error"] and kinds["pong"] and kinds["end_pages"], kinds
        assert kinds["ack"] and kinds["presence"], kinds


# ------------------------------------------------------------------------- no platform edit
def test_no_product_file_names_the_fifth_game():
    """The game needed no platform edit: no file of the product names its id, its package or its
    agents (git grep over the product's folders, untracked files included). "shapes" alone is a
    common word there (CLEVR's shapes, tensor shapes), so the game's own names are searched."""
    names = [GAME_ID, "shapes_game", "shapes_rule_", "shapes-csv"]
    files = sorted(p.relative_to(PACKAGE_DIR).as_posix() for p in PACKAGE_DIR.rglob("*")
                   if p.is_file() and "__pycache__" not in p.parts)
    assert {"__init__.py", "rules.py", "content.py", "actions.py", "hidden.py", "agents.py", "exports.py",
            "templates/shapes_game/play.html", "templates/shapes_game/instructions.html",
            "static/games/shapes_game/shapes.js"} <= set(files)
    found = subprocess.run(["git", "grep", "-n", "-I", "--untracked", "-e", names[0], *sum((["-e", n] for n in names[1:]), []),
                            "--", *PRODUCT], cwd=ROOT, capture_output=True, text=True)
    assert found.returncode == 1 and found.stdout == "", found.stdout + found.stderr
