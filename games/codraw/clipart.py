"""The CoDraw clip-art library: Abstract Scenes v1.1, 58 clip-art types in 8 groups.

Constants follow the authors' released code (facebookresearch/CoDraw ``js/Abs.js``,
``js/Abs_util.js``; facebookresearch/codraw-models ``abs_util_orig.py``, ``codraw_data.py``,
``abs_render.py``):

* groups, in order, with png prefixes ``s p hb0 hb1 a c e t`` and sizes ``8 10 35 35 6 10 7 15``
  (sky, large objects, Mike, Jenny, animals, clothing, food, toys);
* the global index ``idx = GROUP_OFFSETS[type] + (0 for Mike/Jenny, else the object number)``,
  so Mike is 18 and Jenny 19 and idx runs 0..57;
* Mike and Jenny have 35 subtypes, ``expression = subtype % 5`` and ``pose = subtype // 5``;
* png files are ``<prefix>_<object number>s.png`` (Mike/Jenny: the object number is the subtype);
* depth 0/1/2 draws at scale 1.0/0.7/0.49; draw order: the sun (idx 3) at the very back, then
  the other sky pieces, then everything else by ``(-depth, idx)``.

Names: the authors' code names no object. The canonical names and synonyms below follow what the
CoDraw Tellers call the pieces in the paper's examples (``large oak tree, hole facing right``,
``small hot air balloon``, ``pirate hat``, ``soccer ball``, ``beach ball``, ``rainbow hat`` ...)
and the object list used by later CoDraw work (briemadu/codraw-icr-v1). Pose and expression names
are the same source's (``angry, wide smile, smile, sad, scared`` x ``arms out, arms up, kicking,
running, legs crossed, sitting, waving``).

Sizes: the Abstract Scenes pngs are not shipped; ``base_w``/``base_h`` are the pixel sizes at
depth 0 of this project's SVG art (games/codraw/art.py, subtype 0; a test keeps them equal), and
:func:`geometry`/:func:`anchor_point`/:func:`centre_for` read the art's anchors (a person's head,
eyes, hands and feet; where a hat is worn or a toy held) so that layout puts hats on heads and
toys in hands. Nothing in scoring depends on sizes. ``HORIZON_Y`` is the background's grass line.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from games.codraw import art

# ------------------------------------------------------------------------------------- constants
CANVAS_W = 500
CANVAS_H = 400
NOT_USED = -10000          # x = y = NOT_USED: a palette piece that is not on the canvas
HORIZON_Y = 192            # y of the grass line of the park background (art.background_svg)

N_CLIPARTS = 58
GROUP_PREFIXES = ("s", "p", "hb0", "hb1", "a", "c", "e", "t")
GROUP_NAMES = ("sky", "large", "mike", "jenny", "animal", "clothing", "food", "toy")
GROUP_SIZES = (8, 10, 35, 35, 6, 10, 7, 15)          # png files per group ("typeTotalCt")
GROUP_OFFSETS = (0, 8, 18, 19, 20, 26, 36, 43)       # first idx of each group ("typeTotalPos")
PALETTE_SLOTS = (3, 4, 5, 5, 2, 3, 2, 4)             # the original interface's palette ("typeCt")

MIKE = 18
JENNY = 19
HUMAN_IDXS = (MIKE, JENNY)
SUN = 3

N_DEPTHS = 3
DEPTH_SCALES = (1.0, 0.7, 0.49)
DEPTH_NAMES = ("large", "medium", "small")
N_FLIPS = 2

N_EXPRESSIONS = 5
N_POSES = 7
N_SUBTYPES = N_EXPRESSIONS * N_POSES                  # 35
EXPRESSIONS = ("angry", "wide smile", "smile", "sad", "scared")
POSES = ("arms out", "arms up", "kicking", "running", "legs crossed", "sitting", "waving")
EXPRESSION_SYNONYMS = {
    "angry": ("mad", "grumpy", "frowning", "cross"),
    "wide smile": ("laughing", "big smile", "grinning", "teeth", "very happy", "excited"),
    "smile": ("smiling", "happy", "content"),
    "sad": ("upset", "unhappy", "crying", "worried"),
    "scared": ("surprised", "shocked", "afraid", "frightened", "scared face"),
}
POSE_SYNONYMS = {
    "arms out": ("standing", "arms to the side", "arms right", "holding out"),
    "arms up": ("hands up", "cheering", "arms raised", "both arms up"),
    "kicking": ("kick", "leg up", "one leg up"),
    "running": ("run", "jogging"),
    "legs crossed": ("cross legged", "crossed legs", "criss cross"),
    "sitting": ("sit", "seated", "legs out", "sitting down"),
    "waving": ("wave", "one arm up", "hand up"),
}


@dataclass(frozen=True)
class ClipArt:
    """One clip-art type (Mike and Jenny are one type each, with 35 subtypes)."""

    idx: int                    # global index 0..57
    type_idx: int               # group 0..7
    number: int                 # object number within the group (0 for Mike/Jenny)
    name: str                   # canonical human name
    synonyms: tuple[str, ...]   # other names people use
    base_w: int                 # rough width in pixels at depth 0
    base_h: int                 # rough height in pixels at depth 0
    role: str                   # layout role: sky, ground, human, hat, eyewear, held, ground_small

    @property
    def group(self) -> str:
        return GROUP_NAMES[self.type_idx]

    @property
    def prefix(self) -> str:
        return GROUP_PREFIXES[self.type_idx]

    @property
    def is_human(self) -> bool:
        return self.idx in HUMAN_IDXS

    @property
    def is_sky(self) -> bool:
        return self.type_idx == 0

    def png(self, subtype: int = 0) -> str:
        return png_name(self.idx, subtype)

    def size(self, depth: int = 0) -> tuple[float, float]:
        scale = DEPTH_SCALES[depth]
        return self.base_w * scale, self.base_h * scale

    def as_dict(self) -> dict:
        return {"idx": self.idx, "name": self.name, "group": self.group, "synonyms": list(self.synonyms),
                "png": self.png(0), "base_w": self.base_w, "base_h": self.base_h, "human": self.is_human}


# (name, synonyms, base_w, base_h, role) per group, in object-number order.
_LIBRARY: tuple[tuple[tuple[str, tuple[str, ...], int, int, str], ...], ...] = (
    (  # s: sky
        ("helicopter", ("chopper",), 144, 84, "sky"),
        ("hot air balloon", ("balloon", "air balloon"), 90, 121, "sky"),
        ("cloud", ("white cloud", "fluffy cloud"), 146, 88, "sky"),
        ("sun", ("sunshine",), 112, 112, "sky"),
        ("lightning cloud", ("storm cloud", "thunder cloud", "cloud with lightning"), 146, 132, "sky"),
        ("rain cloud", ("raining cloud", "cloud with rain", "rainy cloud"), 146, 132, "sky"),
        ("rocket", ("spaceship", "rocket ship"), 126, 138, "sky"),
        ("airplane", ("plane", "jet", "aeroplane"), 152, 78, "sky"),
    ),
    (  # p: large objects
        ("bee", ("bumblebee", "bee rider", "spring rider", "bee toy"), 116, 122, "ground"),
        ("slide", ("playground slide",), 200, 150, "ground"),
        ("sandbox", ("sand box", "sand pit"), 190, 78, "ground"),
        ("grill", ("barbecue", "bbq", "barbeque"), 90, 132, "ground"),
        ("swing", ("swings", "swing set", "swingset"), 190, 174, "ground"),
        ("tent", ("camping tent",), 192, 140, "ground"),
        ("table", ("picnic table", "bench"), 170, 96, "ground"),
        ("pine tree", ("pine", "christmas tree", "evergreen", "fir tree"), 140, 252, "ground"),
        ("oak tree", ("tree", "tree with a hole", "big tree", "leafy tree"), 220, 272, "ground"),
        ("apple tree", ("bushy tree", "fruit tree", "round tree"), 220, 272, "ground"),
    ),
    (  # hb0: Mike
        ("Mike", ("boy", "guy", "kid", "child", "mike", "him", "he"), 104, 181, "human"),
    ),
    (  # hb1: Jenny
        ("Jenny", ("girl", "lady", "woman", "kid", "child", "jenny", "her", "she"), 115, 181, "human"),
    ),
    (  # a: animals
        ("bear", ("teddy bear", "brown bear"), 100, 118, "ground"),
        ("cat", ("kitty", "kitten"), 96, 92, "ground"),
        ("dog", ("puppy", "doggy"), 108, 88, "ground"),
        ("duck", ("duckling", "bird"), 70, 78, "ground"),
        ("owl", ("bird",), 66, 88, "ground"),
        ("snake", ("serpent",), 132, 64, "ground"),
    ),
    (  # c: clothing
        ("star hat", ("blue hat", "wizard hat", "hat with star", "party hat"), 70, 78, "hat"),
        ("crown", ("king crown", "gold crown", "tiara"), 70, 50, "hat"),
        ("chef hat", ("cook hat", "white hat"), 72, 68, "hat"),
        ("pirate hat", ("pirate", "black hat"), 84, 46, "hat"),
        ("cap", ("baseball cap", "red hat", "gray and red hat", "bonnet", "beanie"), 76, 42, "hat"),
        ("rainbow hat", ("propeller hat", "beanie with propeller", "helicopter hat"), 72, 58, "hat"),
        ("witch hat", ("wizard hat", "pointy hat", "purple hat"), 82, 70, "hat"),
        ("viking helmet", ("viking hat", "helmet", "horned helmet"), 88, 54, "hat"),
        ("glasses", ("eyeglasses", "spectacles", "regular glasses"), 58, 22, "eyewear"),
        ("sunglasses", ("shades", "sun glasses", "dark glasses"), 58, 22, "eyewear"),
    ),
    (  # e: food
        ("pie", ("cake", "apple pie"), 64, 44, "held"),
        ("pizza", ("pizza slice", "slice of pizza"), 62, 62, "held"),
        ("hot dog", ("hotdog", "sausage"), 76, 38, "held"),
        ("ketchup", ("ketchup bottle", "catsup", "red bottle"), 28, 68, "held"),
        ("mustard", ("mustard bottle", "yellow bottle"), 28, 68, "held"),
        ("hamburger", ("burger", "cheeseburger"), 64, 54, "held"),
        ("drink", ("soda", "cup", "juice", "soft drink"), 38, 66, "held"),
    ),
    (  # t: toys
        ("baseball", ("base ball", "white ball"), 28, 28, "held"),
        ("pail", ("bucket", "sand pail", "basket"), 52, 62, "held"),
        ("beach ball", ("ball", "colorful ball", "striped ball"), 50, 50, "held"),
        ("basketball", ("basket ball", "orange ball"), 48, 48, "held"),
        ("soccer ball", ("soccer", "football ball", "black and white ball"), 48, 48, "ground_small"),
        ("tennis ball", ("yellow ball", "green ball"), 24, 24, "held"),
        ("football", ("american football", "rugby ball"), 56, 36, "held"),
        ("frisbee", ("flying disc", "disc"), 56, 24, "held"),
        ("baseball bat", ("bat", "wooden bat"), 90, 58, "held"),
        ("balloons", ("bunch of balloons", "party balloons"), 66, 130, "held"),
        ("baseball glove", ("glove", "mitt", "baseball mitt"), 52, 56, "held"),
        ("shovel", ("spade", "sand shovel"), 32, 86, "held"),
        ("tennis racket", ("racket", "racquet"), 40, 92, "held"),
        ("kite", ("flying kite",), 80, 142, "sky"),
        ("campfire", ("fire", "bonfire", "camp fire"), 80, 82, "ground"),
    ),
)


def _build_library() -> tuple[ClipArt, ...]:
    arts: list[ClipArt] = []
    for type_idx, rows in enumerate(_LIBRARY):
        for number, (name, synonyms, width, height, role) in enumerate(rows):
            arts.append(ClipArt(idx=GROUP_OFFSETS[type_idx] + number, type_idx=type_idx, number=number,
                                name=name, synonyms=synonyms, base_w=width, base_h=height, role=role))
    assert [art.idx for art in arts] == list(range(N_CLIPARTS))
    return tuple(arts)


CLIPARTS: tuple[ClipArt, ...] = _build_library()
NAMES: tuple[str, ...] = tuple(art.name for art in CLIPARTS)
SKY_IDXS = tuple(art.idx for art in CLIPARTS if art.type_idx == 0)
NON_HUMAN_IDXS = tuple(art.idx for art in CLIPARTS if not art.is_human)


# ------------------------------------------------------------------------------------- functions
def is_valid_idx(idx: object) -> bool:
    return isinstance(idx, int) and not isinstance(idx, bool) and 0 <= idx < N_CLIPARTS


def get(idx: int) -> ClipArt:
    """The clip art with global index ``idx`` (raises ``KeyError`` for anything else)."""
    if not is_valid_idx(idx):
        raise KeyError(f"No clip art with idx {idx!r}; valid idx are 0..{N_CLIPARTS - 1}.")
    return CLIPARTS[idx]


def is_human(idx: int) -> bool:
    return idx in HUMAN_IDXS


def type_of(idx: int) -> int:
    """The group (type index 0..7) of ``idx``."""
    return get(idx).type_idx


def idx_of(type_idx: int, object_idx: int) -> int:
    """The global idx of a (type, object number) pair, as ``AbsUtil.getClipArtIdx`` computes it."""
    if not 0 <= type_idx < len(GROUP_OFFSETS):
        raise ValueError(f"type index {type_idx} is not in 0..7")
    if not 0 <= object_idx < GROUP_SIZES[type_idx]:
        raise ValueError(f"object index {object_idx} is out of range for type {GROUP_PREFIXES[type_idx]!r}")
    return GROUP_OFFSETS[type_idx] + (0 if type_idx in (2, 3) else object_idx)


def object_idx_of(idx: int, subtype: int = 0) -> int:
    """The object number written in scene strings: the subtype for Mike/Jenny, else the number."""
    art = get(idx)
    return subtype if art.is_human else art.number


def png_name(idx: int, subtype: int = 0) -> str:
    """The Abstract Scenes png file of a piece, e.g. ``s_3s.png`` (sun), ``hb0_10s.png``."""
    art = get(idx)
    if art.is_human and not 0 <= subtype < N_SUBTYPES:
        raise ValueError(f"subtype {subtype} is not in 0..{N_SUBTYPES - 1}")
    return f"{art.prefix}_{object_idx_of(idx, subtype)}s.png"


_PNG_RE = re.compile(r"^(s|p|hb0|hb1|a|c|e|t)_(\d+)s\.png$")


def parse_png(png: str) -> tuple[int, int]:
    """``(type_idx, object_idx)`` of a png file name such as ``hb1_4s.png``."""
    match = _PNG_RE.match(png)
    if not match:
        raise ValueError(f"{png!r} is not an Abstract Scenes clip-art file name")
    type_idx = GROUP_PREFIXES.index(match.group(1))
    object_idx = int(match.group(2))
    if object_idx >= GROUP_SIZES[type_idx]:
        raise ValueError(f"{png!r}: object number {object_idx} is out of range")
    return type_idx, object_idx


ALL_PNGS: tuple[str, ...] = tuple(
    f"{prefix}_{number}s.png" for prefix, size in zip(GROUP_PREFIXES, GROUP_SIZES) for number in range(size))


def pose_of(subtype: int) -> int:
    return subtype // N_EXPRESSIONS


def expression_of(subtype: int) -> int:
    return subtype % N_EXPRESSIONS


def subtype_of(pose: int, expression: int) -> int:
    if not 0 <= pose < N_POSES:
        raise ValueError(f"pose {pose} is not in 0..{N_POSES - 1}")
    if not 0 <= expression < N_EXPRESSIONS:
        raise ValueError(f"expression {expression} is not in 0..{N_EXPRESSIONS - 1}")
    return pose * N_EXPRESSIONS + expression


def describe(idx: int, subtype: int = 0) -> str:
    """A short human description, e.g. ``Mike (kicking, angry)`` or ``soccer ball``."""
    art = get(idx)
    if art.is_human:
        return f"{art.name} ({POSES[pose_of(subtype)]}, {EXPRESSIONS[expression_of(subtype)]})"
    return art.name


def draw_order_key(idx: int, depth: int) -> tuple[bool, bool, int, int]:
    """Sort key for painting back to front (as ``Clipart.render_order_key`` in codraw-models)."""
    return (idx != SUN, idx >= len(SKY_IDXS), -depth, idx)


def scale(depth: int) -> float:
    return DEPTH_SCALES[depth]


def scaled_size(idx: int, depth: int) -> tuple[float, float]:
    return get(idx).size(depth)


def faces_right(flip: int) -> bool:
    """An unflipped piece faces right, a flipped one left: the convention of this project's SVG
    art (``art.FACES``). The pngs of the original library are not at hand to confirm theirs."""
    return not flip


@lru_cache(maxsize=None)
def geometry(idx: int, subtype: int = 0) -> tuple[float, float, dict[str, tuple[float, float]]]:
    """``(width, height, anchors)`` of a piece at depth 0, from the SVG art (games/codraw/art.py,
    its public ``art_info``), which is what people see. Anchors are points in the piece's own
    unflipped frame (origin top-left): a person's ``head_top``, ``hat``, ``eyes``,
    ``hand_front``, ``hand_back``, ``foot_front``, ``foot_back``; a hat's or glasses' ``wear``;
    a held thing's ``hold``."""
    info = art.art_info(idx, subtype if is_human(idx) else 0)
    anchors = {name: (float(x), float(y)) for name, (x, y) in info["anchors"].items()}
    return float(info["width"]), float(info["height"]), anchors


def piece_size(idx: int, subtype: int, depth: int) -> tuple[float, float]:
    """The drawn size of a piece (Mike's and Jenny's boxes differ by pose)."""
    width, height, _ = geometry(idx, subtype)
    return width * DEPTH_SCALES[depth], height * DEPTH_SCALES[depth]


def anchor_point(idx: int, subtype: int, name: str, x: float, y: float, depth: int,
                 flip: int) -> tuple[float, float] | None:
    """Where anchor ``name`` of a piece centred at ``(x, y)`` is on the canvas (None if the piece
    has no such anchor), e.g. ``anchor_point(MIKE, 10, "hat", 100, 250, 1, 0)``."""
    width, height, anchors = geometry(idx, subtype)
    if name not in anchors:
        return None
    ax, ay = anchors[name]
    if flip:
        ax = width - ax
    s = DEPTH_SCALES[depth]
    return x + (ax - width / 2) * s, y + (ay - height / 2) * s


def centre_for(idx: int, subtype: int, name: str, point: tuple[float, float], depth: int,
               flip: int) -> tuple[float, float]:
    """The centre that puts anchor ``name`` of a piece on ``point`` (its centre if it has none):
    a hat's ``wear`` on a person's ``hat``, glasses' ``wear`` on ``eyes``, a toy's ``hold`` on
    ``hand_front``."""
    width, height, anchors = geometry(idx, subtype)
    ax, ay = anchors.get(name, (width / 2, height / 2))
    if flip:
        ax = width - ax
    s = DEPTH_SCALES[depth]
    return point[0] - (ax - width / 2) * s, point[1] - (ay - height / 2) * s


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9 ]+", " ", text.lower()).split())


@lru_cache(maxsize=1)
def _name_index() -> dict[str, tuple[int, ...]]:
    index: dict[str, list[int]] = {}
    for art in CLIPARTS:
        for label in (art.name, *art.synonyms):
            index.setdefault(_norm(label), [])
            if art.idx not in index[_norm(label)]:
                index[_norm(label)].append(art.idx)
    # the canonical name wins over a synonym shared with another piece
    return {label: tuple(sorted(idxs, key=lambda i: _norm(CLIPARTS[i].name) != label))
            for label, idxs in index.items()}


def lookup(name: str) -> tuple[int, ...]:
    """The idx a name or synonym may refer to, best first (``()`` if none), e.g. ``"tree"``."""
    return _name_index().get(_norm(name), ())


def lookup_pose(word: str) -> int | None:
    key = _norm(word)
    for pose, name in enumerate(POSES):
        if key == _norm(name) or key in (_norm(s) for s in POSE_SYNONYMS[name]):
            return pose
    return None


def lookup_expression(word: str) -> int | None:
    key = _norm(word)
    for expression, name in enumerate(EXPRESSIONS):
        if key == _norm(name) or key in (_norm(s) for s in EXPRESSION_SYNONYMS[name]):
            return expression
    return None


def library() -> list[dict]:
    """The whole library as JSON-safe dicts (for the UI and the art)."""
    return [art.as_dict() for art in CLIPARTS]
