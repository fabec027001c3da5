"""How a language model plays CoDraw (``codraw_v1``): the Teller and the Drawer.

See :mod:`games.llm` for the request the platform builds from these adapters and
``docs/games/codraw.md`` ("LLM agents") for the decisions and the templates' ``$names``.

* ``teller``: ``{"action": "message" | "peek" | "done", "message": str}``: send the message (which
  hands the turn to the Drawer), take the game's one look at the Drawer's canvas (offered only
  while it is available), or end the game. An open peek window is closed for it (``close_peek``)
  before its message. Its pictures: the target scene, and the Drawer's canvas as its peek showed
  it. The partner sees its ``message`` as it is written.
* ``drawer``: ``{"pieces": [{"action": "add" | "move" | "remove", "clipart": <palette name>, "x",
  "y", "size": "small" | "medium" | "large", "facing": "left" | "right", "pose", "expression"}],
  "message": str}``: the canvas changes for the Teller's last message, then the reply (empty: the
  reply is ``"ok"``). Its picture: its own canvas. Nothing of its answer is shown before it is
  final (``stream_field`` None): its pieces are the Drawer's canvas, which the Teller must not see.

One decision may take several actions (the Drawer's changes, then its reply; the Teller's
``close_peek``, then its message). ``to_action(decision, view)`` returns the NEXT of them: called
again with the same decision and the view after that action was applied, it returns the one after
(a change the canvas already shows is skipped), and the last is the action that ends the turn
(``chat`` / ``end``). :func:`turn_actions` lists them all for a view. Either the platform asks the
model again after each action (the model then sees its canvas as changed so far) or keeps the
decision for the rest of the turn; both end the turn the same way.

The Drawer's request is built from its view only (``rules.view_for``: palette, canvas, chat), so
the target scene and every score are absent from it (the tests vary the target and compare).
Pure: no Django, no platform app.
"""
from __future__ import annotations

import json
from functools import lru_cache

import cairosvg

from games.codraw import clipart as ca
from games.codraw import rules
from games.codraw.render import scene_svg
from games.llm import DecisionError, Image, dialog_turns, role

VERSION = "codraw-llm/1"
#: the pictures: the 500x400 canvas drawn at this scale (400x320 px)
PICTURE_SCALE = 0.8
SIZES = ca.DEPTH_NAMES                      # depth 0/1/2 = large/medium/small
FACING = ("right", "left")                 # flip 0 faces right, flip 1 left (clipart.faces_right)
NO_LOOK = "none"                            # pose/expression of a piece that is not Mike or Jenny
DEFAULT_REPLY = "ok"


# ------------------------------------------------------------------------------------- text
def describe_piece(piece: dict) -> str:
    """``Jenny (running, smile), medium, facing left, at (324, 236)``."""
    name = ca.CLIPARTS[piece["idx"]].name
    if ca.is_human(piece["idx"]):
        sub = int(piece.get("subtype", 0))
        name += f" ({ca.POSES[ca.pose_of(sub)]}, {ca.EXPRESSIONS[ca.expression_of(sub)]})"
    return (f"{name}, {SIZES[int(piece.get('depth', 0))]}, facing {FACING[int(piece.get('flip', 0))]}, "
            f"at ({piece['x']}, {piece['y']})")


def _pieces_text(pieces: list[dict]) -> str:
    return "\n".join("- " + describe_piece(p) for p in pieces) if pieces else "(nothing)"


def _common_variables(view: dict) -> dict:
    width, height = view.get("canvas_size") or (ca.CANVAS_W, ca.CANVAS_H)
    return {"canvas_w": width, "canvas_h": height, "horizon_y": ca.HORIZON_Y,
            "max_message_len": view.get("max_message_len", rules.MAX_MESSAGE_LEN),
            "sizes": ", ".join(SIZES), "poses": ", ".join(ca.POSES), "expressions": ", ".join(ca.EXPRESSIONS)}


def _teller_variables(view: dict) -> dict:
    target = view.get("target") or []
    return {**_common_variables(view), "n_pieces": len(target), "target": _pieces_text(target)}


def _palette_names(view: dict) -> list[str]:
    return [p["name"] for p in view.get("palette") or []]


def _drawer_variables(view: dict) -> dict:
    names = _palette_names(view)
    return {**_common_variables(view), "palette": ", ".join(names), "n_palette": len(names)}


def _chat_lines(view: dict, me: str) -> list[tuple[bool, str]]:
    return [(m["role"] == me, m["text"]) for m in view.get("chat") or [] if m.get("text")]


def _peek_text(view: dict) -> str:
    peek = view.get("peek") or {}
    if peek.get("canvas") is None:
        return ""
    return (f"When you peeked (round {int(peek.get('round') or 0) + 1}), the Drawer's canvas was:\n"
            f"{_pieces_text(peek['canvas'])}\n")


def _teller_turns(view: dict) -> list[dict]:
    lines = _chat_lines(view, rules.TELLER)
    if view.get("your_turn"):
        options = ['"message" with your next message to the Drawer']
        if (view.get("peek") or {}).get("available"):
            options.append('"peek" to see the Drawer\'s canvas now (once per game)')
        options.append('"done" when the Drawer\'s canvas matches the scene well enough (ends the game)')
        ask = (f"{_peek_text(view)}Round {int(view.get('round', 0)) + 1}, your turn. Choose the action: "
               + "; ".join(options) + f". A message has at most {view.get('max_message_len')} characters.")
    else:
        ask = "It is the Drawer's turn; wait for its reply."
    lines.append((False, ask))
    return dialog_turns(lines)


def _drawer_turns(view: dict) -> list[dict]:
    lines = _chat_lines(view, rules.DRAWER)
    if view.get("your_turn"):
        ask = (f"Your canvas now:\n{_pieces_text(view.get('canvas') or [])}\n"
               "Change your canvas as the Teller's last message asks (\"pieces\": each piece to add, move "
               "or remove; an empty list if nothing changes), then reply to the Teller in \"message\" "
               f"(at most {view.get('max_message_len')} characters), e.g. to say what you did or ask "
               "about what is unclear. Your reply ends your turn.")
    else:
        ask = "It is the Teller's turn; wait for its next message."
    lines.append((False, ask))
    return dialog_turns(lines)


# ----------------------------------------------------------------------------------- schemas
def _object(properties: dict) -> dict:
    return {"type": "object", "properties": properties, "required": list(properties),
            "additionalProperties": False}


def _teller_actions(view: dict) -> list[str]:
    can = view.get("can") or []
    out = []
    if "chat" in can or "close_peek" in can:
        out.append("message")
    if "peek" in can:
        out.append("peek")
    out.append("done")
    return out


def _teller_schema(view: dict) -> dict:
    return _object({
        "action": {"type": "string", "enum": _teller_actions(view)},
        "message": {"type": "string",
                    "description": f"your message to the Drawer (action \"message\"), at most "
                                   f"{view.get('max_message_len', rules.MAX_MESSAGE_LEN)} characters; "
                                   f"empty for the other actions"},
    })


def _drawer_schema(view: dict) -> dict:
    width, height = view.get("canvas_size") or (ca.CANVAS_W, ca.CANVAS_H)
    piece = _object({
        "action": {"type": "string", "enum": ["add", "move", "remove"]},
        "clipart": {"type": "string", "enum": _palette_names(view) or [ca.CLIPARTS[0].name]},
        "x": {"type": "integer", "minimum": 0, "maximum": width,
              "description": "the centre's pixels from the left edge"},
        "y": {"type": "integer", "minimum": 0, "maximum": height,
              "description": "the centre's pixels from the top edge"},
        "size": {"type": "string", "enum": list(SIZES)},
        "facing": {"type": "string", "enum": list(FACING)},
        "pose": {"type": "string", "enum": list(ca.POSES) + [NO_LOOK],
                 "description": f"Mike and Jenny only; \"{NO_LOOK}\" for other pieces"},
        "expression": {"type": "string", "enum": list(ca.EXPRESSIONS) + [NO_LOOK],
                       "description": f"Mike and Jenny only; \"{NO_LOOK}\" for other pieces"},
    })
    return _object({
        "pieces": {"type": "array", "items": piece,
                   "description": "the canvas changes, in order; for \"remove\" only the clipart counts"},
        "message": {"type": "string",
                    "description": f"your reply to the Teller, at most "
                                   f"{view.get('max_message_len', rules.MAX_MESSAGE_LEN)} characters"},
    })


# ----------------------------------------------------------------------------------- actions
def _message(decision: dict, view: dict, *, default: str | None = None) -> str:
    limit = int(view.get("max_message_len", rules.MAX_MESSAGE_LEN))
    value = decision.get("message")
    if not isinstance(value, str):
        raise DecisionError('Give your message as the string "message"' +
                            (' (it may be empty).' if default is not None else '.'))
    text = value.strip()
    if not text:
        if default is not None:
            return default
        raise DecisionError("Your message is empty; write what the Drawer should draw.")
    if len(text) > limit:
        raise DecisionError(f"Your message is {len(text)} characters long; the limit is {limit}. Say it shorter.")
    return text


def teller_actions(decision: dict, view: dict) -> list[dict]:
    """The Teller's actions for ``decision`` from ``view`` on (see the module docstring)."""
    if not view.get("your_turn"):
        raise DecisionError("It is the Drawer's turn, not yours; there is nothing to decide now.")
    action = decision.get("action")
    allowed = _teller_actions(view)
    if action not in allowed:
        raise DecisionError(f'"action" must be one of {", ".join(allowed)}, not {action!r}.')
    if action == "done":
        return [{"type": "end"}]
    if action == "peek":
        return [{"type": "peek"}]
    text = _message(decision, view)
    closing = [{"type": "close_peek"}] if (view.get("peek") or {}).get("open") else []
    return closing + [{"type": "chat", "text": text}]


def _enum(value, choices, what: str) -> int:
    if value not in choices:
        raise DecisionError(f'{what} must be one of {", ".join(map(str, choices))}, not {value!r}.')
    return list(choices).index(value)


def _look(change: dict, name: str, current: int | None) -> int:
    """The subtype of Mike or Jenny: the pose and expression named, the current ones (or the
    first) for those given as "none"."""
    pose, expression = change.get("pose", NO_LOOK), change.get("expression", NO_LOOK)
    pose_i = ca.pose_of(current or 0) if pose == NO_LOOK else _enum(pose, ca.POSES, f"The pose of {name}")
    expr_i = ca.expression_of(current or 0) if expression == NO_LOOK \
        else _enum(expression, ca.EXPRESSIONS, f"The expression of {name}")
    return ca.subtype_of(pose_i, expr_i)


def _coordinate(change: dict, key: str, limit: int, name: str) -> int:
    value = change.get(key)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool):
        raise DecisionError(f'"{key}" of the {name} must be a whole number of pixels.')
    if not 0 <= value <= limit:
        raise DecisionError(f'"{key}" of the {name} is {value}; it must be between 0 and {limit} (the canvas).')
    return value


def drawer_actions(decision: dict, view: dict) -> list[dict]:
    """The Drawer's actions for ``decision`` from ``view`` on: removals, moves (``update``, only
    the fields that change), placements, each in the decision's order, skipping what the canvas
    already shows; then its reply (see the module docstring)."""
    if not view.get("your_turn"):
        raise DecisionError("It is the Teller's turn, not yours; there is nothing to decide now.")
    changes = decision.get("pieces")
    if not isinstance(changes, list):
        raise DecisionError('Give "pieces" as a list of canvas changes (an empty list if nothing changes).')
    palette = {p["name"]: p["idx"] for p in view.get("palette") or []}
    canvas = {p["idx"]: p for p in view.get("canvas") or []}
    width, height = view.get("canvas_size") or (ca.CANVAS_W, ca.CANVAS_H)
    removes, updates, places, seen = [], [], [], set()
    for n, change in enumerate(changes, start=1):
        if not isinstance(change, dict):
            raise DecisionError(f"Change {n} of \"pieces\" must be an object.")
        name = change.get("clipart")
        if name not in palette:
            raise DecisionError(f"Change {n}: {name!r} is not in your palette. Your palette: {', '.join(palette)}.")
        if name in seen:
            raise DecisionError(f"The {name} appears more than once in \"pieces\"; give each piece once.")
        seen.add(name)
        idx = palette[name]
        kind = change.get("action")
        if kind not in ("add", "move", "remove"):
            raise DecisionError(f'Change {n} ({name}): "action" must be add, move or remove, not {kind!r}.')
        current = canvas.get(idx)
        if kind == "remove":
            if current is not None:
                removes.append({"type": "remove", "idx": idx})
            continue
        # add and move both say where the piece should be: a move of a piece not on the canvas
        # places it, an add of one already there moves it
        want = {"x": _coordinate(change, "x", width, name), "y": _coordinate(change, "y", height, name),
                "depth": _enum(change.get("size"), SIZES, f"The size of the {name}"),
                "flip": _enum(change.get("facing"), FACING, f"Which way the {name} faces")}
        if ca.is_human(idx):
            want["subtype"] = _look(change, name, None if current is None else current.get("subtype"))
        if current is None:
            places.append({"type": "place", "idx": idx, **want})
        else:
            diff = {key: value for key, value in want.items() if current.get(key) != value}
            if diff:
                updates.append({"type": "update", "idx": idx, **diff})
    return removes + updates + places + [{"type": "chat", "text": _message(decision, view, default=DEFAULT_REPLY)}]


def turn_actions(decision: dict, view: dict) -> list[dict]:
    """Every action ``decision`` takes from ``view`` on, the last one ending the turn."""
    if view.get("role") == rules.DRAWER:
        return drawer_actions(decision, view)
    return teller_actions(decision, view)


def _teller_action(decision: dict, view: dict) -> dict:
    return teller_actions(decision, view)[0]


def _drawer_action(decision: dict, view: dict) -> dict:
    return drawer_actions(decision, view)[0]


# ------------------------------------------------------------------------------------ images
@lru_cache(maxsize=64)
def _scene_png(pieces_json: str) -> bytes:
    svg = scene_svg(json.loads(pieces_json), scale=PICTURE_SCALE)
    return cairosvg.svg2png(bytestring=svg.encode("utf-8"))


def _picture(pieces: list[dict]) -> bytes:
    keys = ("idx", "x", "y", "depth", "flip", "subtype")
    return _scene_png(json.dumps([{k: p.get(k, 0) for k in keys} for p in pieces]))


def _teller_images(view: dict) -> list[Image]:
    images = [Image("The scene you describe (the Drawer does not see it).", _picture(view.get("target") or []))]
    peek = view.get("peek") or {}
    if peek.get("canvas") is not None:
        images.append(Image(f"The Drawer's canvas when you peeked (round {int(peek.get('round') or 0) + 1}).",
                            _picture(peek["canvas"])))
    return images


def _drawer_images(view: dict) -> list[Image]:
    return [Image("Your canvas now.", _picture(view.get("canvas") or []))]


ROLES = {
    rules.TELLER: role(__file__, template="prompts/teller.txt", version=VERSION,
                       variables=_teller_variables, turns=_teller_turns, schema=_teller_schema,
                       to_action=_teller_action, images=_teller_images, stream_field="message"),
    rules.DRAWER: role(__file__, template="prompts/drawer.txt", version=VERSION,
                       variables=_drawer_variables, turns=_drawer_turns, schema=_drawer_schema,
                       to_action=_drawer_action, images=_drawer_images, stream_field=None),
}
