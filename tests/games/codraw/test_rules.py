"""CoDraw rules: turns, canvas actions, peek, time, views, events, replay."""
import copy
import json
import random

import pytest

from games.base import SYSTEM, IllegalAction
from games.codraw import clipart as ca
from games.codraw import rules
from games.codraw.content import generate
from games.codraw.scenes import parse_scene

MIKE, JENNY, SUN, OWL, SOCCER = 18, 19, 3, 24, 47


@pytest.fixture
def match(kit, readme_content):
    return kit.Match(readme_content)


def in_drawer_turn(match):
    match.do("teller", {"type": "chat", "text": "a boy on the left"})
    return match


def refused(match, role, action, code):
    """The action is refused with ``code`` and the state is left exactly as it was."""
    before = copy.deepcopy(match.state)
    with pytest.raises(IllegalAction) as info:
        rules.apply(match.state, role, {**action, "at": match.t + 1})
    assert info.value.code == code, info.value.message
    assert match.state == before
    return info.value


# ------------------------------------------------------------------------------------ basics
def test_initial_state_and_views(match, readme):
    state = match.state
    assert rules.ROLES == ("teller", "drawer") and rules.GAME_ID == "codraw_v1"
    assert rules.to_act(state) == ("teller",) and not rules.is_over(state)
    teller = rules.view_for(state, "teller")
    drawer = rules.view_for(state, "drawer")
    assert [p["idx"] for p in teller["target"]] == [3, 15, 18, 19, 24, 33, 47]
    mike = teller["target"][2]
    assert mike == {"idx": 18, "x": 100, "y": 250, "depth": 1, "flip": 0, "subtype": 10, "name": "Mike",
                    "pose": 2, "expression": 0, "pose_name": "kicking", "expression_name": "angry"}
    assert "palette" not in teller and "canvas" not in teller
    assert teller["peek"] == {"available": True, "open": False, "round": None, "canvas": None}
    assert teller["can"] == ["chat", "peek", "end"] and teller["your_turn"]
    assert "target" not in drawer and "peek" not in drawer
    assert len(drawer["palette"]) == 23 and drawer["canvas"] == [] and drawer["can"] == []
    assert json.loads(json.dumps([teller, drawer, state])) == [teller, drawer, state]
    observer = rules.view_for(state, None)
    assert "target" not in observer and "canvas" not in observer and "palette" not in observer


def test_start_events_hide_each_side(match):
    started = match.events[0]["_event"]
    assert started.type == "game_started"
    assert "target" in started.for_role("teller") and "palette" not in started.for_role("teller")
    assert "palette" in started.for_role("drawer") and "target" not in started.for_role("drawer")
    assert "target" not in started.for_role(None)


def test_a_full_round(match, readme):
    events = match.do("teller", {"type": "chat", "text": "  angry boy kicking on the left  "})
    assert [e.type for e in events] == ["message_sent"]
    assert events[0].payload == {"role": "teller", "text": "angry boy kicking on the left", "round": 0}
    assert rules.to_act(match.state) == ("drawer",)
    events = match.do("drawer", {"type": "place", "idx": MIKE, "x": 100.4, "y": 249.6, "depth": 1,
                                 "subtype": 10})
    assert events[0].type == "canvas_changed"
    assert events[0].for_role("teller") == {"round": 0}
    assert events[0].for_role("drawer")["piece"]["name"] == "Mike"
    match.do("drawer", {"type": "place", "idx": SOCCER, "x": 279, "y": 115, "depth": 1, "flip": 1})
    match.do("drawer", {"type": "update", "idx": SOCCER, "x": 280})
    assert rules.view_for(match.state, "drawer")["can"] == ["place", "update", "remove", "chat"]
    events = match.do("drawer", {"type": "chat", "text": "ok"})
    assert [e.type for e in events] == ["message_sent", "round_recorded"]
    recorded = events[1]
    assert recorded.payload == {"round": 0, "seq_t": 0, "seq_d": 0, "msg_t": "angry boy kicking on the left",
                                "msg_d": "ok", "peeked": False}
    hidden = recorded.private["drawer"]
    assert parse_scene(hidden["abs_b"]).placed == ()
    after = parse_scene(hidden["abs_d"])
    # the palette's 23 clip arts laid out as the original interface: Mike and Jenny 5 looks each
    assert len(after) == 31 and after.trailing_comma
    assert {(p.idx, p.x, p.y, p.depth, p.flip, p.subtype) for p in after.placed} == {
        (18, 100, 250, 1, 0, 10), (47, 280, 115, 1, 1, 0)}
    assert "abs_d" not in recorded.for_role("teller") and "score" not in recorded.for_role("teller")
    assert "score" not in recorded.for_role("drawer")
    # 2 of 7 pieces, Mike exact, ball 1 px off: 5*2/7 - (1/500)/7; pair orders agree
    assert recorded.private[SYSTEM]["score"] == pytest.approx(10 / 7 - 0.002 / 7, rel=1e-12)
    assert rules.to_act(match.state) == ("teller",) and match.state["round"] == 1
    assert [m["role"] for m in rules.view_for(match.state, "drawer")["chat"]] == ["teller", "drawer"]
    assert rules.outcome(match.state)["rounds"] == 1


def test_teller_ends_and_game_ended_carries_score_and_canvas(match, readme):
    in_drawer_turn(match)
    match.do("drawer", {"type": "place", "idx": SUN, "x": 469, "y": 31, "depth": 2})
    match.do("drawer", {"type": "chat", "text": "done"})
    events = match.do("teller", {"type": "end"})
    assert [e.type for e in events] == ["game_ended"]
    ended = events[0].payload
    assert ended["ended_by"] == "teller" and ended["rounds"] == 1
    assert ended["score"] == pytest.approx(5 / 7)
    assert [p["idx"] for p in ended["canvas"]] == [SUN]
    assert parse_scene(ended["abs_d"]).idxs == {SUN} and ended["abs_t"] == readme["abs_t"]
    assert rules.is_over(match.state) and rules.to_act(match.state) == ()
    outcome = rules.outcome(match.state)
    assert outcome["score"] == pytest.approx(5 / 7) and outcome["ended_by"] == "teller"
    assert outcome["peeked"] is False and outcome["rounds"] == 1 and outcome["finished"]
    assert set(outcome["components"]) == {"clipart", "flip", "expression", "pose", "depth", "position",
                                          "x_order", "y_order"}
    for role in ("teller", "drawer"):
        view = rules.view_for(match.state, role)
        assert view["over"] and view["result"]["score"] == outcome["score"]
        assert view["can"] == []
    refused(match, "teller", {"type": "chat", "text": "hi"}, "game_over")


# --------------------------------------------------------------------------------------- peek
def test_peek_once_private_and_blocks_chat(match):
    in_drawer_turn(match)
    match.do("drawer", {"type": "place", "idx": MIKE, "x": 100, "y": 250, "subtype": 3})
    match.do("drawer", {"type": "chat", "text": "ok"})
    events = match.do("teller", {"type": "peek"})
    assert events[0].type == "peek_opened"
    assert [p["idx"] for p in events[0].for_role("teller")["canvas"]] == [MIKE]
    assert events[0].for_role("drawer") == {"round": 1}
    view = rules.view_for(match.state, "teller")
    assert view["peek"]["open"] and not view["peek"]["available"] and view["can"] == ["close_peek", "end"]
    assert [p["idx"] for p in view["peek"]["canvas"]] == [MIKE]
    assert "peek" not in rules.view_for(match.state, "drawer")
    refused(match, "teller", {"type": "chat", "text": "move him"}, "peek_open")
    refused(match, "teller", {"type": "peek"}, "peek_used")
    refused(match, "drawer", {"type": "close_peek"}, "wrong_role")
    match.do("teller", {"type": "close_peek"})
    refused(match, "teller", {"type": "close_peek"}, "peek_not_open")
    refused(match, "teller", {"type": "peek"}, "peek_used")
    match.do("teller", {"type": "chat", "text": "move him right"})
    match.do("drawer", {"type": "chat", "text": "ok"})
    record = match.record()
    peeked = [e["payload"]["peeked"] for e in record["events"] if e["type"] == "round_recorded"]
    assert peeked == [False, True]                 # only rounds after the peek
    assert rules.outcome(match.state)["peeked"] is True
    # the snapshot stays what it was when the teller looked
    assert [p["idx"] for p in rules.view_for(match.state, "teller")["peek"]["canvas"]] == [MIKE]


# ------------------------------------------------------------------------------- illegal moves
def test_turn_order_is_enforced(match):
    refused(match, "drawer", {"type": "chat", "text": "hello"}, "out_of_turn")
    refused(match, "drawer", {"type": "place", "idx": SUN, "x": 10, "y": 10}, "out_of_turn")
    refused(match, "teller", {"type": "place", "idx": SUN, "x": 10, "y": 10}, "wrong_role")
    in_drawer_turn(match)
    refused(match, "teller", {"type": "chat", "text": "and a sun"}, "out_of_turn")
    refused(match, "teller", {"type": "peek"}, "out_of_turn")
    refused(match, "teller", {"type": "end"}, "out_of_turn")
    refused(match, "drawer", {"type": "end"}, "wrong_role")
    refused(match, "drawer", {"type": "peek"}, "wrong_role")
    refused(match, "drawer", {"type": "time_up"}, "wrong_role")
    refused(match, SYSTEM, {"type": "chat", "text": "x"}, "wrong_role")
    refused(match, "spectator", {"type": "chat", "text": "x"}, "wrong_role")


def test_message_limits(match):
    refused(match, "teller", {"type": "chat", "text": "x" * 141}, "message_too_long")
    refused(match, "teller", {"type": "chat", "text": "   "}, "empty_message")
    refused(match, "teller", {"type": "chat", "text": 5}, "bad_field")
    refused(match, "teller", {"type": "chat"}, "bad_field")
    match.do("teller", {"type": "chat", "text": "x" * 140})
    refused(match, "drawer", {"type": "chat", "text": ""}, "empty_message")


def test_malformed_actions(match):
    with pytest.raises(IllegalAction) as info:
        rules.apply(match.state, "teller", {"type": "fly", "at": 1})
    assert info.value.code == "unknown_action"
    with pytest.raises(IllegalAction) as info:
        rules.apply(match.state, "teller", {"type": "chat", "text": "hi"})        # no server stamp
    assert info.value.code == "bad_action"
    with pytest.raises(IllegalAction) as info:
        rules.apply(match.state, "teller", ["chat"])
    assert info.value.code == "bad_action"


@pytest.mark.parametrize("action, code", [
    ({"type": "place", "idx": 58, "x": 10, "y": 10}, "unknown_clipart"),
    ({"type": "place", "idx": -1, "x": 10, "y": 10}, "unknown_clipart"),
    ({"type": "place", "idx": "18", "x": 10, "y": 10}, "bad_field"),
    ({"type": "place", "idx": True, "x": 10, "y": 10}, "bad_field"),
    ({"type": "place", "x": 10, "y": 10}, "bad_field"),
    ({"type": "place", "idx": 0, "x": 10, "y": 10}, "not_in_palette"),          # helicopter
    ({"type": "place", "idx": SUN, "y": 10}, "bad_position"),
    ({"type": "place", "idx": SUN, "x": "left", "y": 10}, "bad_position"),
    ({"type": "place", "idx": SUN, "x": float("nan"), "y": 10}, "bad_position"),
    ({"type": "place", "idx": SUN, "x": 10, "y": 10, "depth": 3}, "bad_depth"),
    ({"type": "place", "idx": SUN, "x": 10, "y": 10, "depth": 1.0}, "bad_depth"),
    ({"type": "place", "idx": SUN, "x": 10, "y": 10, "flip": 2}, "bad_flip"),
    ({"type": "place", "idx": SUN, "x": 10, "y": 10, "flip": True}, "bad_flip"),
    ({"type": "place", "idx": SUN, "x": 10, "y": 10, "subtype": 0}, "subtype_not_allowed"),
    ({"type": "place", "idx": SUN, "x": 10, "y": 10, "pose": 1}, "subtype_not_allowed"),
    ({"type": "place", "idx": MIKE, "x": 10, "y": 10, "subtype": 35}, "bad_subtype"),
    ({"type": "place", "idx": MIKE, "x": 10, "y": 10, "subtype": 3, "pose": 1}, "bad_subtype"),
    ({"type": "place", "idx": MIKE, "x": 10, "y": 10, "pose": 7}, "bad_pose"),
    ({"type": "place", "idx": MIKE, "x": 10, "y": 10, "expression": 5}, "bad_expression"),
    ({"type": "place", "idx": SUN, "x": -101, "y": 10}, "off_canvas"),
    ({"type": "place", "idx": SUN, "x": 601, "y": 10}, "off_canvas"),
    ({"type": "place", "idx": SUN, "x": 10, "y": 501}, "off_canvas"),
    ({"type": "place", "idx": SUN, "x": 10, "y": -101}, "off_canvas"),
    ({"type": "place", "idx": SUN, "x": 10000, "y": 10}, "off_canvas"),
    ({"type": "update", "idx": SUN, "x": 10}, "not_on_canvas"),
    ({"type": "remove", "idx": SUN}, "not_on_canvas"),
    ({"type": "remove", "idx": 0}, "not_in_palette"),
])
def test_bad_canvas_actions(match, action, code):
    in_drawer_turn(match)
    refused(match, "drawer", action, code)


def test_pieces_on_the_canvas_cannot_be_placed_twice(match):
    in_drawer_turn(match)
    match.do("drawer", {"type": "place", "idx": MIKE, "x": 100, "y": 250})
    refused(match, "drawer", {"type": "place", "idx": MIKE, "x": 300, "y": 250}, "already_placed")
    refused(match, "drawer", {"type": "update", "idx": MIKE}, "empty_update")
    refused(match, "drawer", {"type": "update", "idx": MIKE, "depth": -1}, "bad_depth")
    refused(match, "drawer", {"type": "update", "idx": MIKE, "x": 700}, "off_canvas")
    match.do("drawer", {"type": "remove", "idx": MIKE})
    match.do("drawer", {"type": "place", "idx": MIKE, "x": 300, "y": 250})


def test_reach_allows_pieces_partly_off_the_canvas(match):
    in_drawer_turn(match)
    match.do("drawer", {"type": "place", "idx": SUN, "x": -100, "y": -100})        # small: 100 px
    match.do("drawer", {"type": "place", "idx": 16, "x": -110, "y": 300})         # oak tree: half of 220
    refused(match, "drawer", {"type": "update", "idx": 16, "depth": 2}, "off_canvas")   # smaller: too far
    match.do("drawer", {"type": "update", "idx": 16, "x": 600.4})
    assert match.state["canvas"]["16"]["x"] == 600


def test_pose_and_expression_fields(match):
    in_drawer_turn(match)
    match.do("drawer", {"type": "place", "idx": JENNY, "x": 300, "y": 250, "pose": 3, "expression": 3})
    assert match.state["canvas"]["19"]["subtype"] == 18
    match.do("drawer", {"type": "update", "idx": JENNY, "expression": 4})
    assert match.state["canvas"]["19"]["subtype"] == 19
    match.do("drawer", {"type": "update", "idx": JENNY, "subtype": 4})
    piece = rules.view_for(match.state, "drawer")["canvas"][0]
    assert (piece["pose_name"], piece["expression_name"]) == ("arms out", "scared")


# -------------------------------------------------------------------------------------- time
def test_deadline_counts_from_the_first_action(kit, readme_content):
    match = kit.Match(readme_content, config={"time_limit_s": 60})
    assert match.state["deadline"] is None
    match.do("teller", {"type": "chat", "text": "hi"}, dt=5000)
    assert match.state["deadline"] == kit.T0 + 5000 + 60_000
    match.do("drawer", {"type": "place", "idx": SUN, "x": 10, "y": 10}, dt=59_000)
    events = match.do("drawer", {"type": "chat", "text": "late"}, dt=2000)
    # the late action is not applied: the round is closed with an empty reply and the game ends
    assert [e.type for e in events] == ["round_recorded", "game_ended"]
    assert events[0].payload["msg_d"] == "" and events[1].payload["ended_by"] == "time_up"
    assert [m["text"] for m in match.state["chat"]] == ["hi"]
    assert parse_scene(events[0].private["drawer"]["abs_d"]).idxs == {SUN}
    assert rules.outcome(match.state)["ended_by"] == "time_up"


def test_deadline_from_config_start(kit, readme_content):
    match = kit.Match(readme_content, config={"start_ms": kit.T0, "time_limit_s": 1})
    events = match.do("teller", {"type": "chat", "text": "hi"}, dt=1001)
    assert [e.type for e in events] == ["game_ended"]


def test_system_time_up(match):
    events = match.do(SYSTEM, {"type": "time_up"})
    assert events[0].type == "game_ended" and events[0].payload["ended_by"] == "time_up"
    refused(match, SYSTEM, {"type": "time_up"}, "game_over")


def test_default_limit_is_twenty_minutes(match):
    match.do("teller", {"type": "chat", "text": "hi"})
    assert match.state["deadline"] - match.state["started_at"] == 1200 * 1000


# ------------------------------------------------------------------------------ random play
def random_action(state, role, rng):
    """A mostly legal random action for ``role`` (agents-in-the-loop style)."""
    view = rules.view_for(state, role)
    can = view["can"]
    if not can:
        return None
    kind = rng.choice(can)
    if kind == "chat":
        return {"type": "chat", "text": rng.choice(["a sun", "ok", "the boy is smiling", "x" * 140])}
    if kind in ("peek", "close_peek", "end"):
        if kind == "end" and "chat" in can and rng.random() < 0.93:
            return {"type": "chat", "text": "more"}
        return {"type": kind}
    if kind == "place":
        free = [p["idx"] for p in view["palette"] if not p["on_canvas"]]
        if not free:
            return {"type": "chat", "text": "ok"}
        action = {"type": "place", "idx": rng.choice(free), "x": rng.uniform(-50, 550),
                  "y": rng.uniform(-50, 450), "depth": rng.randrange(3), "flip": rng.randrange(2)}
        if ca.is_human(action["idx"]):
            action["subtype"] = rng.randrange(35)
        return action
    on = [p["idx"] for p in view["canvas"]]
    if kind == "update":
        return {"type": "update", "idx": rng.choice(on), "x": rng.randrange(500), "depth": rng.randrange(3)}
    return {"type": "remove", "idx": rng.choice(on)}


@pytest.mark.parametrize("seed", range(12))
def test_random_play_replays_and_never_leaks(kit, seed):
    rng = random.Random(seed)
    content = generate(seed, {})
    match = kit.Match(content, seed=seed, config={"time_limit_s": 600 if seed % 2 else 45})
    for _ in range(400):
        if rules.is_over(match.state):
            break
        (role,) = rules.to_act(match.state)
        action = random_action(match.state, role, rng)
        match.do(role, action, dt=rng.randrange(100, 3000))
    record = match.record()
    assert kit.replay(record) == match.state
    target_text = json.dumps(match.state["target"])
    for event in match.events:
        ev = event["_event"]
        teller_sees = json.dumps(ev.for_role("teller"))
        drawer_sees = json.dumps(ev.for_role("drawer"))
        if ev.type not in ("game_ended", "peek_opened"):
            assert "abs_d" not in teller_sees and "piece" not in teller_sees and "canvas" not in teller_sees
        if ev.type != "game_ended":
            assert "target" not in drawer_sees and "abs_t" not in drawer_sees
        assert "score" not in teller_sees or ev.type == "game_ended"
    if not rules.is_over(match.state):
        drawer_view = rules.view_for(match.state, "drawer")
        assert target_text not in json.dumps(drawer_view)
        assert "target" not in drawer_view
        teller_view = rules.view_for(match.state, "teller")
        assert "canvas" not in teller_view and "palette" not in teller_view


def test_illegal_moves_do_not_advance_a_replay(kit, readme_content):
    match = kit.Match(readme_content)
    in_drawer_turn(match)
    refused(match, "drawer", {"type": "place", "idx": 58, "x": 1, "y": 1}, "unknown_clipart")
    match.do("drawer", {"type": "place", "idx": OWL, "x": 205, "y": 98, "depth": 1})
    match.do("drawer", {"type": "chat", "text": "ok"})
    assert kit.replay(match.record()) == match.state


# -------------------------------------------------------------------------- canvas_actions helper
def test_canvas_actions_reach_the_goal(match, readme):
    goal = parse_scene(readme["abs_t"])
    in_drawer_turn(match)
    match.do("drawer", {"type": "place", "idx": MIKE, "x": 400, "y": 300, "subtype": 1})
    match.do("drawer", {"type": "place", "idx": 16, "x": 40, "y": 80})             # not in the target
    actions = rules.canvas_actions(rules.canvas_scene(match.state), goal)
    assert actions[0] == {"type": "remove", "idx": 16}
    assert actions[1] == {"type": "update", "idx": MIKE, "x": 100, "y": 250, "depth": 1, "subtype": 10}
    assert [a["idx"] for a in actions[2:]] == [3, 15, 19, 24, 33, 47]        # draw order
    for action in actions:
        match.do("drawer", action)
    assert rules.canvas_scene(match.state).placed and rules.score(match.state) == 5.0
    assert rules.canvas_actions(rules.canvas_scene(match.state), goal) == []


def test_registry_entry():
    from games.registry import get_game
    spec = get_game("codraw_v1")
    assert spec.rules is rules and spec.roles == ("teller", "drawer")
    assert spec.default_config == {"time_limit_s": 1200}
    assert {a.name for a in spec.agents.AGENTS} >= {"codraw_rule_teller", "codraw_rule_drawer", "codraw_nn_teller",
                                                    "codraw_nn_drawer", "codraw_script_teller"}
    assert spec.content.generate(1, spec.default_config)["kind"] == "codraw_scene"
