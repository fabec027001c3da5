"""Scene embedding, GuessWhich pools and coarse rank (clevr/embedding.py). No database."""
from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from clevr.embedding import (
    BLOCK_WEIGHTS, EMBEDDING_DIM, band_of, build_pool, coarse_rank, coarse_rank_curve, embed,
    embedding_distance, scene_embedding,
)
from clevr.scenes import (
    compute_relationships, generate_scene, load_image_folder, perturb_scene, scene_fingerprint,
)


def make_scene(objs, name="hand.png"):
    objects = [{"shape": s, "color": c, "size": z, "material": m, "3d_coords": [x, y, 0.7 if z == "large" else 0.35],
                "pixel_coords": [0, 0, 0.0], "rotation": 0.0} for s, c, z, m, x, y in objs]
    return {"image_index": 0, "image_filename": name, "objects": objects,
            "relationships": compute_relationships(objects)}


def mean_distance(secret, pool):
    return float(np.mean([embedding_distance(secret, p) for p in pool if p is not secret]))


def test_embedding_blocks_hold_the_documented_values():
    sc = make_scene([("cube", "red", "large", "metal", 0.0, 0.0),
                     ("sphere", "red", "small", "rubber", 2.0, 2.0),
                     ("cube", "blue", "large", "rubber", -2.0, 0.5)])
    e = scene_embedding(sc)
    assert e.shape == (EMBEDDING_DIM,) == (95,)
    w = BLOCK_WEIGHTS["counts"]
    assert e[0] == 3 * w                                # objects
    assert list(e[1:4] / w) == [2, 1, 0]                # cube, sphere, cylinder
    assert list(e[4:12] / w) == [0, 2, 1, 0, 0, 0, 0, 0]  # gray red blue ...
    assert list(e[12:14] / w) == [2, 1]                 # large, small
    assert list(e[14:16] / w) == [2, 1]                 # rubber, metal
    wj = BLOCK_WEIGHTS["joint"]
    assert e[16 + 0 * 8 + 1] == pytest.approx(wj)       # (cube, red)
    assert e[16 + 1 * 8 + 1] == pytest.approx(wj)       # (sphere, red)
    assert e[16 + 0 * 8 + 2] == pytest.approx(wj)       # (cube, blue)
    # layout: the sphere at (2, 2) is at right = 2.82, front = 0.20 -> right column, middle row
    wl = BLOCK_WEIGHTS["layout"]
    layout = e[56:65] / wl
    assert layout.sum() == pytest.approx(2.5)           # large 1 + small 0.5 + large 1
    assert layout[1 * 3 + 2] == pytest.approx(0.5)
    # positions: no cylinder -> (0, 0); the sphere's mean position is its own
    pos = e[65:95].reshape(15, 2) / BLOCK_WEIGHTS["positions"]
    assert list(pos[2]) == [0.0, 0.0]
    r = 2 * 0.6563112735748291 + 2 * 0.7544902563095093
    assert pos[1][0] == pytest.approx(r / 3)


def test_embedding_is_deterministic_and_sensitive():
    sc = generate_scene(4)
    assert np.array_equal(scene_embedding(sc), scene_embedding(generate_scene(4)))
    assert embedding_distance(sc, sc) == 0
    changed = perturb_scene(sc, 1, edits=1)
    assert embedding_distance(sc, changed) > 0.5
    assert embedding_distance(sc, generate_scene(5)) > 0


@pytest.fixture(scope="module")
def pools():
    out = {}
    for secret_seed in (42, 7):
        secret = generate_scene(secret_seed)
        out[secret_seed] = (secret, {d: build_pool(secret, seed=3, difficulty=d) for d in ("easy", "medium", "hard")})
    return out


def test_pool_size_secret_and_no_duplicates(pools):
    for secret, by_diff in pools.values():
        for pool in by_diff.values():
            assert len(pool) == 20
            assert sum(p is secret for p in pool) == 1
            assert len({p["image_filename"] for p in pool}) == 20
            assert len({scene_fingerprint(p) for p in pool}) == 20


def test_pool_difficulty_orders_mean_distance(pools):
    for secret, by_diff in pools.values():
        easy, medium, hard = (mean_distance(secret, by_diff[d]) for d in ("easy", "medium", "hard"))
        assert easy > medium > hard
        assert easy > 1.5 * hard


def test_pool_is_deterministic_and_seeded(pools):
    secret, by_diff = pools[42]
    again = build_pool(secret, seed=3, difficulty="medium")
    assert [p["image_filename"] for p in again] == [p["image_filename"] for p in by_diff["medium"]]
    other = build_pool(secret, seed=4, difficulty="medium")
    assert {p["image_filename"] for p in other} != {p["image_filename"] for p in again}


def test_pool_from_given_candidates_and_bands():
    secret = generate_scene(100)
    candidates = [generate_scene(s) for s in range(200, 260)] + [secret, generate_scene(100)]
    pool = build_pool(secret, candidates, seed=1, size=12, difficulty="hard")
    assert len(pool) == 12 and sum(p["image_filename"] == secret["image_filename"] for p in pool) == 1
    dists = np.array([embedding_distance(secret, c) for c in candidates[:60]])
    bands = band_of(dists)
    assert (bands == 0).sum() == 20 and (bands == 2).sum() == 20
    chosen = {p["image_filename"] for p in pool if p is not secret}
    inner = {candidates[i]["image_filename"] for i in np.nonzero(bands == 0)[0]}
    # hard: 70% of 11 distractors from the inner band (quota 8 after rounding)
    assert len(chosen & inner) == 8


def test_pool_generator_argument_and_errors():
    secret = generate_scene(11)
    pool = build_pool(secret, seed=2, size=8, generator=lambda s: generate_scene(s, min_objects=3, max_objects=4),
                      difficulty="easy")
    assert all(3 <= len(p["objects"]) <= 4 for p in pool if p is not secret)
    with pytest.raises(ValueError, match="difficulty"):
        build_pool(secret, seed=1, difficulty="extreme")
    with pytest.raises(ValueError, match="distinct candidates"):
        build_pool(secret, [generate_scene(1), generate_scene(1)], seed=1, size=5)


def test_coarse_rank():
    secret = generate_scene(30)
    pool = build_pool(secret, seed=5, size=10, difficulty="medium")
    assert coarse_rank(secret, secret, pool) == 1
    emb = {p["image_filename"]: embed(p) for p in pool}
    for guess in pool:
        if guess is secret:
            continue
        d_secret = np.linalg.norm(emb[guess["image_filename"]] - emb[secret["image_filename"]])
        closer = sum(np.linalg.norm(emb[k] - emb[guess["image_filename"]]) < d_secret
                     for k in emb if k != secret["image_filename"])
        rank = coarse_rank(secret, guess["image_filename"], pool)
        assert rank == 1 + closer and 2 <= rank <= 10
    guesses = [p for p in pool if p is not secret][:3] + [secret]
    curve = coarse_rank_curve(secret, guesses, pool)
    assert curve[-1] == 1 and len(curve) == 4
    with pytest.raises(ValueError, match="not in the pool"):
        coarse_rank(secret, "nope.png", pool)


def test_coarse_rank_on_a_hand_built_pool():
    base = [("cube", "red", "large", "rubber", -2.0, -2.0), ("sphere", "blue", "small", "metal", 2.0, 2.0)]
    secret = make_scene(base, "secret.png")
    near = make_scene([base[0], ("sphere", "green", "small", "metal", 2.0, 2.0)], "near.png")
    cylinders = [("cylinder", "yellow", "large", "metal", 0.0, 0.0), ("cylinder", "cyan", "small", "metal", -2.5, 2.5)]
    far_green = make_scene(cylinders + [("cylinder", "green", "small", "metal", 2.5, -2.5)], "far_green.png")
    far_blue = make_scene(cylinders + [("cylinder", "blue", "small", "metal", 2.5, -2.5)], "far_blue.png")
    pool = [secret, near, far_green, far_blue]
    # sorted by distance from the guess: the guess itself first, then the rest
    assert coarse_rank(secret, near, pool) == 2            # near, secret, ...
    assert coarse_rank(secret, far_blue, pool) == 3        # far_blue, far_green, secret, near
    assert coarse_rank(secret, far_green, pool) == 4       # far_green, far_blue, near, secret
    assert coarse_rank_curve(secret, ["far_green.png", "near.png", "secret.png"], pool) == [4, 2, 1]


def test_pools_of_real_images(tmp_path):
    rng = np.random.default_rng(0)
    for k in range(30):
        base = rng.integers(0, 256, size=3)
        arr = np.clip(base + rng.integers(-30, 30, size=(24, 32, 3)), 0, 255).astype(np.uint8)
        Image.fromarray(arr).save(tmp_path / f"img{k:02d}.png")
    items = load_image_folder(tmp_path)
    assert embed(items[0]).shape == (256,)
    secret = items[0]
    easy = build_pool(secret, items, seed=1, size=10, difficulty="easy")
    hard = build_pool(secret, items, seed=1, size=10, difficulty="hard")
    assert len(easy) == len(hard) == 10
    assert mean_distance(secret, easy) > mean_distance(secret, hard)
    with pytest.raises(ValueError, match="embedded differently"):
        build_pool(secret, [generate_scene(s) for s in range(12)], seed=1, size=5)
