"""games.testing.check_llm_roles, the contract of a game's LLM adapters: it passes the games'
adapters (tests/test_game_contract.py runs it for every game) and fails broken copies of them."""
from __future__ import annotations

import dataclasses
import random
import types

import pytest

from games import llm, testing
from games.colors import llm as colors_llm
from games.registry import GAMES
from games.visdial import llm as visdial_llm

COLORS, VISDIAL = GAMES["colors_v1"], GAMES["visdial_v1"]


def with_roles(spec, roles: dict, **rules_overrides):
    """``spec`` with other LLM adapters (and some rules functions replaced); the registered game is
    untouched."""
    rules = spec.rules
    if rules_overrides:
        rules = types.ModuleType(spec.rules.__name__)
        rules.__dict__.update({k: v for k, v in vars(spec.rules).items() if not k.startswith("__")})
        rules.__dict__.update(rules_overrides)
    return types.SimpleNamespace(id=spec.id, rules=rules, content=spec.content, hidden=spec.hidden,
                                 actions=spec.actions, agents=spec.agents, default_config=spec.default_config,
                                 llm=types.SimpleNamespace(ROLES=roles))


def speaker(**changes) -> llm.LlmRole:
    return dataclasses.replace(colors_llm.ROLES["speaker"], **changes)


def listener(**changes) -> llm.LlmRole:
    return dataclasses.replace(colors_llm.ROLES["listener"], **changes)


def test_a_game_without_adapters_has_nothing_to_check():
    assert testing.check_llm_roles(with_roles(COLORS, {})) == 0


def test_the_schema_checks_know_strict_form():
    good = {"type": "object", "additionalProperties": False, "required": ["a", "b"],
            "properties": {"a": {"type": "string", "enum": ["x", "y"]},
                           "b": {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 3}}}}
    testing.check_decision_schema(good)
    for value in (testing.example_decision(good), *(testing.example_decision(good, random.Random(i)) for i in range(20))):
        assert set(value) == {"a", "b"} and value["a"] in ("x", "y") and all(0 <= n <= 3 for n in value["b"])
    bad = [({**good, "required": ["a"]}, "every property required"),
           ({k: v for k, v in good.items() if k != "additionalProperties"}, "additionalProperties"),
           ({**good, "type": "array"}, "object schema"),
           ({**good, "properties": {**good["properties"], "a": {"oneOf": [{"type": "string"}]}}}, "oneOf"),
           ({**good, "properties": {**good["properties"], "a": {"type": "text"}}}, "type 'text'")]
    for schema, says in bad:
        with pytest.raises(testing.ContractError, match=says):
            testing.check_decision_schema(schema)


@pytest.mark.parametrize("roles, says", [
    ({"speaker": speaker(turns=lambda view: colors_llm.speaker_turns(view) + [{"role": "assistant", "content": "ok"}])},
     "end with a 'user' turn"),
    ({"speaker": speaker(variables=lambda view: {"rounds": "3"})}, r"uses \$max_message_len"),
    ({"speaker": speaker(schema=lambda view: {**colors_llm.speaker_schema(view), "additionalProperties": True})},
     "additionalProperties: false"),
    ({"speaker": speaker(stream_field="text")}, "stream_field of \\['speaker'\\]"),
    ({"speaker": speaker(turns=lambda view: colors_llm.speaker_turns(view)[:-1]
                         + [{"role": "user", "content": f"round {random.random()}"}])}, "built twice"),
    ({"speaker": speaker(to_action=lambda decision, view: {"type": "chat", "text": decision["message"],
                                                           "round": view["round"]})},
     "raised KeyError: 'message', not games.llm.DecisionError"),
    ({"speaker": speaker(to_action=lambda decision, view: {**colors_llm.speaker_action(decision, view),
                                                           "round": view["round"] + 1})},
     "the rules refuse: bad_round"),
    ({"listener": listener(to_action=lambda decision, view: {"type": "click", "position": 0, "round": view["round"]})},
     "a decision an empty object .* it must raise games.llm.DecisionError"),
    ({"listener": listener(to_action=lambda decision, view: {**colors_llm.listener_action(decision, view), "at": 5})},
     "no 'at'"),
    ({"listener": listener(version="")}, "no version"),
    ({"listener": listener(template="prompts/no-such-file.txt")}, "cannot be read"),
    ({"judge": speaker()}, "not roles of the game"),
])
def test_broken_color_adapters_fail(roles, says):
    with pytest.raises(testing.ContractError, match=says):
        testing.check_llm_roles(with_roles(COLORS, roles))


def test_a_request_that_tells_the_questioner_the_image_fails():
    """A questioner's view that holds the scene (a leaky rules.view_for) and an adapter that passes
    its file name on: the request holds what the questioner must not know."""
    view_for = VISDIAL.rules.view_for

    def leaky_view(state, role):
        return {**view_for(state, role), "image": {"id": state["image_id"], "scene": state["scene"]}}

    def telling_turns(view):
        turns = visdial_llm.questioner_turns(view)
        name = view["image"]["scene"]["image_filename"]
        return turns[:-1] + [{"role": "user", "content": turns[-1]["content"] + f" (the picture is {name})"}]

    questioner = dataclasses.replace(visdial_llm.ROLES["questioner"], turns=telling_turns)
    with pytest.raises(testing.ContractError, match=r"must not know: .*file name at \$\.turns"):
        testing.check_llm_roles(with_roles(VISDIAL, {"questioner": questioner}, view_for=leaky_view))


def test_a_request_that_depends_on_more_than_the_view_fails():
    """An adapter that reads the hidden part from elsewhere (here: the last state a view was made
    of, as a careless module-level cache might hold it) changes its request when what the role
    must not know changes; hidden.vary shows it even where no value scan can (the listener's
    target colour is three whole numbers)."""
    last = {}

    def remembering_view(state, role):
        last["state"] = state
        return COLORS.rules.view_for(state, role)

    def telling_turns(view):
        state = last["state"]
        turns = colors_llm.listener_turns(view)
        return turns[:-1] + [{"role": "user", "content": turns[-1]["content"]
                              + f" (psst: {state['rounds'][state['round']]['colors'][0]})"}]

    spec = with_roles(COLORS, {"listener": listener(turns=telling_turns)}, view_for=remembering_view)
    with pytest.raises(testing.ContractError, match="changes with what the role must not know"):
        testing.check_llm_roles(spec)
