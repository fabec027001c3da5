"""CLEVR scenes: the format, a seeded generator, and importers (CLEVR files, folders of real images).

The scene format (stable, version 1)
====================================
A scene is CLEVR's own scene JSON (Johnson et al. 2017, ``facebookresearch/clevr-dataset-gen``
``render_images.py``), so a real ``CLEVR_<split>_scenes.json`` imports unchanged, plus one key of
ours, ``provenance``. Every value is JSON-safe (lists, not tuples)::

    {
      "image_index": 17,                        # int; for generated scenes, the seed
      "image_filename": "synthetic_00000017.png",   # str; unique id of the image within a pool
      "split": "synthetic",                     # CLEVR's split name ("train"/"val"/... when imported)
      "objects": [                              # 3..10 for generated scenes; index = object id
        {"shape": "cube" | "sphere" | "cylinder",
         "color": "gray" | "red" | "blue" | "green" | "brown" | "purple" | "cyan" | "yellow",
         "size": "large" | "small",
         "material": "rubber" | "metal",
         "3d_coords": [x, y, z],                # world units; ground plane z = 0, z = radius
         "pixel_coords": [px, py, depth],       # ints px, py in the 480x320 image; depth float
         "rotation": 0.0 <= deg < 360.0},       # about the vertical axis
        ...
      ],
      "relationships": {                        # relationships[rel][i]: indices j that are
        "left": [[...], ...],                   #   `rel` of object i ("j is left of i"), sorted
        "right": [...], "front": [...], "behind": [...]
      },
      "directions": {"left": [x, y, z], "right": ..., "front": ..., "behind": ...,
                     "above": ..., "below": ...},  # unit vectors on the ground plane (CLEVR's)
      "provenance": {"source": "generated" | "clevr" | "image_folder", ...}
    }

* Geometry follows CLEVR: an object of size radius ``r`` (large 0.7, small 0.35) stands on the
  ground with centre height ``z = r``; a sphere has radius ``r``; a cylinder radius ``r`` and height
  ``2r``; a cube half-edge ``r`` (CLEVR's released code meant to shrink cubes by sqrt(2) but its
  name check never matched, so real CLEVR cubes have half-edge ``r`` too; we keep that).
* ``relationships`` are CLEVR's: ``j`` is ``rel`` of ``i`` when
  ``dot(coords[j] - coords[i], directions[rel]) > RELATION_EPS`` (0.2). Generated scenes also keep
  CLEVR's placement ``MARGIN`` (0.4) along the left/right and front/behind axes, so every pair of
  objects is in exactly one of left/right and exactly one of front/behind.
* ``pixel_coords`` come from :data:`CLEVR_CAMERA`, a pinhole camera fitted to a real CLEVR scene
  (to 0.25 px; about a 35 mm lens, 26.3 degrees down, looking at the origin from 11.1 units),
  the same camera :mod:`clevr.render` draws with, so they match our renders at 480x320.
* ``provenance`` says where the scene came from, enough to make it again:
  generated: ``{"source": "generated", "generator": "groundtalk.clevr/v1", "seed",
  "min_objects", "max_objects", "format_version": 1}`` (plus ``"derived_from"``, ``"edits"`` for
  :func:`perturb_scene`); imported: ``{"source": "clevr", "file", "sha256", "index", "info",
  "format_version": 1}``.
* Items from :func:`load_image_folder` share the envelope (``image_index``, ``image_filename``,
  ``provenance``) and add ``image_path``, ``width``, ``height``, ``caption``, ``captions``; they
  have ``objects``/``relationships``/``directions`` only when a CLEVR scene JSON sits beside the
  image. Use :func:`has_scene_graph` before reading objects.

Public API
==========
``generate_scene(seed, *, min_objects=3, max_objects=10) -> dict``
``perturb_scene(scene, seed, *, edits=1) -> dict``
``compute_relationships(objects, directions=DIRECTIONS, eps=RELATION_EPS) -> dict``
``load_clevr_scenes(path, *, start=0, limit=None) -> list[dict]``
``load_image_folder(path) -> list[dict]``
``validate_scene(scene) -> None`` (raises :class:`SceneFormatError`)
``has_scene_graph(item) -> bool``, ``scene_fingerprint(scene) -> str``,
``footprints_overlap(a, b) -> bool``, ``project(point) -> [px, py, depth]``

Everything is deterministic from its arguments (``random.Random(seed)``, never global state).
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import random
from pathlib import Path

# The camera and image constants are clevr/camera.py's (imported here, as before, for every user of
# this module); the renderer checks that each placed object is visible.
from clevr.camera import CLEVR_CAMERA, COLOR_RGB, IMAGE_HEIGHT, IMAGE_WIDTH, SIZE_RADIUS, Camera, project  # noqa: F401
from clevr.render import visible_pixel_counts
from PIL import Image, UnidentifiedImageError

FORMAT_VERSION = 1
GENERATOR = "groundtalk.clevr/v1"

SHAPES = ("cube", "sphere", "cylinder")
COLORS = ("gray", "red", "blue", "green", "brown", "purple", "cyan", "yellow")
SIZES = ("large", "small")
MATERIALS = ("rubber", "metal")
RELATIONS = ("left", "right", "front", "behind")
ATTRIBUTES = {"shape": SHAPES, "color": COLORS, "size": SIZES, "material": MATERIALS}

# CLEVR's ground-plane directions (identical in every released CLEVR scene: the camera is only
# translated by jitter, never rotated).
_R = (0.6563112735748291, 0.7544902563095093)
DIRECTIONS = {
    "right": [_R[0], _R[1], 0.0],
    "left": [-_R[0], -_R[1], 0.0],
    "behind": [-_R[1], _R[0], 0.0],
    "front": [_R[1], -_R[0], 0.0],
    "above": [0.0, 0.0, 1.0],
    "below": [0.0, 0.0, -1.0],
}

# CLEVR's placement constants (render_images.py defaults).
PLACEMENT_RANGE = 3.0        # x, y ~ uniform(-3, 3)
MIN_DIST = 0.25              # gap between footprints
MARGIN = 0.4                 # min separation along left/right and front/behind axes
RELATION_EPS = 0.2           # compute_all_relationships(eps=0.2)
MAX_RETRIES = 50             # tries per object before re-placing the whole scene
MIN_VISIBLE_PIXELS = 50      # per object at VISIBILITY_SIZE: CLEVR's 200 px at 480x320, scaled
VISIBILITY_SIZE = (240, 160)
MAX_RESTARTS = 500

IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".webp", ".gif", ".bmp")


class SceneFormatError(ValueError):
    """Input that is not a valid scene / scene file / image folder. The message says where."""


# --------------------------------------------------------------------------------------------
# Geometry helpers
# --------------------------------------------------------------------------------------------
def object_radius(obj: dict) -> float:
    """CLEVR's size radius ``r`` of an object (half-edge for cubes, radius otherwise)."""
    return SIZE_RADIUS[obj["size"]]


def footprint_radius(shape: str, size: str) -> float:
    """Radius of a circle that contains the object's footprint on the ground at any rotation."""
    r = SIZE_RADIUS[size]
    return r * math.sqrt(2) if shape == "cube" else r


def _footprint_polygon(obj: dict, segments: int = 32) -> list[tuple[float, float]]:
    x, y = obj["3d_coords"][0], obj["3d_coords"][1]
    r = object_radius(obj)
    if obj["shape"] == "cube":
        a = math.radians(obj.get("rotation", 0.0))
        c, s = math.cos(a), math.sin(a)
        return [(x + r * (c * u - s * v), y + r * (s * u + c * v))
                for u, v in ((-1, -1), (1, -1), (1, 1), (-1, 1))]
    return [(x + r * math.cos(2 * math.pi * k / segments), y + r * math.sin(2 * math.pi * k / segments))
            for k in range(segments)]


def footprints_overlap(a: dict, b: dict) -> bool:
    """Exact test (separating axis on the footprints; circles as circles) of whether two objects
    intersect. Objects all stand on the ground and their heights overlap, so footprints decide."""
    ax, ay = a["3d_coords"][0], a["3d_coords"][1]
    bx, by = b["3d_coords"][0], b["3d_coords"][1]
    if a["shape"] != "cube" and b["shape"] != "cube":
        return math.hypot(ax - bx, ay - by) < object_radius(a) + object_radius(b)
    if a["shape"] != "cube":
        a, b = b, a
        ax, ay, bx, by = bx, by, ax, ay
    square = _footprint_polygon(a)
    if b["shape"] == "cube":
        other = _footprint_polygon(b)
        polys = (square, other)
        for poly in polys:
            for k in range(4):
                ex, ey = poly[(k + 1) % 4][0] - poly[k][0], poly[(k + 1) % 4][1] - poly[k][1]
                nx, ny = -ey, ex
                pa = [nx * px + ny * py for px, py in square]
                pb = [nx * px + ny * py for px, py in other]
                if max(pa) <= min(pb) or max(pb) <= min(pa):
                    return False
        return True
    # square (a) vs circle (b): distance from circle centre to the square
    ang = math.radians(a.get("rotation", 0.0))
    dx, dy = bx - ax, by - ay
    u = math.cos(ang) * dx + math.sin(ang) * dy
    v = -math.sin(ang) * dx + math.cos(ang) * dy
    ra = object_radius(a)
    cu, cv = max(-ra, min(ra, u)), max(-ra, min(ra, v))
    return math.hypot(u - cu, v - cv) < object_radius(b)


def compute_relationships(objects: list[dict], directions: dict | None = None,
                          eps: float = RELATION_EPS) -> dict:
    """CLEVR's ``compute_all_relationships``: ``out[rel][i]`` lists (sorted) the indices ``j`` with
    ``dot(coords[j] - coords[i], directions[rel]) > eps``, i.e. "object j is `rel` of object i"."""
    directions = directions or DIRECTIONS
    out: dict[str, list[list[int]]] = {}
    for rel in RELATIONS:
        d = directions[rel]
        rows = []
        for i, oi in enumerate(objects):
            ci = oi["3d_coords"]
            rows.append([j for j, oj in enumerate(objects) if j != i and
                         sum((oj["3d_coords"][k] - ci[k]) * d[k] for k in range(3)) > eps])
        out[rel] = rows
    return out


def _margins_ok(x: float, y: float, others: list[dict]) -> bool:
    for o in others:
        dx, dy = x - o["3d_coords"][0], y - o["3d_coords"][1]
        for rel in RELATIONS:
            d = DIRECTIONS[rel]
            m = dx * d[0] + dy * d[1]
            if 0 < m < MARGIN:
                return False
    return True


def _placement_ok(obj: dict, others: list[dict]) -> bool:
    """CLEVR's checks (gap >= MIN_DIST between footprints, MARGIN along the axes) with
    footprints bounded by circles (a cube's circumscribed circle), so objects never intersect."""
    x, y = obj["3d_coords"][0], obj["3d_coords"][1]
    fr = footprint_radius(obj["shape"], obj["size"])
    for o in others:
        gap = math.hypot(x - o["3d_coords"][0], y - o["3d_coords"][1]) - fr \
            - footprint_radius(o["shape"], o["size"])
        if gap < MIN_DIST:
            return False
    return _margins_ok(x, y, others)


def _make_object(shape, color, size, material, x, y, rotation) -> dict:
    r = SIZE_RADIUS[size]
    coords = [round(x, 4), round(y, 4), r]
    return {"shape": shape, "color": color, "size": size, "material": material,
            "3d_coords": coords, "pixel_coords": project(coords), "rotation": round(rotation, 3)}


def _visible_counts(objects: list[dict]) -> list[int]:
    return visible_pixel_counts({"objects": objects}, *VISIBILITY_SIZE)


def _all_visible(objects: list[dict]) -> bool:
    return all(c >= MIN_VISIBLE_PIXELS for c in _visible_counts(objects))


def _finish(objects: list[dict], *, image_index: int, image_filename: str, provenance: dict) -> dict:
    return {
        "image_index": image_index,
        "image_filename": image_filename,
        "split": "synthetic",
        "objects": objects,
        "relationships": compute_relationships(objects),
        "directions": {k: list(v) for k, v in DIRECTIONS.items()},
        "provenance": provenance,
    }


# --------------------------------------------------------------------------------------------
# Generation
# --------------------------------------------------------------------------------------------
def _place_random_object(rng: random.Random, others: list[dict]) -> dict | None:
    size = rng.choice(SIZES)
    shape = rng.choice(SHAPES)
    for _ in range(MAX_RETRIES):
        x = rng.uniform(-PLACEMENT_RANGE, PLACEMENT_RANGE)
        y = rng.uniform(-PLACEMENT_RANGE, PLACEMENT_RANGE)
        probe = {"shape": shape, "size": size, "3d_coords": [x, y, SIZE_RADIUS[size]]}
        if _placement_ok(probe, others):
            break
    else:
        return None
    color = rng.choice(COLORS)
    material = rng.choice(MATERIALS)
    rotation = 360.0 * rng.random()
    return _make_object(shape, color, size, material, x, y, rotation)


def generate_scene(seed: int, *, min_objects: int = 3, max_objects: int = 10) -> dict:
    """A random CLEVR scene, the same for the same arguments.

    Mirrors CLEVR's ``add_random_objects``: the object count is uniform in
    ``[min_objects, max_objects]``; each object gets a size, shape, a position uniform in
    ``[-3, 3]^2`` that keeps :data:`MIN_DIST` between footprints and :data:`MARGIN` along the
    cardinal axes (up to :data:`MAX_RETRIES` tries, else the whole scene is re-placed), then a
    color, material and rotation; a scene where some object shows fewer than
    :data:`MIN_VISIBLE_PIXELS` pixels at 240x160 (CLEVR's 200 at 480x320) is re-placed too.
    """
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise TypeError("seed must be an int")
    if not 1 <= min_objects <= max_objects <= 12:
        raise ValueError("need 1 <= min_objects <= max_objects <= 12")
    rng = random.Random(f"clevr-scene:{seed}")
    n = rng.randint(min_objects, max_objects)
    for _ in range(MAX_RESTARTS):
        objects: list[dict] = []
        for _i in range(n):
            obj = _place_random_object(rng, objects)
            if obj is None:
                break
            objects.append(obj)
        if len(objects) == n and _all_visible(objects):
            break
    else:  # pragma: no cover - needs an absurd object count
        raise RuntimeError(f"could not place {n} objects in {MAX_RESTARTS} restarts")
    provenance = {"source": "generated", "generator": GENERATOR, "seed": seed,
                  "min_objects": min_objects, "max_objects": max_objects,
                  "format_version": FORMAT_VERSION}
    return _finish(objects, image_index=seed, image_filename=f"synthetic_{seed:08d}.png",
                   provenance=provenance)


_EDITS = ("recolor", "reshape", "resize", "rematerial", "move", "remove", "add")


MIN_MOVE = 1.0   # a "move" edit displaces an object at least this far


def _apply_edit(rng: random.Random, objects: list[dict], kind: str,
                touched: set[int]) -> tuple[list[dict], str, dict | None] | None:
    """One edit of ``objects`` (a new list; the input is not changed), or None if it cannot apply.
    Objects whose ``id`` is in ``touched`` were edited already and are left alone, so two edits
    never cancel out. Returns (objects, description, the new object or None)."""
    n = len(objects)
    if kind == "add":
        if n >= 10:
            return None
        obj = _place_random_object(rng, objects)
        if obj is None:
            return None
        return objects + [obj], f"add {obj['size']} {obj['color']} {obj['material']} {obj['shape']}", obj
    free = [k for k in range(n) if id(objects[k]) not in touched]
    if not free:
        return None
    i = rng.choice(free)
    o = objects[i]
    rest = objects[:i] + objects[i + 1:]
    if kind == "remove":
        if n <= 3:
            return None
        return rest, f"remove the {o['size']} {o['color']} {o['material']} {o['shape']}", None
    if kind in ("recolor", "reshape", "resize", "rematerial"):
        attr = {"recolor": "color", "reshape": "shape", "resize": "size", "rematerial": "material"}[kind]
        new = dict(o)
        new[attr] = rng.choice([v for v in ATTRIBUTES[attr] if v != o[attr]])
        x, y = o["3d_coords"][0], o["3d_coords"][1]
        new = _make_object(new["shape"], new["color"], new["size"], new["material"], x, y,
                           new["rotation"])
        if attr in ("shape", "size") and not _placement_ok(new, rest):
            return None
        return (objects[:i] + [new] + objects[i + 1:],
                f"{attr} of object {i}: {o[attr]} -> {new[attr]}", new)
    # move
    for _ in range(MAX_RETRIES):
        x = rng.uniform(-PLACEMENT_RANGE, PLACEMENT_RANGE)
        y = rng.uniform(-PLACEMENT_RANGE, PLACEMENT_RANGE)
        if math.hypot(x - o["3d_coords"][0], y - o["3d_coords"][1]) < MIN_MOVE:
            continue
        new = _make_object(o["shape"], o["color"], o["size"], o["material"], x, y, o["rotation"])
        if _placement_ok(new, rest):
            return objects[:i] + [new] + objects[i + 1:], f"move object {i}", new
    return None


def perturb_scene(scene: dict, seed: int, *, edits: int = 1) -> dict:
    """A scene ``edits`` small changes away from ``scene`` (recolor / reshape / resize /
    rematerial / move by at least :data:`MIN_MOVE` / remove / add one object; each edit touches a
    different object), keeping every placement rule. Used to make near distractors for hard
    GuessWhich pools. Deterministic in (scene, seed, edits)."""
    if not 1 <= edits <= 6:
        raise ValueError("edits must be in 1..6")
    rng = random.Random(f"clevr-perturb:{seed}:{edits}:{scene_fingerprint(scene)}")
    base = [dict(o) for o in scene["objects"]]
    # an imported scene may already hide an object more than we allow: do not ask for better
    need = min([MIN_VISIBLE_PIXELS] + _visible_counts(base))
    for _ in range(MAX_RESTARTS):
        objects, done, touched = base, [], set()
        for _try in range(50 * edits):
            if len(done) == edits:
                break
            result = _apply_edit(rng, objects, rng.choice(_EDITS), touched)
            if result is not None:
                objects, what, new = result
                done.append(what)
                if new is not None:
                    touched.add(id(new))
        if len(done) < edits:
            continue
        if all(c >= need for c in _visible_counts(objects)):
            break
    else:  # pragma: no cover
        raise RuntimeError("could not perturb scene")
    stem = os.path.splitext(scene.get("image_filename") or f"scene_{scene.get('image_index')}")[0]
    provenance = {"source": "generated", "generator": GENERATOR, "seed": seed,
                  "derived_from": {"image_filename": scene.get("image_filename"),
                                   "image_index": scene.get("image_index"),
                                   "provenance": scene.get("provenance")},
                  "edits": done, "format_version": FORMAT_VERSION}
    return _finish(objects, image_index=seed, image_filename=f"{stem}_p{seed}e{edits}.png",
                   provenance=provenance)


# --------------------------------------------------------------------------------------------
# Validation and identity
# --------------------------------------------------------------------------------------------
def has_scene_graph(item: dict) -> bool:
    """True when ``item`` carries CLEVR objects (generated, imported, or an annotated image)."""
    return isinstance(item.get("objects"), list)


def scene_fingerprint(scene: dict) -> str:
    """A short content hash of the objects (attributes, coordinates to 0.01, rotation to 1
    degree): two scenes with the same fingerprint look the same."""
    rows = sorted(
        (o["shape"], o["color"], o["size"], o["material"],
         round(o["3d_coords"][0], 2), round(o["3d_coords"][1], 2), round(o.get("rotation", 0.0)) % 360)
        for o in scene.get("objects") or []
    )
    return hashlib.sha256(json.dumps(rows).encode()).hexdigest()[:16]


def _check(cond: bool, where: str, msg: str) -> None:
    if not cond:
        raise SceneFormatError(f"{where}: {msg}")


def _validate_object(o, where: str) -> None:
    _check(isinstance(o, dict), where, "object is not a JSON object")
    for attr, values in ATTRIBUTES.items():
        _check(o.get(attr) in values, where, f"{attr} must be one of {', '.join(values)}, got {o.get(attr)!r}")
    c = o.get("3d_coords")
    _check(isinstance(c, (list, tuple)) and len(c) == 3
           and all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in c),
           where, "3d_coords must be 3 finite numbers")
    if "pixel_coords" in o:
        p = o["pixel_coords"]
        _check(isinstance(p, (list, tuple)) and len(p) == 3
               and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in p),
               where, "pixel_coords must be 3 numbers")
    if "rotation" in o:
        r = o["rotation"]
        _check(isinstance(r, (int, float)) and not isinstance(r, bool) and math.isfinite(r),
               where, "rotation must be a finite number")


def validate_scene(scene, where: str = "scene") -> None:
    """Raise :class:`SceneFormatError` unless ``scene`` is a well-formed scene (see module doc)."""
    _check(isinstance(scene, dict), where, "scene is not a JSON object")
    objs = scene.get("objects")
    _check(isinstance(objs, list), where, "objects must be a list")
    for k, o in enumerate(objs):
        _validate_object(o, f"{where} object {k}")
    rels = scene.get("relationships")
    if rels is not None:
        _check(isinstance(rels, dict), where, "relationships must be an object")
        for rel in RELATIONS:
            rows = rels.get(rel)
            _check(isinstance(rows, list) and len(rows) == len(objs), where,
                   f"relationships[{rel!r}] must have one list per object")
            for i, row in enumerate(rows):
                _check(isinstance(row, list) and all(isinstance(j, int) and 0 <= j < len(objs) and j != i
                                                     for j in row),
                       where, f"relationships[{rel!r}][{i}] must list other objects' indices")


# --------------------------------------------------------------------------------------------
# Importers
# --------------------------------------------------------------------------------------------
def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _normalise_scene(raw: dict, where: str, provenance: dict, index: int) -> dict:
    validate_scene(raw, where)
    objects = []
    for o in raw["objects"]:
        obj = dict(o)  # keep any extra keys a CLEVR variant adds (e.g. bounding boxes)
        obj["3d_coords"] = [float(v) for v in o["3d_coords"]]
        obj["pixel_coords"] = list(o["pixel_coords"]) if "pixel_coords" in o else project(obj["3d_coords"])
        obj["rotation"] = float(o.get("rotation", 0.0))
        objects.append(obj)
    directions = raw.get("directions") or DIRECTIONS
    directions = {k: [float(x) for x in v] for k, v in directions.items()}
    for rel in RELATIONS:
        _check(rel in directions and len(directions[rel]) == 3, where, f"directions lacks {rel!r}")
    rels = raw.get("relationships")
    rels = ({rel: [list(r) for r in rels[rel]] for rel in RELATIONS} if rels is not None
            else compute_relationships(objects, directions))
    out = {k: v for k, v in raw.items() if k not in ("objects", "relationships", "directions")}
    out.update({
        "image_index": raw.get("image_index", index),
        "image_filename": raw.get("image_filename") or f"scene_{raw.get('image_index', index):06d}.png",
        "objects": objects,
        "relationships": rels,
        "directions": directions,
        "provenance": {**provenance, "index": index, "format_version": FORMAT_VERSION},
    })
    return out


def load_clevr_scenes(path, *, start: int = 0, limit: int | None = None) -> list[dict]:
    """Import a CLEVR scene file: ``CLEVR_<split>_scenes.json`` (``{"info", "scenes": [...]}``), a
    bare list of scenes, or one scene JSON. Relationships and directions are kept as the file has
    them (computed CLEVR's way when missing); missing ``pixel_coords`` are projected with
    :data:`CLEVR_CAMERA`. ``start``/``limit`` select a slice of the file's scenes."""
    p = Path(path)
    try:
        with open(p, "rb") as f:
            data = json.load(f)
    except FileNotFoundError:
        raise SceneFormatError(f"{p}: no such file") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise SceneFormatError(f"{p}: not valid JSON ({e})") from None
    info = None
    if isinstance(data, dict) and "scenes" in data:
        info, scenes = data.get("info"), data["scenes"]
    elif isinstance(data, dict) and "objects" in data:
        scenes = [data]
    else:
        scenes = data
    _check(isinstance(scenes, list), str(p), "expected {'scenes': [...]}, a list of scenes or one scene")
    provenance = {"source": "clevr", "file": p.name, "sha256": _sha256_file(p), "info": info}
    end = len(scenes) if limit is None else min(len(scenes), start + limit)
    return [_normalise_scene(scenes[k], f"{p.name} scene {k}", provenance, k) for k in range(start, end)]


def _captions_index(folder: Path) -> dict[str, list[str]]:
    cj = folder / "captions.json"
    if not cj.exists():
        return {}
    try:
        data = json.loads(cj.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise SceneFormatError(f"{cj}: not valid JSON ({e})") from None
    out: dict[str, list[str]] = {}
    if isinstance(data, dict):
        pairs = list(data.items())
    elif isinstance(data, list):
        pairs = []
        for k, row in enumerate(data):
            _check(isinstance(row, dict), f"{cj} entry {k}", "must be an object")
            name = row.get("image") or row.get("file_name") or row.get("image_filename")
            caps = row.get("captions", row.get("caption"))
            _check(isinstance(name, str), f"{cj} entry {k}", "needs an 'image' file name")
            pairs.append((name, caps))
    else:
        raise SceneFormatError(f"{cj}: expected an object or a list")
    for name, caps in pairs:
        if isinstance(caps, str):
            caps = [caps]
        _check(isinstance(caps, list) and all(isinstance(c, str) for c in caps), f"{cj} {name!r}",
               "caption must be a string or a list of strings")
        _check(os.path.basename(name) == name, f"{cj} {name!r}", "image names are plain file names")
        _check((folder / name).is_file(), f"{cj} {name!r}", "no such image in the folder")
        out.setdefault(name, []).extend(c.strip() for c in caps if c.strip())
    return out


def load_image_folder(path) -> list[dict]:
    """A researcher's folder of real images with captions (not recursive)::

        my_pool/
          captions.json   optional: {"a.jpg": "a caption" | ["caption", ...], ...}
                          or [{"image": "a.jpg", "caption": "..." | "captions": [...]}, ...]
          a.jpg           images: .png .jpg .jpeg .webp .gif .bmp
          a.txt           optional: captions for a.jpg, one per line (added after captions.json's)
          a.json          optional: a CLEVR scene for a.jpg (then objects/relationships are known)

    Returns one item per image, sorted by file name: ``image_index`` (position), ``image_filename``
    (the file name), ``image_path`` (absolute; the platform serves this file), ``width``,
    ``height``, ``caption`` (first caption or None), ``captions``, ``provenance``
    (``{"source": "image_folder", "folder", "file", "sha256"}``), and the scene keys when
    ``a.json`` exists. Unreadable images and malformed caption files raise
    :class:`SceneFormatError`.
    """
    folder = Path(path).resolve()
    _check(folder.is_dir(), str(folder), "not a folder")
    captions = _captions_index(folder)
    names = sorted(p.name for p in folder.iterdir()
                   if p.is_file() and p.suffix.lower() in IMAGE_EXTENSIONS)
    items = []
    for index, name in enumerate(names):
        f = folder / name
        try:
            with Image.open(f) as im:
                width, height = im.size
                im.verify()
        except (UnidentifiedImageError, OSError, SyntaxError) as e:
            raise SceneFormatError(f"{f}: not a readable image ({e})") from None
        caps = list(captions.get(name, []))
        txt = f.with_suffix(".txt")
        if txt.is_file():
            caps += [line.strip() for line in txt.read_text(encoding="utf-8").splitlines() if line.strip()]
        item: dict = {}
        side = f.with_suffix(".json")
        if side.is_file():
            try:
                raw = json.loads(side.read_text(encoding="utf-8"))
            except (json.JSONDecodeError, UnicodeDecodeError) as e:
                raise SceneFormatError(f"{side}: not valid JSON ({e})") from None
            item = _normalise_scene(raw, side.name, {}, index)
        item.update({
            "image_index": index,
            "image_filename": name,
            "image_path": str(f),
            "width": width,
            "height": height,
            "caption": caps[0] if caps else None,
            "captions": caps,
            "provenance": {"source": "image_folder", "folder": str(folder), "file": name,
                           "sha256": _sha256_file(f), "format_version": FORMAT_VERSION},
        })
        items.append(item)
    return items
