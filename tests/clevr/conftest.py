"""Hand-made CLEVR scenes and small GuessWhich contents, for the CLEVR library's tests and (imported by
their conftests) the GuessWhich and visual-dialog tests."""
from __future__ import annotations

import pytest

from clevr.captions import generate_caption
from clevr.scenes import DIRECTIONS, compute_relationships, generate_scene, project


def make_obj(shape, color, size, material, x, y):
    r = 0.7 if size == "large" else 0.35
    coords = [float(x), float(y), r]
    return {"shape": shape, "color": color, "size": size, "material": material, "3d_coords": coords,
            "pixel_coords": project(coords), "rotation": 0.0}


def make_scene(objs, index=0):
    return {"image_index": index, "image_filename": f"hand_{index}.png", "objects": objs,
            "relationships": compute_relationships(objs),
            "directions": {k: list(v) for k, v in DIRECTIONS.items()}}


@pytest.fixture
def scene5():
    """0 large red metal cube (0,0); 1 small blue rubber sphere (2,-2); 2 large green rubber
    cylinder (-2,2); 3 small yellow rubber cube (2,2); 4 large red metal sphere (-2.5,-2.5).
    CLEVR's camera: 4 is leftmost, 3 rightmost, 1 frontmost, 2 rearmost."""
    return make_scene([
        make_obj("cube", "red", "large", "metal", 0, 0),
        make_obj("sphere", "blue", "small", "rubber", 2, -2),
        make_obj("cylinder", "green", "large", "rubber", -2, 2),
        make_obj("cube", "yellow", "small", "rubber", 2, 2),
        make_obj("sphere", "red", "large", "metal", -2.5, -2.5),
    ])


def small_content(n=4, seed=0):
    """A GuessWhich content of ``n`` generated scenes without the embedding (fast)."""
    scenes = [generate_scene(1000 + seed * 10 + k) for k in range(n)]
    ids = [f"img{k + 1:02d}" for k in range(n)]
    secret = seed % n
    return {
        "format": "guesswhich/v1",
        "pool": [{"id": i, "scene": {"objects": s["objects"], "relationships": s["relationships"],
                                     "directions": s["directions"], "image_index": k,
                                     "image_filename": f"{i}.png"}}
                 for k, (i, s) in enumerate(zip(ids, scenes))],
        "secret_id": ids[secret],
        "caption": generate_caption(scenes[secret], seed)["text"],
        "caption_kind": "test",
        "difficulty": "medium",
        "coarse_rank": {i: (1 if k == secret else 2 + k) for k, i in enumerate(ids)},
        "sources": {i: {"image_filename": s["image_filename"], "image_index": s["image_index"],
                        "provenance": s["provenance"]} for i, s in zip(ids, scenes)},
    }


@pytest.fixture
def content4():
    return small_content(4, seed=1)


@pytest.fixture
def build():
    """Builders for tests: ``build.obj(...)``, ``build.scene([...])``, ``build.content(n, seed)``."""
    class _Build:
        obj = staticmethod(make_obj)
        scene = staticmethod(make_scene)
        content = staticmethod(small_content)
    return _Build
