"""GuessWhich content: a pool of CLEVR scenes with one secret, and the secret's caption.

``generate(seed, config)`` draws the secret with :func:`games.clevr.scenes.generate_scene`, builds the
pool with :func:`games.clevr.embedding.build_pool` (distractors sampled on concentric distance bands
around the secret in embedding space, proportions by ``difficulty``, as in the paper's released
code), captions the secret with :func:`games.clevr.captions.generate_caption` and precomputes each
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
"""
from __future__ import annotations

from games.clevr.captions import generate_caption
from games.clevr.embedding import build_pool, coarse_rank_curve
from games.clevr.scenes import generate_scene

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
        "sources": {i: {"image_filename": s.get("image_filename"), "image_index": s.get("image_index"),
                        "provenance": s.get("provenance")} for i, s in zip(ids, pool)},
    }
