"""How a language model plays the visual-dialog chat (``visdial_v1``): the game's half of an LLM
agent (:mod:`games.llm`; docs/games/guesswhich.md, "LLM agents").

* questioner: knows the caption and the dialog so far (its view); decides ``{"question": str}``,
  sent as ``{"type": "ask", "text"}``. It sees no picture (``images`` is None).
* answerer: sees the image (its view's ``image``): the prompt's ``$scene`` lists the scene's
  objects in words (size, colour, material, shape, where the camera sees it), for a model without
  vision; ``images`` is the picture itself, drawn by the CLEVR renderer (:mod:`clevr.render`) at
  CLEVR's own 480 x 320, or the item's image file for real-image content. Decides
  ``{"answer": str}``, sent as ``{"type": "answer", "text"}``.

Both stream their text field to the partner while it is written (``stream_field``).
"""
from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

from PIL import Image as PILImage

from clevr.render import render_image
from games import llm
from games.visdial.rules import C

VERSION = "visdial-llm/1"
WIDTH, HEIGHT = 480, 320      # CLEVR's image size; the scenes' pixel_coords are in it
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")   # what a message may not hold (tab and newline may stay)


# ------------------------------------------------------------------------------------------ the scene
def _where(obj: dict) -> str:
    """Where the camera sees ``obj``: a third of the picture across, a band of depth, and its
    pixel position (``pixel_coords``: x from the left, y from the top; a larger y is nearer)."""
    coords = obj.get("pixel_coords")
    if not (isinstance(coords, list) and len(coords) >= 2):
        return ""
    x, y = coords[0], coords[1]
    across = "left" if x < WIDTH / 3 else "centre" if x < 2 * WIDTH / 3 else "right"
    depth = "back" if y < 0.36 * HEIGHT else "middle" if y < 0.55 * HEIGHT else "front"
    return f", {depth} {across} (x {round(x)}, y {round(y)})"


def scene_text(scene: dict) -> str:
    """The scene's objects in words, left to right as the camera sees them."""
    objects = [o for o in (scene or {}).get("objects") or () if isinstance(o, dict)]
    if not objects:
        return "(No description of this image: look at the picture.)"
    ordered = sorted(objects, key=lambda o: (o.get("pixel_coords") or [0])[0])
    lines = [f"{len(objects)} object{'s' if len(objects) != 1 else ''}, from left to right:"]
    for number, obj in enumerate(ordered, 1):
        words = " ".join(str(obj[k]) for k in ("size", "color", "material", "shape") if obj.get(k))
        lines.append(f"{number}. a {words}{_where(obj)}")
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------ turns
def questioner_turns(view: dict) -> list[dict]:
    lines: list[tuple[bool, str]] = [(False, f'The caption: "{view["caption"]}"')]
    for entry in view["dialog"]:
        lines.append((True, entry["question"]))
        if entry.get("answer") is not None:
            lines.append((False, f"Answer: {entry['answer']}"))
    lines.append((False, f"Ask question {view['round']} of {view['rounds_total']}."))
    return llm.dialog_turns(lines)


def answerer_turns(view: dict) -> list[dict]:
    lines: list[tuple[bool, str]] = []
    for entry in view["dialog"]:
        lines.append((False, f"Question {entry['round']} of {view['rounds_total']}: {entry['question']}"))
        if entry.get("answer") is not None:
            lines.append((True, entry["answer"]))
    if not lines:   # no question yet (the answerer is asked only once one is pending)
        lines.append((False, "Wait for the first question."))
    return llm.dialog_turns(lines)


# ------------------------------------------------------------------------------------------ schemas
def _schema(field: str, description: str) -> dict:
    return {"type": "object", "additionalProperties": False, "required": [field],
            "properties": {field: {"type": "string", "description": description}}}


def questioner_schema(view: dict) -> dict:
    return _schema("question", f"Your next question about the image, at most {C.QUESTION_MAX} characters.")


def answerer_schema(view: dict) -> dict:
    return _schema("answer", f"Your answer to the question, at most {C.ANSWER_MAX} characters.")


# ------------------------------------------------------------------------------------------ actions
def _text(decision: dict, field: str, limit: int) -> str:
    text = decision.get(field)
    if not isinstance(text, str):
        raise llm.DecisionError(f'Your answer needs "{field}": your {field}, as a string.')
    text = CONTROL.sub(" ", text).strip()
    if not text:
        raise llm.DecisionError(f"Your {field} is empty. Write it in a few words.")
    if len(text) > limit:
        raise llm.DecisionError(f"Your {field} has {len(text)} characters; the limit is {limit}. "
                                "Write a shorter one.")
    return text


def questioner_action(decision: dict, view: dict) -> dict:
    return {"type": "ask", "text": _text(decision, "question", C.QUESTION_MAX)}


def answerer_action(decision: dict, view: dict) -> dict:
    return {"type": "answer", "text": _text(decision, "answer", C.ANSWER_MAX)}


# ------------------------------------------------------------------------------------------ images
@lru_cache(maxsize=32)
def _scene_png(scene_json: str) -> bytes:
    """The CLEVR scene drawn as the pages draw it (a render takes about 2 s: kept for the dialog's
    later turns)."""
    return llm.png_bytes(render_image(json.loads(scene_json), WIDTH, HEIGHT))


@lru_cache(maxsize=32)
def _file_png(path: str) -> bytes:
    with PILImage.open(path) as picture:
        return llm.png_bytes(picture.convert("RGB"))


def answerer_images(view: dict) -> list[llm.Image]:
    """The image the answerer sees: its file (real-image content) or the CLEVR scene drawn."""
    scene = (view.get("image") or {}).get("scene") or {}
    caption = "The image your partner asks about."
    path = scene.get("image_path")
    if isinstance(path, str) and Path(path).is_file():
        return [llm.Image(caption, _file_png(path))]
    if isinstance(scene.get("objects"), list):
        return [llm.Image(caption, _scene_png(json.dumps({"objects": scene["objects"]}, sort_keys=True)))]
    return []


# ------------------------------------------------------------------------------------------ roles
def _variables(view: dict, limit: int) -> dict:
    return {"caption": view["caption"], "rounds": str(view["rounds_total"]), "max_length": str(limit)}


def questioner_variables(view: dict) -> dict:
    return _variables(view, C.QUESTION_MAX)


def answerer_variables(view: dict) -> dict:
    return {**_variables(view, C.ANSWER_MAX), "scene": scene_text((view.get("image") or {}).get("scene") or {}),
            "width": str(WIDTH), "height": str(HEIGHT)}


ROLES = {
    "questioner": llm.role(__file__, template="prompts/questioner.txt", version=VERSION,
                           variables=questioner_variables, turns=questioner_turns, schema=questioner_schema,
                           to_action=questioner_action, images=None, stream_field="question"),
    "answerer": llm.role(__file__, template="prompts/answerer.txt", version=VERSION,
                         variables=answerer_variables, turns=answerer_turns, schema=answerer_schema,
                         to_action=answerer_action, images=answerer_images, stream_field="answer"),
}
