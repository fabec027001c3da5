"""The actions of CoDraw, ``codraw_v1``, as typed schemas (games/actions.py).

Structure and types only, with the error codes the rules documented for each canvas field
(``bad_position``, ``bad_depth``, ``bad_flip``, ``bad_subtype``, ``bad_pose``, ``bad_expression``,
``unknown_clipart``). Turns, the peek, whether a piece is in the palette or on the canvas, how far
off the canvas it may go and whether it may have a pose are the rules' checks
(games/codraw/rules.py). Optional canvas keys may be left out but not sent as null.
"""
from typing import Literal

from games.actions import Absent, ActionModel, ActionSchema, Int, Number, Text
from games.base import SYSTEM
from games.codraw import clipart as ca
from games.codraw import rules

Idx = Int(0, ca.N_CLIPARTS - 1)
Depth = Int(0, ca.N_DEPTHS - 1)
Flip = Int(0, ca.N_FLIPS - 1)
Subtype = Int(0, ca.N_SUBTYPES - 1)
Pose = Int(0, ca.N_POSES - 1)
Expression = Int(0, ca.N_EXPRESSIONS - 1)

PIECE_CODES = {"x": "bad_position", "y": "bad_position", "depth": "bad_depth", "flip": "bad_flip",
               "subtype": "bad_subtype", "pose": "bad_pose", "expression": "bad_expression"}


class Chat(ActionModel):
    """A message. The Teller's message hands the turn to the Drawer (not while the peek is
    open); the Drawer's ends the round. A match's config may set a shorter limit than the one
    shown here. The rules refuse an empty message (``empty_message``) except in a replay of a
    recorded dialog (config ``replay_dialog``) whose round had none, as the released data has."""

    ROLES = (rules.TELLER, rules.DRAWER)
    type: Literal["chat"]
    text: Text(rules.MAX_MESSAGE_LEN, required=False)


class Peek(ActionModel):
    """The Teller's one look at the Drawer's canvas as it is now (once per game)."""

    ROLES = (rules.TELLER,)
    type: Literal["peek"]


class ClosePeek(ActionModel):
    """The Teller closes the peek window (chat is blocked while it is open)."""

    ROLES = (rules.TELLER,)
    type: Literal["close_peek"]


class End(ActionModel):
    """The Teller ends the game (on the Teller's turn)."""

    ROLES = (rules.TELLER,)
    type: Literal["end"]


class TimeUp(ActionModel):
    """The platform's timer ends the game; only the server sends it."""

    ROLES = (SYSTEM,)
    type: Literal["time_up"]


class Place(ActionModel):
    """The Drawer puts a palette piece on the canvas. ``idx`` is the clip art's global index;
    ``x``, ``y`` its centre in canvas pixels (rounded; may lie a little off the 500x400 canvas);
    ``subtype`` (0..34) or ``pose``/``expression`` only for Mike and Jenny, not both."""

    ROLES = (rules.DRAWER,)
    ERROR_CODES = PIECE_CODES
    RANGE_CODES = {"idx": "unknown_clipart"}
    type: Literal["place"]
    idx: Idx
    x: Number
    y: Number
    depth: Depth = 0
    flip: Flip = 0
    subtype: Subtype = Absent()
    pose: Pose = Absent()
    expression: Expression = Absent()


class Update(ActionModel):
    """The Drawer changes a piece on the canvas: any of its fields, at least one; those left out
    stay as they are."""

    ROLES = (rules.DRAWER,)
    ERROR_CODES = PIECE_CODES
    RANGE_CODES = {"idx": "unknown_clipart"}
    type: Literal["update"]
    idx: Idx
    x: Number = Absent()
    y: Number = Absent()
    depth: Depth = Absent()
    flip: Flip = Absent()
    subtype: Subtype = Absent()
    pose: Pose = Absent()
    expression: Expression = Absent()


class Remove(ActionModel):
    """The Drawer takes a piece off the canvas."""

    ROLES = (rules.DRAWER,)
    RANGE_CODES = {"idx": "unknown_clipart"}
    type: Literal["remove"]
    idx: Idx


SCHEMA = ActionSchema(rules.GAME_ID, (Chat, Peek, ClosePeek, End, TimeUp, Place, Update, Remove))
