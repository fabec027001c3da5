"""CoDraw scenes: pieces, the Abstract Scenes string format, dataset import and a scene generator.

The scene string (``abs_t``, ``abs_b``, ``abs_d`` in ``CoDraw_1_0.json``) is a comma-separated
list: the number of pieces, then per piece ``png,localIdx,objectIdx,typeIdx,x,y,z,flip``. ``x, y``
are the piece's centre on the 500x400 canvas; ``x = y = -10000`` is a palette piece that is not on
the canvas (kept here, ignored when scoring). Target strings end without a comma, canvas strings
(written by ``Abs.js``) with one, e.g.::

    7,s_3s.png,0,3,0,469,31,2,0,p_7s.png,1,7,1,178,89,2,1,...,t_4s.png,6,4,7,279,115,1,1
    28,s_3s.png,0,3,0,-10000,-10000,0,1,s_6s.png,1,6,0,-10000,-10000,0,0,...,t_7s.png,27,7,7,-10000,-10000,0,1,

``x`` and ``y`` are read with ``int(round(float(v)))`` as the reference Python code does (the
browser wrote floats); the original text is kept (``Piece.x_text``) so that parsing then
formatting gives back the very same string.

The generator (:func:`generate_scene`) makes semantically plausible park scenes of 6-17 pieces:
sky pieces in the sky, large objects and people standing on the grass, hats and glasses on heads,
held toys and food in hands, other food, animals and toys on the ground, each clip art at most
once, every piece inside the canvas.
"""
from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Iterator

from games.codraw import clipart as ca
from games.codraw.clipart import CANVAS_H, CANVAS_W, HORIZON_Y, NOT_USED


class SceneFormatError(ValueError):
    """A scene string that does not follow the Abstract Scenes format."""


# ------------------------------------------------------------------------------------- the pieces
@dataclass(frozen=True)
class Piece:
    """One clip-art piece. ``subtype`` is 0..34 for Mike/Jenny and 0 for every other piece.

    ``local``, ``x_text`` and ``y_text`` only remember how a parsed string spelled the piece
    (its slot number and non-integer coordinates); they take no part in equality.
    """

    idx: int
    x: int = NOT_USED
    y: int = NOT_USED
    depth: int = 0
    flip: int = 0
    subtype: int = 0
    local: int | None = field(default=None, compare=False)
    x_text: str | None = field(default=None, compare=False)
    y_text: str | None = field(default=None, compare=False)
    tokens: tuple[str, ...] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        art = ca.get(self.idx)
        if self.depth not in (0, 1, 2):
            raise ValueError(f"depth {self.depth!r} is not 0, 1 or 2")
        if self.flip not in (0, 1):
            raise ValueError(f"flip {self.flip!r} is not 0 or 1")
        limit = ca.N_SUBTYPES if art.is_human else 1
        if not (isinstance(self.subtype, int) and 0 <= self.subtype < limit):
            raise ValueError(f"subtype {self.subtype!r} is not valid for {art.name}")

    # -- derived
    @property
    def placed(self) -> bool:
        return self.x != NOT_USED and self.y != NOT_USED

    @property
    def art(self) -> ca.ClipArt:
        return ca.CLIPARTS[self.idx]

    @property
    def name(self) -> str:
        return self.art.name

    @property
    def is_human(self) -> bool:
        return self.idx in ca.HUMAN_IDXS

    @property
    def pose(self) -> int:
        return ca.pose_of(self.subtype)

    @property
    def expression(self) -> int:
        return ca.expression_of(self.subtype)

    @property
    def type_idx(self) -> int:
        return self.art.type_idx

    @property
    def object_idx(self) -> int:
        return ca.object_idx_of(self.idx, self.subtype)

    @property
    def png(self) -> str:
        return ca.png_name(self.idx, self.subtype)

    @property
    def size(self) -> tuple[float, float]:
        """The drawn size at the piece's depth (from the art; Mike/Jenny vary by pose)."""
        return ca.piece_size(self.idx, self.subtype, self.depth)

    @property
    def box(self) -> tuple[float, float, float, float]:
        """``(left, top, right, bottom)`` of the piece's rough box on the canvas."""
        width, height = self.size
        return self.x - width / 2, self.y - height / 2, self.x + width / 2, self.y + height / 2

    def sort_key(self) -> tuple:
        return ca.draw_order_key(self.idx, self.depth)

    def moved(self, **changes) -> "Piece":
        """A copy with ``changes``, forgetting how the original was spelled."""
        return replace(self, **changes, x_text=None, y_text=None, tokens=None)

    def written_tokens(self, slot: int) -> list[str]:
        """The 8 fields this piece writes in slot ``slot``: as it was spelled when parsed (if its
        values are still the parsed ones), else canonically."""
        canonical = _canonical_tokens(self, slot)
        if self.tokens is not None and _same_values(self.tokens, canonical):
            return list(self.tokens)
        return canonical

    def to_dict(self, *, names: bool = False) -> dict:
        data = {"idx": self.idx, "x": self.x, "y": self.y, "depth": self.depth, "flip": self.flip,
                "subtype": self.subtype}
        if names:
            data["name"] = self.name
            if self.is_human:
                data["pose"] = self.pose
                data["expression"] = self.expression
                data["pose_name"] = ca.POSES[self.pose]
                data["expression_name"] = ca.EXPRESSIONS[self.expression]
        return data

    @classmethod
    def from_dict(cls, data: dict) -> "Piece":
        return cls(idx=data["idx"], x=data["x"], y=data["y"], depth=data.get("depth", 0),
                   flip=data.get("flip", 0), subtype=data.get("subtype", 0))


@dataclass(frozen=True)
class Scene:
    """A scene: an ordered tuple of pieces (placed or not). ``trailing_comma`` and ``blank`` only
    remember how a parsed string was written (``""`` parses to a blank empty scene)."""

    pieces: tuple[Piece, ...] = ()
    trailing_comma: bool = field(default=False, compare=False)
    blank: bool = field(default=False, compare=False)
    extra: tuple[str, ...] = field(default=(), compare=False)     # fields after the pieces
    count_text: str | None = field(default=None, compare=False)   # the count as spelled

    def __iter__(self) -> Iterator[Piece]:
        return iter(self.pieces)

    def __len__(self) -> int:
        return len(self.pieces)

    @property
    def placed(self) -> tuple[Piece, ...]:
        return tuple(piece for piece in self.pieces if piece.placed)

    @property
    def idxs(self) -> frozenset[int]:
        """The idx of the placed pieces."""
        return frozenset(piece.idx for piece in self.pieces if piece.placed)

    def get(self, idx: int) -> Piece | None:
        """The first placed piece with this idx (as the reference metric matches pieces)."""
        for piece in self.pieces:
            if piece.placed and piece.idx == idx:
                return piece
        return None

    def in_draw_order(self) -> list[Piece]:
        return sorted(self.placed, key=Piece.sort_key)

    def to_string(self, *, trailing_comma: bool | None = None) -> str:
        return format_scene(self, trailing_comma=trailing_comma)

    def to_dicts(self, *, names: bool = False, placed_only: bool = True) -> list[dict]:
        pieces = self.placed if placed_only else self.pieces
        return [piece.to_dict(names=names) for piece in pieces]

    @classmethod
    def of(cls, pieces: Iterable[Piece | dict], *, trailing_comma: bool = False) -> "Scene":
        return cls(tuple(p if isinstance(p, Piece) else Piece.from_dict(p) for p in pieces),
                   trailing_comma=trailing_comma)


def _values(tokens) -> tuple[int, ...]:
    """object, type, x, y, depth, flip of 8 piece fields, read as the reference reads them."""
    return (int(tokens[2]), int(tokens[3]), int(round(float(tokens[4]))), int(round(float(tokens[5]))),
            int(tokens[6]), int(tokens[7]))


def _same_values(tokens: tuple[str, ...], canonical: list[str]) -> bool:
    """Whether spelled ``tokens`` read to the same values as the canonical fields."""
    try:
        return _values(tokens) == _values(canonical)
    except (ValueError, OverflowError):
        return False


# --------------------------------------------------------------------------- the string format
# How the reference reader (``AbsUtil.preprocess`` of codraw-models ``abs_util_orig.py``) reads a
# string, reproduced here: an empty string (or None) is an empty scene; ``int()`` of the first
# field is the count (Python's ``int``: surrounding spaces and a sign are fine; a negative count
# reads no piece); then 8 fields per piece, of which the png name and the local slot number are
# skipped unread, object, type, depth and flip go through ``int()`` and x, y through
# ``int(round(float(v)))``; whatever follows the counted pieces (empty fields, a trailing comma,
# more fields) is never read. A string with fewer fields than its count needs is an error there
# too (IndexError). Values the reference would turn into something no other part of the authors'
# code can use (a type index outside 0..7, an object number outside its group, which the
# reference silently reads as another clip art, a depth outside 0..2, a flip outside 0/1, a
# subtype outside 0..34) are refused here with the reason.
def _int_token(token: str, what: str) -> int:
    try:
        return int(token)
    except ValueError:
        raise SceneFormatError(f"{what} {token!r} is not a whole number") from None


def _coordinate(token: str, what: str) -> tuple[int, str | None]:
    try:
        value = float(token)
    except ValueError:
        raise SceneFormatError(f"{what} {token!r} is not a number") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise SceneFormatError(f"{what} {token!r} is not a finite number")
    as_int = int(round(value))
    return as_int, (None if token == str(as_int) else token)


def _canonical_tokens(piece: "Piece", slot: int) -> list[str]:
    return [piece.png, str(slot if piece.local is None else piece.local), str(piece.object_idx),
            str(piece.type_idx), piece.x_text or str(piece.x), piece.y_text or str(piece.y),
            str(piece.depth), str(piece.flip)]


def parse_scene(text: str | None) -> Scene:
    """Parse an Abstract Scenes string as the reference reader does (see above; raises
    :class:`SceneFormatError` where it fails or where a value names no clip art).

    How the string was spelled is remembered (fields the reference skips, spaces, the count's
    text, whatever follows the pieces) so that ``format_scene(parse_scene(s)) == s``."""
    if text is None:
        return Scene((), blank=True)
    if not isinstance(text, str):
        raise SceneFormatError("a scene string must be text")
    if not text:
        return Scene((), blank=True)
    return _parse_scene_text(text)


@lru_cache(maxsize=4096)
def _parse_scene_text(text: str) -> Scene:
    """:func:`parse_scene` of a non-empty string, memoised (a Scene is immutable; a match's
    canvas string is read again on every view and every round's record)."""
    tokens = text.split(",")
    count = _int_token(tokens[0], "piece count")
    n = max(count, 0)
    needed = 1 + 8 * n
    if len(tokens) < needed:
        raise SceneFormatError(
            f"a scene of {count} pieces needs {needed} fields; this one has only {len(tokens)}")
    rest = tokens[needed:]
    pieces = []
    for i in range(n):
        fields = tokens[1 + 8 * i: 9 + 8 * i]
        png, local, obj, typ, x, y, z, flip = fields
        where = f"piece {i}"
        type_idx = _int_token(typ, f"{where}: type index")
        object_idx = _int_token(obj, f"{where}: object index")
        try:
            idx = ca.idx_of(type_idx, object_idx)
        except ValueError as exc:
            raise SceneFormatError(f"{where}: {exc}") from None
        x_val, x_text = _coordinate(x, f"{where}: x")
        y_val, y_text = _coordinate(y, f"{where}: y")
        try:
            local_val = int(local)
        except ValueError:
            local_val = None
        try:
            piece = Piece(idx=idx, x=x_val, y=y_val, depth=_int_token(z, f"{where}: depth"),
                          flip=_int_token(flip, f"{where}: flip"),
                          subtype=object_idx if type_idx in (2, 3) else 0,
                          local=local_val, x_text=x_text, y_text=y_text)
        except ValueError as exc:
            raise SceneFormatError(f"{where}: {exc}") from None
        if _canonical_tokens(piece, i) != fields:
            piece = replace(piece, tokens=tuple(fields))
        pieces.append(piece)
    trailing = rest == [""]
    return Scene(tuple(pieces), trailing_comma=trailing,
                 extra=tuple(rest) if rest and not trailing else (),
                 count_text=None if tokens[0] == str(len(pieces)) else tokens[0])


def format_scene(scene: Scene | Iterable[Piece], *, trailing_comma: bool | None = None) -> str:
    """The Abstract Scenes string of ``scene``; ``parse_scene(format_scene(s)) == s`` and, for a
    parsed string, ``format_scene(parse_scene(text)) == text``."""
    if not isinstance(scene, Scene):
        scene = Scene(tuple(scene))
    if scene.blank and not scene.pieces and trailing_comma is None:
        return ""
    comma = scene.trailing_comma if trailing_comma is None else trailing_comma
    fields = [scene.count_text if scene.count_text is not None and trailing_comma is None
              and max(_count_of(scene.count_text), 0) == len(scene.pieces) else str(len(scene.pieces))]
    for i, piece in enumerate(scene.pieces):
        fields += piece.written_tokens(i)
    if scene.extra and trailing_comma is None:
        return ",".join(fields + list(scene.extra))
    return ",".join(fields) + ("," if comma else "")


def _count_of(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        return -1


def as_scene(value: "Scene | str | Iterable[Piece | dict]") -> Scene:
    """Accept a Scene, a scene string, or pieces / piece dicts."""
    if isinstance(value, Scene):
        return value
    if isinstance(value, str):
        return parse_scene(value)
    return Scene.of(value)


# ------------------------------------------------------------------------------ dataset import
def read_codraw_document(path: str | Path) -> dict:
    """A whole ``CoDraw_1_0.json`` file (``count``, ``stat``, ``data``), every scene string of its
    ``data`` checked with :func:`parse_scene`; a malformed one raises :class:`SceneFormatError`
    naming the key."""
    with open(path, encoding="utf-8") as handle:
        document = json.load(handle)
    if not isinstance(document, dict) or not isinstance(document.get("data"), dict):
        raise SceneFormatError(f"{path}: not a CoDraw file (no \"data\" object)")
    for key, entry in document["data"].items():
        try:
            parse_scene(entry["abs_t"])
            for round_ in entry.get("dialog", []):
                parse_scene(round_.get("abs_b", ""))
                parse_scene(round_.get("abs_d", ""))
        except (KeyError, TypeError, AttributeError) as exc:
            raise SceneFormatError(f"{path}: entry {key!r} is missing {exc}") from None
        except SceneFormatError as exc:
            raise SceneFormatError(f"{path}: entry {key!r}: {exc}") from None
    return document


def read_codraw_json(path: str | Path) -> dict[str, dict]:
    """The ``data`` mapping of a ``CoDraw_1_0.json`` file: key -> ``{"image_id", "abs_t",
    "socketId", "dialog": [{"seq_t", "seq_d", "msg_t", "msg_d", "abs_t", "abs_b", "abs_d",
    "peeked"?, "score"}, ...]}`` (checked as :func:`read_codraw_document` does)."""
    return read_codraw_document(path)["data"]


# ------------------------------------------------------------------------------ the generator
GENERATOR_ID = "codraw_park_v1"
MIN_PIECES = 6
MAX_PIECES = 17
# number of pieces: most Abstract Scenes have 6 (mean 6.67, max 17)
_COUNT_WEIGHTS = (45, 20, 11, 7, 5, 3, 2, 2, 1.5, 1.5, 1, 1)

_GROUND_BOTTOM = {0: (320, 398), 1: (262, 330), 2: (HORIZON_Y + 12, 262)}   # feet/base y per depth
_SKY_PIECES = ca.SKY_IDXS + (56,)                                               # sky + kite
_LARGE = tuple(range(8, 18))
_ANIMALS = tuple(range(20, 26))
_HATS = tuple(art.idx for art in ca.CLIPARTS if art.role == "hat")
_EYEWEAR = tuple(art.idx for art in ca.CLIPARTS if art.role == "eyewear")
_HELD = tuple(art.idx for art in ca.CLIPARTS if art.role == "held")
_GROUND_SMALL = tuple(art.idx for art in ca.CLIPARTS
                      if art.role in ("held", "ground_small") or art.idx == 57)     # + campfire
_TABLE = 14
_SOCCER_BALL = 47


def _fits(w: float, h: float) -> bool:
    return w <= CANVAS_W and h <= CANVAS_H


def _clamp_centre(x: float, y: float, w: float, h: float) -> tuple[int, int]:
    """Round and move a centre so that the whole ``w x h`` box lies on the canvas."""
    x = min(max(x, w / 2), CANVAS_W - w / 2)
    y = min(max(y, h / 2), CANVAS_H - h / 2)
    xi, yi = int(round(x)), int(round(y))
    # rounding may push a box that exactly fits half a pixel out; pull it back
    xi = min(max(xi, math.ceil(w / 2)), CANVAS_W - math.ceil(w / 2))
    yi = min(max(yi, math.ceil(h / 2)), CANVAS_H - math.ceil(h / 2))
    return xi, yi


class _Layout:
    """The pieces of a scene being generated (one per idx)."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.pieces: dict[int, Piece] = {}
        self.people: list[Piece] = []
        self.hatted: set[int] = set()
        self.spectacled: set[int] = set()
        self.holding: set[int] = set()

    def free(self, idxs: Iterable[int]) -> list[int]:
        return [idx for idx in idxs if idx not in self.pieces]

    def add(self, piece: Piece) -> Piece:
        """Add a piece, nudged by a pixel or two so that no two pieces share an x or a y: the
        metric counts a tie in the target as a wrong left/right (above/below) order, so a scene
        with ties could not be rebuilt to a perfect 5."""
        assert piece.idx not in self.pieces
        w, h = piece.size
        piece = replace(piece, x=self._untied(piece.x, {p.x for p in self.pieces.values()}, w, CANVAS_W),
                        y=self._untied(piece.y, {p.y for p in self.pieces.values()}, h, CANVAS_H))
        self.pieces[piece.idx] = piece
        if piece.is_human:
            self.people.append(piece)
        return piece

    @staticmethod
    def _untied(value: int, taken: set[int], size: float, limit: int) -> int:
        low, high = math.ceil(size / 2), limit - math.ceil(size / 2)
        for step in range(0, limit):
            for candidate in (value + step, value - step):
                if candidate not in taken and low <= candidate <= high:
                    return candidate
        return value

    def depth_for(self, idx: int, weights: tuple[float, float, float], subtype: int = 0) -> int:
        """A depth at which the piece fits its place (big trees never at depth 0 if too tall)."""
        role = ca.get(idx).role
        choices = [d for d in range(3) if _fits(*ca.piece_size(idx, subtype, d)) and
                   (role == "sky" or ca.piece_size(idx, subtype, d)[1] <= _GROUND_BOTTOM[d][1])]
        return self.rng.choices(choices, weights=[weights[d] for d in choices])[0]

    def on_ground(self, idx: int, depth: int, *, x: float | None = None, subtype: int = 0,
                  flip: int | None = None) -> Piece:
        w, h = ca.piece_size(idx, subtype, depth)
        low, high = _GROUND_BOTTOM[depth]
        bottom = self.rng.uniform(low, min(high, CANVAS_H))
        bottom = max(bottom, h + 1.0) if h > bottom else bottom
        if x is None:
            x = self.rng.uniform(w / 2, CANVAS_W - w / 2)
        cx, cy = _clamp_centre(x, bottom - h / 2, w, h)
        return Piece(idx=idx, x=cx, y=cy, depth=depth, subtype=subtype,
                     flip=self.rng.randint(0, 1) if flip is None else flip)

    def in_sky(self, idx: int, depth: int) -> Piece:
        w, h = ca.piece_size(idx, 0, depth)
        x = self.rng.uniform(w / 2, CANVAS_W - w / 2)
        top_room = max(h / 2, min(HORIZON_Y - 25 - h / 2, 140))
        y = self.rng.uniform(h / 2, top_room) if top_room > h / 2 else h / 2
        cx, cy = _clamp_centre(x, y, w, h)
        return Piece(idx=idx, x=cx, y=cy, depth=depth, flip=self.rng.randint(0, 1))

    def attached(self, idx: int, person: Piece, person_anchor: str, own_anchor: str) -> Piece:
        """A piece whose ``own_anchor`` sits on the person's ``person_anchor`` (a hat's ``wear``
        on the ``hat`` point, a toy's ``hold`` in the ``hand_front``), same depth and facing."""
        point = ca.anchor_point(person.idx, person.subtype, person_anchor, person.x, person.y,
                                person.depth, person.flip)
        x, y = ca.centre_for(idx, 0, own_anchor, point, person.depth, person.flip)
        cx, cy = _clamp_centre(x, y, *ca.piece_size(idx, 0, person.depth))
        return Piece(idx=idx, x=cx, y=cy, depth=person.depth, flip=person.flip)


def _person_x(layout: _Layout, idx: int, subtype: int, depth: int) -> float:
    w = ca.piece_size(idx, subtype, depth)[0]
    for _ in range(20):
        x = layout.rng.uniform(w / 2, CANVAS_W - w / 2)
        if all(abs(x - other.x) > 110 for other in layout.people):
            return x
    return x


def _add_person(layout: _Layout, idx: int) -> None:
    subtype = layout.rng.randrange(ca.N_SUBTYPES)
    depth = layout.depth_for(idx, (0.35, 0.5, 0.15), subtype)
    layout.add(layout.on_ground(idx, depth, x=_person_x(layout, idx, subtype, depth), subtype=subtype))


def _add_hat(layout: _Layout) -> bool:
    people = [p for p in layout.people if p.idx not in layout.hatted]
    hats = layout.free(_HATS)
    if not people or not hats:
        return False
    person = layout.rng.choice(people)
    layout.add(layout.attached(layout.rng.choice(hats), person, "hat", "wear"))
    layout.hatted.add(person.idx)
    return True


def _add_eyewear(layout: _Layout) -> bool:
    people = [p for p in layout.people if p.idx not in layout.spectacled]
    glasses = layout.free(_EYEWEAR)
    if not people or not glasses:
        return False
    person = layout.rng.choice(people)
    layout.add(layout.attached(layout.rng.choice(glasses), person, "eyes", "wear"))
    layout.spectacled.add(person.idx)
    return True


def _add_held(layout: _Layout) -> bool:
    people = [p for p in layout.people if p.idx not in layout.holding]
    things = layout.free(_HELD)
    if not people or not things:
        return False
    person = layout.rng.choice(people)
    layout.add(layout.attached(layout.rng.choice(things), person, "hand_front", "hold"))
    layout.holding.add(person.idx)
    return True


def _add_ball_at_feet(layout: _Layout) -> bool:
    kickers = [p for p in layout.people if p.pose == 2]
    if not kickers or _SOCCER_BALL in layout.pieces:
        return False
    person = layout.rng.choice(kickers)
    x, _ = ca.anchor_point(person.idx, person.subtype, "foot_front", person.x, person.y,
                           person.depth, person.flip)
    w, h = ca.piece_size(_SOCCER_BALL, 0, person.depth)
    x += w / 2 if ca.faces_right(person.flip) else -w / 2
    cx, cy = _clamp_centre(x, person.box[3] - h / 2, w, h)
    layout.add(Piece(idx=_SOCCER_BALL, x=cx, y=cy, depth=person.depth, flip=layout.rng.randint(0, 1)))
    return True


def _add_sky(layout: _Layout) -> bool:
    sky_count = sum(1 for idx in layout.pieces if idx in _SKY_PIECES)
    free = layout.free(_SKY_PIECES)
    if sky_count >= 3 or not free:
        return False
    idx = layout.rng.choice(free)
    layout.add(layout.in_sky(idx, layout.depth_for(idx, (0.3, 0.4, 0.3))))
    return True


def _add_large(layout: _Layout) -> bool:
    large_count = sum(1 for idx in layout.pieces if idx in _LARGE)
    free = layout.free(_LARGE)
    if large_count >= 3 or not free:
        return False
    idx = layout.rng.choice(free)
    layout.add(layout.on_ground(idx, layout.depth_for(idx, (0.25, 0.45, 0.3))))
    return True


def _add_animal(layout: _Layout) -> bool:
    free = layout.free(_ANIMALS)
    if sum(1 for idx in layout.pieces if idx in _ANIMALS) >= 2 or not free:
        return False
    idx = layout.rng.choice(free)
    layout.add(layout.on_ground(idx, layout.depth_for(idx, (0.35, 0.45, 0.2))))
    return True


def _add_ground_thing(layout: _Layout) -> bool:
    free = layout.free(_GROUND_SMALL)
    if not free:
        return False
    idx = layout.rng.choice(free)
    table = layout.pieces.get(_TABLE)
    if table is not None and ca.get(idx).type_idx == 6 and layout.rng.random() < 0.7:
        # food on the picnic table
        w, h = ca.piece_size(idx, 0, table.depth)
        left, top, right, _ = table.box
        x = layout.rng.uniform(left + w / 2, right - w / 2) if right - left > w else table.x
        cx, cy = _clamp_centre(x, top + 0.15 * (table.size[1]) - h / 2, w, h)
        layout.add(Piece(idx=idx, x=cx, y=cy, depth=table.depth, flip=layout.rng.randint(0, 1)))
        return True
    layout.add(layout.on_ground(idx, layout.depth_for(idx, (0.4, 0.4, 0.2))))
    return True


_STEPS = (
    (_add_sky, 3.0), (_add_large, 3.0), (_add_hat, 2.0), (_add_eyewear, 1.0), (_add_held, 2.5),
    (_add_ball_at_feet, 1.0), (_add_animal, 1.5), (_add_ground_thing, 1.5),
)


def generate_scene(seed: int | random.Random, *, min_pieces: int = MIN_PIECES,
                   max_pieces: int = MAX_PIECES) -> Scene:
    """A plausible park scene of ``min_pieces..max_pieces`` placed pieces, the same for a seed."""
    if not MIN_PIECES <= min_pieces <= max_pieces <= MAX_PIECES:
        raise ValueError(f"piece counts must satisfy {MIN_PIECES} <= min <= max <= {MAX_PIECES}")
    rng = seed if isinstance(seed, random.Random) else random.Random(seed)
    counts = list(range(min_pieces, max_pieces + 1))
    target = rng.choices(counts, weights=_COUNT_WEIGHTS[min_pieces - MIN_PIECES:max_pieces - MIN_PIECES + 1])[0]
    layout = _Layout(rng)

    people_roll = rng.random()
    if people_roll < 0.45:
        people = [ca.MIKE, ca.JENNY]
    elif people_roll < 0.9:
        people = [rng.choice(ca.HUMAN_IDXS)]
    else:
        people = []
    for idx in people:
        _add_person(layout, idx)
    _add_sky(layout)
    _add_large(layout)

    steps = list(_STEPS)
    while len(layout.pieces) < target and steps:
        step = rng.choices(steps, weights=[weight for _, weight in steps])[0]
        if not step[0](layout):
            steps.remove(step)
    while len(layout.pieces) < target:        # pools ran dry: more people, then anything on the grass
        missing = [idx for idx in ca.HUMAN_IDXS if idx not in layout.pieces]
        if missing:
            _add_person(layout, missing[0])
            continue
        free = layout.free(ca.NON_HUMAN_IDXS)
        idx = rng.choice(free)
        piece = (layout.in_sky(idx, layout.depth_for(idx, (1, 1, 1))) if ca.get(idx).role == "sky"
                 else layout.on_ground(idx, layout.depth_for(idx, (1, 1, 1))))
        layout.add(piece)
    return Scene(tuple(sorted(layout.pieces.values(), key=lambda p: p.idx)))
