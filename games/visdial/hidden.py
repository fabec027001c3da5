"""What each seat of the visual-dialog chat must not know (see :mod:`games.hidden`).

* Questioner, for the whole dialog (the game ends after the last answer; its page shows no image
  even then): the image beyond its caption: the scene's file name, its list of objects and each
  object. The image id is a small number: :func:`vary` gives the questioner another image (the
  caption kept) and its view and outcome must not change.
* Answerer: nothing (it sees the image and the caption).
"""
from __future__ import annotations

import random

from games.hidden import MIN_STRING, Hidden

# The roles something is hidden from at some point of a match, and those whose secrets the full
# record (rules.outcome) holds while it runs (games/hidden.py; games/testing.py checks both).
SECRET_ROLES = ("questioner",)
OUTCOME_HIDES_FROM = ()


def hidden_from(state: dict, role: str) -> list[Hidden]:
    if role != "questioner":
        return []
    scene = state["scene"] or {}
    hidden = []
    name = scene.get("image_filename")
    if isinstance(name, str) and len(name) >= MIN_STRING:
        hidden.append(Hidden("the image's file name", name))
    objects = scene.get("objects") or []
    if objects:
        hidden.append(Hidden("the image's objects", objects))
        hidden += [Hidden(f"object {i} of the image", obj) for i, obj in enumerate(objects)]
    return hidden


def vary(state: dict, role: str, rng: random.Random) -> dict | None:
    if role != "questioner":
        return None
    objects = list((state["scene"] or {}).get("objects") or [])
    rng.shuffle(objects)
    return {**state, "image_id": state["image_id"] + 1 + rng.randrange(1000),
            "scene": {**(state["scene"] or {}), "objects": objects[: max(1, len(objects) - 1)],
                      "image_filename": "another.png"}}


def random_action(view: dict, rng: random.Random) -> dict | None:
    expects = view.get("expects")
    if expects == "question":
        return {"type": "ask", "text": rng.choice(("is there a cube?", "how many things are red?", "anything else?"))}
    if expects == "answer":
        return {"type": "answer", "text": rng.choice(("yes", "no", "three", "a small metal one"))}
    return None
