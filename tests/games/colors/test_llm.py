"""The color game's LLM adapter (games/colors/llm.py): the request each seat's view becomes, and
how a model's decision becomes the action the page would send."""
from __future__ import annotations

import io
import random

import pytest
from PIL import Image as PILImage

from games import llm, testing
from games.colors import hidden, rules
from games.colors import llm as colors_llm
from games.registry import GAMES

SPEAKER, LISTENER = colors_llm.ROLES["speaker"], colors_llm.ROLES["listener"]
# Round 1: green (the target), red, blue; the speaker sees them in that order, the listener as
# blue, green, red. Round 2: grey, yellow, purple; the speaker sees purple, grey, yellow.
CONTENT = {"rounds": [
    {"condition": "far", "colors": [[120, 100, 50], [0, 100, 50], [240, 100, 50]],
     "positions": {"speaker": [0, 1, 2], "listener": [1, 2, 0]}},
    {"condition": "far", "colors": [[0, 0, 50], [60, 100, 50], [280, 60, 50]],
     "positions": {"speaker": [1, 2, 0], "listener": [0, 1, 2]}},
]}


def start() -> dict:
    return rules.initial_state(CONTENT, 1, {"rounds": 2})


def act(state: dict, role: str, action: dict, at: int = 1000) -> dict:
    return rules.apply(state, role, {**action, "at": at})[0]


def render(adapter, view: dict) -> str:
    return llm.render_system(adapter.template_text(), adapter.variables(view))


def test_hex_codes_are_the_css_colours():
    assert colors_llm.hex_code([120, 100, 50]) == "#00ff00"
    assert colors_llm.hex_code([0, 0, 50]) == "#808080"
    assert colors_llm.hex_code([240, 100, 25]) == "#000080"


def test_the_speaker_is_told_the_rules_and_its_colours_with_the_target():
    view = rules.view_for(start(), "speaker")
    system = render(SPEAKER, view)
    assert "The game has 2 rounds" in system and "at most 140 characters" in system and "$" not in system
    assert SPEAKER.turns(view) == [{"role": "user", "content": (
        "Round 1 of 2 (score so far: 0 correct of 0). The colours:\n"
        "A: #00ff00, hsl(120, 100%, 50%)  <- the target\n"
        "B: #ff0000, hsl(0, 100%, 50%)\n"
        "C: #0000ff, hsl(240, 100%, 50%)\n"
        "Write your message to the listener describing the target, A (at most 140 characters).")}]
    assert SPEAKER.schema(view) == {
        "type": "object", "additionalProperties": False, "required": ["message"],
        "properties": {"message": {"type": "string", "description":
                                   "Your message to the listener describing the target, at most 140 characters."}}}
    assert SPEAKER.stream_field == "message"


def test_the_listener_gets_its_own_order_without_the_target_and_the_speakers_words():
    state = act(start(), "speaker", {"type": "chat", "text": "the green one", "round": 1})
    view = rules.view_for(state, "listener")
    turns = LISTENER.turns(view)
    assert turns == [{"role": "user", "content": (
        "Round 1 of 2 (score so far: 0 correct of 0). The colours:\n"
        "A: #0000ff, hsl(240, 100%, 50%)\n"
        "B: #00ff00, hsl(120, 100%, 50%)\n"
        "C: #ff0000, hsl(0, 100%, 50%)\n"
        "Speaker: the green one\n"
        "Which colour does the speaker mean? Answer with its letter.")}]
    assert "target" not in turns[0]["content"]
    assert LISTENER.schema(view)["properties"]["color"]["enum"] == ["A", "B", "C"]
    assert LISTENER.stream_field is None
    assert "The game has 2 rounds" in render(LISTENER, view)


def test_decisions_become_the_actions_the_page_sends_and_play_a_round():
    state = start()
    view = rules.view_for(state, "speaker")
    action = SPEAKER.to_action({"message": "  the green\r one \n"}, view)
    assert action == {"type": "chat", "text": "the green  one", "round": 1}
    state = act(state, "speaker", action)
    action = LISTENER.to_action({"color": "B"}, rules.view_for(state, "listener"))
    assert action == {"type": "click", "position": 1, "round": 1}
    state = act(state, "listener", action, at=2000)
    assert state["correct"] == 1 and state["round"] == 1
    # the next round: both seats see the ended one as they saw it, then the new colours
    speaker = SPEAKER.turns(rules.view_for(state, "speaker"))
    assert [t["role"] for t in speaker] == ["user", "assistant", "user"]
    assert speaker[1]["content"] == "the green  one"
    assert speaker[2]["content"].startswith("The listener picked A: correct.\nRound 2 of 2 (score so far: 1 correct of 1)")
    assert "C: #9933cc, hsl(280, 60%, 50%)" not in speaker[2]["content"]
    assert "A: #9933cc, hsl(280, 60%, 50%)\nB: #808080, hsl(0, 0%, 50%)  <- the target" in speaker[2]["content"]
    listener = LISTENER.turns(rules.view_for(state, "listener"))
    assert listener[-1]["content"].count("You picked B: correct.") == 1


def test_a_wrong_pick_is_shown_with_the_target():
    state = act(start(), "speaker", {"type": "chat", "text": "green", "round": 1})
    state = act(state, "listener", LISTENER.to_action({"color": "C"}, rules.view_for(state, "listener")), at=2000)
    state = act(state, "speaker", {"type": "chat", "text": "grey", "round": 2}, at=3000)
    text = LISTENER.turns(rules.view_for(state, "listener"))[0]["content"]
    assert "You picked C: wrong; the target was B." in text
    text = "\n".join(t["content"] for t in SPEAKER.turns(rules.view_for(state, "speaker")))
    assert "The listener picked B: wrong; the target was A." in text


@pytest.mark.parametrize("decision, says", [
    ({}, 'needs "message"'),
    ({"message": 7}, 'needs "message"'),
    ({"message": "   "}, "empty"),
    ({"message": "blue " * 40}, "the limit is 140"),
])
def test_a_speaker_decision_that_cannot_be_sent_says_why(decision, says):
    with pytest.raises(llm.DecisionError, match=says):
        SPEAKER.to_action(decision, rules.view_for(start(), "speaker"))


@pytest.mark.parametrize("decision", [{}, {"color": "D"}, {"color": 1}, {"color": None}])
def test_a_listener_decision_outside_the_letters_says_which_are_allowed(decision):
    state = act(start(), "speaker", {"type": "chat", "text": "green", "round": 1})
    with pytest.raises(llm.DecisionError, match="one of A, B, C"):
        LISTENER.to_action(decision, rules.view_for(state, "listener"))


def test_the_listener_cannot_click_before_the_speaker_spoke():
    with pytest.raises(llm.DecisionError, match="has not described"):
        LISTENER.to_action({"color": "a"}, rules.view_for(start(), "listener"))


def test_the_swatches_are_the_seat_s_colours_in_its_order():
    state = act(start(), "speaker", {"type": "chat", "text": "green", "round": 1})
    for adapter, role, order, framed in ((SPEAKER, "speaker", ((0, 255, 0), (255, 0, 0), (0, 0, 255)), True),
                                         (LISTENER, "listener", ((0, 0, 255), (0, 255, 0), (255, 0, 0)), False)):
        (image,) = adapter.images(rules.view_for(state, role))
        picture = PILImage.open(io.BytesIO(image.png)).convert("RGB")
        centres = [(colors_llm.GAP + i * (colors_llm.SWATCH + colors_llm.GAP) + colors_llm.SWATCH // 2,
                    colors_llm.GAP + colors_llm.SWATCH // 2) for i in range(3)]
        assert tuple(picture.getpixel(c) for c in centres) == order
        # the target's black frame, only in the speaker's picture
        assert (picture.getpixel((colors_llm.GAP - 4, colors_llm.GAP + 10)) == (0, 0, 0)) is framed
        assert ("target" in image.caption) is framed


def test_the_listener_s_request_is_the_same_whichever_colour_is_the_target():
    state = act(start(), "speaker", {"type": "chat", "text": "green", "round": 1})
    view = rules.view_for(state, "listener")
    other = hidden.vary(state, "listener", random.Random(1))
    assert other is not None and rules.view_for(other, "listener") == view
    assert testing._request(LISTENER, rules.view_for(other, "listener")) == testing._request(LISTENER, view)


def test_the_color_game_keeps_the_llm_contract():
    assert testing.check_llm_roles(GAMES["colors_v1"]) > 10
