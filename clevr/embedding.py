"""Scene embeddings, GuessWhich image pools and the per-round coarse rank.

GuessWhich (Chattopadhyay et al. 2017, ``seeds/001_*``) built each 20-image pool by sampling
distractors "on concentric hyper-spheres (Euclidean balls) centred on the secret image in an
embedding space", a fixed proportion from each sphere, the proportions setting the difficulty;
and it reported a per-round coarse rank: sort the pool by embedding distance from the human's
best guess and read off the secret's position. The released code used CNN (fc7) features of COCO
images; our scenes are fully annotated, so the embedding is computed from the scene graph.

Scene embedding (:data:`EMBEDDING_DIM` = 95 floats, blocks weighted by :data:`BLOCK_WEIGHTS`):

* ``counts`` (16): number of objects; counts per shape (3), color (8), size (2), material (2).
* ``joint`` (40): counts per (shape, color) (24), per (shape, size, material) (12) and per
  (size, material) (4).
* ``layout`` (9): objects per cell (large 1.0, small 0.5) of a 3x3 grid over camera-aligned ground
  coordinates ``(right, front)`` with cell edges at +-:data:`GRID_EDGE`.
* ``positions`` (30): for each of the 15 attribute values (shapes, colors, sizes, materials in
  that order), the mean ``(right, front)`` coordinate of the objects having it, divided by 3;
  ``(0, 0)`` when no object has it.

Items without a scene graph (real photos from ``load_image_folder``) use :func:`image_embedding`
(an 8x8 RGB thumbnail and a 4x4x4 color histogram); a pool must not mix the two kinds.

Public API: ``scene_embedding(scene)``, ``image_embedding(path)``, ``embed(item)``,
``embedding_distance(a, b)``, ``build_pool(secret, candidates=None, *, seed, size=20,
difficulty="medium", generator=None, n_candidates=None)``, ``band_of(...)``,
``coarse_rank(secret, guess, pool)``, ``coarse_rank_curve(secret, guesses, pool)``.
"""
from __future__ import annotations

import random
from typing import Callable, Iterable

import numpy as np
from PIL import Image

from clevr.scenes import (
    ATTRIBUTES, COLORS, DIRECTIONS, MATERIALS, SHAPES, SIZES, generate_scene, has_scene_graph,
    perturb_scene, scene_fingerprint,
)

GRID_EDGE = 1.2
BLOCK_WEIGHTS = {"counts": 1.0, "joint": 0.7, "layout": 0.6, "positions": 0.8}
EMBEDDING_DIM = 16 + 40 + 9 + 30

# (inner, middle, outer) share of the distractors per difficulty: hard pools draw mostly from the
# nearest band around the secret, easy pools from the farthest.
DIFFICULTY_PROPORTIONS = {
    "hard": (0.7, 0.2, 0.1),
    "medium": (1 / 3, 1 / 3, 1 / 3),
    "easy": (0.1, 0.2, 0.7),
}
BAND_QUANTILES = (1 / 3, 2 / 3)       # band radii: these quantiles of the candidates' distances
PERTURB_EDITS = (1, 2, 3, 4)          # near candidates: the secret with this many edits

_VALUES = [(attr, v) for attr in ("shape", "color", "size", "material") for v in ATTRIBUTES[attr]]
_SIZE_WEIGHT = {"large": 1.0, "small": 0.5}


def _ground_frame(o: dict) -> tuple[float, float]:
    x, y = o["3d_coords"][0], o["3d_coords"][1]
    r, f = DIRECTIONS["right"], DIRECTIONS["front"]
    return x * r[0] + y * r[1], x * f[0] + y * f[1]


def _cell(v: float) -> int:
    return 0 if v < -GRID_EDGE else (2 if v > GRID_EDGE else 1)


def scene_embedding(scene: dict) -> np.ndarray:
    """The fixed-length embedding of a scene graph (see the module docstring)."""
    objs = scene["objects"]
    counts = np.zeros(16)
    joint = np.zeros(40)
    layout = np.zeros(9)
    pos_sum = np.zeros((len(_VALUES), 2))
    pos_n = np.zeros(len(_VALUES))
    vidx = {key: k for k, key in enumerate(_VALUES)}
    counts[0] = len(objs)
    for o in objs:
        s, c, z, m = SHAPES.index(o["shape"]), COLORS.index(o["color"]), SIZES.index(o["size"]), \
            MATERIALS.index(o["material"])
        counts[1 + s] += 1
        counts[4 + c] += 1
        counts[12 + z] += 1
        counts[14 + m] += 1
        joint[s * 8 + c] += 1
        joint[24 + s * 4 + z * 2 + m] += 1
        joint[36 + z * 2 + m] += 1
        r, f = _ground_frame(o)
        layout[_cell(f) * 3 + _cell(r)] += _SIZE_WEIGHT[o["size"]]
        for attr in ("shape", "color", "size", "material"):
            k = vidx[(attr, o[attr])]
            pos_sum[k] += (r, f)
            pos_n[k] += 1
    positions = np.where(pos_n[:, None] > 0, pos_sum / np.maximum(pos_n, 1)[:, None], 0.0) / 3.0
    w = BLOCK_WEIGHTS
    return np.concatenate([w["counts"] * counts, w["joint"] * joint, w["layout"] * layout,
                           w["positions"] * positions.ravel()])


def image_embedding(path) -> np.ndarray:
    """Pixel features of an image file: an 8x8 RGB thumbnail (192, in [0, 1]) and a 4x4x4 color
    histogram (64, summing to 1, scaled by 4). Deterministic; no model weights."""
    with Image.open(path) as im:
        rgb = im.convert("RGB")
        thumb = np.asarray(rgb.resize((8, 8), Image.Resampling.BOX), dtype=float).ravel() / 255.0
        small = np.asarray(rgb.resize((64, 64), Image.Resampling.BOX), dtype=np.int64) // 64
    bins = small[..., 0] * 16 + small[..., 1] * 4 + small[..., 2]
    hist = np.bincount(bins.ravel(), minlength=64).astype(float)
    return np.concatenate([thumb, 4.0 * hist / hist.sum()])


def embed(item: dict) -> np.ndarray:
    """:func:`scene_embedding` for items with a scene graph, else :func:`image_embedding`."""
    if has_scene_graph(item):
        return scene_embedding(item)
    if item.get("image_path"):
        return image_embedding(item["image_path"])
    raise ValueError("item has neither objects nor an image_path")


def embedding_distance(a: dict, b: dict) -> float:
    """Euclidean distance between two items' embeddings."""
    return float(np.linalg.norm(embed(a) - embed(b)))


def _key(item: dict) -> str:
    return item.get("image_filename") or f"#{item.get('image_index')}"


def _default_candidates(secret: dict, rng: random.Random, count: int,
                        generator: Callable[[int], dict] | None) -> list[dict]:
    gen = generator or generate_scene
    out: list[dict] = []
    near = count // 2 if has_scene_graph(secret) and generator is None else 0
    for k in range(near):
        out.append(perturb_scene(secret, rng.getrandbits(31), edits=PERTURB_EDITS[k % len(PERTURB_EDITS)]))
    for _ in range(count - near):
        out.append(gen(rng.getrandbits(31)))
    return out


def _quotas(n: int, proportions: tuple[float, float, float]) -> list[int]:
    raw = [p * n for p in proportions]
    q = [int(x) for x in raw]
    order = sorted(range(3), key=lambda k: (-(raw[k] - q[k]), k))
    for k in order[: n - sum(q)]:
        q[k] += 1
    return q


def band_of(distances: np.ndarray) -> np.ndarray:
    """Band (0 inner, 1 middle, 2 outer) of each distance, with radii at :data:`BAND_QUANTILES`
    of these distances."""
    r1, r2 = np.quantile(distances, BAND_QUANTILES)
    return np.where(distances <= r1, 0, np.where(distances <= r2, 1, 2))


def build_pool(secret: dict, candidates: Iterable[dict] | None = None, *, seed: int, size: int = 20,
               difficulty: str = "medium", generator: Callable[[int], dict] | None = None,
               n_candidates: int | None = None) -> list[dict]:
    """A GuessWhich pool: ``size`` items, the secret and ``size - 1`` distractors, shuffled.

    Distractors come from ``candidates`` or, when it is None, from ``n_candidates`` (default
    ``6 * size``) made from ``seed``: half perturbations of the secret (1-4 edits, when the secret
    is a scene and no ``generator`` is given), the rest ``generator(seed_k)`` (default
    :func:`generate_scene`). Candidates identical to the secret or to each other (same
    ``image_filename`` or same content) are dropped. The candidates are split into three
    concentric bands by distance to the secret (radii at the 1/3 and 2/3 quantiles) and each band
    gives its :data:`DIFFICULTY_PROPORTIONS` share, sampled uniformly; a band that runs short is
    topped up from the nearest other band. The same arguments give the same pool. Items are
    returned as given (not copied).
    """
    if difficulty not in DIFFICULTY_PROPORTIONS:
        raise ValueError(f"difficulty must be one of {', '.join(DIFFICULTY_PROPORTIONS)}")
    if not 2 <= size <= 200:
        raise ValueError("size must be in 2..200")
    rng = random.Random(f"clevr-pool:{seed}:{size}:{difficulty}")
    if candidates is None:
        cand_rng = random.Random(f"clevr-pool-candidates:{seed}:{_key(secret)}")
        candidates = _default_candidates(secret, cand_rng, n_candidates or 6 * size, generator)
    secret_fp = scene_fingerprint(secret) if has_scene_graph(secret) else None
    seen_keys, seen_fps, pool_cands = {_key(secret)}, {secret_fp}, []
    for c in candidates:
        fp = scene_fingerprint(c) if has_scene_graph(c) else (c.get("provenance") or {}).get("sha256")
        if _key(c) in seen_keys or (fp is not None and fp in seen_fps):
            continue
        seen_keys.add(_key(c))
        seen_fps.add(fp)
        pool_cands.append(c)
    need = size - 1
    if len(pool_cands) < need:
        raise ValueError(f"need at least {need} distinct candidates, got {len(pool_cands)}")
    e0 = embed(secret)
    emb = np.stack([embed(c) for c in pool_cands])
    if emb.shape[1] != e0.shape[0]:
        raise ValueError("secret and candidates are embedded differently (scene graph vs image)")
    dist = np.linalg.norm(emb - e0, axis=1)
    bands = band_of(dist)
    members = [[i for i in range(len(pool_cands)) if bands[i] == b] for b in range(3)]
    quotas = _quotas(need, DIFFICULTY_PROPORTIONS[difficulty])
    chosen: list[int] = []
    missing = [0, 0, 0]
    for b in range(3):
        picked = rng.sample(members[b], min(quotas[b], len(members[b])))
        chosen += picked
        members[b] = [i for i in members[b] if i not in set(picked)]
        missing[b] = quotas[b] - len(picked)
    for b in range(3):  # a short band is topped up from the nearest band, closest items first
        for ob in sorted((x for x in range(3) if x != b), key=lambda x: (abs(x - b), x)):
            if missing[b] == 0:
                break
            order = sorted(members[ob], key=lambda j: dist[j] if ob > b else -dist[j])
            take = order[: missing[b]]
            chosen += take
            members[ob] = [i for i in members[ob] if i not in set(take)]
            missing[b] -= len(take)
    pool = [secret] + [pool_cands[i] for i in chosen]
    rng.shuffle(pool)
    return pool


def _find(pool: list[dict], item) -> int:
    key = item if isinstance(item, str) else _key(item)
    for k, p in enumerate(pool):
        if _key(p) == key:
            return k
    raise ValueError(f"{key!r} is not in the pool")


def coarse_rank_curve(secret, guesses: Iterable, pool: list[dict]) -> list[int]:
    """:func:`coarse_rank` for each round's best guess (items or ``image_filename`` strings)."""
    emb = np.stack([embed(p) for p in pool])
    s = _find(pool, secret)
    ranks = []
    for g in guesses:
        gi = _find(pool, g)
        d = np.linalg.norm(emb - emb[gi], axis=1)
        closer = (d < d[s]) & (np.arange(len(pool)) != s)
        ranks.append(1 + int(closer.sum()))
    return ranks


def coarse_rank(secret, guess, pool: list[dict]) -> int:
    """GuessWhich's per-round coarse rank: sort ``pool`` by embedding distance from the best
    ``guess`` and return the 1-based position of ``secret`` (items strictly closer to the guess
    than the secret come first; ties count in the secret's favour). A right guess gives 1.
    ``secret`` and ``guess`` are pool items or their ``image_filename``."""
    return coarse_rank_curve(secret, [guess], pool)[0]
