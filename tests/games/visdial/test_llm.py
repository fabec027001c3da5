"""The visual-dialog chat's LLM adapter (games/visdial/llm.py): the request each seat's view
becomes, and how a model's decision becomes the action the page would send."""
from __future__ import annotations

import io

import pytest
from PIL import Image as PILImage

from clevr.render import render_png
from games import llm, testing
from games.registry import GAMES
from games.visdial import rules
from games.visdial import llm as visdial_llm

QUESTIONER, ANSWERER = visdial_llm.ROLES["questioner"], visdial_llm.ROLES["answerer"]
OBJECTS = [
    {"shape": "cube", "color": "red", "size": "large", "material": "metal", "pixel_coords": [400, 250, 9.0],
     "3d_coords": [1.5, 1.5, 0.7], "rotation": 30.0},
    {"shape": "sphere", "color": "blue", "size": "small", "material": "rubber", "pixel_coords": [60, 100, 12.0],
     "3d_coords": [-2.0, -1.0, 0.35], "rotation": 0.0},
]
CONTENT = {"image_id": 7, "caption": "There is a large red cube.",
           "scene": {"image_index": 7, "image_filename": "synthetic_00000007.png", "objects": OBJECTS}}


def start(rounds: int = 2) -> dict:
    return rules.initial_state(CONTENT, 1, {"rounds": rounds})


def act(state: dict, role: str, action: dict) -> dict:
    return rules.apply(state, role, {**action, "at": 1000})[0]


def render(adapter, view: dict) -> str:
    return llm.render_system(adapter.template_text(), adapter.variables(view))


def test_the_questioner_knows_the_caption_and_the_dialog_only():
    view = rules.view_for(start(), "questioner")
    system = render(QUESTIONER, view)
    assert 'You know only its caption: "There is a large red cube."' in system
    assert "You ask 2 questions" in system and "at most 200 characters" in system and "$" not in system
    assert QUESTIONER.turns(view) == [{"role": "user", "content":
                                       'The caption: "There is a large red cube."\nAsk question 1 of 2.'}]
    state = act(start(), "questioner", {"type": "ask", "text": "is there a sphere?"})
    state = act(state, "answerer", {"type": "answer", "text": "yes, a small blue one"})
    assert QUESTIONER.turns(rules.view_for(state, "questioner")) == [
        {"role": "user", "content": 'The caption: "There is a large red cube."'},
        {"role": "assistant", "content": "is there a sphere?"},
        {"role": "user", "content": "Answer: yes, a small blue one\nAsk question 2 of 2."}]
    assert QUESTIONER.images is None and QUESTIONER.stream_field == "question"
    assert "sphere" not in render(QUESTIONER, view) and "synthetic_00000007" not in render(QUESTIONER, view)


def test_the_answerer_gets_the_scene_in_words_and_the_questions():
    state = act(start(), "questioner", {"type": "ask", "text": "is there a sphere?"})
    view = rules.view_for(state, "answerer")
    system = render(ANSWERER, view)
    assert ("2 objects, from left to right:\n"
            "1. a small blue rubber sphere, back left (x 60, y 100)\n"
            "2. a large red metal cube, front right (x 400, y 250)") in system
    assert "pixels of the 480 x 320 picture" in system and "$" not in system
    assert ANSWERER.turns(view) == [{"role": "user", "content": "Question 1 of 2: is there a sphere?"}]
    assert ANSWERER.schema(view) == {"type": "object", "additionalProperties": False, "required": ["answer"],
                                     "properties": {"answer": {"type": "string", "description":
                                                               "Your answer to the question, at most 200 characters."}}}
    assert ANSWERER.stream_field == "answer"


def test_the_answerer_s_picture_is_the_scene_the_pages_draw():
    state = act(start(), "questioner", {"type": "ask", "text": "is there a sphere?"})
    (image,) = ANSWERER.images(rules.view_for(state, "answerer"))
    picture = PILImage.open(io.BytesIO(image.png))
    assert picture.size == (480, 320)
    drawn = PILImage.open(io.BytesIO(render_png(CONTENT["scene"], 480, 320)))
    assert picture.convert("RGB").tobytes() == drawn.convert("RGB").tobytes()


def test_a_real_image_file_is_sent_as_it_is(tmp_path):
    path = tmp_path / "photo.jpg"
    PILImage.new("RGB", (64, 48), (10, 200, 30)).save(path)
    view = {"image": {"id": 3, "scene": {"image_path": str(path)}}}
    (image,) = visdial_llm.answerer_images(view)
    picture = PILImage.open(io.BytesIO(image.png))
    assert picture.format == "PNG" and picture.size == (64, 48)
    assert visdial_llm.scene_text(view["image"]["scene"]).startswith("(No description")


def test_decisions_become_the_actions_the_page_sends():
    state = start(rounds=1)
    action = QUESTIONER.to_action({"question": " is there a\x0b cube? "}, rules.view_for(state, "questioner"))
    assert action == {"type": "ask", "text": "is there a  cube?"}
    state = act(state, "questioner", action)
    action = ANSWERER.to_action({"answer": "yes"}, rules.view_for(state, "answerer"))
    assert action == {"type": "answer", "text": "yes"}
    assert rules.is_over(act(state, "answerer", action))


@pytest.mark.parametrize("adapter, field, decision, says", [
    (QUESTIONER, "question", {}, 'needs "question"'),
    (QUESTIONER, "question", {"question": ["a"]}, 'needs "question"'),
    (QUESTIONER, "question", {"question": " \n "}, "empty"),
    (QUESTIONER, "question", {"question": "why " * 60}, "the limit is 200"),
    (ANSWERER, "answer", {"answer": None}, 'needs "answer"'),
    (ANSWERER, "answer", {"answer": ""}, "empty"),
    (ANSWERER, "answer", {"answer": "no " * 80}, "the limit is 200"),
])
def test_a_decision_that_cannot_be_sent_says_why(adapter, field, decision, says):
    state = act(start(), "questioner", {"type": "ask", "text": "is there a sphere?"})
    with pytest.raises(llm.DecisionError, match=says):
        adapter.to_action(decision, rules.view_for(state, "answerer" if field == "answer" else "questioner"))


def test_the_visual_dialog_keeps_the_llm_contract():
    assert testing.check_llm_roles(GAMES["visdial_v1"]) > 10
