"""What each seat of CoDraw must not know before the game ends (see :mod:`games.hidden`).

* Drawer: the target scene (its scene string and each of its pieces: the piece's segment of the
  string, and a piece with the target's clip art at the target's place), and any score or
  similarity of its canvas against the target (the current score, the score recorded for each
  round, the per-feature parts). The number of target pieces is a small number: :func:`vary`
  gives the Drawer another target drawn from its own palette (so the palette it sees stays
  right) and its view and outcome must not change.
* Teller: any score or similarity of the Drawer's canvas, and the Drawer's canvas itself except
  what its one peek showed (the canvas as it was then).

Once the game is over both see the result: target, final canvas and score.
"""
from __future__ import annotations

import random

from games.codraw import rules
from games.codraw.metric import similarity
from games.codraw.scenes import Piece, Scene, format_scene, parse_scene
from games.hidden import Hidden

# The roles something is hidden from at some point of a match, and those whose secrets the full
# record (rules.outcome) holds while it runs (games/hidden.py; games/testing.py checks both).
SECRET_ROLES = ("teller", "drawer")
OUTCOME_HIDES_FROM = ("drawer",)


def _score_values(state: dict) -> list[Hidden]:
    result = similarity(rules.canvas_scene(state), rules.target_scene(state))
    values = [Hidden("the per-feature parts of the canvas's similarity", result.to_dict()["components"])]
    scores = [("the canvas's score", result.score)]
    scores += [(f"the score recorded for round {i}", r["score"]) for i, r in enumerate(state["rounds"])]
    for name, value in scores:
        if isinstance(value, float) and value != int(value):
            values.append(Hidden(name, value))
    return values


def _piece_segments(abs_t: str) -> list[str]:
    tokens = [t for t in abs_t.split(",")[1:] if t != ""]
    segments = [",".join(tokens[i:i + 8]) for i in range(0, len(tokens) - 7, 8)]
    return [s for s in segments if ",-10000," not in s]


def hidden_from(state: dict, role: str) -> list[Hidden]:
    if rules.is_over(state):
        return []
    hidden = _score_values(state)
    if role == rules.DRAWER:
        hidden.append(Hidden("the target scene string", state["abs_t"]))
        hidden += [Hidden(f"target piece segment {s}", s) for s in _piece_segments(state["abs_t"])]
        hidden += [Hidden(f"target piece {p['idx']} at ({p['x']}, {p['y']})",
                          {"idx": p["idx"], "x": p["x"], "y": p["y"]}, part=True) for p in state["target"]]
    elif role == rules.TELLER:
        canvas = rules.placed_pieces(state)
        peek = state["peek"]["abs"]
        seen = None if peek is None else parse_scene(peek).to_dicts(names=True)
        def key(pieces):
            return sorted(pieces, key=lambda p: p["idx"])

        if canvas and (seen is None or key(canvas) != key(seen)):
            shown = () if seen is None else (seen, key(seen))    # the peek, as the view and its event show it
            hidden.append(Hidden("the Drawer's canvas (not as the peek showed it)", canvas, allowed_in=shown))
    return hidden


def vary(state: dict, role: str, rng: random.Random) -> dict | None:
    """Drawer: another target, made of 1 to 6 pieces of the Drawer's own palette."""
    if role != rules.DRAWER or rules.is_over(state):
        return None
    chosen = rng.sample(state["palette"], k=min(len(state["palette"]), rng.randint(1, 6)))
    pieces = [Piece(idx=idx, x=rng.randrange(20, 480), y=rng.randrange(20, 380), depth=rng.randrange(3),
                    flip=rng.randrange(2)) for idx in chosen]
    if len(pieces) == len(state["target"]):
        pieces = pieces[:-1] if len(pieces) > 1 else pieces + [Piece(idx=state["palette"][0], x=10, y=10)]
    scene = Scene(tuple(pieces))
    return {**state, "abs_t": format_scene(scene), "target": [p.to_dict() for p in scene.placed]}


def random_action(view: dict, rng: random.Random) -> dict | None:
    can = view.get("can") or []
    if not can:
        return None
    if view["role"] == rules.TELLER:
        if "close_peek" in can:
            return {"type": "close_peek"}
        if "peek" in can and rng.random() < 0.15:
            return {"type": "peek"}
        if view.get("round", 0) >= 3 and rng.random() < 0.4:
            return {"type": "end"}
        return {"type": "chat", "text": rng.choice(("a tree on the left", "a boy in the middle", "move it up"))}
    placed = sorted(p["idx"] for p in view.get("canvas") or [])
    roll = rng.random()
    if roll < 0.3 and placed and "update" in can:
        idx = rng.choice(placed)
        if rng.random() < 0.5:
            return {"type": "remove", "idx": idx}
        return {"type": "update", "idx": idx, "x": rng.randrange(0, 500), "y": rng.randrange(0, 400)}
    if roll < 0.7:
        free = [p["idx"] for p in view.get("palette") or [] if not p.get("on_canvas")]
        if free:
            return {"type": "place", "idx": rng.choice(free), "x": rng.randrange(0, 500),
                    "y": rng.randrange(0, 400), "depth": rng.randrange(3), "flip": rng.randrange(2)}
    return {"type": "chat", "text": rng.choice(("done", "ok, next?", "where is the sun?"))}
