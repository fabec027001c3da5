"""GroundTalk's own SVG clip art for CoDraw (the Abstract Scenes v1.1 library layout).

The original Abstract Scenes PNGs are not redistributed; this module draws a look-alike library
from scratch in a flat cartoon style: one outline colour (``OUTLINE``), one outline width
(``STROKE`` = 3 px at depth 0, so 1.5 px at depth 2), round joins, flat fills.

Library layout (Abstract Scenes v1.1 / CoDraw): 58 types in 8 groups, in this order::

    group   prefix  count  global idx
    sky     s         8    0..7
    large   p        10    8..17
    Mike    hb0      35    18     (subtype = pose * 5 + expression)
    Jenny   hb1      35    19     (same)
    animal  a         6    20..25
    clothes c        10    26..35
    food    e         7    36..42
    toy     t        15    43..57

Public API
----------
``svg_for(idx, subtype=0) -> str``
    A standalone SVG document (``xmlns``, ``viewBox``, natural ``width``/``height`` in px at
    depth 0). Depth 1 and 2 draw it at 0.7 and 0.49 of that size. Unflipped art faces RIGHT
    (see ``FACES``); ``flip = 1`` mirrors it about its vertical centre line.
``art_info(idx, subtype=0) -> dict``
    ``{"idx", "subtype", "name", "group", "file", "width", "height", "anchors"}``; anchors are
    ``[x, y]`` in the piece's own pixel frame (origin top-left, unflipped, depth 0); for a
    flipped piece use ``width - x``. Kids also carry ``pose``, ``expression``, ``head_tilt``
    (degrees, clockwise) and ``head_radius``.
``NAMES``, ``GROUPS``, ``POSES``, ``EXPRESSIONS``, ``DEPTH_SCALE``, ``HEAD_RADIUS``.
``manifest() -> dict``
    Everything ``art_info`` returns, for every piece, plus the constants.
``background_svg() -> str``
    The 500x400 park background (sky + grass) the scenes are drawn on.

Command line: ``python -m games.codraw.art --out games/codraw/static/codraw/art [--review DIR]`` writes
``<idx>_<subtype>.svg`` for every piece (subtype 0 for everything but Mike and Jenny),
``background.svg`` and ``manifest.json``; ``--review DIR`` also writes contact sheets (SVG, and
PNG when ``cairosvg`` is installed).

Invariants
----------
* Every kid variant (Mike or Jenny, 7 poses x 5 expressions) has the same head radius
  (``HEAD_RADIUS`` = 30 px) and its own per-pose canvas; expressions never change the canvas.
* Hats have a ``wear`` anchor (bottom centre of the brim) that goes on a kid's ``hat`` anchor;
  glasses have a ``wear`` anchor (the bridge) that goes on a kid's ``eyes`` anchor. Both are
  drawn for a head of radius ``HEAD_RADIUS``, so they fit when hat and kid share a depth.
* Pure, deterministic string building: no randomness, no I/O except in ``main``.
"""
from __future__ import annotations

import argparse
import json
import math
from functools import lru_cache
from pathlib import Path

# --------------------------------------------------------------------------------------------
# Constants
# --------------------------------------------------------------------------------------------

DEPTH_SCALE = (1.0, 0.7, 0.49)
TYPE_PREFIX = ("s", "p", "hb0", "hb1", "a", "c", "e", "t")
TYPE_COUNT = (8, 10, 35, 35, 6, 10, 7, 15)
TYPE_START = (0, 8, 18, 19, 20, 26, 36, 43)
GROUP_NAMES = ("sky", "large", "mike", "jenny", "animal", "clothing", "food", "toy")
MIKE, JENNY = 18, 19
NUM_IDX = 58

# Pose and expression order of the Abstract Scenes kid PNGs (subtype = pose * 5 + expression).
POSES = ("arms out", "arms up", "kicking", "running", "legs crossed", "sitting", "waving")
EXPRESSIONS = ("angry", "wide smile", "smile", "sad", "scared")

NAMES: tuple[str, ...] = (
    # sky 0..7
    "helicopter", "hot air balloon", "cloud", "sun", "lightning cloud", "rain cloud", "rocket",
    "airplane",
    # large 8..17
    "bee", "slide", "sandbox", "grill", "swing", "tent", "table", "pine tree", "oak tree",
    "apple tree",
    # kids 18, 19
    "Mike", "Jenny",
    # animals 20..25
    "bear", "cat", "dog", "duck", "owl", "snake",
    # clothing 26..35
    "star hat", "crown", "chef hat", "pirate hat", "cap", "rainbow hat", "witch hat",
    "viking helmet", "glasses", "sunglasses",
    # food 36..42
    "pie", "pizza", "hot dog", "ketchup", "mustard", "hamburger", "drink",
    # toys 43..57
    "baseball", "pail", "beach ball", "basketball", "soccer ball", "tennis ball", "football",
    "frisbee", "baseball bat", "balloons", "baseball glove", "shovel", "tennis racket", "kite",
    "campfire",
)
GROUPS: tuple[str, ...] = tuple(
    GROUP_NAMES[t] for t in range(8) for _ in range(1 if t in (2, 3) else TYPE_COUNT[t])
)

# Which way an unflipped piece faces. The drawing code below is authored facing left and
# ``_art`` mirrors it. "right" follows the CoDraw data: in the dataset README's example target
# Mike (flip 0, left) kicks a ball at Jenny (flip 1, right), and a viking helmet meant for kicking
# Mike sits left of his centre; both only work if unflipped kids face right.
FACES = "right"

OUTLINE = "#3d2c29"
STROKE = 3.0
HEAD_RADIUS = 30.0

SKIN = "#f8cda4"
BLUSH = "#f4978e"
WHITE = "#ffffff"
MOUTH = "#8e2a2a"
TONGUE = "#f07878"

assert len(NAMES) == NUM_IDX and len(GROUPS) == NUM_IDX


def type_of(idx: int) -> int:
    """The type (0..7) of a global idx."""
    for t in range(7, -1, -1):
        if idx >= TYPE_START[t]:
            return t
    raise ValueError(idx)


def num_subtypes(idx: int) -> int:
    return 35 if idx in (MIKE, JENNY) else 1


def file_name(idx: int, subtype: int = 0) -> str:
    return f"{idx}_{subtype}.svg"


# --------------------------------------------------------------------------------------------
# Tiny SVG builder
# --------------------------------------------------------------------------------------------


def _n(v: float) -> str:
    s = f"{v:.1f}"
    if s.endswith(".0"):
        s = s[:-2]
    return "0" if s == "-0" else s


def _attrs(a: dict) -> str:
    out = []
    for k, v in a.items():
        if v is None:
            continue
        key = k.rstrip("_").replace("_", "-")
        out.append(f'{key}="{_n(v) if isinstance(v, (int, float)) else v}"')
    return " ".join(out)


def _el(tag: str, **a) -> str:
    return f"<{tag} {_attrs(a)}/>"


def _pts(points) -> str:
    return " ".join(f"{_n(x)},{_n(y)}" for x, y in points)


class Pic:
    """Collects SVG fragments. Shapes get the outline by default (``stroke=None`` turns it off)."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def add(self, s: str) -> None:
        self.parts.append(s)

    @staticmethod
    def _stroke(a: dict, stroke) -> dict:
        if stroke is None:
            a["stroke"] = "none"
        elif stroke is not True:
            a["stroke"] = stroke
        return a

    def circle(self, cx, cy, r, fill, stroke=True, **a):
        self.add(_el("circle", cx=cx, cy=cy, r=r, fill=fill, **self._stroke(a, stroke)))

    def ellipse(self, cx, cy, rx, ry, fill, stroke=True, rot=None, **a):
        if rot:
            a["transform"] = f"rotate({_n(rot)} {_n(cx)} {_n(cy)})"
        self.add(_el("ellipse", cx=cx, cy=cy, rx=rx, ry=ry, fill=fill, **self._stroke(a, stroke)))

    def rect(self, x, y, w, h, fill, rx=None, stroke=True, **a):
        self.add(_el("rect", x=x, y=y, width=w, height=h, rx=rx, fill=fill, **self._stroke(a, stroke)))

    def path(self, d, fill="none", stroke=True, **a):
        self.add(_el("path", d=d, fill=fill, **self._stroke(a, stroke)))

    def poly(self, points, fill, stroke=True, **a):
        self.add(_el("polygon", points=_pts(points), fill=fill, **self._stroke(a, stroke)))

    def line(self, points, stroke=OUTLINE, width=STROKE, **a):
        self.add(_el("polyline", points=_pts(points), fill="none", stroke=stroke,
                     stroke_width=width, **a))

    def limb(self, points, colour, width):
        """A round-capped tube with the standard outline (outline STROKE wide on each side)."""
        self.line(points, OUTLINE, width + STROKE)
        self.line(points, colour, width - STROKE)

    def blob(self, circles, fill, shade=None):
        """Union of circles/ellipses with one clean outline (outline pass, then fill pass).

        ``circles``: (cx, cy, r) or (cx, cy, rx, ry). ``shade``: optional (colour, dy) drawn as a
        second fill pass offset downwards and clipped visually by a top fill pass.
        """
        h = STROKE / 2
        for c in circles:
            cx, cy, rx, ry = c if len(c) == 4 else (c[0], c[1], c[2], c[2])
            self.ellipse(cx, cy, rx + h, ry + h, OUTLINE, stroke=None)
        if shade:
            colour, dy = shade
            for c in circles:
                cx, cy, rx, ry = c if len(c) == 4 else (c[0], c[1], c[2], c[2])
                self.ellipse(cx, cy, rx - h, ry - h, colour, stroke=None)
            for c in circles:
                cx, cy, rx, ry = c if len(c) == 4 else (c[0], c[1], c[2], c[2])
                self.ellipse(cx, cy - dy, max(rx - h - dy * 0.3, 1), max(ry - h - dy * 0.6, 1),
                             fill, stroke=None)
        else:
            for c in circles:
                cx, cy, rx, ry = c if len(c) == 4 else (c[0], c[1], c[2], c[2])
                self.ellipse(cx, cy, rx - h, ry - h, fill, stroke=None)

    def group(self, pic: "Pic", transform: str) -> None:
        self.add(f'<g transform="{transform}">' + "".join(pic.parts) + "</g>")


def _document(w: float, h: float, body: str, title: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_n(w)}" height="{_n(h)}" '
        f'viewBox="0 0 {_n(w)} {_n(h)}">'
        f"<title>{title}</title>"
        f'<g stroke="{OUTLINE}" stroke-width="{_n(STROKE)}" stroke-linejoin="round" '
        f'stroke-linecap="round">{body}</g></svg>'
    )


class Art:
    """One finished piece: its size, drawing and anchors (piece frame, depth 0, unflipped)."""

    def __init__(self, w: int, h: int, pic: Pic, anchors: dict | None = None,
                 extra: dict | None = None) -> None:
        self.w, self.h, self.pic = w, h, pic
        self.anchors = anchors or {}
        self.extra = extra or {}


# --------------------------------------------------------------------------------------------
# Geometry helpers
# --------------------------------------------------------------------------------------------


def _rot(p, deg, pivot):
    a = math.radians(deg)
    x, y = p[0] - pivot[0], p[1] - pivot[1]
    return (pivot[0] + x * math.cos(a) - y * math.sin(a), pivot[1] + x * math.sin(a) + y * math.cos(a))


def _add(p, q):
    return (p[0] + q[0], p[1] + q[1])


def _lerp(p, q, t):
    return (p[0] + (q[0] - p[0]) * t, p[1] + (q[1] - p[1]) * t)


def _star(cx, cy, r_out, r_in, n=5, rot=-90):
    pts = []
    for i in range(2 * n):
        r = r_out if i % 2 == 0 else r_in
        a = math.radians(rot + i * 180 / n)
        pts.append((cx + r * math.cos(a), cy + r * math.sin(a)))
    return pts


# --------------------------------------------------------------------------------------------
# Kids (Mike = 18, Jenny = 19)
# --------------------------------------------------------------------------------------------

_KID_STYLE = {
    MIKE: dict(hair="#7b4a24", hair_dark="#5c3517", shirt="#4a90e2", shirt_dark="#3a74bb",
               bottom="#35507a", shoe="#e0483e", sole=WHITE),
    JENNY: dict(hair="#c8612a", hair_dark="#9c4519", shirt="#ef6aa6", shirt_dark="#d04b88",
                bottom="#ef6aa6", shoe="#7d4cc0", sole=WHITE, bow="#ffd23f"),
}

ARM_W = 11.0
LEG_W = 13.0
HAND_R = 6.5
FACE_DX = -4.0  # the face sits a little towards the facing side (left)

# Pose table, in a body frame where the standing head centre is (0, 0).
#   lean: torso+head rotation (deg, clockwise, about the hip centre (0, 74));
#   arms: front/back: (upper-arm vector, forearm vector) from the (leaned) shoulder;
#   legs: front/back: (knee, foot) in the body frame. The back arm and both legs are drawn
#   behind the torso, the front arm and the head in front of it. "Front" is the screen-left
#   limb, on the side the kid faces.
_SHOULDER_F, _SHOULDER_B = (-15.0, 38.0), (15.0, 38.0)
_HIP_F, _HIP_B = (-8.0, 74.0), (8.0, 74.0)
_STAND = {"front": ((-10.0, 99.0), (-11.0, 124.0)), "back": ((10.0, 99.0), (11.0, 124.0))}

_POSE_SPEC = {
    "arms out": dict(
        arms={"front": ((-19, 7), (-20, -1)), "back": ((-21, 13), (-22, 6))},
        legs=_STAND,
    ),
    "arms up": dict(
        arms={"front": ((-18, -12), (-14, -15)), "back": ((18, -12), (14, -15))},
        arms_last=("front", "back"),
        legs={"front": ((-12, 99), (-15, 124)), "back": ((12, 99), (15, 124))},
    ),
    "kicking": dict(
        lean=5,
        arms={"front": ((-12, 18), (-12, 14)), "back": ((19, -8), (17, -10))},
        legs={"front": ((-30, 88), (-53, 79)), "back": ((10, 99), (12, 124))},
    ),
    "running": dict(
        lean=-12,
        arms={"front": ((-10, 19), (-18, -8)), "back": ((15, 15), (5, 19))},
        legs={"front": ((-26, 94), (-30, 120)), "back": ((18, 96), (38, 110))},
    ),
    "legs crossed": dict(
        arms={"front": ((-7, 21), (-2, 20)), "back": ((7, 21), (2, 20))},
        legs={"front": ((0, 99), (10, 124)), "back": ((0, 99), (-10, 124))},
    ),
    "sitting": dict(
        lean=6,
        arms={"front": ((-11, 18), (-10, 16)), "back": ((12, 18), (8, 19))},
        legs={"front": ((-34, 85), (-62, 87)), "back": ((-28, 78), (-56, 76))},
        sitting=True,
    ),
    "waving": dict(
        arms={"front": ((-7, 21), (-2, 20)), "back": ((22, -8), (7, -20))},
        legs=_STAND,
        wave=True,
        arms_last=("back",),
    ),
}


def _foot(pic: Pic, knee, foot, style):
    """A shoe at ``foot``; toes point to the facing side (left), or up for a horizontal shin."""
    dx, dy = foot[0] - knee[0], foot[1] - knee[1]
    ln = math.hypot(dx, dy) or 1.0
    dx, dy = dx / ln, dy / ln
    cands = [(dy, -dx), (-dy, dx)]
    # prefer the perpendicular pointing left; for near-horizontal shins prefer pointing up
    if abs(dy) < 0.5:
        px, py = min(cands, key=lambda p: p[1])
    else:
        px, py = min(cands, key=lambda p: p[0])
    cx, cy = foot[0] + px * 5 + dx * 1.5, foot[1] + py * 5 + dy * 1.5
    ang = math.degrees(math.atan2(py, px))
    pic.ellipse(cx, cy, 11.5, 6.5, style["shoe"], rot=ang)
    # sole stripe
    sx, sy = cx + dx * 4.2, cy + dy * 4.2
    pic.ellipse(sx, sy, 9.5, 1.6, style["sole"], stroke=None, rot=ang)


def _hand(pic: Pic, p):
    pic.circle(p[0], p[1], HAND_R, SKIN)


def _arm(pic: Pic, shoulder, elbow, hand, style):
    pic.limb([shoulder, elbow, hand], SKIN, ARM_W)
    # short sleeve over the upper arm
    s_end = _lerp(shoulder, elbow, 0.55)
    pic.limb([shoulder, s_end], style["shirt"], ARM_W + 5)
    _hand(pic, hand)


def _leg(pic: Pic, kid, hip, knee, foot, style):
    pic.limb([hip, knee, foot], SKIN, LEG_W)
    if kid == MIKE:
        pic.limb([hip, _lerp(hip, knee, 0.6)], style["bottom"], LEG_W + 5)
    else:
        # white knee socks
        pic.limb([_lerp(knee, foot, 0.45), foot], WHITE, LEG_W - 0.5)
    _foot(pic, knee, foot, style)


def _face(pic: Pic, hx, hy, expr: str):
    fx = hx + FACE_DX
    ex_l, ex_r, ey = fx - 11.5, fx + 11.5, hy + 1
    my = hy + 15
    # cheeks
    pic.ellipse(ex_l - 5, hy + 12, 5.5, 3.6, BLUSH, stroke=None, opacity=0.75)
    pic.ellipse(ex_r + 5, hy + 12, 5.5, 3.6, BLUSH, stroke=None, opacity=0.75)

    def dot_eyes(ry=5.4, rx=4.3, dy=0):
        for ex in (ex_l, ex_r):
            pic.ellipse(ex, ey + dy, rx, ry, OUTLINE, stroke=None)
            pic.circle(ex - 1.4, ey + dy - 2, 1.5, WHITE, stroke=None)

    if expr == "angry":
        dot_eyes(ry=4.6, dy=1)
        # eyebrows slanting down to the middle
        pic.line([(ex_l - 7, ey - 11), (ex_l + 6, ey - 5)], width=4.2)
        pic.line([(ex_r + 7, ey - 11), (ex_r - 6, ey - 5)], width=4.2)
        # gritted teeth
        pic.rect(fx - 10, my - 3, 20, 9, WHITE, rx=3.5, stroke_width=2.6)
        pic.line([(fx - 9, my + 1.5), (fx + 9, my + 1.5)], width=1.6)
        pic.line([(fx - 3.3, my - 2.5), (fx - 3.3, my + 5.5)], width=1.4)
        pic.line([(fx + 3.3, my - 2.5), (fx + 3.3, my + 5.5)], width=1.4)
    elif expr == "wide smile":
        # happy closed eyes (upside-down U)
        for ex in (ex_l, ex_r):
            pic.path(f"M{_n(ex - 5)},{_n(ey + 2)} Q{_n(ex)},{_n(ey - 7)} {_n(ex + 5)},{_n(ey + 2)}",
                     stroke_width=3.4)
        d = f"M{_n(fx - 12)},{_n(my - 4)} L{_n(fx + 12)},{_n(my - 4)} Q{_n(fx + 11)},{_n(my + 12)} {_n(fx)},{_n(my + 12)} Q{_n(fx - 11)},{_n(my + 12)} {_n(fx - 12)},{_n(my - 4)} Z"
        pic.path(d, MOUTH, stroke_width=2.6)
        pic.path(f"M{_n(fx - 6)},{_n(my + 9.5)} Q{_n(fx)},{_n(my + 3)} {_n(fx + 6)},{_n(my + 9.5)} Q{_n(fx)},{_n(my + 11.5)} {_n(fx - 6)},{_n(my + 9.5)} Z",
                 TONGUE, stroke=None)
        pic.rect(fx - 10.5, my - 2.8, 21, 4.2, WHITE, stroke=None)
    elif expr == "smile":
        dot_eyes()
        pic.line([(ex_l - 4, ey - 10), (ex_l + 4, ey - 11)], width=2.6)
        pic.line([(ex_r - 4, ey - 11), (ex_r + 4, ey - 10)], width=2.6)
        pic.path(f"M{_n(fx - 9)},{_n(my - 1)} Q{_n(fx)},{_n(my + 9)} {_n(fx + 9)},{_n(my - 1)}",
                 stroke_width=3.2)
    elif expr == "sad":
        dot_eyes(ry=4.8, dy=2)
        # eyebrows raised in the middle
        pic.line([(ex_l - 6, ey - 6), (ex_l + 5, ey - 11)], width=3.2)
        pic.line([(ex_r + 6, ey - 6), (ex_r - 5, ey - 11)], width=3.2)
        pic.path(f"M{_n(fx - 8)},{_n(my + 5)} Q{_n(fx)},{_n(my - 3)} {_n(fx + 8)},{_n(my + 5)}",
                 stroke_width=3.2)
        # a tear
        tx, ty = ex_l - 1, ey + 8
        pic.path(f"M{_n(tx)},{_n(ty)} Q{_n(tx - 4.5)},{_n(ty + 7)} {_n(tx)},{_n(ty + 9)} Q{_n(tx + 4.5)},{_n(ty + 7)} {_n(tx)},{_n(ty)} Z",
                 "#5aa9e6", stroke_width=1.5)
    elif expr == "scared":
        for ex in (ex_l, ex_r):
            pic.circle(ex, ey, 6.6, WHITE, stroke_width=2.4)
            pic.circle(ex - 0.8, ey + 0.5, 3.0, OUTLINE, stroke=None)
        pic.path(f"M{_n(ex_l - 6)},{_n(ey - 11)} Q{_n(ex_l)},{_n(ey - 16)} {_n(ex_l + 6)},{_n(ey - 12)}",
                 stroke_width=2.8)
        pic.path(f"M{_n(ex_r - 6)},{_n(ey - 12)} Q{_n(ex_r)},{_n(ey - 16)} {_n(ex_r + 6)},{_n(ey - 11)}",
                 stroke_width=2.8)
        pic.ellipse(fx, my + 3, 5.2, 7, MOUTH, stroke_width=2.6)
    else:
        raise ValueError(expr)


def _head(pic: Pic, kid: int, hx: float, hy: float, expr: str, style):
    r = HEAD_RADIUS
    if kid == JENNY:
        # pigtails behind the head, with bows
        for side in (-1, 1):
            px, py = hx + side * 33, hy + 10
            pic.ellipse(px, py, 10.5, 16, style["hair"], rot=-side * 22)
            pic.path(f"M{_n(px - side * 1)},{_n(py + 1)} q{_n(side * 3)},{_n(7)} {_n(side * 1)},{_n(13)}",
                     stroke=style["hair_dark"], stroke_width=2)
            bx, by = hx + side * 27, hy - 6
            pic.poly([(bx, by), (bx - 8, by - 7), (bx - 8, by + 6)], style["bow"], stroke_width=2.2)
            pic.poly([(bx, by), (bx + 8, by - 7), (bx + 8, by + 6)], style["bow"], stroke_width=2.2)
            pic.circle(bx, by, 3, style["bow"], stroke_width=2.2)
    else:
        # the visible ear (the head is turned slightly to the left)
        pic.circle(hx + r - 1, hy + 4, 6.5, SKIN)
        pic.path(f"M{_n(hx + r + 1)},{_n(hy + 1)} q2,3 0,6", stroke_width=1.8)
    pic.circle(hx, hy, r, SKIN)
    if kid == MIKE:
        d = (f"M{_n(hx - r - 1.5)},{_n(hy + 2)} "
             f"C{_n(hx - r - 3)},{_n(hy - r - 8)} {_n(hx + r + 3)},{_n(hy - r - 10)} {_n(hx + r + 1.5)},{_n(hy - 1)} "
             f"L{_n(hx + r - 6)},{_n(hy - 8)} L{_n(hx + 10)},{_n(hy - 12)} L{_n(hx + 4)},{_n(hy - 18)} "
             f"L{_n(hx - 4)},{_n(hy - 12)} L{_n(hx - 11)},{_n(hy - 18)} L{_n(hx - 16)},{_n(hy - 11)} "
             f"L{_n(hx - 22)},{_n(hy - 14)} L{_n(hx - r + 3)},{_n(hy - 3)} Z")
        pic.path(d, style["hair"])
        # cowlick
        pic.path(f"M{_n(hx + 2)},{_n(hy - r - 3)} q4,-8 10,-6", style["hair"], stroke_width=2.6)
    else:
        d = (f"M{_n(hx - r - 2)},{_n(hy + 8)} "
             f"C{_n(hx - r - 5)},{_n(hy - r - 9)} {_n(hx + r + 5)},{_n(hy - r - 9)} {_n(hx + r + 2)},{_n(hy + 8)} "
             f"C{_n(hx + r - 3)},{_n(hy - 4)} {_n(hx + 14)},{_n(hy - 10)} {_n(hx + 6)},{_n(hy - 13)} "
             f"C{_n(hx - 2)},{_n(hy - 6)} {_n(hx - 16)},{_n(hy - 10)} {_n(hx - 20)},{_n(hy - 12)} "
             f"C{_n(hx - 26)},{_n(hy - 6)} {_n(hx - r + 1)},{_n(hy)} {_n(hx - r - 2)},{_n(hy + 8)} Z")
        pic.path(d, style["hair"])
        pic.path(f"M{_n(hx + 6)},{_n(hy - 13)} C{_n(hx + 2)},{_n(hy - 22)} {_n(hx - 8)},{_n(hy - 26)} {_n(hx - 14)},{_n(hy - 24)}",
                 stroke=style["hair_dark"], stroke_width=2)
    _face(pic, hx, hy, expr)


def _torso(pic: Pic, kid: int, style, sitting: bool):
    """Shirt (Mike) or dress top (Jenny) around the standing body frame, neck at (0, 28)."""
    if kid == MIKE:
        shirt = "M-19,44 Q-19,32 -8,30 L8,30 Q19,32 19,44 L19,76 Q19,80 15,80 L-15,80 Q-19,80 -19,76 Z"
        pic.path(shirt, style["shirt"])
        pic.line([(-18, 58), (18, 58)], stroke=WHITE, width=4, stroke_linecap="butt")
        pic.path(shirt)
        pic.path("M-8,31 Q0,38 8,31", SKIN, stroke_width=2.4)
    else:
        pic.path("M-17,44 Q-17,32 -7,30 L7,30 Q17,32 17,44 L16,66 L-16,66 Z", style["shirt"])
        pic.path("M-7,31 Q0,38 7,31", SKIN, stroke_width=2.4)
        if not sitting:
            pic.path("M-16,64 L16,64 L31,95 Q0,101 -31,95 Z", style["shirt"])
            pic.path("M-29,91 Q0,97 29,91", stroke=WHITE, stroke_width=3)
        pic.circle(0, 48, 3, "#ffd23f", stroke_width=1.6)


def _pelvis(pic: Pic, kid: int, style, hips, sitting: bool):
    hf, hb = hips
    if kid == MIKE:
        cx, cy = (hf[0] + hb[0]) / 2, (hf[1] + hb[1]) / 2
        pic.rect(cx - 19, cy - 10, 38, 16, style["bottom"], rx=6)
    elif sitting:
        cx, cy = (hf[0] + hb[0]) / 2, (hf[1] + hb[1]) / 2
        pic.path(f"M{_n(cx - 16)},{_n(cy - 14)} L{_n(cx + 16)},{_n(cy - 14)} "
                 f"Q{_n(cx + 26)},{_n(cy + 6)} {_n(cx + 17)},{_n(cy + 15)} L{_n(cx - 36)},{_n(cy + 17)} "
                 f"Q{_n(cx - 44)},{_n(cy + 8)} {_n(cx - 34)},{_n(cy - 3)} Z", style["shirt"])
        pic.path(f"M{_n(cx - 39)},{_n(cy + 12)} Q{_n(cx - 10)},{_n(cy + 14)} {_n(cx + 19)},{_n(cy + 10)}",
                 stroke=WHITE, stroke_width=3)


def _kid(kid: int, subtype: int) -> Art:
    if not 0 <= subtype < 35:
        raise ValueError(f"subtype {subtype} out of range 0..34")
    pose, expr = POSES[subtype // 5], EXPRESSIONS[subtype % 5]
    spec = _POSE_SPEC[pose]
    style = _KID_STYLE[kid]
    sitting = spec.get("sitting", False)
    lean = spec.get("lean", 0)
    pivot = (0.0, 74.0)

    # joints in the standing frame (head at 0,0), before the whole-body offset
    head = _rot((0.0, 0.0), lean, pivot)
    sh = {"front": _rot(_SHOULDER_F, lean, pivot), "back": _rot(_SHOULDER_B, lean, pivot)}
    hips = {"front": _HIP_F, "back": _HIP_B}
    arms = {}
    for side in ("front", "back"):
        up, fore = spec["arms"][side]
        elbow = _add(sh[side], up)
        arms[side] = (sh[side], elbow, _add(elbow, fore))
    legs = {side: (hips[side],) + tuple(spec["legs"][side]) for side in ("front", "back")}

    # bounding box -> canvas offset
    xs, ys = [], []

    def grow(p, rx, ry=None):
        ry = rx if ry is None else ry
        xs.extend([p[0] - rx, p[0] + rx])
        ys.extend([p[1] - ry, p[1] + ry])

    grow(head, HEAD_RADIUS + 6)
    ys.append(head[1] - HEAD_RADIUS - 12)  # cowlick / hair
    if kid == JENNY:
        grow((head[0] - 33, head[1] + 10), 14, 19)
        grow((head[0] + 33, head[1] + 10), 14, 19)
    for side in ("front", "back"):
        s, e, h = arms[side]
        grow(e, ARM_W / 2 + 3)
        grow(h, HAND_R + 3)
        hp, k, f = legs[side]
        grow(k, LEG_W / 2 + 3)
        grow(f, 15, 11)
    grow((0, 60), 22, 22)
    if kid == JENNY and not sitting:
        grow((0, 96), 34, 4)
    if spec.get("wave"):
        grow(_add(arms["back"][2], (14, -4)), 8)
    minx, miny = min(xs), min(ys)
    w = math.ceil(max(xs) - minx + 4)
    h = math.ceil(max(ys) - miny + 4)
    tx, ty = 2 - minx, 2 - miny  # translate applied to the body frame (offset included below)

    pic = Pic()
    body = Pic()

    # draw order: back arm, back leg, front leg, pelvis, torso, front arm, head, then any arm
    # raised beside the head (``arms_last``) so hair never hides it
    last = spec.get("arms_last", ())
    if "back" not in last:
        s, e, hnd = arms["back"]
        _arm(body, s, e, hnd, style)
    for side in ("back", "front"):
        _leg(body, kid, *legs[side], style)
    _pelvis(body, kid, style, (hips["front"], hips["back"]), sitting)

    top = Pic()
    _torso(top, kid, style, sitting)
    if lean:
        body.group(top, f"rotate({_n(lean)} {_n(pivot[0])} {_n(pivot[1])})")
    else:
        body.parts.extend(top.parts)

    if "front" not in last:
        s, e, hnd = arms["front"]
        _arm(body, s, e, hnd, style)

    head_pic = Pic()
    _head(head_pic, kid, 0.0, 0.0, expr, style)
    if lean:
        body.group(head_pic, f"translate({_n(head[0])} {_n(head[1])}) rotate({_n(lean)})")
    else:
        body.parts.extend(head_pic.parts)

    for side in last:
        s, e, hnd = arms[side]
        _arm(body, s, e, hnd, style)

    if spec.get("wave"):
        hx, hy = arms["back"][2]
        body.path(f"M{_n(hx + 11)},{_n(hy - 10)} q5,6 0,13", stroke_width=2.4)
        body.path(f"M{_n(hx + 16)},{_n(hy - 14)} q8,9 0,20", stroke_width=2.4)

    pic.group(body, f"translate({_n(tx)} {_n(ty)})")

    def T(p):
        return [round(p[0] + tx, 1), round(p[1] + ty, 1)]

    hat = _rot((0.0, -HEAD_RADIUS + 6), lean, pivot)
    eyes = _rot((FACE_DX, 1.0), lean, pivot)
    anchors = {
        "head_center": T(head),
        "head_top": T(_rot((0.0, -HEAD_RADIUS - 4), lean, pivot)),
        "hat": T(hat),
        "eyes": T(eyes),
        "hand_front": T(arms["front"][2]),
        "hand_back": T(arms["back"][2]),
        "foot_front": T(legs["front"][2]),
        "foot_back": T(legs["back"][2]),
    }
    return Art(w, h, pic, anchors, {"head_tilt": lean, "head_radius": HEAD_RADIUS})


# --------------------------------------------------------------------------------------------
# Sky 0..7
# --------------------------------------------------------------------------------------------


def _helicopter() -> Art:
    p = Pic()
    # tail boom and tail rotor
    p.path("M88,40 L134,37 L134,47 L88,56 Z", "#e74c3c")
    p.poly([(126, 38), (132, 20), (140, 22), (138, 44)], "#e74c3c")
    p.circle(132, 42, 8, "#cfd8dc", opacity=0.9)
    p.line([(124, 42), (140, 42)], width=2.4)
    # skids
    p.line([(34, 66), (42, 78)], width=3)
    p.line([(76, 66), (70, 78)], width=3)
    p.path("M22,78 L92,78 Q98,78 98,73", stroke_width=4)
    # body
    p.ellipse(60, 48, 38, 25, "#e74c3c")
    p.path("M24,52 Q22,26 52,24 L58,24 L58,48 Z", "#bfe6ff")
    p.line([(58, 26), (58, 70)], width=2)
    p.ellipse(78, 56, 7, 4.5, "#c0392b", stroke=None)
    # rotor
    p.rect(56, 14, 8, 10, "#7f8c8d")
    p.ellipse(60, 13, 56, 4.5, "#7f8c8d")
    return Art(144, 84, p, {"nose": [22, 50]})


def _hot_air_balloon() -> Art:
    p = Pic()
    # ropes
    p.line([(27, 86), (36, 103)], width=2)
    p.line([(63, 86), (54, 103)], width=2)
    p.line([(45, 90), (45, 103)], width=2)
    # envelope
    env = "M45,5 C85,5 90,48 70,72 L62,88 L28,88 L20,72 C0,48 5,5 45,5 Z"
    p.path(env, "#e74c3c")
    p.path("M45,6 C26,20 24,60 36,87 L54,87 C66,60 64,20 45,6 Z", "#ffd23f", stroke_width=2)
    p.path("M45,6 C38,22 38,60 42,87 L48,87 C52,60 52,22 45,6 Z", "#4a90e2", stroke_width=2)
    p.path(env, "none")
    p.path("M25,70 Q45,78 65,70", stroke_width=2)
    # basket
    p.rect(33, 102, 24, 16, "#b07a3b", rx=3)
    p.line([(33, 108), (57, 108)], width=1.6)
    p.line([(45, 102), (45, 118)], width=1.6)
    return Art(90, 121, p)


_CLOUD = [(40, 52, 22), (66, 38, 27), (96, 40, 24), (118, 54, 18), (78, 58, 24), (28, 60, 14),
          (52, 62, 18), (104, 62, 16)]


def _cloud_shape(p: Pic, fill, shade, dx=0, dy=0, circles=_CLOUD):
    p.blob([(x + dx, y + dy, r) for x, y, r in circles], fill, shade=(shade, 6))


def _cloud() -> Art:
    p = Pic()
    _cloud_shape(p, WHITE, "#dce9f5")
    return Art(146, 88, p)


def _lightning_cloud() -> Art:
    p = Pic()
    p.poly([(70, 66), (92, 66), (82, 88), (96, 88), (62, 128), (72, 96), (58, 96)], "#ffd23f",
           stroke_width=3)
    _cloud_shape(p, "#a7b3c2", "#8391a3")
    return Art(146, 132, p)


def _rain_cloud() -> Art:
    p = Pic()
    for x, y in ((34, 92), (58, 104), (82, 90), (106, 102), (46, 120), (94, 120), (70, 124)):
        p.path(f"M{x},{y - 9} Q{x - 6},{y} {x},{y + 3} Q{x + 6},{y} {x},{y - 9} Z", "#5aa9e6",
               stroke_width=2)
    _cloud_shape(p, "#c3cdd8", "#9eabbb")
    return Art(146, 132, p)


def _sun() -> Art:
    p = Pic()
    c = 56
    for i in range(12):
        a = i * 30
        ray = Pic()
        long_ = i % 2 == 0
        ray.path(f"M{c - 7},{c - 36} L{c},{c - (53 if long_ else 47)} L{c + 7},{c - 36} Z", "#ffb020",
                 stroke_width=2.6)
        p.group(ray, f"rotate({a} {c} {c})")
    p.circle(c, c, 32, "#ffd23f")
    p.circle(c - 10, c - 11, 7, "#ffe98a", stroke=None)
    return Art(112, 112, p)


def _rocket() -> Art:
    r = Pic()
    cx = 40
    # flame
    r.path(f"M{cx - 11},96 Q{cx},134 {cx + 11},96 Z", "#ff8c1a", stroke_width=2.6)
    r.path(f"M{cx - 6},96 Q{cx},120 {cx + 6},96 Z", "#ffd23f", stroke=None)
    # fins
    r.path(f"M{cx - 14},66 L{cx - 28},92 L{cx - 14},92 Z", "#e74c3c")
    r.path(f"M{cx + 14},66 L{cx + 28},92 L{cx + 14},92 Z", "#e74c3c")
    # body
    r.path(f"M{cx},8 C{cx + 22},28 {cx + 18},70 {cx + 14},98 L{cx - 14},98 C{cx - 18},70 {cx - 22},28 {cx},8 Z",
           "#eef2f5")
    r.path(f"M{cx},8 C{cx + 10},16 {cx + 15},24 {cx + 17},32 L{cx - 17},32 C{cx - 15},24 {cx - 10},16 {cx},8 Z",
           "#e74c3c")
    r.circle(cx, 52, 9, "#4a90e2")
    r.circle(cx - 3, 49, 3, "#bfe6ff", stroke=None)
    r.line([(cx, 74), (cx, 96)], width=2.4)
    p = Pic()
    # points up and to the left (facing left)
    p.group(r, "translate(63 69) rotate(-38) translate(-40 -71)")
    nose = _rot((40, 8), -38, (40, 71))
    return Art(126, 138, p, {"nose": [round(nose[0] + 23, 1), round(nose[1] - 2, 1)]})


def _airplane() -> Art:
    p = Pic()
    # far wing
    p.path("M66,34 L88,10 L98,10 L86,36 Z", "#3a74bb")
    # tail fin
    p.path("M120,34 L134,6 L144,6 L142,38 Z", "#e74c3c")
    # fuselage (nose on the left)
    p.path("M14,44 C14,32 30,28 48,28 L142,30 Q150,34 144,42 L128,52 L40,56 C24,56 14,52 14,44 Z",
           "#f5f7fa")
    p.path("M14,44 C14,40 16,37 20,35 L30,35 Q30,43 22,47 Z", "#bfe6ff", stroke_width=2)
    for x in range(42, 118, 13):
        p.circle(x, 39, 3.6, "#bfe6ff", stroke_width=2)
    p.line([(36, 49), (130, 46)], stroke="#e74c3c", width=3.5)
    # near wing
    p.path("M62,46 L96,46 L76,72 L64,72 Z", "#4a90e2")
    p.path("M122,40 L144,40 L140,48 L124,48 Z", "#4a90e2")
    return Art(152, 78, p, {"nose": [14, 44]})


# --------------------------------------------------------------------------------------------
# Large objects 8..17
# --------------------------------------------------------------------------------------------


def _bee() -> Art:
    """The bumblebee spring rider of the playground."""
    p = Pic()
    # spring and base
    pts = [(58, 74)]
    for i in range(6):
        pts.append((46 if i % 2 == 0 else 70, 80 + i * 5))
    pts.append((58, 110))
    p.line(pts, stroke="#7f8c8d", width=5)
    p.line(pts, stroke="#cfd8dc", width=2)
    p.ellipse(58, 112, 30, 6, "#7f8c8d")
    # wings
    p.ellipse(70, 22, 14, 20, "#d8f0ff", rot=20, opacity=0.95)
    p.ellipse(84, 28, 12, 17, "#d8f0ff", rot=40, opacity=0.95)
    # body
    p.ellipse(62, 58, 40, 24, "#ffd23f")
    for x in (58, 76, 92):
        p.path(f"M{x - 4},{36} Q{x + 6},58 {x - 4},{80} L{x + 5},{79} Q{x + 14},58 {x + 5},{36} Z",
               OUTLINE, stroke=None)
    p.ellipse(62, 58, 40, 24, "none")
    p.path("M100,56 L110,60 L100,64 Z", OUTLINE)
    # head
    p.circle(28, 48, 19, "#ffd23f")
    p.line([(22, 31), (16, 14)], width=2.6)
    p.line([(32, 30), (36, 13)], width=2.6)
    p.circle(16, 13, 3.5, OUTLINE, stroke=None)
    p.circle(36, 12, 3.5, OUTLINE, stroke=None)
    p.circle(21, 45, 3.6, OUTLINE, stroke=None)
    p.path("M14,54 Q21,60 28,55", stroke_width=2.4)
    p.ellipse(32, 54, 4, 2.6, BLUSH, stroke=None)
    # handle
    p.rect(40, 26, 6, 12, "#e74c3c", rx=2)
    p.line([(34, 26), (52, 26)], stroke="#e74c3c", width=5)
    return Art(116, 122, p)


def _slide() -> Art:
    p = Pic()
    # ladder (right)
    p.line([(150, 40), (176, 146)], width=6)
    p.line([(150, 40), (176, 146)], stroke="#4a90e2", width=3)
    p.line([(178, 36), (196, 146)], width=6)
    p.line([(178, 36), (196, 146)], stroke="#4a90e2", width=3)
    for i in range(1, 6):
        t = i / 6
        a = _lerp((150, 40), (176, 146), t)
        b = _lerp((178, 36), (196, 146), t)
        p.line([a, b], width=4)
    # platform and rails
    p.rect(128, 30, 58, 10, "#ffd23f", rx=3)
    p.line([(132, 30), (132, 8), (150, 8)], width=5)
    p.line([(132, 30), (132, 8), (150, 8)], stroke="#4a90e2", width=2)
    # chute (down to the left)
    p.path("M134,34 L22,126 Q14,134 4,134 L4,146 Q22,146 32,138 L140,50 Z", "#e74c3c")
    p.path("M130,40 L24,128", stroke="#ff8a80", stroke_width=3)
    p.path("M128,24 L16,116 Q10,122 4,122 L4,134 Q14,134 22,126 L134,34 Z", "#ffb020")
    return Art(200, 150, p)


def _sandbox() -> Art:
    p = Pic()
    # back frame
    p.path("M30,22 L160,22 L186,50 L4,50 Z", "#c8924f")
    p.path("M36,27 L154,27 L172,46 L18,46 Z", "#f6d58b", stroke_width=2)
    # sand mound
    p.path("M40,48 Q70,20 100,42 Q120,30 150,48 Z", "#f1c86b", stroke=None)
    p.path("M40,48 Q70,20 100,42 Q120,30 150,48", stroke="#d9a94a", stroke_width=2)
    # front plank
    p.rect(4, 48, 182, 26, "#b07a3b", rx=3)
    p.line([(60, 50), (60, 72)], width=2)
    p.line([(130, 50), (130, 72)], width=2)
    p.line([(10, 61), (180, 61)], stroke="#8b5a2b", width=2)
    return Art(190, 78, p)


def _grill() -> Art:
    p = Pic()
    # legs
    p.line([(24, 70), (14, 124)], width=5)
    p.line([(66, 70), (76, 124)], width=5)
    p.line([(45, 72), (45, 118)], width=5)
    p.line([(20, 96), (70, 96)], width=3)
    p.circle(76, 124, 6, "#555")
    # smoke
    p.path("M38,14 q-8,-6 0,-10", stroke="#b0bec5", stroke_width=3)
    p.path("M50,12 q8,-6 0,-10", stroke="#b0bec5", stroke_width=3)
    # bowl and lid
    p.path("M6,62 L84,62 Q84,86 45,88 Q6,86 6,62 Z", "#2f3640")
    p.path("M10,60 Q10,24 45,24 Q80,24 80,60 Z", "#e74c3c")
    p.ellipse(30, 40, 8, 5, "#ff8a80", stroke=None, rot=-30)
    p.rect(4, 58, 82, 6, "#636e72", rx=3)
    p.rect(39, 16, 12, 8, "#2f3640", rx=3)
    return Art(90, 132, p)


def _swing() -> Art:
    p = Pic()
    red = "#e74c3c"

    def bar(a, b, w=8):
        p.line([a, b], width=w + STROKE)
        p.line([a, b], stroke=red, width=w - STROKE)

    bar((26, 14), (6, 166))
    bar((26, 14), (46, 166))
    bar((164, 14), (144, 166))
    bar((164, 14), (184, 166))
    for x in (62, 80, 112, 130):
        p.line([(x, 16), (x, 118)], stroke="#7f8c8d", width=2.4)
    bar((14, 14), (176, 14), 10)
    p.rect(54, 116, 34, 8, "#ffd23f", rx=3)
    p.rect(104, 116, 34, 8, "#4a90e2", rx=3)
    return Art(190, 174, p)


def _tent() -> Art:
    p = Pic()
    p.line([(96, 4), (96, 18)], width=3)
    p.poly([(96, 4), (112, 9), (96, 14)], "#ffd23f", stroke_width=2)
    p.path("M96,16 L186,132 L6,132 Z", "#f39c12")
    p.path("M96,16 L140,132 L52,132 Z", "#e67e22", stroke_width=2.4)
    p.path("M96,44 Q86,100 70,132 L122,132 Q106,100 96,44 Z", "#5d4037")
    p.line([(6, 132), (186, 132)], width=3.5)
    for x in (10, 182):
        p.line([(x, 132), (x + (-6 if x < 96 else 6), 138)], width=2.4)
    return Art(192, 140, p)


def _table() -> Art:
    p = Pic()
    wood, dark = "#c8924f", "#a0713a"
    # legs (A-frames)
    for x in (40, 130):
        p.line([(x, 30), (x - 22, 92)], width=7)
        p.line([(x, 30), (x - 22, 92)], stroke=dark, width=3)
        p.line([(x, 30), (x + 22, 92)], width=7)
        p.line([(x, 30), (x + 22, 92)], stroke=dark, width=3)
    # benches
    p.rect(2, 58, 166, 9, wood, rx=3)
    # top
    p.rect(8, 20, 154, 14, wood, rx=3)
    p.line([(60, 22), (60, 32)], stroke=dark, width=2)
    p.line([(110, 22), (110, 32)], stroke=dark, width=2)
    return Art(170, 96, p)


def _pine_tree() -> Art:
    p = Pic()
    p.rect(58, 200, 24, 48, "#8b5a2b", rx=3)
    layers = [(70, 8, 34, 70), (70, 44, 50, 120), (70, 88, 62, 170), (70, 130, 70, 214)]
    for cx, top, half, bottom in layers:
        p.path(f"M{cx},{top} L{cx + half},{bottom} Q{cx},{bottom + 8} {cx - half},{bottom} Z", "#2e8b57")
        p.path(f"M{cx},{top + 6} L{cx - half + 12},{bottom - 4}", stroke="#3cb371", stroke_width=4)
    return Art(140, 252, p)


_CROWN = [(110, 70, 58), (60, 96, 46), (160, 96, 46), (80, 48, 40), (140, 46, 42),
          (110, 120, 56), (42, 132, 36), (178, 132, 36), (110, 36, 36)]


def _oak_like(apples: bool) -> Art:
    p = Pic()
    trunk = "#8b5a2b"
    p.path("M92,262 Q98,200 96,150 L124,150 Q122,200 130,262 Z", trunk)
    p.path("M100,150 L84,128 M118,150 L136,126", stroke=OUTLINE, stroke_width=9)
    p.path("M100,150 L84,128 M118,150 L136,126", stroke=trunk, stroke_width=4)
    if not apples:
        # the knot hole (on the facing side, left)
        p.ellipse(104, 206, 7, 11, "#3b2314")
    else:
        p.path("M112,180 q6,10 2,22", stroke="#6d4320", stroke_width=2.5)
    p.line([(84, 262), (138, 262)], width=3)
    green = "#4caf50" if not apples else "#5cb85c"
    p.blob(_CROWN, green, shade=("#3b8f3f", 9))
    if apples:
        for x, y in ((70, 84), (112, 60), (150, 94), (96, 118), (132, 140), (60, 134), (170, 128),
                     (84, 40), (140, 42)):
            p.circle(x, y, 8, "#e53935", stroke_width=2.4)
            p.line([(x, y - 8), (x + 2, y - 12)], width=2)
            p.circle(x - 2.5, y - 2.5, 2, "#ff8a80", stroke=None)
    out = Pic()
    out.group(p, "translate(0 6)")
    return Art(220, 272, out)


# --------------------------------------------------------------------------------------------
# Animals 20..25 (facing left)
# --------------------------------------------------------------------------------------------


def _bear() -> Art:
    p = Pic()
    fur, light = "#a0672e", "#e0b98a"
    # legs (sitting)
    p.ellipse(30, 102, 16, 11, fur)
    p.ellipse(74, 104, 16, 11, fur)
    p.ellipse(24, 102, 7, 7, light)
    p.ellipse(68, 104, 7, 7, light)
    # body
    p.ellipse(52, 78, 30, 30, fur)
    p.ellipse(48, 82, 17, 19, light, stroke=None)
    # arms
    p.limb([(28, 66), (16, 84)], fur, 15)
    p.limb([(76, 66), (86, 84)], fur, 15)
    # head
    p.circle(24, 16, 10, fur)
    p.circle(24, 16, 5, light, stroke=None)
    p.circle(72, 16, 10, fur)
    p.circle(72, 16, 5, light, stroke=None)
    p.circle(48, 36, 26, fur)
    p.ellipse(40, 45, 12, 9, light)
    p.ellipse(37, 40, 5, 3.6, OUTLINE, stroke=None)
    p.path("M37,44 L37,49 M31,50 Q37,54 43,50", stroke_width=2.2)
    p.circle(34, 29, 3.4, OUTLINE, stroke=None)
    p.circle(54, 29, 3.4, OUTLINE, stroke=None)
    return Art(100, 118, p, {"hand_front": [16, 84], "head_top": [48, 10]})


def _cat() -> Art:
    p = Pic()
    fur, dark = "#f3a64a", "#d9822b"
    # tail
    p.limb([(66, 74), (84, 64), (86, 42), (78, 34)], fur, 10)
    # body
    p.path("M28,44 Q12,78 20,86 L70,86 Q78,60 56,42 Z", fur)
    p.path("M44,50 Q52,64 50,84", stroke=dark, stroke_width=3)
    p.ellipse(30, 84, 9, 5, fur)
    p.ellipse(50, 84, 9, 5, fur)
    # head
    p.poly([(14, 20), (14, 2), (28, 12)], fur)
    p.poly([(42, 12), (54, 2), (54, 22)], fur)
    p.circle(34, 28, 20, fur)
    p.path("M30,8 L32,16 M38,8 L37,16", stroke=dark, stroke_width=2.5)
    p.ellipse(26, 27, 3, 4.2, OUTLINE, stroke=None)
    p.ellipse(40, 27, 3, 4.2, OUTLINE, stroke=None)
    p.poly([(30, 34), (35, 34), (32.5, 37)], "#f48fb1", stroke_width=1.6)
    p.path("M32.5,37 Q30,41 27,39 M32.5,37 Q35,41 38,39", stroke_width=1.8)
    for dy in (-2, 2):
        p.line([(20, 36 + dy), (8, 34 + dy * 2)], width=1.4)
        p.line([(45, 36 + dy), (58, 34 + dy * 2)], width=1.4)
    return Art(96, 92, p)


def _dog() -> Art:
    p = Pic()
    fur, spot = "#e8c9a0", "#8d5a2b"
    # tail
    p.limb([(86, 46), (98, 30), (100, 20)], fur, 9)
    # back legs
    p.limb([(82, 58), (84, 80)], fur, 11)
    p.limb([(40, 58), (38, 80)], fur, 11)
    # body
    p.ellipse(62, 50, 30, 17, fur)
    p.ellipse(74, 44, 11, 8, spot, stroke=None)
    # front legs
    p.limb([(74, 60), (72, 82)], fur, 11)
    p.limb([(48, 60), (46, 82)], fur, 11)
    # head
    p.ellipse(34, 30, 20, 18, fur)
    p.ellipse(18, 38, 12, 9, fur)
    p.ellipse(10, 34, 5, 4, OUTLINE, stroke=None)
    p.path("M12,44 Q18,48 24,44", stroke_width=2.2)
    p.circle(28, 25, 3.4, OUTLINE, stroke=None)
    p.ellipse(46, 30, 8, 15, spot, rot=15)
    p.path("M18,47 q1,8 6,6 q2,-3 0,-6", "#f06292", stroke_width=1.8)
    return Art(108, 88, p)


def _duck() -> Art:
    p = Pic()
    yellow = "#ffd23f"
    p.path("M30,66 L26,74 L36,74 Z M48,66 L44,74 L54,74 Z", "#ff8c1a", stroke_width=2)
    p.path("M18,44 Q20,68 44,68 Q68,68 66,44 Q64,34 56,38 L36,40 Z", yellow)
    p.path("M38,48 Q50,44 58,54 Q48,60 38,48 Z", "#f5c518", stroke_width=2)
    p.circle(28, 26, 16, yellow)
    p.path("M14,28 Q2,30 4,36 Q12,38 16,34 Z", "#ff8c1a", stroke_width=2.4)
    p.circle(24, 22, 3.2, OUTLINE, stroke=None)
    p.circle(23, 21, 1.1, WHITE, stroke=None)
    p.path("M30,10 q-2,-6 4,-8", stroke_width=2.4)
    return Art(70, 78, p)


def _owl() -> Art:
    p = Pic()
    brown, light = "#8d6e63", "#d7ccc8"
    p.line([(4, 82), (62, 82)], stroke="#8b5a2b", width=6)
    p.path("M10,22 L6,6 L20,14 Z M54,22 L58,6 L44,14 Z", brown)
    p.path("M10,20 Q4,60 16,76 Q32,86 48,76 Q60,60 54,20 Q32,8 10,20 Z", brown)
    p.ellipse(32, 58, 13, 16, light, stroke=None)
    for y in (52, 60, 68):
        p.path(f"M26,{y} q3,3 6,0 q3,3 6,0", stroke=brown, stroke_width=1.6)
    p.path("M8,40 Q2,58 12,70", stroke_width=2.4)
    p.path("M56,40 Q62,58 52,70", stroke_width=2.4)
    for x in (22, 42):
        p.circle(x, 30, 9.5, WHITE)
        p.circle(x - 1, 31, 4.5, OUTLINE, stroke=None)
        p.circle(x - 2.5, 29, 1.5, WHITE, stroke=None)
    p.poly([(28, 38), (36, 38), (32, 46)], "#ffb020", stroke_width=2)
    p.path("M22,82 v-5 M27,82 v-5 M37,82 v-5 M42,82 v-5", stroke="#ffb020", stroke_width=2.4)
    return Art(66, 88, p)


def _snake() -> Art:
    p = Pic()
    green, belly = "#5cb85c", "#c5e1a5"
    body = [(112, 54), (96, 50), (84, 36), (66, 32), (54, 46), (40, 50), (28, 40)]
    p.line(body, stroke=OUTLINE, width=16)
    p.line(body, stroke=green, width=10)
    for x, y in ((96, 50), (70, 33), (48, 49)):
        p.circle(x, y, 2.4, "#2e7d32", stroke=None)
    # head
    p.ellipse(20, 34, 15, 11, green, rot=-10)
    p.circle(16, 30, 3, OUTLINE, stroke=None)
    p.circle(15, 29, 1, WHITE, stroke=None)
    p.path("M6,38 L-2,40 M-2,40 L-6,37 M-2,40 L-6,43", stroke="#e53935", stroke_width=2)
    p.path("M8,39 Q14,42 20,40", stroke_width=1.8)
    pic = Pic()
    pic.group(p, "translate(8 0)")
    return Art(132, 64, pic)


# --------------------------------------------------------------------------------------------
# Clothing 26..35. Hats: the ``wear`` anchor (bottom centre) goes on the kid's ``hat`` anchor.
# Glasses: the ``wear`` anchor (bridge) goes on the kid's ``eyes`` anchor.
# --------------------------------------------------------------------------------------------


def _star_hat() -> Art:
    p = Pic()
    out = Pic()
    p.path("M12,66 L34,6 Q36,2 38,6 L58,66 Z", "#3f6fd8")
    p.poly(_star(35, 40, 10, 4.2), "#ffd23f", stroke_width=2)
    p.circle(24, 22, 2.2, "#ffd23f", stroke=None)
    p.circle(46, 54, 2.2, "#ffd23f", stroke=None)
    p.ellipse(35, 4, 5, 5, "#ffd23f")
    p.rect(4, 62, 62, 9, "#2c4fa8", rx=4.5)
    out.group(p, "translate(0 4)")
    return Art(70, 78, out, {"wear": [35, 74]})


def _crown() -> Art:
    p = Pic()
    gold = "#ffc93c"
    p.path("M6,44 L4,12 L18,26 L26,6 L35,24 L44,6 L52,26 L66,12 L64,44 Z", gold)
    p.rect(5, 36, 60, 9, "#f0a500", rx=2)
    for x, c in ((20, "#e53935"), (35, "#4a90e2"), (50, "#43a047")):
        p.circle(x, 40.5, 3.4, c, stroke_width=1.6)
    for x, y in ((4, 10), (26, 5), (44, 5), (66, 10)):
        p.circle(x, y, 3, WHITE, stroke_width=1.8)
    return Art(70, 50, p, {"wear": [35, 46]})


def _chef_hat() -> Art:
    p = Pic()
    p.blob([(20, 28, 15), (36, 20, 17), (52, 28, 15), (36, 34, 16)], WHITE, shade=("#e4e9ee", 4))
    p.rect(14, 36, 44, 24, WHITE)
    p.blob([(20, 28, 15), (36, 20, 17), (52, 28, 15)], WHITE)
    p.path("M26,40 L26,58 M36,38 L36,58 M46,40 L46,58", stroke="#cfd8dc", stroke_width=2)
    p.rect(10, 54, 52, 11, WHITE, rx=4)
    return Art(72, 68, p, {"wear": [36, 64]})


def _pirate_hat() -> Art:
    p = Pic()
    p.path("M2,42 Q10,22 24,20 Q42,2 60,20 Q74,22 82,42 Q42,30 2,42 Z", "#2f3640")
    p.path("M6,38 Q42,26 78,38", stroke="#ffc93c", stroke_width=3)
    # skull
    p.circle(42, 22, 6.5, WHITE, stroke_width=1.8)
    p.rect(38.5, 26, 7, 4, WHITE, stroke_width=1.6)
    p.circle(39.6, 21.5, 1.7, OUTLINE, stroke=None)
    p.circle(44.4, 21.5, 1.7, OUTLINE, stroke=None)
    p.line([(33, 33), (51, 27)], stroke=WHITE, width=2.4)
    p.line([(33, 27), (51, 33)], stroke=WHITE, width=2.4)
    return Art(84, 46, p, {"wear": [42, 40]})


def _cap() -> Art:
    p = Pic()
    # brim points left (the facing side)
    p.path("M2,36 Q4,28 20,30 L40,32 L40,38 Q20,40 2,36 Z", "#9aa5b1")
    p.path("M14,36 Q14,6 44,6 Q72,6 72,36 Z", "#e53935")
    p.path("M44,6 Q36,18 36,36", stroke="#b71c1c", stroke_width=2)
    p.path("M44,6 Q58,16 60,36", stroke="#b71c1c", stroke_width=2)
    p.circle(44, 6, 3, "#9aa5b1", stroke_width=2)
    p.rect(14, 32, 58, 6, "#9aa5b1", rx=3)
    return Art(76, 42, p, {"wear": [43, 38]})


def _propeller_hat() -> Art:
    p = Pic()
    cols = ("#e53935", "#ff9800", "#ffd23f", "#4caf50", "#4a90e2", "#8e44ad")
    # beanie dome split into rainbow wedges
    cx, cy, r = 36, 52, 32
    n = len(cols)
    for i, c in enumerate(cols):
        a0, a1 = math.pi + i * math.pi / n, math.pi + (i + 1) * math.pi / n
        x0, y0 = cx + r * math.cos(a0), cy + r * math.sin(a0)
        x1, y1 = cx + r * math.cos(a1), cy + r * math.sin(a1)
        p.path(f"M{_n(cx)},{_n(cy)} L{_n(x0)},{_n(y0)} A{r},{r} 0 0 1 {_n(x1)},{_n(y1)} Z", c,
               stroke=None)
    p.path(f"M{cx - r},{cy} A{r},{r} 0 0 1 {cx + r},{cy} Z", "none")
    p.rect(cx - r - 1, cy - 3, 2 * r + 2, 7, "#4a90e2", rx=3)
    # propeller
    p.line([(cx, cy - r), (cx, cy - r - 8)], width=3)
    p.ellipse(cx - 13, cy - r - 9, 13, 4, "#ffd23f", rot=-8)
    p.ellipse(cx + 13, cy - r - 9, 13, 4, "#e53935", rot=-8)
    p.circle(cx, cy - r - 9, 3, "#4a90e2", stroke_width=2)
    return Art(72, 58, p, {"wear": [36, 54]})


def _witch_hat() -> Art:
    p = Pic()
    p.path("M22,58 L40,16 Q46,2 66,8 Q52,12 50,22 L58,58 Z", "#6a3d9a")
    p.rect(22, 48, 36, 9, "#ffb020", stroke_width=2.4)
    p.rect(35, 49, 10, 7, "#6a3d9a", rx=1, stroke_width=2)
    p.ellipse(40, 60, 38, 7, "#55307c")
    p.path("M22,58 L58,58", stroke="#6a3d9a", stroke_width=3)
    return Art(82, 70, p, {"wear": [40, 62]})


def _viking_helmet() -> Art:
    p = Pic()
    horn = "#f3e5c0"
    p.path("M22,36 Q6,34 4,8 Q14,24 26,24 Z", horn)
    p.path("M66,36 Q82,34 84,8 Q74,24 62,24 Z", horn)
    p.path("M14,46 Q14,12 44,12 Q74,12 74,46 Z", "#b0bec5")
    p.path("M44,12 L44,46", stroke="#90a4ae", stroke_width=4)
    p.rect(12, 42, 64, 9, "#ffb020", rx=3)
    for x in (20, 32, 56, 68):
        p.circle(x, 46.5, 1.8, OUTLINE, stroke=None)
    p.ellipse(30, 24, 6, 4, "#eceff1", stroke=None, rot=-30)
    return Art(88, 54, p, {"wear": [44, 51]})


def _glasses(dark: bool) -> Art:
    p = Pic()
    lens = "#37474f" if dark else "#d8f0ff"
    frame = OUTLINE if dark else "#3f51b5"
    # temple arms
    p.line([(5, 10), (1, 8)], stroke=frame, width=3)
    p.line([(53, 10), (57, 8)], stroke=frame, width=3)
    for cx in (17.5, 40.5):
        if dark:
            p.path(f"M{cx - 10},{5} L{cx + 10},{5} Q{cx + 10},{19} {cx},{19} Q{cx - 10},{19} {cx - 10},{5} Z",
                   lens, stroke=frame)
            p.line([(cx - 6, 8), (cx - 2, 8)], stroke="#90a4ae", width=2)
        else:
            p.circle(cx, 11, 8.5, lens, stroke=frame, stroke_width=3, opacity=0.9)
            p.path(f"M{cx - 4},{7} q2,-2 5,-1", stroke=WHITE, stroke_width=1.6)
    p.path("M26,10 Q29,6 32,10", stroke=frame, stroke_width=3)
    return Art(58, 22, p, {"wear": [29, 11]})


# --------------------------------------------------------------------------------------------
# Food 36..42
# --------------------------------------------------------------------------------------------


def _pie() -> Art:
    p = Pic()
    p.path("M4,24 L60,24 L54,40 L10,40 Z", "#b0bec5")
    p.path("M2,24 Q4,8 32,6 Q60,8 62,24 Q32,30 2,24 Z", "#e8b04a")
    p.path("M2,24 Q32,30 62,24", "none", stroke_width=4)
    for x in (18, 32, 46):
        p.path(f"M{x - 3},{13} q3,-3 6,0", stroke="#b5651d", stroke_width=2)
    p.circle(24, 20, 2.2, "#c62828", stroke=None)
    p.circle(40, 19, 2.2, "#c62828", stroke=None)
    return Art(64, 44, p)


def _pizza() -> Art:
    p = Pic()
    p.path("M8,14 L56,6 L36,58 Z", "#ffd54f")
    p.path("M8,14 Q32,2 56,6 L56,13 Q32,9 10,20 Z", "#d68a3a")
    for x, y in ((24, 22), (40, 20), (34, 36)):
        p.circle(x, y, 4.6, "#d84315", stroke_width=2)
    p.circle(46, 28, 1.8, "#43a047", stroke=None)
    p.circle(20, 28, 1.8, "#43a047", stroke=None)
    return Art(62, 62, p, {"hold": [34, 52]})


def _hot_dog() -> Art:
    p = Pic()
    bun = "#e8b04a"
    p.path("M6,18 Q6,34 38,34 Q70,34 70,18 Z", bun)
    p.rect(2, 12, 72, 12, "#c0504d", rx=6)
    p.path("M12,16 q5,-4 10,0 q5,4 10,0 q5,-4 10,0 q5,4 10,0 q5,-4 10,0", stroke="#ffd23f",
           stroke_width=2.6)
    p.path("M8,22 Q10,28 38,28 Q66,28 68,22", stroke="#d39434", stroke_width=2)
    return Art(76, 38, p, {"hold": [38, 28]})


def _bottle(colour, cap) -> Art:
    p = Pic()
    p.path("M12,4 L16,4 L18,14 L10,14 Z", cap)
    p.path("M8,14 L20,14 L20,20 L8,20 Z", cap)
    p.path("M6,20 L22,20 Q26,24 26,32 L26,60 Q26,64 22,64 L6,64 Q2,64 2,60 L2,32 Q2,24 6,20 Z",
           colour)
    p.rect(5, 34, 18, 18, WHITE, rx=3, stroke_width=2)
    return Art(28, 68, p, {"hold": [14, 44]})


def _ketchup() -> Art:
    a = _bottle("#e53935", WHITE)
    a.pic.circle(14, 43, 5, "#e53935", stroke_width=1.6)
    a.pic.path("M13,38 l2,-3", stroke="#43a047", stroke_width=2)
    return a


def _mustard() -> Art:
    a = _bottle("#ffd23f", "#e53935")
    a.pic.path("M8,43 q3,-4 6,0 q3,4 6,0", stroke="#f0a500", stroke_width=2.6)
    return a


def _hamburger() -> Art:
    p = Pic()
    p.path("M6,24 Q6,4 32,4 Q58,4 58,24 Z", "#e8a33d")
    for x, y in ((20, 12), (30, 9), (42, 13), (34, 17)):
        p.ellipse(x, y, 2, 1.2, "#fff3c4", stroke=None)
    p.path("M4,26 q6,5 12,0 q6,5 12,0 q6,5 12,0 q6,5 12,0 q6,5 10,0 L58,24 L6,24 Z", "#66bb6a",
           stroke_width=2.4)
    p.path("M6,30 L58,30 L54,36 L10,36 Z", "#ffd23f", stroke_width=2.4)
    p.rect(4, 30, 56, 9, "#6d3b1f", rx=4.5)
    p.path("M6,40 L58,40 Q58,50 48,50 L16,50 Q6,50 6,40 Z", "#e8a33d")
    return Art(64, 54, p)


def _drink() -> Art:
    p = Pic()
    p.line([(22, 12), (28, 2), (34, 2)], width=6)
    p.line([(22, 12), (28, 2), (34, 2)], stroke="#e53935", width=2.4)
    p.path("M4,12 L34,12 L34,17 L4,17 Z", WHITE)
    p.path("M6,17 L32,17 L28,62 L10,62 Z", "#4a90e2")
    p.path("M8,30 L30,30 L29,44 L9,44 Z", WHITE, stroke_width=2)
    p.circle(19, 37, 4, "#e53935", stroke=None)
    return Art(38, 66, p, {"hold": [19, 46]})


# --------------------------------------------------------------------------------------------
# Toys 43..57
# --------------------------------------------------------------------------------------------


def _baseball() -> Art:
    p = Pic()
    p.circle(14, 14, 11.5, WHITE)
    p.path("M7,5 Q12,14 7,23", stroke="#e53935", stroke_width=1.8)
    p.path("M21,5 Q16,14 21,23", stroke="#e53935", stroke_width=1.8)
    return Art(28, 28, p)


def _pail() -> Art:
    p = Pic()
    p.path("M8,22 Q26,-6 44,22", stroke_width=5.5)
    p.path("M8,22 Q26,-6 44,22", stroke="#90a4ae", stroke_width=2.5)
    p.path("M4,20 L48,20 L42,58 L10,58 Z", "#f06292")
    p.ellipse(26, 20, 22, 5, "#f8bbd0")
    p.line([(7, 36), (45, 36)], stroke="#ffd23f", width=4)
    p.circle(26, 47, 4, WHITE, stroke=None)
    return Art(52, 62, p, {"hold": [26, 8]})


def _beach_ball() -> Art:
    p = Pic()
    c, r = 25, 22
    cols = ("#e53935", WHITE, "#4a90e2", WHITE, "#ffd23f", WHITE)
    for i, col in enumerate(cols):
        a0, a1 = math.radians(i * 60 - 90), math.radians((i + 1) * 60 - 90)
        p.path(f"M{c},{c} L{_n(c + r * math.cos(a0))},{_n(c + r * math.sin(a0))} "
               f"A{r},{r} 0 0 1 {_n(c + r * math.cos(a1))},{_n(c + r * math.sin(a1))} Z", col,
               stroke=None)
    p.circle(c, c, r, "none")
    p.circle(c, c, 5, WHITE, stroke_width=2)
    return Art(50, 50, p)


def _basketball() -> Art:
    p = Pic()
    p.circle(24, 24, 21, "#f57c00")
    p.line([(3, 24), (45, 24)], width=2.4)
    p.line([(24, 3), (24, 45)], width=2.4)
    p.path("M9,9 Q18,24 9,39", stroke_width=2.4)
    p.path("M39,9 Q30,24 39,39", stroke_width=2.4)
    return Art(48, 48, p)


def _soccer_ball() -> Art:
    p = Pic()
    c, R = 24, 21

    def polar(r, deg):
        a = math.radians(deg)
        return (c + r * math.cos(a), c + r * math.sin(a))

    p.circle(c, c, R, WHITE)
    p.poly([polar(7.5, -90 + 72 * k) for k in range(5)], OUTLINE, stroke=None)
    for k in range(5):
        a = -90 + 72 * k
        m = a + 36  # a rim patch between two spokes
        p.path(f"M{_n(polar(R, m - 16)[0])},{_n(polar(R, m - 16)[1])} "
               f"A{R},{R} 0 0 1 {_n(polar(R, m + 16)[0])},{_n(polar(R, m + 16)[1])} "
               f"L{_n(polar(15, m + 15)[0])},{_n(polar(15, m + 15)[1])} "
               f"L{_n(polar(12.5, m)[0])},{_n(polar(12.5, m)[1])} "
               f"L{_n(polar(15, m - 15)[0])},{_n(polar(15, m - 15)[1])} Z", OUTLINE, stroke=None)
        p.line([polar(7, a), polar(13, a), polar(15, a + 21)], width=1.6)
        p.line([polar(13, a), polar(15, a - 21)], width=1.6)
    p.circle(c, c, R, "none")
    return Art(48, 48, p)


def _tennis_ball() -> Art:
    p = Pic()
    p.circle(12, 12, 10, "#d4e157")
    p.path("M4,6 Q12,12 4,18", stroke=WHITE, stroke_width=2)
    p.path("M20,6 Q12,12 20,18", stroke=WHITE, stroke_width=2)
    return Art(24, 24, p)


def _football() -> Art:
    p = Pic()
    p.path("M3,18 C10,1 46,1 53,18 C46,35 10,35 3,18 Z", "#8d4e24")
    p.path("M10,10 Q8,18 10,26 M46,10 Q48,18 46,26", stroke=WHITE, stroke_width=2)
    p.line([(18, 18), (38, 18)], stroke=WHITE, width=2.2)
    for x in (21, 25, 29, 33):
        p.line([(x, 15), (x, 21)], stroke=WHITE, width=2)
    return Art(56, 36, p)


def _frisbee() -> Art:
    p = Pic()
    p.ellipse(28, 13, 25, 9, "#8e44ad")
    p.ellipse(28, 11, 15, 4.5, "#b07cc6", stroke_width=2)
    return Art(56, 24, p)


def _bat() -> Art:
    p = Pic()
    bat = Pic()
    bat.path("M4,10 Q4,6 10,6 L40,8 Q70,4 84,6 Q90,10 84,14 Q70,16 40,12 L10,14 Q4,14 4,10 Z",
             "#d9a35a")
    bat.rect(8, 5, 4, 10, "#5d4037", stroke_width=1.6)
    bat.line([(16, 10), (36, 10)], stroke="#5d4037", width=3)
    p.group(bat, "translate(2 30) rotate(-24 44 10)")
    return Art(90, 58, p, {"hold": [12, 50]})


def _balloons() -> Art:
    p = Pic()
    base = (34, 126)
    for (x, y), c in (((16, 34), "#e53935"), ((50, 30), "#4a90e2"), ((34, 14), "#ffd23f")):
        p.path(f"M{x},{y + 20} Q{(x + base[0]) / 2 + 6},{(y + base[1]) / 2} {base[0]},{base[1]}",
               stroke_width=1.6)
    for (x, y), c in (((34, 14), "#ffd23f"), ((16, 34), "#e53935"), ((50, 30), "#4a90e2")):
        p.ellipse(x, y, 13, 16, c)
        p.poly([(x, y + 16), (x - 3, y + 21), (x + 3, y + 21)], c, stroke_width=2)
        p.ellipse(x - 5, y - 6, 3, 5, WHITE, stroke=None, opacity=0.7, rot=20)
    return Art(66, 130, p, {"hold": [34, 126]})


def _glove() -> Art:
    p = Pic()
    p.path("M10,46 Q2,26 8,14 Q12,8 16,14 L18,24 L18,8 Q22,2 26,8 L28,22 L30,6 Q34,0 38,6 L38,22 "
           "L42,10 Q46,6 49,12 L46,34 Q44,50 28,52 Q16,52 10,46 Z", "#a0522d")
    p.path("M8,30 Q2,32 4,22", stroke_width=2)
    p.path("M16,44 Q28,36 40,40", stroke="#6d3b1f", stroke_width=2.4)
    p.ellipse(28, 36, 9, 7, "#c8763e", stroke=None)
    return Art(52, 56, p, {"hold": [28, 50]})


def _shovel() -> Art:
    p = Pic()
    p.rect(12, 4, 8, 48, "#ffd23f", rx=3)
    p.rect(7, 2, 18, 7, "#ffd23f", rx=3)
    p.path("M4,50 L28,50 L28,70 Q16,88 4,70 Z", "#e53935")
    p.line([(16, 56), (16, 72)], stroke="#ff8a80", width=2)
    return Art(32, 86, p, {"hold": [16, 6]})


def _racket() -> Art:
    p = Pic()
    p.rect(16, 60, 8, 28, "#455a64", rx=3)
    p.line([(20, 58), (12, 50)], width=3.5)
    p.line([(20, 58), (28, 50)], width=3.5)
    p.ellipse(20, 30, 17, 25, "#e8f5e9", stroke="#2e7d32", stroke_width=5)
    for x in range(8, 33, 6):
        p.line([(x, 8), (x, 52)], stroke="#9e9e9e", width=1)
    for y in range(12, 50, 6):
        p.line([(4, y), (36, y)], stroke="#9e9e9e", width=1)
    p.ellipse(20, 30, 17, 25, "none", stroke="#2e7d32", stroke_width=5)
    p.ellipse(20, 30, 19.5, 27.5, "none", stroke_width=1.5)
    return Art(40, 92, p, {"hold": [20, 82]})


def _kite() -> Art:
    p = Pic()
    # tail with bows
    tail = [(40, 70), (30, 86), (42, 100), (32, 116), (42, 134)]
    p.path("M40,70 Q24,86 40,100 Q54,116 36,136", stroke_width=1.8)
    for (x, y), c in zip(tail[1:], ("#e53935", "#ffd23f", "#4a90e2", "#43a047")):
        p.poly([(x, y), (x - 7, y - 5), (x - 7, y + 5)], c, stroke_width=1.8)
        p.poly([(x, y), (x + 7, y - 5), (x + 7, y + 5)], c, stroke_width=1.8)
    # string to the ground-ish corner
    p.path("M40,44 Q56,90 76,138", stroke_width=1.2, stroke_dasharray="3 3")
    p.poly([(40, 4), (70, 32), (40, 70), (10, 32)], "#e53935")
    p.poly([(40, 4), (70, 32), (40, 32)], "#ffd23f", stroke_width=2)
    p.poly([(40, 32), (10, 32), (40, 70)], "#ffd23f", stroke_width=2)
    p.poly([(40, 4), (70, 32), (40, 70), (10, 32)], "none")
    p.line([(40, 4), (40, 70)], width=2)
    p.line([(10, 32), (70, 32)], width=2)
    return Art(80, 142, p, {"hold": [76, 138]})


def _campfire() -> Art:
    p = Pic()
    p.path("M40,6 Q54,26 60,40 Q66,58 40,64 Q14,58 20,40 Q26,30 30,22 Q34,34 38,34 Q34,20 40,6 Z",
           "#ff8c1a")
    p.path("M40,26 Q50,42 50,52 Q48,62 40,62 Q30,62 30,52 Q30,42 40,26 Z", "#ffd23f", stroke_width=2)
    for a, b, c in (((6, 70), (72, 56), "#8b5a2b"), ((8, 56), (74, 70), "#a0672e")):
        p.line([a, b], width=12 + STROKE)
        p.line([a, b], stroke=c, width=12 - STROKE)
    for x in (6, 74):
        p.circle(x, 70, 6, "#d7a86e", stroke_width=2.4)
    for x, y in ((16, 74), (36, 76), (56, 75), (70, 76)):
        p.ellipse(x, y, 6, 4, "#9e9e9e", stroke_width=2)
    return Art(80, 82, p)


# --------------------------------------------------------------------------------------------
# Registry
# --------------------------------------------------------------------------------------------

_MAKERS = {
    0: _helicopter, 1: _hot_air_balloon, 2: _cloud, 3: _sun, 4: _lightning_cloud, 5: _rain_cloud,
    6: _rocket, 7: _airplane,
    8: _bee, 9: _slide, 10: _sandbox, 11: _grill, 12: _swing, 13: _tent, 14: _table,
    15: _pine_tree, 16: lambda: _oak_like(False), 17: lambda: _oak_like(True),
    20: _bear, 21: _cat, 22: _dog, 23: _duck, 24: _owl, 25: _snake,
    26: _star_hat, 27: _crown, 28: _chef_hat, 29: _pirate_hat, 30: _cap, 31: _propeller_hat,
    32: _witch_hat, 33: _viking_helmet, 34: lambda: _glasses(False), 35: lambda: _glasses(True),
    36: _pie, 37: _pizza, 38: _hot_dog, 39: _ketchup, 40: _mustard, 41: _hamburger, 42: _drink,
    43: _baseball, 44: _pail, 45: _beach_ball, 46: _basketball, 47: _soccer_ball,
    48: _tennis_ball, 49: _football, 50: _frisbee, 51: _bat, 52: _balloons, 53: _glove,
    54: _shovel, 55: _racket, 56: _kite, 57: _campfire,
}


def _check(idx: int, subtype: int) -> None:
    if not (isinstance(idx, int) and 0 <= idx < NUM_IDX):
        raise ValueError(f"idx {idx!r} out of range 0..57")
    if not (isinstance(subtype, int) and 0 <= subtype < num_subtypes(idx)):
        raise ValueError(f"subtype {subtype!r} out of range for idx {idx}")


def _mirror(a: Art) -> Art:
    """The piece mirrored left-right (drawings are authored facing left, the library faces right)."""
    pic = Pic()
    pic.group(a.pic, f"matrix(-1 0 0 1 {_n(a.w)} 0)")
    anchors = {k: [round(a.w - v[0], 1), v[1]] for k, v in a.anchors.items()}
    extra = dict(a.extra)
    if "head_tilt" in extra:
        extra["head_tilt"] = -extra["head_tilt"]
    return Art(a.w, a.h, pic, anchors, extra)


@lru_cache(maxsize=None)
def _art(idx: int, subtype: int) -> Art:
    _check(idx, subtype)
    drawn = _kid(idx, subtype) if idx in (MIKE, JENNY) else _MAKERS[idx]()
    return _mirror(drawn) if FACES == "right" else drawn


def title_for(idx: int, subtype: int = 0) -> str:
    if idx in (MIKE, JENNY):
        return f"{NAMES[idx]}, {POSES[subtype // 5]}, {EXPRESSIONS[subtype % 5]}"
    return NAMES[idx]


@lru_cache(maxsize=None)
def svg_for(idx: int, subtype: int = 0) -> str:
    """Standalone SVG for piece ``idx`` (0..57), ``subtype`` 0..34 for Mike/Jenny, else 0."""
    a = _art(idx, subtype)
    return _document(a.w, a.h, "".join(a.pic.parts), title_for(idx, subtype))


def art_info(idx: int, subtype: int = 0) -> dict:
    a = _art(idx, subtype)
    info = {
        "idx": idx,
        "subtype": subtype,
        "name": NAMES[idx],
        "group": GROUPS[idx],
        "prefix": TYPE_PREFIX[type_of(idx)],
        "file": file_name(idx, subtype),
        "width": a.w,
        "height": a.h,
        "anchors": {k: list(v) for k, v in a.anchors.items()},
        **a.extra,
    }
    if idx in (MIKE, JENNY):
        info["pose"] = POSES[subtype // 5]
        info["expression"] = EXPRESSIONS[subtype % 5]
    return info


def all_pieces():
    """(idx, subtype) for every piece of the library, in idx order."""
    for idx in range(NUM_IDX):
        for sub in range(num_subtypes(idx)):
            yield idx, sub


def manifest() -> dict:
    return {
        "version": 1,
        "faces": FACES,
        "depth_scale": list(DEPTH_SCALE),
        "head_radius": HEAD_RADIUS,
        "poses": list(POSES),
        "expressions": list(EXPRESSIONS),
        "canvas": [500, 400],
        "background": "background.svg",
        "pieces": [art_info(i, s) for i, s in all_pieces()],
    }


def background_svg() -> str:
    p = Pic()
    p.rect(0, 0, 500, 400, "#bfe6ff", stroke=None)
    p.rect(0, 0, 500, 90, "#a8dcff", stroke=None)
    p.path("M0,196 Q120,180 250,192 Q380,204 500,188 L500,400 L0,400 Z", "#8fd16a", stroke=None)
    p.path("M0,196 Q120,180 250,192 Q380,204 500,188", stroke="#6fb24c", stroke_width=3)
    p.path("M0,290 Q150,270 300,290 Q420,306 500,288 L500,400 L0,400 Z", "#82c75d", stroke=None)
    for x, y in ((40, 240), (130, 320), (220, 230), (330, 340), (420, 250), (470, 360), (80, 370)):
        p.path(f"M{x},{y} l3,-8 l3,8 l3,-8 l3,8", stroke="#5e9e3e", stroke_width=2)
    return _document(500, 400, "".join(p.parts), "park background")


# --------------------------------------------------------------------------------------------
# Review sheets and command line
# --------------------------------------------------------------------------------------------


def _inner(svg: str) -> str:
    """The children of a standalone SVG (for nesting into a sheet)."""
    start = svg.index(">", svg.index("<svg")) + 1
    return svg[start:svg.rindex("</svg>")]


def _nest(svg_doc: str, x: float, y: float, scale: float, flip: bool = False) -> str:
    w = float(svg_doc.split('width="')[1].split('"')[0])
    tr = f"translate({_n(x)} {_n(y)}) scale({scale})"
    if flip:
        tr = f"translate({_n(x + w * scale)} {_n(y)}) scale({-scale} {scale})"
    return f'<g transform="{tr}">{_inner(svg_doc)}</g>'


def _label(x, y, text, size=11, anchor="middle") -> str:
    return (f'<text x="{_n(x)}" y="{_n(y)}" font-family="DejaVu Sans, Arial, sans-serif" '
            f'font-size="{size}" text-anchor="{anchor}" fill="#333">{text}</text>')


def _sheet(w, h, body) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{_n(w)}" height="{_n(h)}" '
            f'viewBox="0 0 {_n(w)} {_n(h)}"><rect width="100%" height="100%" fill="#f4f6f8"/>'
            f"{body}</svg>")


def _depth_sheet(indices, depths=(0, 1, 2), subtype_for=None, width=1600) -> str:
    """Pieces at true size for each depth in the list, on a grass-coloured band per depth."""
    parts = []
    y = 10
    for d in depths:
        s = DEPTH_SCALE[d]
        x = 10
        row_h = 0
        row = []
        for i in indices:
            sub = subtype_for(i) if subtype_for else 0
            a = art_info(i, sub)
            w, h = a["width"] * s, a["height"] * s
            if x + w > width - 10:
                parts.append(("row", y, row, row_h))
                y += row_h + 26
                x, row_h, row = 10, 0, []
            row.append((i, sub, x, w, h, s))
            x += w + 12
            row_h = max(row_h, h)
        parts.append(("row", y, row, row_h))
        y += row_h + 40
    out = []
    for _, ry, row, rh in parts:
        out.append(f'<rect x="0" y="{_n(ry - 6)}" width="{width}" height="{_n(rh + 24)}" fill="#bfe6ff"/>')
        out.append(f'<rect x="0" y="{_n(ry + rh * 0.55)}" width="{width}" height="{_n(rh * 0.45 + 18)}" fill="#8fd16a"/>')
        for i, sub, x, w, h, s in row:
            out.append(_nest(svg_for(i, sub), x, ry + rh - h, s))
            out.append(_label(x + w / 2, ry + rh + 14, str(i), size=10))
    return _sheet(width, y, "".join(out))


def sheet_kids(kid: int, depth: int = 0) -> str:
    """7 poses (rows) x 5 expressions (columns) for one kid at one depth's true size."""
    s = DEPTH_SCALE[depth]
    infos = [art_info(kid, sub) for sub in range(35)]
    cw = max(a["width"] for a in infos) * s + 16
    ch = max(a["height"] for a in infos) * s + 22
    lw = 100
    parts = []
    for e, name in enumerate(EXPRESSIONS):
        parts.append(_label(lw + e * cw + cw / 2, 16, name))
    for p_, pose in enumerate(POSES):
        parts.append(_label(6, 30 + p_ * ch + ch / 2, pose, anchor="start"))
        for e in range(5):
            sub = p_ * 5 + e
            a = infos[sub]
            x = lw + e * cw + (cw - a["width"] * s) / 2
            y = 24 + p_ * ch + (ch - a["height"] * s) - 8
            parts.append(f'<rect x="{_n(lw + e * cw + 2)}" y="{_n(24 + p_ * ch + 2)}" '
                         f'width="{_n(cw - 4)}" height="{_n(ch - 4)}" fill="#dff0ff" rx="6"/>')
            parts.append(_nest(svg_for(kid, sub), x, y, s))
    return _sheet(lw + 5 * cw + 10, 30 + 7 * ch, "".join(parts))


def sheet_wearables() -> str:
    """Each kid pose with a hat and glasses placed through the anchors (placement check)."""
    hats = [26, 27, 28, 29, 30, 31, 32, 33]
    parts = []
    cw, ch = 200, 230
    for row, kid in enumerate((MIKE, JENNY)):
        for p_ in range(7):
            sub = p_ * 5 + 2
            kinfo = art_info(kid, sub)
            x0 = 10 + p_ * cw
            y0 = 40 + row * ch
            kx = x0 + (cw - kinfo["width"]) / 2
            ky = y0 + ch - kinfo["height"] - 10
            parts.append(_nest(svg_for(kid, sub), kx, ky, 1.0))
            hat = hats[(p_ + row * 3) % len(hats)]
            hinfo = art_info(hat)
            ax, ay = kinfo["anchors"]["hat"]
            wx, wy = hinfo["anchors"]["wear"]
            tilt = kinfo["head_tilt"]
            gx, gy = kinfo["anchors"]["eyes"]
            ginfo = art_info(34 + (p_ % 2))
            bx, by = ginfo["anchors"]["wear"]
            parts.append(f'<g transform="translate({_n(kx + gx)} {_n(ky + gy)}) rotate({_n(tilt)}) '
                         f'translate({_n(-bx)} {_n(-by)})">{_inner(svg_for(34 + (p_ % 2)))}</g>')
            parts.append(f'<g transform="translate({_n(kx + ax)} {_n(ky + ay)}) rotate({_n(tilt)}) '
                         f'translate({_n(-wx)} {_n(-wy)})">{_inner(svg_for(hat))}</g>')
            for key in ("hand_front", "hand_back"):
                hx, hy = kinfo["anchors"][key]
                parts.append(f'<circle cx="{_n(kx + hx)}" cy="{_n(ky + hy)}" r="3" fill="#ff00ff"/>')
    return _sheet(10 + 7 * cw, 50 + 2 * ch, "".join(parts))


def sheet_scene() -> str:
    """A sample park scene in the CoDraw draw order (sun, sky, then by (-depth, idx))."""
    pieces = [  # idx, subtype, depth, flip, x, y
        (3, 0, 1, 0, 430, 60), (2, 0, 0, 0, 120, 60), (5, 0, 2, 1, 300, 50), (0, 0, 2, 0, 220, 40),
        (16, 0, 1, 0, 80, 170), (15, 0, 2, 0, 380, 170), (9, 0, 2, 1, 300, 205),
        (18, 11, 0, 0, 170, 290), (19, 31, 0, 1, 350, 285), (47, 0, 0, 0, 225, 340),
        (31, 0, 0, 0, 0, 0), (22, 0, 1, 0, 440, 320), (45, 0, 1, 0, 40, 320), (56, 0, 1, 0, 260, 100),
    ]
    bg = _inner(background_svg())
    # the propeller hat (31) goes on Jenny's head through the anchors, not at its own x, y
    order = sorted([p for p in pieces if p[0] != 31],
                   key=lambda c: (c[0] != 3, c[0] >= 8, -c[2], c[0]))
    parts = [f"<g>{bg}</g>"]
    for idx, sub, depth, flip, x, y in order:
        a = art_info(idx, sub)
        s = DEPTH_SCALE[depth]
        w, h = a["width"] * s, a["height"] * s
        left, top = x - w / 2, y - h / 2
        parts.append(_nest(svg_for(idx, sub), left, top, s, flip=bool(flip)))
        if idx == JENNY:
            ax, ay = a["anchors"]["hat"]
            if flip:
                ax = a["width"] - ax
            hat = art_info(31)
            wx, wy = hat["anchors"]["wear"]
            parts.append(f'<g transform="translate({_n(left + ax * s)} {_n(top + ay * s)}) scale({s}) '
                         f'translate({_n(-wx)} {_n(-wy)})">{_inner(svg_for(31))}</g>')
    return _sheet(500, 400, "".join(parts))


def write_library(out: Path) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    for idx, sub in all_pieces():
        (out / file_name(idx, sub)).write_text(svg_for(idx, sub), encoding="utf-8")
    (out / "background.svg").write_text(background_svg(), encoding="utf-8")
    man = manifest()
    (out / "manifest.json").write_text(json.dumps(man, indent=1) + "\n", encoding="utf-8")
    return man


def write_review(review: Path) -> list[Path]:
    review.mkdir(parents=True, exist_ok=True)
    sheets = {
        "library_depths": _depth_sheet([i for i in range(NUM_IDX)],
                                       subtype_for=lambda i: 7 if i in (MIKE, JENNY) else 0),
        "mike_depth0": sheet_kids(MIKE, 0),
        "jenny_depth0": sheet_kids(JENNY, 0),
        "mike_depth2": sheet_kids(MIKE, 2),
        "jenny_depth2": sheet_kids(JENNY, 2),
        "wearables": sheet_wearables(),
        "scene": sheet_scene(),
    }
    written = []
    try:
        import cairosvg  # optional, only for the PNG review sheets
    except ImportError:  # pragma: no cover - depends on the environment
        cairosvg = None
    for name, svg in sheets.items():
        path = review / f"{name}.svg"
        path.write_text(svg, encoding="utf-8")
        written.append(path)
        if cairosvg is not None:
            png = review / f"{name}.png"
            cairosvg.svg2png(bytestring=svg.encode("utf-8"), write_to=str(png), scale=1.0)
            written.append(png)
    return written


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Write the CoDraw clip-art SVGs and manifest.")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "static" / "codraw" / "art")
    ap.add_argument("--review", type=Path, default=None,
                    help="also write contact sheets (SVG; PNG if cairosvg is installed) here")
    args = ap.parse_args(argv)
    man = write_library(args.out)
    print(f"wrote {len(man['pieces'])} pieces + background.svg + manifest.json to {args.out}")
    if args.review:
        for p in write_review(args.review):
            print(f"review: {p}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
