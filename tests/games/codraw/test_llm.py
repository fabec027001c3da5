"""CoDraw's LLM adapters (games/codraw/llm.py): the requests for known states, decisions -> actions
(one decision, several actions, each accepted by the rules), the repair messages, the target and the
scores kept out of the Drawer's request, the pictures."""
from __future__ import annotations

import io
import json
import random

import pytest
from PIL import Image as PILImage

from games.codraw import SPEC, content, hidden, llm, rules
from games.llm import DecisionError, render_system

T, D = llm.ROLES["teller"], llm.ROLES["drawer"]


def _state(seed: int = 3) -> dict:
    return rules.initial_state(content.generate(seed, {}), seed, {})


def _apply(state: dict, role: str, action: dict, at: int = 1) -> dict:
    assert "at" not in action
    return rules.apply(state, role, {**action, "at": at})[0]


def _play(state: dict, role: str, decision: dict) -> tuple[dict, list[dict]]:
    """Apply the decision's actions one by one, asking to_action again after each (as the platform
    does), until the turn passes. Returns the state and the actions taken."""
    taken = []
    adapter = llm.ROLES[role]
    while role in rules.to_act(state):
        view = rules.view_for(state, role)
        action = adapter.to_action(decision, view)
        assert action == llm.turn_actions(decision, view)[0]
        taken.append(action)
        state = _apply(state, role, action, at=len(taken))
        if action["type"] in ("peek",):
            break
        assert len(taken) < 30
    return state, taken


def _request(adapter, view: dict) -> dict:
    return {"system": render_system(adapter.template_text(), adapter.variables(view)),
            "turns": adapter.turns(view), "schema": adapter.schema(view),
            "images": [(i.caption, i.png) for i in adapter.images(view)]}


def test_spec_offers_both_roles():
    assert SPEC.llm_role("teller") is T and SPEC.llm_role("drawer") is D
    assert T.stream_field == "message" and D.stream_field is None     # the Drawer's pieces are never shown


def test_teller_request_at_the_start():
    state = _state()
    view = rules.view_for(state, "teller")
    system = render_system(T.template_text(), T.variables(view))
    assert "You are the TELLER" in system and "$" not in system
    assert f"Your scene ({len(state['target'])} pieces)" in system
    assert all(f"- {llm.describe_piece(p)}\n" in system for p in state["target"])
    assert "horizon, where the grass begins, is at y = 192" in system
    turns = T.turns(view)
    assert len(turns) == 1 and turns[0]["role"] == "user" and turns[0]["content"].startswith("Round 1, your turn.")
    assert '"peek" to see' in turns[0]["content"]
    schema = T.schema(view)
    assert schema["properties"]["action"]["enum"] == ["message", "peek", "done"]
    assert schema["required"] == ["action", "message"] and schema["additionalProperties"] is False


def test_describe_piece():
    assert llm.describe_piece({"idx": 19, "x": 324, "y": 236, "depth": 1, "flip": 1, "subtype": 17}) == \
        "Jenny (running, smile), medium, facing left, at (324, 236)"
    assert llm.describe_piece({"idx": 16, "x": 10, "y": 20, "depth": 2, "flip": 0, "subtype": 0}) == \
        "oak tree, small, facing right, at (10, 20)"


def test_one_drawer_decision_is_several_actions():
    state = _state()
    state, taken = _play(state, "teller", {"action": "message", "message": "  a big sun top right  "})
    assert taken == [{"type": "chat", "text": "a big sun top right"}]
    view = rules.view_for(state, "drawer")
    assert D.turns(view)[-1]["content"].startswith("a big sun top right\nYour canvas now:\n(nothing)\n")
    palette = [p["name"] for p in view["palette"]]
    assert D.schema(view)["properties"]["pieces"]["items"]["properties"]["clipart"]["enum"] == palette
    human = "Mike" if "Mike" in palette else "Jenny"
    thing = next(n for n in palette if n not in ("Mike", "Jenny"))
    decision = {"pieces": [
        {"action": "add", "clipart": thing, "x": 400, "y": 50, "size": "large", "facing": "left",
         "pose": "none", "expression": "none"},
        {"action": "add", "clipart": human, "x": 100, "y": 300, "size": "medium", "facing": "right",
         "pose": "running", "expression": "smile"}], "message": "done: sun and kid"}
    state, taken = _play(state, "drawer", decision)
    idx = {p["name"]: p["idx"] for p in view["palette"]}
    assert taken == [
        {"type": "place", "idx": idx[thing], "x": 400, "y": 50, "depth": 0, "flip": 1},
        {"type": "place", "idx": idx[human], "x": 100, "y": 300, "depth": 1, "flip": 0, "subtype": 3 * 5 + 2},
        {"type": "chat", "text": "done: sun and kid"}]
    assert state["phase"] == "teller"
    # the next turn: a move (only what changes), a removal, an empty reply -> "ok"
    state, _ = _play(state, "teller", {"action": "message", "message": "move the kid right, no sun"})
    decision = {"pieces": [
        {"action": "move", "clipart": human, "x": 300, "y": 300, "size": "medium", "facing": "right",
         "pose": "none", "expression": "none"},
        {"action": "remove", "clipart": thing, "x": 0, "y": 0, "size": "large", "facing": "left",
         "pose": "none", "expression": "none"}], "message": ""}
    state, taken = _play(state, "drawer", decision)
    assert taken == [{"type": "remove", "idx": idx[thing]}, {"type": "update", "idx": idx[human], "x": 300},
                     {"type": "chat", "text": "ok"}]
    assert state["canvas"][str(idx[human])]["subtype"] == 17       # pose and expression kept


def test_teller_peek_close_and_end():
    state = _state()
    state, _ = _play(state, "teller", {"action": "message", "message": "a tree"})
    view = rules.view_for(state, "drawer")
    tree = view["palette"][0]["name"]
    state, _ = _play(state, "drawer", {"pieces": [{"action": "add", "clipart": tree, "x": 250, "y": 200,
                                                   "size": "small", "facing": "right", "pose": "none",
                                                   "expression": "none"}], "message": "ok"})
    state, taken = _play(state, "teller", {"action": "peek", "message": ""})
    assert taken == [{"type": "peek"}]
    view = rules.view_for(state, "teller")
    assert T.schema(view)["properties"]["action"]["enum"] == ["message", "done"]
    assert "When you peeked (round 2), the Drawer's canvas was:\n- " in T.turns(view)[-1]["content"]
    images = T.images(view)
    assert [i.caption for i in images] == ["The scene you describe (the Drawer does not see it).",
                                           "The Drawer's canvas when you peeked (round 2)."]
    state, taken = _play(state, "teller", {"action": "message", "message": "smaller"})
    assert taken == [{"type": "close_peek"}, {"type": "chat", "text": "smaller"}]
    state, _ = _play(state, "drawer", {"pieces": [], "message": "ok"})
    with pytest.raises(DecisionError, match="must be one of message, done, not 'peek'"):
        T.to_action({"action": "peek", "message": ""}, rules.view_for(state, "teller"))
    state, taken = _play(state, "teller", {"action": "done", "message": ""})
    assert taken == [{"type": "end"}] and rules.is_over(state)


@pytest.mark.parametrize("change, message", [
    ({"clipart": "unicorn"}, "'unicorn' is not in your palette. Your palette: "),
    ({"action": "paint"}, '"action" must be add, move or remove'),
    ({"x": 900}, '"x" of the .* is 900; it must be between 0 and 500'),
    ({"y": "high"}, '"y" of the .* must be a whole number'),
    ({"size": "huge"}, "The size of the .* must be one of large, medium, small"),
    ({"facing": "up"}, "Which way the .* faces must be one of right, left"),
])
def test_bad_drawer_decisions_are_explained(change, message):
    state, _ = _play(_state(), "teller", {"action": "message", "message": "draw"})
    view = rules.view_for(state, "drawer")
    piece = {"action": "add", "clipart": view["palette"][0]["name"], "x": 10, "y": 10, "size": "large",
             "facing": "right", "pose": "none", "expression": "none", **change}
    with pytest.raises(DecisionError, match=message):
        D.to_action({"pieces": [piece], "message": "ok"}, view)


def test_other_bad_decisions_are_explained():
    state = _state()
    view = rules.view_for(state, "teller")
    with pytest.raises(DecisionError, match="Your message is empty"):
        T.to_action({"action": "message", "message": " "}, view)
    with pytest.raises(DecisionError, match="141 characters long; the limit is 140"):
        T.to_action({"action": "message", "message": "x" * 141}, view)
    with pytest.raises(DecisionError, match="It is the Teller's turn"):
        D.to_action({"pieces": [], "message": "ok"}, rules.view_for(state, "drawer"))
    state, _ = _play(state, "teller", {"action": "message", "message": "draw"})
    view = rules.view_for(state, "drawer")
    name = view["palette"][0]["name"]
    piece = {"action": "add", "clipart": name, "x": 10, "y": 10, "size": "large", "facing": "right",
             "pose": "none", "expression": "none"}
    with pytest.raises(DecisionError, match="appears more than once"):
        D.to_action({"pieces": [piece, piece], "message": "ok"}, view)
    with pytest.raises(DecisionError, match='Give "pieces" as a list'):
        D.to_action({"message": "ok"}, view)
    with pytest.raises(DecisionError, match='string "message" \\(it may be empty\\)'):
        D.to_action({"pieces": []}, view)
    kid = next(p["name"] for p in view["palette"] if p["human"])
    with pytest.raises(DecisionError, match="The pose of .* must be one of arms out"):
        D.to_action({"pieces": [{**piece, "clipart": kid, "pose": "flying"}], "message": "ok"}, view)


def test_the_drawer_request_holds_nothing_of_the_target():
    """The Drawer's request (prompt, turns, schema, picture captions and bytes) is the same whatever
    the target (hidden.vary), and names neither the target's string nor a score."""
    state = _state()
    states = [state]
    state, _ = _play(state, "teller", {"action": "message", "message": "a tree"})
    states.append(state)
    view = rules.view_for(state, "drawer")
    state, _ = _play(state, "drawer", {"pieces": [{"action": "add", "clipart": view["palette"][0]["name"],
                                                   "x": 200, "y": 100, "size": "medium", "facing": "right",
                                                   "pose": "none", "expression": "none"}], "message": "ok"})
    state, _ = _play(state, "teller", {"action": "message", "message": "next"})
    states.append(state)
    for k, state in enumerate(states):
        request = _request(D, rules.view_for(state, "drawer"))
        text = json.dumps({key: request[key] for key in ("system", "turns", "schema")}) + \
            " ".join(c for c, _ in request["images"])
        assert state["abs_t"] not in text and "score" not in text and "target" not in text
        for p in state["target"]:
            assert llm.describe_piece(p) not in text
        for seed in range(3):
            other = hidden.vary(state, "drawer", random.Random(seed))
            assert other["target"] != state["target"]
            assert _request(D, rules.view_for(other, "drawer")) == request


def test_pictures():
    state = _state()
    target = T.images(rules.view_for(state, "teller"))
    canvas = D.images(rules.view_for(state, "drawer"))
    assert [i.caption for i in canvas] == ["Your canvas now."]
    for image in target + canvas:
        img = PILImage.open(io.BytesIO(image.png))
        assert img.format == "PNG" and img.size == (400, 320)
    assert target[0].png != canvas[0].png
