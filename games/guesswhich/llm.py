"""How a language model plays GuessWhich (``guesswhich_v1``): the questioner and the answerer.

See :mod:`games.llm` for the request the platform builds from these adapters and
``docs/games/guesswhich.md`` ("LLM agents") for the decisions and the templates' ``$names``.

* ``questioner``: the decision depends on the phase (``view["expects"]``): ``{"question": str}``
  (ask), ``{"guess": <pool id>}`` (the round's best guess, any pool image; after the last round
  a final click, an ``enum`` of the images not yet ruled out), ``{"ratings": {six 1-5},
  "comment": str}`` (the feedback once the secret is found). Its pictures: the pool as one
  contact sheet, each image labelled with its id, ruled-out images crossed out.
* ``answerer``: ``{"answer": str}``; its picture: the secret image.

The questioner's request is built from its view only (``rules.view_for``), so the secret's id
appears in it only as one of the pool's ids, in pool order, like every other (the tests vary the
secret and compare the requests). Pure: no Django, no platform app.
"""
from __future__ import annotations

import json
import math
from functools import lru_cache

from PIL import Image as PILImage
from PIL import ImageDraw, ImageFont

from clevr.render import render_image
from games.guesswhich.rules import C
from games.llm import DecisionError, Image, dialog_turns, png_bytes, role

VERSION = "guesswhich-llm/1"
#: the CLEVR picture the object positions refer to (``pixel_coords``)
SCENE_W, SCENE_H = 480, 320
#: the answerer's picture of the secret image
SECRET_SIZE = (480, 320)
#: the questioner's contact sheet: cells of THUMB, COLUMNS wide (4 x 112 px + gaps: 478 px)
THUMB = (112, 75)
COLUMNS = 4
GAP = 6
LABEL_H = 16


# ------------------------------------------------------------------------------------- text
def describe_object(obj: dict) -> str:
    """``large purple rubber sphere at (93, 129)`` (pixel coordinates of a 480x320 picture)."""
    words = " ".join(str(obj.get(key)) for key in ("size", "color", "material", "shape") if obj.get(key))
    coords = obj.get("pixel_coords") or []
    where = f" at ({int(round(coords[0]))}, {int(round(coords[1]))})" if len(coords) >= 2 else ""
    return words + where


def describe_scene(scene: dict) -> str:
    objects = (scene or {}).get("objects") or []
    if not objects:
        return "(no objects)"
    return "; ".join(describe_object(o) for o in objects)


def _pool_text(view: dict) -> str:
    return "\n".join(f"{item['id']}: {describe_scene(item.get('scene') or {})}" for item in view.get("pool") or [])


def _pool_ids(view: dict) -> list[str]:
    return [str(item["id"]) for item in view.get("pool") or []]


def _choices(view: dict) -> list[str]:
    """The ids the questioner may click now: any pool image for a round's guess, those not ruled
    out for a final click."""
    ids = _pool_ids(view)
    if view.get("expects") == "final_guess":
        out = set(view.get("ruled_out") or ())
        ids = [i for i in ids if i not in out]
    return ids


def _questioner_variables(view: dict) -> dict:
    return {"rounds": view.get("rounds_total"), "pool_size": len(view.get("pool") or []),
            "caption": view.get("caption") or "", "pool": _pool_text(view), "question_max": C.QUESTION_MAX,
            "bonus_base": C.BONUS_BASE, "per_wrong_click": -C.BONUS_WRONG_CLICK,
            "per_right_round": C.BONUS_RIGHT_ROUND, "rating_max": C.RATING_MAX}


def _answerer_variables(view: dict) -> dict:
    image = view.get("image") or {}
    return {"rounds": view.get("rounds_total"), "caption": view.get("caption") or "",
            "scene": describe_scene(image.get("scene") or {}), "answer_max": C.ANSWER_MAX}


def _questioner_ask(view: dict) -> str:
    expects = view.get("expects")
    rnd, total = view.get("round"), view.get("rounds_total")
    if expects == "question":
        return (f"Round {rnd} of {total}. Ask your question about the secret image "
                f"(at most {C.QUESTION_MAX} characters): answer {{\"question\": \"...\"}}.")
    if expects == "guess":
        return (f"Round {rnd} of {total}. Pick your best guess now: the id of the pool image most likely "
                f"to be the secret image: answer {{\"guess\": \"<image id>\"}}.")
    if expects == "final_guess":
        out = view.get("ruled_out") or []
        ruled = f" Ruled out so far (wrong clicks): {', '.join(out)}." if out else ""
        return ("The questions are over. Click the image you think is the secret image; a wrong click "
                f"rules it out and costs {-C.BONUS_WRONG_CLICK} points.{ruled} "
                "Answer {\"guess\": \"<image id>\"} with one of the images still in play: "
                f"{', '.join(_choices(view))}.")
    if expects == "feedback":
        return (f"You found the secret image: {view.get('secret_id')}, with {view.get('rank')} click(s). "
                f"Rate your partner's answers, each from {C.RATING_MIN} (poor) to {C.RATING_MAX} (excellent): "
                "understood_question (did it understand your questions), understood_image (did it seem to "
                "see the image well), fluency, detail, accuracy, consistency; add a short comment or an "
                "empty one.")
    return "It is not your turn; wait for your partner."


def _questioner_turns(view: dict) -> list[dict]:
    lines: list[tuple[bool, str]] = []
    for entry in view.get("dialog") or []:
        lines.append((True, entry["question"]))
        if entry.get("answer") is not None:
            lines.append((False, entry["answer"]))
        if entry.get("guess") is not None:
            lines.append((True, f"(My best guess after round {entry['round']}: {entry['guess']}.)"))
    lines.append((False, _questioner_ask(view)))
    return dialog_turns(lines)


def _answerer_turns(view: dict) -> list[dict]:
    lines: list[tuple[bool, str]] = []
    for entry in view.get("dialog") or []:
        lines.append((False, entry["question"]))
        if entry.get("answer") is not None:
            lines.append((True, entry["answer"]))
    if view.get("expects") == "answer":
        lines.append((False, f"Answer this question about the secret image (round {view.get('round')} of "
                             f"{view.get('rounds_total')}, at most {C.ANSWER_MAX} characters): "
                             "answer {\"answer\": \"...\"}."))
    else:
        lines.append((False, "It is not your turn; wait for the next question."))
    return dialog_turns(lines)


# ----------------------------------------------------------------------------------- schemas
def _object(properties: dict) -> dict:
    return {"type": "object", "properties": properties, "required": list(properties),
            "additionalProperties": False}


def _questioner_schema(view: dict) -> dict:
    expects = view.get("expects")
    if expects in ("guess", "final_guess"):
        what = ("your best guess this round" if expects == "guess"
                else "the image you click: one not yet ruled out")
        return _object({"guess": {"type": "string", "enum": _choices(view), "description": what}})
    if expects == "feedback":
        rating = {"type": "integer", "enum": list(range(C.RATING_MIN, C.RATING_MAX + 1))}
        return _object({"ratings": _object({key: dict(rating) for key in C.RATING_KEYS}),
                        "comment": {"type": "string",
                                    "description": f"optional, at most {C.COMMENT_MAX} characters"}})
    return _object({"question": {"type": "string",
                                 "description": f"one question about the secret image, at most "
                                                f"{C.QUESTION_MAX} characters"}})


def _answerer_schema(view: dict) -> dict:
    return _object({"answer": {"type": "string",
                               "description": f"your answer, at most {C.ANSWER_MAX} characters"}})


# ----------------------------------------------------------------------------------- actions
def _text(decision: dict, key: str, limit: int, what: str) -> str:
    value = decision.get(key)
    if not isinstance(value, str):
        raise DecisionError(f'Give your {what} as the string "{key}".')
    text = value.strip()
    if not text:
        raise DecisionError(f"Your {what} is empty; write one.")
    if len(text) > limit:
        raise DecisionError(f"Your {what} is {len(text)} characters long; the limit is {limit}. Say it shorter.")
    return text


def _image_id(decision: dict, view: dict) -> str:
    value = decision.get("guess")
    choices = _choices(view)
    if not isinstance(value, str):
        raise DecisionError('Give the image id you pick as the string "guess", one of: ' + ", ".join(choices) + ".")
    wanted = value.strip()
    if wanted not in choices:       # "img7" or "IMG07" for img07
        digits = "".join(ch for ch in wanted if ch.isdigit())
        close = [c for c in choices if c.lower() == wanted.lower()
                 or (digits and "".join(ch for ch in c if ch.isdigit()).lstrip("0") == digits.lstrip("0"))]
        if len(close) == 1:
            return close[0]
        if wanted in (view.get("ruled_out") or ()):
            raise DecisionError(f"{wanted} was already ruled out (a wrong click). Pick one of: {', '.join(choices)}.")
        raise DecisionError(f"{wanted!r} is not an image you can pick now. Pick one of: {', '.join(choices)}.")
    return wanted


def _questioner_action(decision: dict, view: dict) -> dict:
    expects = view.get("expects")
    if expects == "question":
        return {"type": "ask", "text": _text(decision, "question", C.QUESTION_MAX, "question")}
    if expects in ("guess", "final_guess"):
        return {"type": "guess", "image_id": _image_id(decision, view)}
    if expects == "feedback":
        ratings = decision.get("ratings")
        if not isinstance(ratings, dict):
            raise DecisionError('Give "ratings" as an object with ' + ", ".join(C.RATING_KEYS) + ".")
        clean = {}
        for key in C.RATING_KEYS:
            value = ratings.get(key)
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            if not isinstance(value, int) or isinstance(value, bool) or not C.RATING_MIN <= value <= C.RATING_MAX:
                raise DecisionError(f'Rate "{key}" with a whole number from {C.RATING_MIN} to {C.RATING_MAX}.')
            clean[key] = value
        comment = decision.get("comment")
        if not isinstance(comment, str):
            raise DecisionError('The "comment" must be a string (it may be empty).')
        comment = comment.strip()
        if len(comment) > C.COMMENT_MAX:
            raise DecisionError(f"Your comment is {len(comment)} characters long; the limit is {C.COMMENT_MAX}.")
        return {"type": "feedback", "ratings": clean, "comment": comment}
    raise DecisionError("It is not your turn; there is nothing to decide now.")


def _answerer_action(decision: dict, view: dict) -> dict:
    if view.get("expects") != "answer":
        raise DecisionError("There is no question to answer now.")
    return {"type": "answer", "text": _text(decision, "answer", C.ANSWER_MAX, "answer")}


# ------------------------------------------------------------------------------------ images
def _scene_picture(scene: dict, size: tuple[int, int]) -> PILImage.Image:
    """The scene as a person's page shows it: its image file when the item has one, else the
    CLEVR render (clevr/render.py)."""
    path = (scene or {}).get("image_path")
    if path:
        with PILImage.open(str(path)) as img:
            return img.convert("RGB").resize(size, PILImage.Resampling.LANCZOS)
    return render_image(scene or {"objects": []}, size[0], size[1], supersample=2)


@lru_cache(maxsize=256)
def _thumb(scene_json: str) -> PILImage.Image:
    """One pool image at the contact sheet's cell size (cached: a final click changes the sheet,
    not its pictures). Callers paste it, never change it."""
    return _scene_picture(json.loads(scene_json), THUMB)


@lru_cache(maxsize=32)
def _secret_png(scene_json: str) -> bytes:
    return png_bytes(_scene_picture(json.loads(scene_json), SECRET_SIZE))


@lru_cache(maxsize=32)
def _sheet_png(items_json: str) -> bytes:
    """A contact sheet of ``[[id, scene, ruled_out], ...]``: COLUMNS wide, each cell labelled."""
    items = json.loads(items_json)
    rows = max(1, math.ceil(len(items) / COLUMNS))
    tw, th = THUMB
    width = COLUMNS * tw + (COLUMNS + 1) * GAP
    height = rows * (th + LABEL_H) + (rows + 1) * GAP
    sheet = PILImage.new("RGB", (width, height), (255, 255, 255))
    draw = ImageDraw.Draw(sheet)
    font = ImageFont.load_default(size=13)
    for k, (image_id, scene, ruled_out) in enumerate(items):
        col, row = k % COLUMNS, k // COLUMNS
        x = GAP + col * (tw + GAP)
        y = GAP + row * (th + LABEL_H + GAP)
        thumb = _thumb(json.dumps(scene, sort_keys=True))
        if ruled_out:
            thumb = PILImage.blend(thumb, PILImage.new("RGB", THUMB, (255, 255, 255)), 0.6)
        sheet.paste(thumb, (x, y + LABEL_H))
        draw.text((x + 2, y + 1), image_id + (" (ruled out)" if ruled_out else ""), fill=(0, 0, 0), font=font)
        if ruled_out:
            draw.line((x, y + LABEL_H, x + tw, y + LABEL_H + th), fill=(200, 0, 0), width=3)
            draw.line((x + tw, y + LABEL_H, x, y + LABEL_H + th), fill=(200, 0, 0), width=3)
    return png_bytes(sheet)


def _questioner_images(view: dict) -> list[Image]:
    out = set(view.get("ruled_out") or ())
    items = [[str(item["id"]), item.get("scene") or {}, str(item["id"]) in out] for item in view.get("pool") or []]
    caption = f"The pool: {len(items)} images, each labelled with its id above it"
    if out:
        caption += "; ruled-out images are crossed out"
    return [Image(caption + ".", _sheet_png(json.dumps(items, sort_keys=True)))]


def _answerer_images(view: dict) -> list[Image]:
    scene = (view.get("image") or {}).get("scene") or {}
    return [Image("The secret image (only you see it).", _secret_png(json.dumps(scene, sort_keys=True)))]


ROLES = {
    "questioner": role(__file__, template="prompts/questioner.txt", version=VERSION,
                       variables=_questioner_variables, turns=_questioner_turns, schema=_questioner_schema,
                       to_action=_questioner_action, images=_questioner_images, stream_field="question"),
    "answerer": role(__file__, template="prompts/answerer.txt", version=VERSION,
                     variables=_answerer_variables, turns=_answerer_turns, schema=_answerer_schema,
                     to_action=_answerer_action, images=_answerer_images, stream_field="answer"),
}
