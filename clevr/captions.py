"""Scene-graph primitives and CLEVR-Dialog captions for CLEVR scenes.

CLEVR-Dialog (Kottur et al. 2019, ``seeds/002_*``) builds captions and questions from a few
primitives over the scene graph (Filter, Unique, Count, Relate, Exist, Sample). This module holds
those primitives (shared by :mod:`clevr.alice` and :mod:`clevr.qbot`) and the four
caption kinds of the paper's Table 1, always true of the scene they describe:

* ``obj-unique``   "A large red cube is present in the image."   (the attributes pick out one object)
* ``obj-count``    "The image has four cylinders."               (the exact count of a group of >= 2)
* ``obj-extreme``  "The rightmost thing in the view is a cylinder."
* ``obj-relation`` "A gray sphere stands to the right of a red object." (an *immediate* relation:
  the sphere is the red object's nearest neighbour on that side; the red object is unique)

Public API
==========
``generate_caption(scene, seed, kinds=CAPTION_KINDS) -> dict``
    ``{"text", "kind", "spec", "mentions"}``; deterministic in (scene, seed).
``parse_caption(text) -> dict | None``
    The ``spec`` of a caption written by :func:`generate_caption` (None for other text).
``ground_caption(spec, scene) -> dict``
    ``{"holds": bool, "mentions": [[object ids], ...]}``: is the caption true of ``scene`` and
    which objects it talks about (the last mention is the dialog's first focus).
``caption_holds(text, scene) -> bool | None`` (None when the text is not one of our captions).

Primitives: ``filter_ids``, ``related``, ``nearest``, ``immediate``, ``extreme_order``,
``is_strict_extreme``, ``describe``, ``np_text``, ``number_word``, ``parse_number``.

Attributes are held as ``{category: value}`` dicts over the categories of
:data:`NP_ORDER` (CLEVR's "[Z] [C] [M] [S]" order: size, color, material, shape).
"""
from __future__ import annotations

import math
import random
import re
from itertools import combinations

SHAPES = ("cube", "sphere", "cylinder")
COLORS = ("gray", "red", "blue", "green", "brown", "purple", "cyan", "yellow")
SIZES = ("large", "small")
MATERIALS = ("rubber", "metal")
VALUES = {"size": SIZES, "color": COLORS, "material": MATERIALS, "shape": SHAPES}
NP_ORDER = ("size", "color", "material", "shape")
CATEGORY_OF = {v: cat for cat, vals in VALUES.items() for v in vals}
DIRECTIONS = ("left", "right", "front", "behind")
OPPOSITE = {"left": "right", "right": "left", "front": "behind", "behind": "front"}
CAPTION_KINDS = ("obj-unique", "obj-count", "obj-extreme", "obj-relation")

PLURAL = {"cube": "cubes", "sphere": "spheres", "cylinder": "cylinders", "thing": "things",
          "object": "objects"}
NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
                "eleven", "twelve")
EXTREME_WORD = {"left": "leftmost", "right": "rightmost", "front": "frontmost", "behind": "rearmost"}
REL_PHRASE = {"left": "to the left of", "right": "to the right of", "front": "in front of",
              "behind": "behind"}


# --------------------------------------------------------------------------------------------
# Primitives over the scene graph
# --------------------------------------------------------------------------------------------
def matches(obj: dict, attrs: dict) -> bool:
    """True when ``obj`` has every attribute in ``attrs`` (values may be a str or a set of str)."""
    for cat, want in attrs.items():
        have = obj.get(cat)
        if isinstance(want, str):
            if have != want:
                return False
        elif have not in want:
            return False
    return True


def filter_ids(scene: dict, attrs: dict, among=None) -> list[int]:
    """Filter[attrs]: ids (in scene order) of the objects having ``attrs``."""
    objs = scene["objects"]
    ids = range(len(objs)) if among is None else sorted(among)
    return [i for i in ids if matches(objs[i], attrs)]


def related(scene: dict, i: int, rel: str) -> list[int]:
    """Relate[rel]: ids of the objects that are ``rel`` of object ``i`` (CLEVR's convention)."""
    return list(scene["relationships"][rel][i])


def ground_distance(scene: dict, i: int, j: int) -> float:
    a, b = scene["objects"][i]["3d_coords"], scene["objects"][j]["3d_coords"]
    return math.hypot(a[0] - b[0], a[1] - b[1])


def nearest(scene: dict, i: int, candidates) -> int | None:
    """The candidate closest to object ``i`` on the ground plane (ties: lower id)."""
    best = None
    for j in candidates:
        if j == i:
            continue
        key = (ground_distance(scene, i, j), j)
        if best is None or key < best[0]:
            best = (key, j)
    return None if best is None else best[1]


def immediate(scene: dict, i: int, rel: str, among=None) -> int | None:
    """The object immediately ``rel`` of ``i``: the nearest of those ``rel`` of it (CLEVR-Dialog's
    "immediate or closest sense"), optionally only among ``among``."""
    cands = related(scene, i, rel)
    if among is not None:
        allowed = set(among)
        cands = [j for j in cands if j in allowed]
    return nearest(scene, i, cands)


def _projection(scene: dict, i: int, direction: str) -> float:
    obj = scene["objects"][i]
    dirs = scene.get("directions")
    if dirs and direction in dirs:
        v = dirs[direction]
        c = obj["3d_coords"]
        return c[0] * v[0] + c[1] * v[1] + c[2] * v[2]
    # No directions: fall back to the image (x grows to the right, y grows to the front).
    px = obj.get("pixel_coords") or [0, 0, 0]
    return {"left": -px[0], "right": px[0], "front": px[1], "behind": -px[1]}[direction]


def extreme_order(scene: dict, direction: str, among=None) -> list[int]:
    """Ids sorted from the most ``direction`` (e.g. leftmost) to the least. The relationship
    counts decide first (how many objects lie on the other side), the projection breaks ties."""
    ids = range(len(scene["objects"])) if among is None else list(among)
    opposite = OPPOSITE[direction]
    rels = scene["relationships"]
    return sorted(ids, key=lambda i: (len(rels[direction][i]) - len(rels[opposite][i]),
                                      -_projection(scene, i, direction), i))


def extreme(scene: dict, direction: str, among=None) -> int | None:
    order = extreme_order(scene, direction, among)
    return order[0] if order else None


def is_strict_extreme(scene: dict, i: int, direction: str) -> bool:
    """Every other object lies on the opposite side of ``i`` (so "the leftmost" is unambiguous)."""
    n = len(scene["objects"])
    return len(scene["relationships"][OPPOSITE[direction]][i]) == n - 1


def attrs_of(obj: dict, cats=NP_ORDER) -> dict:
    return {c: obj[c] for c in cats}


def np_text(attrs: dict, *, plural: bool = False, noun: str = "object") -> str:
    """"large red metal cube" / "red objects": CLEVR's [Z] [C] [M] [S] order."""
    words = [attrs[c] for c in ("size", "color", "material") if attrs.get(c)]
    head = attrs.get("shape") or noun
    if plural:
        head = PLURAL.get(head, head + "s")
    return " ".join(words + [head])


def with_article(phrase: str) -> str:
    return ("an " if phrase[:1] in "aeiou" else "a ") + phrase


def describe(obj: dict) -> str:
    """"a small red metal cube"."""
    return with_article(np_text(attrs_of(obj)))


def number_word(n: int) -> str:
    return NUMBER_WORDS[n] if 0 <= n < len(NUMBER_WORDS) else str(n)


def parse_number(word: str) -> int | None:
    if word.isdigit():
        return int(word)
    return NUMBER_WORDS.index(word) if word in NUMBER_WORDS else None


# --------------------------------------------------------------------------------------------
# Caption generation
# --------------------------------------------------------------------------------------------
def _subsets(rng: random.Random, cats=NP_ORDER, sizes=(1, 2, 3)) -> list[tuple[str, ...]]:
    """Attribute subsets, shortest first, shuffled within a length (Sample[attributes])."""
    out = []
    for k in sizes:
        group = list(combinations(cats, k))
        rng.shuffle(group)
        out.extend(group)
    return out


def _unique_subset(scene: dict, i: int, rng: random.Random) -> tuple[str, ...] | None:
    """A smallest attribute subset that picks out object ``i`` alone (Unique)."""
    obj = scene["objects"][i]
    for cats in _subsets(rng, sizes=(1, 2, 3, 4)):
        if len(filter_ids(scene, attrs_of(obj, cats))) == 1:
            return cats
    return None


def _caption_unique(scene, rng):
    ids = list(range(len(scene["objects"])))
    rng.shuffle(ids)
    for i in ids:
        cats = _unique_subset(scene, i, rng)
        if cats is None:
            continue
        attrs = attrs_of(scene["objects"][i], cats)
        phrase = with_article(np_text(attrs))
        template = rng.choice(("{np} is present in the image.", "There is {np} in the image."))
        text = template.format(np=phrase)
        return text[0].upper() + text[1:], {"kind": "obj-unique", "attrs": attrs}
    return None


def _caption_count(scene, rng):
    for cats in _subsets(rng, sizes=(1, 2)):
        groups: dict[tuple, list[int]] = {}
        for i, obj in enumerate(scene["objects"]):
            groups.setdefault(tuple(obj[c] for c in cats), []).append(i)
        big = [key for key, ids in groups.items() if len(ids) >= 2]
        if not big:
            continue
        key = rng.choice(sorted(big))
        attrs = dict(zip(cats, key))
        n = len(groups[key])
        template = rng.choice(("The image has {x} {nps}.", "There are {x} {nps} in the image."))
        return template.format(x=number_word(n), nps=np_text(attrs, plural=True)), \
            {"kind": "obj-count", "attrs": attrs, "count": n}
    return None


def _caption_extreme(scene, rng):
    dirs = list(DIRECTIONS)
    rng.shuffle(dirs)
    for d in dirs:
        i = extreme(scene, d)
        if i is None or not is_strict_extreme(scene, i, d):
            continue
        k = rng.choice((1, 1, 2))
        cats = rng.sample(NP_ORDER, k)
        attrs = attrs_of(scene["objects"][i], [c for c in NP_ORDER if c in cats])
        text = f"The {EXTREME_WORD[d]} thing in the view is {with_article(np_text(attrs))}."
        return text, {"kind": "obj-extreme", "direction": d, "attrs": attrs}
    return None


def _caption_relation(scene, rng):
    n = len(scene["objects"])
    pairs = []
    for a in range(n):
        for d in DIRECTIONS:
            b = immediate(scene, a, d)
            if b is not None:
                pairs.append((a, d, b))
    rng.shuffle(pairs)
    for a, d, b in pairs:
        cats_a = _unique_subset(scene, a, rng)
        if cats_a is None:
            continue
        k = rng.choice((1, 2))
        picked = rng.sample(NP_ORDER, k)
        cats_b = [c for c in NP_ORDER if c in picked]
        attrs_a = attrs_of(scene["objects"][a], cats_a)
        attrs_b = attrs_of(scene["objects"][b], cats_b)
        template = rng.choice(("{b} stands {rel} {a}.", "There is {b} {rel} {a}."))
        text = template.format(b=with_article(np_text(attrs_b)), rel=REL_PHRASE[d],
                               a=with_article(np_text(attrs_a)))
        return text[0].upper() + text[1:], {"kind": "obj-relation", "direction": d,
                                            "attrs_a": attrs_a, "attrs_b": attrs_b}
    return None


_MAKERS = {"obj-unique": _caption_unique, "obj-count": _caption_count,
           "obj-extreme": _caption_extreme, "obj-relation": _caption_relation}


def generate_caption(scene: dict, seed: int, kinds=CAPTION_KINDS) -> dict:
    """A caption true of ``scene``: the kind is a seeded choice among ``kinds`` that the scene
    allows (falling back to any kind that works, then to a plain count of objects)."""
    rng = random.Random(f"caption:{seed}")
    order = list(kinds)
    rng.shuffle(order)
    order += [k for k in CAPTION_KINDS if k not in order]
    for kind in order:
        made = _MAKERS[kind](scene, rng)
        if made is not None:
            text, spec = made
            grounded = ground_caption(spec, scene)
            assert grounded["holds"], text  # the grammar only says true things
            return {"text": text, "kind": kind, "spec": spec, "mentions": grounded["mentions"]}
    n = len(scene["objects"])
    spec = {"kind": "obj-count", "attrs": {}, "count": n}
    text = f"The image has {number_word(n)} {'object' if n == 1 else 'objects'}."
    return {"text": text, "kind": "obj-count", "spec": spec, "mentions": ground_caption(spec, scene)["mentions"]}


# --------------------------------------------------------------------------------------------
# Reading a caption back (for the questioner, who sees only the text, and for ALICE's memory)
# --------------------------------------------------------------------------------------------
_ADJ = "|".join(SIZES + COLORS + MATERIALS)
_NOUN = "cubes?|spheres?|cylinders?|things?|objects?"
_NP_RE = rf"(?:(?:{_ADJ})\s+)*(?:{_NOUN})"
_CAPTION_PATTERNS = [
    ("obj-unique", re.compile(rf"^(?:an?\s+(?P<np>{_NP_RE})\s+is present in the image|"
                              rf"there is an?\s+(?P<np2>{_NP_RE})\s+in the image)$")),
    ("obj-count", re.compile(rf"^(?:the image has\s+(?P<x>\w+)\s+(?P<np>{_NP_RE})|"
                             rf"there are\s+(?P<x2>\w+)\s+(?P<np2>{_NP_RE})\s+in the image)$")),
    ("obj-extreme", re.compile(rf"^the (?P<dir>leftmost|rightmost|frontmost|rearmost) thing in the view is "
                               rf"an?\s+(?P<np>{_NP_RE})$")),
    ("obj-relation", re.compile(rf"^(?:an?\s+(?P<b>{_NP_RE})\s+stands\s+|there is an?\s+(?P<b2>{_NP_RE})\s+)"
                                rf"(?P<rel>to the left of|to the right of|in front of|behind)\s+"
                                rf"an?\s+(?P<a>{_NP_RE})$")),
]
_DIR_OF_WORD = {v: k for k, v in EXTREME_WORD.items()}
_DIR_OF_PHRASE = {v: k for k, v in REL_PHRASE.items()}


def _np_attrs(np: str) -> dict:
    attrs = {}
    for word in np.split():
        if word.endswith("s") and word[:-1] in SHAPES:
            word = word[:-1]
        if word in CATEGORY_OF:
            attrs[CATEGORY_OF[word]] = word
    return {c: attrs[c] for c in NP_ORDER if c in attrs}


def parse_caption(text: str) -> dict | None:
    """The spec of a caption made by :func:`generate_caption`, or None for any other text."""
    if not isinstance(text, str):
        return None
    t = re.sub(r"\s+", " ", text.strip().lower().rstrip("."))
    for kind, pattern in _CAPTION_PATTERNS:
        m = pattern.match(t)
        if not m:
            continue
        g = {k: v for k, v in m.groupdict().items() if v is not None}
        if kind == "obj-unique":
            return {"kind": kind, "attrs": _np_attrs(g.get("np") or g["np2"])}
        if kind == "obj-count":
            n = parse_number(g.get("x") or g["x2"])
            if n is None:
                return None
            return {"kind": kind, "attrs": _np_attrs(g.get("np") or g["np2"]), "count": n}
        if kind == "obj-extreme":
            return {"kind": kind, "direction": _DIR_OF_WORD[g["dir"]], "attrs": _np_attrs(g["np"])}
        return {"kind": kind, "direction": _DIR_OF_PHRASE[g["rel"]], "attrs_a": _np_attrs(g["a"]),
                "attrs_b": _np_attrs(g.get("b") or g["b2"])}
    return None


def ground_caption(spec: dict, scene: dict) -> dict:
    """Is the caption ``spec`` true of ``scene``, and which objects does it mention?"""
    kind = spec["kind"]
    if kind == "obj-unique":
        ids = filter_ids(scene, spec["attrs"])
        return {"holds": bool(ids), "mentions": [ids] if ids else []}
    if kind == "obj-count":
        ids = filter_ids(scene, spec["attrs"])
        return {"holds": len(ids) == spec["count"], "mentions": [ids] if ids else []}
    if kind == "obj-extreme":
        i = extreme(scene, spec["direction"])
        ok = i is not None and matches(scene["objects"][i], spec["attrs"])
        return {"holds": ok, "mentions": [[i]] if ok else []}
    if kind == "obj-relation":
        hits = []
        for a in filter_ids(scene, spec["attrs_a"]):
            b = immediate(scene, a, spec["direction"])
            if b is not None and matches(scene["objects"][b], spec["attrs_b"]):
                hits.append((a, b))
        if not hits:
            return {"holds": False, "mentions": []}
        return {"holds": True, "mentions": [sorted({a for a, _ in hits}), sorted({b for _, b in hits})]}
    raise ValueError(f"unknown caption kind {kind!r}")


def caption_holds(text: str, scene: dict) -> bool | None:
    spec = parse_caption(text)
    return None if spec is None else ground_caption(spec, scene)["holds"]
