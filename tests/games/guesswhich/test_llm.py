"""GuessWhich's LLM adapters (games/guesswhich/llm.py): the requests for known states, decisions ->
actions through the rules, the repair messages, the secret kept out of the questioner's request,
the pictures."""
from __future__ import annotations

import io
import json

import pytest
from PIL import Image as PILImage

from games.guesswhich import SPEC, content, llm, rules
from games.llm import DecisionError, render_system

Q, A = llm.ROLES["questioner"], llm.ROLES["answerer"]


def _state(seed: int = 5, rounds: int = 2) -> dict:
    return rules.initial_state(content.generate(seed, {"pool_size": 20}), seed, {"rounds": rounds})


def _act(state: dict, role: str, decision: dict) -> dict:
    """The adapter's action for ``decision``, applied by the rules (which must accept it)."""
    action = LLM_ROLES[role].to_action(decision, rules.view_for(state, role))
    assert "at" not in action
    return rules.apply(state, role, {**action, "at": 1})[0]


LLM_ROLES = llm.ROLES


def _request(adapter, view: dict) -> dict:
    return {"system": render_system(adapter.template_text(), adapter.variables(view)),
            "turns": adapter.turns(view), "schema": adapter.schema(view),
            "images": [(i.caption, i.png) for i in adapter.images(view)]}


def _wrong(state: dict) -> str:
    return next(i for i in state["pool_ids"] if i != state["secret_id"])


def test_spec_offers_both_roles():
    assert SPEC.llm_role("questioner") is Q and SPEC.llm_role("answerer") is A
    assert Q.stream_field == "question" and A.stream_field == "answer"
    assert Q.version == A.version == llm.VERSION


def test_questioner_request_at_the_start():
    state = _state()
    view = rules.view_for(state, "questioner")
    system = render_system(Q.template_text(), Q.variables(view))
    assert "You are the QUESTIONER" in system and "pool of 20 images" in system
    assert f'"{state["caption"]}"' in system and "In each of 2 rounds" in system
    first = state["pool"][0]
    assert f"img01: {llm.describe_scene(first['scene'])}" in system
    assert "$" not in system
    assert Q.turns(view) == [{"role": "user", "content": "Round 1 of 2. Ask your question about the secret image "
                                                          "(at most 200 characters): answer {\"question\": \"...\"}."}]
    assert Q.schema(view) == {"type": "object", "properties": {"question": {
        "type": "string", "description": "one question about the secret image, at most 200 characters"}},
        "required": ["question"], "additionalProperties": False}


def test_describe_object():
    obj = {"shape": "sphere", "color": "purple", "size": "large", "material": "rubber", "pixel_coords": [93, 129, 10.8]}
    assert llm.describe_object(obj) == "large purple rubber sphere at (93, 129)"
    assert llm.describe_scene({"objects": []}) == "(no objects)"


def test_a_match_played_by_decisions():
    state = _state(rounds=2)
    state = _act(state, "questioner", {"question": "  Is there a red cube?  "})
    assert state["dialog"][-1]["question"] == "Is there a red cube?"
    view = rules.view_for(state, "answerer")
    assert A.turns(view)[-1]["content"].startswith("Is there a red cube?\nAnswer this question about the secret image")
    state = _act(state, "answerer", {"answer": "yes, one"})
    view = rules.view_for(state, "questioner")
    assert Q.schema(view)["properties"]["guess"]["enum"] == state["pool_ids"]
    assert Q.turns(view) == [{"role": "assistant", "content": "Is there a red cube?"},
                             {"role": "user", "content": "yes, one\nRound 1 of 2. Pick your best guess now: the id "
                              "of the pool image most likely to be the secret image: answer {\"guess\": \"<image id>\"}."}]
    state = _act(state, "questioner", {"guess": "img3"})            # img3 -> img03
    assert state["dialog"][-1]["guess"] == "img03"
    state = _act(state, "questioner", {"question": "How many spheres?"})
    state = _act(state, "answerer", {"answer": "two"})
    state = _act(state, "questioner", {"guess": "img04"})
    assert state["phase"] == "final"
    wrong = _wrong(state)
    state = _act(state, "questioner", {"guess": wrong})
    view = rules.view_for(state, "questioner")
    assert wrong not in Q.schema(view)["properties"]["guess"]["enum"]
    assert f"Ruled out so far (wrong clicks): {wrong}." in Q.turns(view)[-1]["content"]
    with pytest.raises(DecisionError, match="already ruled out"):
        Q.to_action({"guess": wrong}, view)
    state = _act(state, "questioner", {"guess": state["secret_id"]})
    assert state["phase"] == "feedback"
    view = rules.view_for(state, "questioner")
    assert set(Q.schema(view)["properties"]) == {"ratings", "comment"}
    ratings = {key: 4 for key in rules.C.RATING_KEYS}
    assert Q.to_action({"ratings": ratings, "comment": " clear "}, view) == \
        {"type": "feedback", "ratings": ratings, "comment": "clear"}
    state = _act(state, "questioner", {"ratings": ratings, "comment": ""})
    assert rules.is_over(state) and state["feedback"]["ratings"] == ratings


@pytest.mark.parametrize("decision, message", [
    ({}, 'Give your question as the string "question"'),
    ({"question": "   "}, "Your question is empty"),
    ({"question": "x" * 201}, "201 characters long; the limit is 200"),
    ({"question": 7}, 'as the string "question"'),
])
def test_bad_questions_are_explained(decision, message):
    with pytest.raises(DecisionError, match=message):
        Q.to_action(decision, rules.view_for(_state(), "questioner"))


def test_bad_guesses_and_answers_are_explained():
    state = _act(_state(), "questioner", {"question": "Is there a cube?"})
    with pytest.raises(DecisionError, match="no question to answer|not your turn"):
        Q.to_action({"question": "again?"}, rules.view_for(state, "questioner"))
    with pytest.raises(DecisionError, match="201 characters long"):
        A.to_action({"answer": "y" * 201}, rules.view_for(state, "answerer"))
    state = _act(state, "answerer", {"answer": "yes"})
    with pytest.raises(DecisionError, match="'img99' is not an image you can pick now. Pick one of: img01, img02"):
        Q.to_action({"guess": "img99"}, rules.view_for(state, "questioner"))
    with pytest.raises(DecisionError, match="There is no question to answer now"):
        A.to_action({"answer": "yes"}, rules.view_for(state, "answerer"))


def test_feedback_ratings_are_checked():
    state = _state(rounds=1)
    state = _act(state, "questioner", {"question": "q?"})
    state = _act(state, "answerer", {"answer": "a"})
    state = _act(state, "questioner", {"guess": "img01"})
    state = _act(state, "questioner", {"guess": state["secret_id"]})
    view = rules.view_for(state, "questioner")
    ratings = {key: 3 for key in rules.C.RATING_KEYS}
    with pytest.raises(DecisionError, match='Rate "fluency" with a whole number from 1 to 5'):
        Q.to_action({"ratings": {**ratings, "fluency": 6}, "comment": ""}, view)
    with pytest.raises(DecisionError, match='"comment" must be a string'):
        Q.to_action({"ratings": ratings}, view)


def _states_along_a_match(state: dict) -> list[dict]:
    out = [state]
    for role, decision in (("questioner", {"question": "Is there a cube?"}), ("answerer", {"answer": "yes"}),
                           ("questioner", {"guess": "img02"}), ("questioner", {"question": "Any spheres?"}),
                           ("answerer", {"answer": "no"}), ("questioner", {"guess": "img05"})):
        state = _act(state, role, decision)
        out.append(state)
    return out


def test_the_questioner_request_does_not_depend_on_the_secret():
    """Another pool image made the secret (one the questioner has not clicked): the questioner's whole
    request (prompt, turns, schema, picture captions and bytes) is the same, so nothing in it says
    which image is the secret; the answerer's picture does change."""
    base = _state(rounds=2)
    others = [i for i in base["pool_ids"] if i not in (base["secret_id"], "img02", "img05")][:2]
    for state in _states_along_a_match(base):
        view = rules.view_for(state, "questioner")
        request = _request(Q, view)
        text = json.dumps({k: request[k] for k in ("system", "turns", "schema")}) + \
            " ".join(c for c, _ in request["images"])
        assert "secret_id" not in text and "coarse" not in text
        for other in others:
            varied = {**state, "secret_id": other}
            assert _request(Q, rules.view_for(varied, "questioner")) == request
    varied = {**base, "secret_id": others[0]}
    assert A.images(rules.view_for(varied, "answerer"))[0].png != A.images(rules.view_for(base, "answerer"))[0].png


def test_pictures():
    state = _state()
    sheet = Q.images(rules.view_for(state, "questioner"))
    assert [i.caption for i in sheet] == ["The pool: 20 images, each labelled with its id above it."]
    img = PILImage.open(io.BytesIO(sheet[0].png))
    assert img.format == "PNG" and img.size[0] <= 480 and img.size[1] <= 500
    secret = A.images(rules.view_for(state, "answerer"))
    assert [i.caption for i in secret] == ["The secret image (only you see it)."]
    assert PILImage.open(io.BytesIO(secret[0].png)).size == (480, 320)
    # ruled-out images are crossed out on the sheet (a different picture, a longer caption)
    state = _act(state, "questioner", {"question": "q?"})
    state = _act(state, "answerer", {"answer": "a"})
    state = _act(state, "questioner", {"guess": "img01"})
    state = _act(state, "questioner", {"question": "q?"})
    state = _act(state, "answerer", {"answer": "a"})
    state = _act(state, "questioner", {"guess": "img01"})
    state = _act(state, "questioner", {"guess": _wrong(state)})
    crossed = Q.images(rules.view_for(state, "questioner"))[0]
    assert crossed.caption.endswith("; ruled-out images are crossed out.") and crossed.png != sheet[0].png
