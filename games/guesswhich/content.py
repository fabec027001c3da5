"""GuessWhich content: a pool of CLEVR scenes with one secret, and the secret's caption.

``generate(seed, config)`` draws the secret with :func:`clevr.scenes.generate_scene`, builds the
pool with :func:`clevr.embedding.build_pool` (distractors sampled on concentric distance bands
around the secret in embedding space, proportions by ``difficulty``, as in the paper's released
code), captions the secret with :func:`clevr.captions.generate_caption` and precomputes each
pool image's coarse rank (the secret's position when the pool is sorted by embedding distance from
that image), so the rules never need the embedding.

Pool images get opaque ids ``img01 .. imgNN`` in the (seeded, shuffled) pool order. The scenes the
players see are stripped of everything that could give the secret away (file names, image indices
and provenance: perturbed distractors record which scene they were derived from); the originals'
identity is kept in ``sources`` for exports.

Content shape::

    {"format": "guesswhich/v1", "pool": [{"id": "img01", "scene": {...}}, ...],
     "secret_id": "img07", "caption": "...", "caption_kind": "obj-count", "difficulty": "medium",
     "coarse_rank": {"img01": 4, ...}, "sources": {"img01": {"image_filename", "image_index",
     "provenance"}, ...}}

Imported CLEVR scenes (``manage.py import_content guesswhich CLEVR_val_scenes.json``,
:func:`import_file`): every scene of the file (or of ``start``/``limit``) becomes one item's secret;
its distractors come from the file's other scenes (a seeded sample of up to ``6 * pool_size``
candidates, banded by embedding distance as above), its caption from the scene. When the real
renders are found (:mod:`clevr.dataset`) each source carries ``image_path`` (the image
endpoint serves that file; the players' scenes never show it). Items add ``"provenance": {"source":
"clevr", "file", "sha256", "key": "<secret image_filename>:pool<N>:<difficulty>:seed<S>", "index",
"seed", "pool_size", "difficulty", "images": folder|None}``.
"""
from __future__ import annotations

import random

from clevr.captions import generate_caption
from clevr.dataset import item_seed, load_dataset
from clevr.embedding import build_pool, coarse_rank_curve
from clevr.scenes import generate_scene

DEFAULTS = {"pool_size": 20, "difficulty": "medium"}
OBJECT_KEYS = ("shape", "color", "size", "material", "3d_coords", "pixel_coords", "rotation")


def public_scene(scene: dict, image_id: str, position: int) -> dict:
    """The scene as players may see it: objects, relationships, directions; nothing else."""
    return {
        "image_index": position,
        "image_filename": f"{image_id}.png",
        "objects": [{k: o[k] for k in OBJECT_KEYS if k in o} for o in scene["objects"]],
        "relationships": scene["relationships"],
        "directions": scene.get("directions"),
    }


def generate(seed: int, config: dict | None = None) -> dict:
    config = {**DEFAULTS, **(config or {})}
    size = int(config["pool_size"])
    difficulty = config["difficulty"]
    secret = generate_scene(seed)
    pool = build_pool(secret, seed=seed, size=size, difficulty=difficulty)
    return _content(secret, pool, seed, difficulty)


def _source(scene: dict) -> dict:
    out = {"image_filename": scene.get("image_filename"), "image_index": scene.get("image_index"),
           "provenance": scene.get("provenance")}
    if scene.get("image_path"):
        out["image_path"] = scene["image_path"]
    return out


def _content(secret: dict, pool: list[dict], seed: int, difficulty: str) -> dict:
    ids = [f"img{k + 1:02d}" for k in range(len(pool))]
    secret_pos = next(k for k, s in enumerate(pool) if s is secret)
    caption = generate_caption(secret, seed)
    ranks = coarse_rank_curve(secret, pool, pool)
    return {
        "format": "guesswhich/v1",
        "pool": [{"id": i, "scene": public_scene(s, i, k)} for k, (i, s) in enumerate(zip(ids, pool))],
        "secret_id": ids[secret_pos],
        "caption": caption["text"],
        "caption_kind": caption["kind"],
        "difficulty": difficulty,
        "coarse_rank": dict(zip(ids, ranks)),
        "sources": {i: _source(s) for i, s in zip(ids, pool)},
    }


def import_file(path, *, images=None, start: int = 0, limit: int | None = None, pool_size: int = 20,
                difficulty: str = "medium", seed: int = 0) -> list[dict]:
    """GuessWhich items from a CLEVR scenes file: one per scene in ``start``/``limit``, each with a
    pool of ``pool_size`` drawn from the file's scenes (see the module docstring)."""
    scenes, folder = load_dataset(path, images=images)
    end = len(scenes) if limit is None else min(len(scenes), start + limit)
    if not 0 <= start < end:
        raise ValueError(f"{path}: no scenes in the range start={start} limit={limit} (the file has {len(scenes)})")
    if len(scenes) < pool_size:
        raise ValueError(f"{path}: a pool of {pool_size} needs {pool_size} scenes; the file has {len(scenes)} "
                         f"(use a smaller pool_size)")
    items = []
    for k in range(start, end):
        secret = scenes[k]
        s = item_seed(secret, seed)
        others = scenes[:k] + scenes[k + 1:]
        n_cand = min(len(others), 6 * pool_size)
        candidates = random.Random(f"clevr-import-candidates:{s}").sample(others, n_cand)
        pool = build_pool(secret, candidates, seed=s, size=pool_size, difficulty=difficulty)
        content = _content(secret, pool, s, difficulty)
        prov = secret.get("provenance") or {}
        content["provenance"] = {"source": "clevr", "file": prov.get("file"), "sha256": prov.get("sha256"),
                                 "key": f"{secret.get('image_filename')}:pool{pool_size}:{difficulty}:seed{seed}", "index": prov.get("index"), "seed": s,
                                 "pool_size": pool_size, "difficulty": difficulty,
                                 "images": str(folder) if folder else None}
        items.append(content)
    return items
