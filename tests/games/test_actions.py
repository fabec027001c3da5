"""The typed action schemas (games/actions.py, games/<game>/actions.py).

* every action the registered agents, the contract's agent play and the browser clients produce
  validates, and normalises to exactly what was sent;
* unknown keys, wrong types, forbidden characters, over-long text, no or unknown ``type`` are
  refused with a typed code, through ``services.match_apply_action`` on the test database, and
  change nothing (seq, log and state as they were);
* the logged action is what was sent plus the server's ``at``;
* docs/schemas/*.json and docs/actions.md are what the code generates; /schemas/<id>.json serves it.
"""
from __future__ import annotations

import ast
import json
from pathlib import Path

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

import tests.test_game_contract as contract
from agents.registry import all_agents
from games.actions import action_json_schema, render_markdown, schema_json, validate_action
from games.base import SYSTEM, IllegalAction
from live.models import Match, MatchEvent, Seat
from games.registry import GAMES
from live.services import SeatSpec, match_apply_action, match_create, match_time_up

from tests.support.factories import colors_match, listener_target

ROOT = Path(__file__).resolve().parents[2]
GAME_IDS = sorted(GAMES)


def rules_action_types(game_id: str) -> tuple[str, ...]:
    rules = GAMES[game_id].rules
    return tuple(getattr(rules, "ACTIONS", None) or rules.C.ACTIONS)


# ------------------------------------------------------------------------------------ the schemas
@pytest.mark.parametrize("game_id", GAME_IDS)
def test_the_schema_has_exactly_the_rules_action_types_and_roles(game_id):
    schema = GAMES[game_id].actions
    assert set(schema.types) == set(rules_action_types(game_id))
    roles = set(GAMES[game_id].rules.ROLES) | {SYSTEM}
    for model in schema.models.values():
        assert model.ROLES and set(model.ROLES) <= roles, model
        assert model.model_config["extra"] == "forbid" and model.model_config["strict"]
        assert model.model_config["frozen"]


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_actions_modules_import_no_django(game_id):
    package = Path(GAMES[game_id].rules.__file__).parent
    for path in (package / "actions.py", ROOT / "games" / "actions.py"):
        imported = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                imported |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module)
        assert not any(m == "django" or m.startswith(("django.", "live.models", "crowd.models", "live.services", "channels"))
                       for m in imported), path


def test_text_limits_are_the_rules_limits():
    from games.codraw import rules as codraw
    from games.colors import rules as colors
    from games.guesswhich.rules import C as GW
    from games.visdial.rules import C as VD

    def limit(game_id, kind, field="text"):
        model = GAMES[game_id].actions.models[kind].model_json_schema()
        return model["properties"][field]["x-maxTrimmedLength"]

    assert limit("colors_v1", "chat") == colors.MAX_MESSAGE_LEN
    assert limit("codraw_v1", "chat") == codraw.MAX_MESSAGE_LEN
    assert (limit("guesswhich_v1", "ask"), limit("guesswhich_v1", "answer")) == (GW.QUESTION_MAX, GW.ANSWER_MAX)
    assert limit("guesswhich_v1", "feedback", "comment") == GW.COMMENT_MAX
    assert (limit("visdial_v1", "ask"), limit("visdial_v1", "answer")) == (VD.QUESTION_MAX, VD.ANSWER_MAX)
    ratings = GAMES["guesswhich_v1"].actions.models["feedback"].model_fields["ratings"].annotation
    assert tuple(ratings.model_fields) == GW.RATING_KEYS


# ------------------------------------------------------------------- what clients really send
def pairings(game_id: str) -> list[dict[str, str]]:
    """Seatings in which every CPU agent of the game plays at least once."""
    by_role: dict[str, list[str]] = {}
    for name, spec in sorted(all_agents().items()):
        if spec.game_id == game_id and spec.device == "cpu" and name not in ("codraw_script_teller",
                                                                            "codraw_script_drawer"):
            by_role.setdefault(spec.role, []).append(name)   # the script agents: below
    longest = max(len(names) for names in by_role.values())
    return [{role: names[i % len(names)] for role, names in by_role.items()} for i in range(longest)]


def assert_validates_as_sent(game_id: str, action: dict) -> None:
    sent = {key: value for key, value in action.items() if key != "at"}
    normalised = validate_action(game_id, sent)
    assert normalised == sent, (sent, normalised)
    assert json.loads(json.dumps(normalised)) == normalised


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_every_action_of_the_contract_play_and_of_every_agent_validates(game_id, monkeypatch):
    seen = set()
    for i, names in enumerate(pairings(game_id)):
        monkeypatch.setattr(contract, "agents_for", lambda _game_id, names=names: names)
        *_, actions, _trace = contract.play(game_id, seed=11 + i)
        for _role, action in actions:
            assert_validates_as_sent(game_id, action)
            seen.add(action["type"])
    assert seen, game_id


def test_the_script_teller_s_actions_validate():
    from games.codraw import agents as codraw_agents
    from games.codraw import content, rules

    item = content.generate(4)
    script = ["big oak tree on the left", "  small sun top right ", "x" * 300]
    item["dialog"] = [{"seq_t": i, "seq_d": i, "msg_t": m, "msg_d": "ok", "abs_b": "", "abs_d": ""}
                      for i, m in enumerate(script)]
    state = codraw_agents.play(item, {"teller": codraw_agents.ScriptTeller(), "drawer": codraw_agents.RuleDrawer()},
                               seed=4, config={"script_teller": True})
    for message in state["chat"]:
        assert_validates_as_sent("codraw_v1", {"type": "chat", "text": message["text"]})
    teller = codraw_agents.ScriptTeller()
    fresh = rules.initial_state(item, 4, {"script_teller": True})
    assert_validates_as_sent("codraw_v1", teller.act(rules.view_for(fresh, "teller")))
    # a replay of a recorded dialog (an empty Teller message, a peek): both script agents
    item["dialog"] = [{"seq_t": 1, "seq_d": 1, "msg_t": "", "msg_d": "hi", "abs_b": "", "abs_d": ""},
                      {"seq_t": 2, "seq_d": 2, "msg_t": "a sun", "msg_d": "", "abs_b": "", "peeked": True,
                       "abs_d": "1,s_3s.png,0,3,0,60,50,1,0,"}]
    state = codraw_agents.play(item, {"teller": codraw_agents.ScriptTeller(), "drawer": codraw_agents.ScriptDrawer()},
                               seed=4, config={"replay_dialog": True})
    assert [m["text"] for m in state["chat"]] == ["", "hi", "a sun", ""] and state["peek"]["used"]
    for message in state["chat"]:
        assert_validates_as_sent("codraw_v1", {"type": "chat", "text": message["text"]})


# What static/games/*/*.js send (client.act / act calls), one example per shape.
BROWSER_ACTIONS = [
    ("colors_v1", {"type": "chat", "text": "the teal one", "round": 2}),           # colors.js
    ("colors_v1", {"type": "click", "position": 1, "round": 2}),
    ("codraw_v1", {"type": "chat", "text": "a big tree on the left"}),            # codraw.js
    ("codraw_v1", {"type": "peek"}),
    ("codraw_v1", {"type": "close_peek"}),
    ("codraw_v1", {"type": "end"}),
    ("codraw_v1", {"type": "place", "idx": 23, "x": 120, "y": -40, "depth": 0, "flip": 0,
                   "pose": 0, "expression": 2}),
    ("codraw_v1", {"type": "place", "idx": 5, "x": 480, "y": 30, "depth": 0, "flip": 0}),
    ("codraw_v1", {"type": "update", "idx": 23, "x": 131, "y": 88}),
    ("codraw_v1", {"type": "update", "idx": 23, "depth": 2}),
    ("codraw_v1", {"type": "update", "idx": 23, "flip": 1}),
    ("codraw_v1", {"type": "update", "idx": 23, "pose": 4}),
    ("codraw_v1", {"type": "update", "idx": 23, "expression": 0}),
    ("codraw_v1", {"type": "remove", "idx": 23}),
    ("guesswhich_v1", {"type": "ask", "text": "is it a red cube?"}),              # guesswhich.js
    ("guesswhich_v1", {"type": "answer", "text": "yes"}),
    ("guesswhich_v1", {"type": "guess", "image_id": "img07"}),
    ("guesswhich_v1", {"type": "feedback", "ratings": {"understood_question": 5, "understood_image": 4,
                                                       "fluency": 3, "detail": 2, "accuracy": 1, "consistency": 5},
                       "comment": "good answers\n\tmostly"}),
    ("guesswhich_v1", {"type": "feedback", "ratings": {"understood_question": 5, "understood_image": 4,
                                                       "fluency": 3, "detail": 2, "accuracy": 1, "consistency": 5},
                       "comment": ""}),
    ("guesswhich_v1", {"type": "skip_feedback"}),
    ("visdial_v1", {"type": "ask", "text": "how many cubes?"}),                    # visdial.js
    ("visdial_v1", {"type": "answer", "text": "three"}),
    # the server's own
    ("codraw_v1", {"type": "time_up"}),
    # the rules' leniencies the schema keeps: padded text is counted trimmed, a null round is "now"
    ("colors_v1", {"type": "chat", "text": "  blue  " + " " * 200, "round": None}),
    ("codraw_v1", {"type": "update", "idx": 23, "x": 131.5, "y": -0.25}),
    ("codraw_v1", {"type": "place", "idx": 23, "x": 10, "y": 10, "subtype": 34}),
]


@pytest.mark.parametrize("game_id,action", BROWSER_ACTIONS)
def test_what_the_browser_clients_send_validates(game_id, action):
    assert_validates_as_sent(game_id, action)


def test_numpy_numbers_of_python_agents_become_plain_json():
    out = validate_action("codraw_v1", {"type": "update", "idx": 23, "x": np.float64(12.5)})
    assert out == {"type": "update", "idx": 23, "x": 12.5} and type(out["x"]) is float


# ----------------------------------------------------------------------------- what is refused
REFUSED = [
    # game, action, code, a piece of the message
    ("colors_v1", {"type": "chat", "text": "hi", "fallback": True, "agent": "x"}, "bad_field",
     "chat: unknown keys 'fallback', 'agent'"),
    ("colors_v1", {"type": "chat", "text": "hi", "fallback": True}, "bad_field", "chat: unknown key 'fallback'"),
    ("colors_v1", {"type": "chat", "text": "hi", "at": 1}, "bad_field", "unknown key 'at'"),
    ("colors_v1", {"type": "chat", "text": "a\u0000b"}, "bad_field", "chat.text: contains a control character (U+0000)"),
    ("colors_v1", {"type": "chat", "text": "a\u001bb"}, "bad_field", "U+001B"),
    ("colors_v1", {"type": "chat", "text": "a\rb"}, "bad_field", "U+000D"),
    ("colors_v1", {"type": "chat", "text": "a\ud800b"}, "bad_field", "lone surrogate"),
    ("colors_v1", {"type": "chat", "text": "x" * 141}, "message_too_long", "141 characters long; the limit is 140"),
    ("colors_v1", {"type": "chat", "text": " \n\t "}, "empty_message", "The message is empty."),
    ("colors_v1", {"type": "chat", "text": 5}, "bad_field", "chat.text: must be text, not 5"),
    ("colors_v1", {"type": "chat", "text": ["hi"]}, "bad_field", "chat.text: must be text, not a list"),
    ("colors_v1", {"type": "chat", "text": {"en": "hi"}}, "bad_field", "chat.text: must be text, not an object"),
    ("colors_v1", {"type": "chat"}, "bad_field", "chat.text: missing"),
    ("colors_v1", {"type": "chat", "text": "hi", "round": True}, "bad_field", "chat.round: must be a whole number, not true"),
    ("colors_v1", {"type": "chat", "text": "hi", "round": "1"}, "bad_field", "chat.round: must be a whole number"),
    ("colors_v1", {"type": "chat", "text": "hi", "round": 0}, "out_of_range", "chat.round: must be at least 1, not 0"),
    ("colors_v1", {"type": "click", "position": True, "round": 1}, "bad_field", "click.position"),
    ("colors_v1", {"type": "click", "position": 1.0, "round": 1}, "bad_field", "not 1.0"),
    ("colors_v1", {"type": "click", "position": 3, "round": 1}, "out_of_range", "between 0 and 2, not 3"),
    ("colors_v1", {"type": "click", "position": 0}, "bad_field", "click.round: missing"),
    ("colors_v1", {"type": "click", "position": 0, "round": 1, "correct": True}, "bad_field", "unknown key 'correct'"),
    ("colors_v1", {"text": "hi"}, "bad_action", "needs a \"type\""),
    ("colors_v1", {"type": None, "text": "hi"}, "bad_action", "needs a \"type\""),
    ("colors_v1", {"type": ["chat"]}, "bad_action", "needs a \"type\""),
    ("colors_v1", "chat", "bad_action", "JSON object"),
    ("colors_v1", {"type": "dance"}, "unknown_action", "Unknown action type 'dance'"),
    ("codraw_v1", {"type": "chat", "text": "hi", "fallback": True}, "bad_field", "unknown key 'fallback'"),
    ("codraw_v1", {"type": "place", "idx": True, "x": 10, "y": 10}, "bad_field", "place.idx"),
    ("codraw_v1", {"type": "place", "idx": "18", "x": 10, "y": 10}, "bad_field", "place.idx"),
    ("codraw_v1", {"type": "place", "idx": 99, "x": 10, "y": 10}, "unknown_clipart", "place.idx"),
    ("codraw_v1", {"type": "place", "idx": 18, "y": 10}, "bad_position", "place.x: missing"),
    ("codraw_v1", {"type": "place", "idx": 18, "x": "left", "y": 10}, "bad_position", "place.x: must be a number"),
    ("codraw_v1", {"type": "place", "idx": 18, "x": False, "y": 10}, "bad_position", "place.x"),
    ("codraw_v1", {"type": "place", "idx": 18, "x": float("inf"), "y": 10}, "bad_position", "finite"),
    ("codraw_v1", {"type": "place", "idx": 18, "x": 1, "y": 10, "depth": 1.0}, "bad_depth", "place.depth"),
    ("codraw_v1", {"type": "place", "idx": 18, "x": 1, "y": 10, "depth": 3}, "bad_depth", "place.depth"),
    ("codraw_v1", {"type": "place", "idx": 18, "x": 1, "y": 10, "flip": 2}, "bad_flip", "place.flip"),
    ("codraw_v1", {"type": "update", "idx": 18, "pose": None}, "bad_pose", "update.pose"),
    ("codraw_v1", {"type": "update", "idx": 18, "expression": 5}, "bad_expression", "update.expression"),
    ("codraw_v1", {"type": "update", "idx": 18, "subtype": -1}, "bad_subtype", "update.subtype"),
    ("codraw_v1", {"type": "update", "idx": 18, "color": "red"}, "bad_field", "update: unknown key 'color'"),
    ("codraw_v1", {"type": "remove", "idx": 18, "piece": {"x": 1}}, "bad_field", "remove: unknown key 'piece'"),
    ("codraw_v1", {"type": "time_up", "by": "me"}, "bad_field", "time_up: unknown key 'by'"),
    ("guesswhich_v1", {"type": "ask", "text": "hi", "bonus": 1000}, "forged_field", "computed by the server"),
    ("guesswhich_v1", {"type": "ask", "text": "hi", "extra": 1, "score": 3}, "forged_field", "'score'"),
    ("guesswhich_v1", {"type": "ask", "text": "q" * 201}, "message_too_long", "The question is 201"),
    ("guesswhich_v1", {"type": "ask", "text": "   "}, "empty_message", "The question is empty."),
    ("guesswhich_v1", {"type": "guess"}, "bad_field", "guess.image_id: missing"),
    ("guesswhich_v1", {"type": "guess", "image_id": 7}, "bad_field", "guess.image_id: must be text"),
    ("guesswhich_v1", {"type": "guess", "image_id": "img\u000001"}, "bad_field", "control character"),
    ("guesswhich_v1", {"type": "feedback", "ratings": [5, 5, 5, 5, 5, 5]}, "bad_field", "feedback.ratings: must be an object"),
    ("guesswhich_v1", {"type": "feedback", "ratings": {"accuracy": 3}}, "bad_field", "feedback.ratings."),
    ("guesswhich_v1", {"type": "feedback", "ratings": {"understood_question": 1, "understood_image": 2, "fluency": 3,
                                                       "detail": 4, "accuracy": 5, "consistency": 1, "speed": 3}},
     "bad_field", "feedback.ratings: unknown key 'speed'"),
    ("guesswhich_v1", {"type": "feedback", "ratings": {"understood_question": 1, "understood_image": 2, "fluency": 3,
                                                       "detail": 4, "accuracy": 6, "consistency": 1}},
     "out_of_range", "feedback.ratings.accuracy"),
    ("guesswhich_v1", {"type": "feedback", "ratings": {"understood_question": 1, "understood_image": 2, "fluency": 3,
                                                       "detail": 4, "accuracy": True, "consistency": 1}},
     "bad_field", "feedback.ratings.accuracy"),
    ("guesswhich_v1", {"type": "feedback", "ratings": {"understood_question": 1, "understood_image": 2, "fluency": 3,
                                                       "detail": 4, "accuracy": 5, "consistency": 1},
                       "comment": "c" * 1001}, "message_too_long", "The comment is 1001"),
    ("guesswhich_v1", {"type": "skip_feedback", "fallback": True}, "bad_field", "unknown key 'fallback'"),
    ("visdial_v1", {"type": "ask", "text": "a\u0000"}, "bad_field", "ask.text"),
    ("visdial_v1", {"type": "answer", "text": "y" * 201}, "message_too_long", "The answer is 201"),
    ("visdial_v1", {"type": "answer", "text": "yes", "confidence": 0.9}, "bad_field", "answer: unknown key 'confidence'"),
    ("visdial_v1", {"type": "guess", "image_id": "img01"}, "unknown_action", "accepts ask, answer"),
]


@pytest.mark.parametrize("game_id,action,code,fragment", REFUSED)
def test_validation_refuses_with_a_typed_code_and_a_short_message(game_id, action, code, fragment):
    with pytest.raises(IllegalAction) as info:
        validate_action(game_id, action)
    assert info.value.code == code
    assert fragment in info.value.message
    assert len(info.value.message) < 300 and "pydantic" not in info.value.message.lower()


# ------------------------------------------------------------------- through the write path
def human_match(game_id: str, seed: int = 5) -> Match:
    spec = GAMES[game_id]
    config = {"rounds": 3} if "rounds" in spec.default_config else {}
    return match_create(game_id=game_id, seats={role: SeatSpec(Seat.Kind.HUMAN) for role in spec.roles},
                        seed=seed, config=config)


def refused_through_the_service(match: Match, role: str, action, code: str, action_id: str = "x1") -> IllegalAction:
    before = Match.objects.get(pk=match.pk)
    n_events = MatchEvent.objects.filter(match=match).count()
    with pytest.raises(IllegalAction) as info:
        match_apply_action(match_id=match.id, role=role, action=action, client_action_id=action_id)
    assert info.value.code == code, info.value
    after = Match.objects.get(pk=match.pk)
    assert after.seq == before.seq and after.state == before.state and after.status == before.status
    assert MatchEvent.objects.filter(match=match).count() == n_events
    return info.value


def schema_refusals(game_id: str) -> list[tuple[dict, str]]:
    """Actions any game's schema refuses, built from its schema alone: no type, an unknown type, and
    an unknown key on each of its action types."""
    cases = [({"text": "hi"}, "bad_action"), ({"type": "zz_no_such_action"}, "unknown_action")]
    return cases + [({"type": kind, "zz_no_such_key": 1}, "bad_field") for kind in GAMES[game_id].actions.types]


@pytest.mark.django_db
@pytest.mark.parametrize("game_id", GAME_IDS)
def test_refused_actions_change_nothing_through_the_service(game_id):
    match = human_match(game_id)
    # whose turn it is at the start, so that only the schema can refuse these
    role = list(GAMES[game_id].rules.to_act(match.state))[0]
    cases = [(action, code) for g, action, code, _ in REFUSED if g == game_id] + schema_refusals(game_id)
    for i, (action, code) in enumerate(cases):
        refused_through_the_service(match, role, action, code, action_id=f"bad{i}")


@pytest.mark.django_db
def test_a_fallback_flag_on_a_chat_is_refused_and_the_plain_chat_goes_through():
    match, _ = colors_match()
    error = refused_through_the_service(match, "speaker", {"type": "chat", "text": "blue", "fallback": True,
                                                           "agent": "x"}, "bad_field")
    assert error.message == "chat: unknown keys 'fallback', 'agent'"
    match_apply_action(match_id=match.id, role="speaker", action={"type": "chat", "text": "blue"},
                       client_action_id="x1")   # the refused id was not used up
    row = MatchEvent.objects.get(match=match, type="message_sent")
    assert row.action == {"type": "chat", "text": "blue", "at": row.action["at"]}


@pytest.mark.django_db
def test_a_nul_in_chat_is_refused_before_the_database_sees_it():
    match, _ = colors_match()
    refused_through_the_service(match, "speaker", {"type": "chat", "text": "a\u0000b"}, "bad_field")
    refused_through_the_service(match, "listener", {"type": "chat", "text": "\u0000"}, "bad_field")


@pytest.mark.django_db
def test_the_schema_answers_before_the_rules_turn_checks():
    match, _ = colors_match()
    # the listener may not click yet (speaker_first), but a malformed click is a malformed click
    refused_through_the_service(match, "listener", {"type": "click", "position": "1", "round": 1}, "bad_field")
    refused_through_the_service(match, "listener", {"type": "click", "position": 0, "round": 1}, "speaker_first")


def logged_actions(match: Match) -> list[dict]:
    return [row.action for row in MatchEvent.objects.filter(match=match).exclude(action=None).order_by("seq")]


@pytest.mark.django_db
def test_the_logged_action_is_what_was_sent_plus_at():
    match, _ = colors_match()
    sent = [("speaker", {"type": "chat", "text": "  the blue one  ", "round": 1}),
            ("listener", {"type": "chat", "text": "lighter?\nor darker", "round": None}),
            ("listener", {"type": "click", "position": listener_target(match), "round": 1})]
    for i, (role, action) in enumerate(sent):
        match_apply_action(match_id=match.id, role=role, action=dict(action), client_action_id=f"a{i}")
    logged = logged_actions(match)
    assert [{k: v for k, v in a.items() if k != "at"} for a in logged] == [a for _, a in sent]
    assert all(type(a["at"]) is int for a in logged)


@pytest.mark.django_db
def test_codraw_canvas_actions_and_the_server_s_time_up_are_logged_as_sent():
    match = human_match("codraw_v1")
    idx = match.state["palette"][0]
    sent = [("teller", {"type": "chat", "text": "a tree on the left"}),
            ("drawer", {"type": "place", "idx": idx, "x": 100, "y": 120.5, "depth": 1, "flip": 0}),
            ("drawer", {"type": "update", "idx": idx, "x": 140}),
            ("drawer", {"type": "chat", "text": "done"})]
    for i, (role, action) in enumerate(sent):
        match_apply_action(match_id=match.id, role=role, action=dict(action), client_action_id=f"c{i}")
    assert match_time_up(match_id=match.id) == "ended"
    logged = logged_actions(match)
    assert [{k: v for k, v in a.items() if k != "at"} for a in logged] == [a for _, a in sent] + [{"type": "time_up"}]
    match.refresh_from_db()
    assert match.status == Match.Status.TIMED_OUT and match.state["canvas"][str(idx)]["x"] == 140


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL only")
@pytest.mark.django_db(transaction=True)
def test_the_conditional_write_validates_too():
    from django.test.utils import CaptureQueriesContext

    from live import match_store
    match, _ = colors_match()
    match_apply_action(match_id=match.id, role="speaker", action={"type": "chat", "text": "teal"},
                       client_action_id="s1")                 # fills this process's snapshot on commit
    assert match_store.cached_match(match.id) is not None
    refused_through_the_service(match, "listener", {"type": "chat", "text": "x\u0000", "round": 1}, "bad_field",
                                action_id="l1")
    refused_through_the_service(match, "listener", {"type": "chat", "text": "ok", "fallback": True}, "bad_field",
                                action_id="l2")
    with CaptureQueriesContext(connection) as queries:
        match_apply_action(match_id=match.id, role="listener", action={"type": "chat", "text": " which? "},
                           client_action_id="l3")
    assert len(queries) == 1                                   # the one-statement conditional write
    assert logged_actions(match)[-1] == {"type": "chat", "text": " which? ", "at": logged_actions(match)[-1]["at"]}


# ----------------------------------------------------------------------------- docs and serving
@pytest.mark.parametrize("game_id", GAME_IDS)
def test_committed_json_schemas_are_up_to_date(game_id):
    path = ROOT / "docs" / "schemas" / f"{game_id}.json"
    assert path.is_file(), f"missing {path}: run `python manage.py action_schema`"
    assert path.read_text(encoding="utf-8") == schema_json(game_id), \
        f"{path} is out of date: run `python manage.py action_schema`"


def test_docs_actions_md_is_up_to_date():
    text = render_markdown([action_json_schema(game_id) for game_id in GAME_IDS])
    assert (ROOT / "docs" / "actions.md").read_text(encoding="utf-8") == text, \
        "docs/actions.md is out of date: run `python manage.py action_schema`"
    for game_id in GAME_IDS:
        assert f"## `{game_id}`" in text
        for kind in GAMES[game_id].actions.types:
            assert f"### `{kind}`" in text


def test_the_command_writes_and_checks(tmp_path):
    call_command("action_schema", check=True)                  # the committed files
    call_command("action_schema", games=["colors_v1"], output=str(tmp_path), markdown=str(tmp_path / "a.md"))
    assert json.loads((tmp_path / "colors_v1.json").read_text()) == action_json_schema("colors_v1")
    assert "## `colors_v1`" in (tmp_path / "a.md").read_text()
    (tmp_path / "colors_v1.json").write_text("{}")
    with pytest.raises(CommandError, match="Out of date"):
        call_command("action_schema", games=["colors_v1"], output=str(tmp_path), check=True)
    with pytest.raises(CommandError, match="Unknown game"):
        call_command("action_schema", games=["chess_v1"])


@pytest.mark.django_db
def test_the_schemas_are_served(client):
    response = client.get("/schemas/colors_v1.json")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/schema+json")
    assert json.loads(response.content) == json.loads((ROOT / "docs" / "schemas" / "colors_v1.json").read_text())
    assert client.get("/schemas/chess_v1.json").status_code == 404
    assert client.post("/schemas/colors_v1.json").status_code == 405
