"""The CLEVR scene format, generator and importers (clevr/scenes.py). No database."""
from __future__ import annotations

import copy
import itertools
import json
import math

import pytest
from PIL import Image

from clevr import scenes
from clevr.scenes import (
    COLORS, MATERIALS, SHAPES, SIZES, SceneFormatError, compute_relationships, footprint_radius,
    footprints_overlap, generate_scene, has_scene_graph, load_clevr_scenes, load_image_folder,
    perturb_scene, project, scene_fingerprint, validate_scene,
)

# CLEVR_val_000000 as released (objects, relationships and directions copied from the dataset).
CLEVR_VAL_0 = {
    "image_index": 0,
    "image_filename": "CLEVR_val_000000.png",
    "split": "val",
    "objects": [
        {"color": "brown", "size": "large", "rotation": 178.92387258999463, "shape": "cylinder",
         "3d_coords": [-1.4937210083007812, -1.9936031103134155, 0.699999988079071],
         "material": "rubber", "pixel_coords": [119, 131, 10.801968574523926]},
        {"color": "gray", "size": "large", "rotation": 243.405459279722, "shape": "cube",
         "3d_coords": [1.555708646774292, -2.104736566543579, 0.699999988079071],
         "material": "rubber", "pixel_coords": [198, 190, 8.60103988647461]},
        {"color": "green", "size": "small", "rotation": 230.45235024165092, "shape": "cylinder",
         "3d_coords": [-2.342184543609619, -0.5205014944076538, 0.3499999940395355],
         "material": "rubber", "pixel_coords": [161, 118, 12.372727394104004]},
        {"color": "purple", "size": "large", "rotation": 31.654351858799153, "shape": "sphere",
         "3d_coords": [-0.8073106408119202, 1.914123773574829, 0.699999988079071],
         "material": "metal", "pixel_coords": [282, 100, 12.495001792907715]},
        {"color": "gray", "size": "small", "rotation": 42.183287560575, "shape": "cube",
         "3d_coords": [2.6763813495635986, 0.03453871235251427, 0.3499999940395355],
         "material": "metal", "pixel_coords": [337, 195, 9.161211967468262]},
    ],
    "relationships": {
        "right": [[1, 2, 3, 4], [3, 4], [1, 3, 4], [4], []],
        "behind": [[2, 3], [0, 2, 3, 4], [3], [], [0, 2, 3]],
        "front": [[1, 4], [], [0, 1, 4], [0, 1, 2, 4], [1]],
        "left": [[], [0, 2], [0], [0, 1, 2], [0, 1, 2, 3]],
    },
    "directions": {
        "right": [0.6563112735748291, 0.7544902563095093, -0.0],
        "behind": [-0.754490315914154, 0.6563112735748291, 0.0],
        "above": [0.0, 0.0, 1.0],
        "below": [-0.0, -0.0, -1.0],
        "left": [-0.6563112735748291, -0.7544902563095093, 0.0],
        "front": [0.754490315914154, -0.6563112735748291, -0.0],
    },
}

SEEDS = range(40)


@pytest.fixture(scope="module")
def generated():
    return [generate_scene(s) for s in SEEDS]


# ---------------------------------------------------------------- generator ---------------------

def test_generator_is_deterministic_and_seed_dependent():
    a, b = generate_scene(123), generate_scene(123)
    assert a == b
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    assert generate_scene(124)["objects"] != a["objects"]


def test_generated_scene_is_json_safe_and_valid(generated):
    for sc in generated:
        assert json.loads(json.dumps(sc)) == sc
        validate_scene(sc)
        assert sc["provenance"]["source"] == "generated"
        assert sc["image_index"] == sc["provenance"]["seed"]
        assert sc["image_filename"] == f"synthetic_{sc['image_index']:08d}.png"


def test_object_counts_follow_the_bounds(generated):
    counts = [len(sc["objects"]) for sc in generated]
    assert min(counts) >= 3 and max(counts) <= 10
    assert len(set(counts)) >= 5          # the count really varies
    assert all(len(generate_scene(s, min_objects=7, max_objects=7)["objects"]) == 7 for s in range(5))
    with pytest.raises(ValueError):
        generate_scene(1, min_objects=5, max_objects=4)


def test_attributes_and_ground_plane(generated):
    seen = {k: set() for k in ("shape", "color", "size", "material")}
    for sc in generated:
        for o in sc["objects"]:
            assert o["shape"] in SHAPES and o["color"] in COLORS
            assert o["size"] in SIZES and o["material"] in MATERIALS
            x, y, z = o["3d_coords"]
            assert -3 <= x <= 3 and -3 <= y <= 3
            assert z == {"large": 0.7, "small": 0.35}[o["size"]]   # standing on the ground
            assert 0 <= o["rotation"] < 360
            for k in seen:
                seen[k].add(o[k])
    assert seen == {"shape": set(SHAPES), "color": set(COLORS), "size": set(SIZES),
                    "material": set(MATERIALS)}


def test_no_two_objects_overlap(generated):
    for sc in generated:
        for a, b in itertools.combinations(sc["objects"], 2):
            assert not footprints_overlap(a, b)
            gap = math.dist(a["3d_coords"][:2], b["3d_coords"][:2]) \
                - footprint_radius(a["shape"], a["size"]) - footprint_radius(b["shape"], b["size"])
            assert gap >= scenes.MIN_DIST - 1e-3


def test_footprint_overlap_detects_real_overlaps():
    cube = {"shape": "cube", "size": "large", "3d_coords": [0.0, 0.0, 0.7], "rotation": 45.0}
    near = {"shape": "sphere", "size": "small", "3d_coords": [1.2, 0.0, 0.35]}   # corner reaches 0.99
    far = {"shape": "sphere", "size": "small", "3d_coords": [1.4, 0.0, 0.35]}
    assert footprints_overlap(cube, near)
    assert not footprints_overlap(cube, far)
    assert footprints_overlap(cube, {**cube, "3d_coords": [1.3, 0.1, 0.7], "rotation": 0.0})
    assert not footprints_overlap(cube, {**cube, "3d_coords": [2.0, 0.0, 0.7], "rotation": 0.0})


def test_relationships_are_consistent(generated):
    for sc in generated:
        rels, n = sc["relationships"], len(sc["objects"])
        assert rels == compute_relationships(sc["objects"])
        for i, j in itertools.permutations(range(n), 2):
            assert (j in rels["left"][i]) == (i in rels["right"][j])
            assert (j in rels["front"][i]) == (i in rels["behind"][j])
            # CLEVR's placement margin makes every pair unambiguous on both axes
            assert (j in rels["left"][i]) != (j in rels["right"][i])
            assert (j in rels["front"][i]) != (j in rels["behind"][i])


def test_relationships_match_released_clevr():
    assert compute_relationships(CLEVR_VAL_0["objects"], CLEVR_VAL_0["directions"]) == CLEVR_VAL_0["relationships"]


def test_camera_matches_real_clevr_pixel_coords():
    for o in CLEVR_VAL_0["objects"]:
        px, py, depth = project(o["3d_coords"])
        rx, ry, rd = o["pixel_coords"]
        assert abs(px - rx) <= 1 and abs(py - ry) <= 1
        assert abs(depth - rd) < 0.1


def test_every_object_is_visible_in_the_frame(generated):
    from clevr.render import visible_pixel_counts

    for sc in generated[:15]:
        counts = visible_pixel_counts(sc, *scenes.VISIBILITY_SIZE)
        assert min(counts) >= scenes.MIN_VISIBLE_PIXELS
        for o in sc["objects"]:
            px, py, _ = o["pixel_coords"]
            assert 0 <= px < 480 and 0 <= py < 320


def test_perturbed_scene_differs_and_keeps_the_rules():
    base = generate_scene(9)
    for k in (1, 2, 3):
        p = perturb_scene(base, 77, edits=k)
        assert p == perturb_scene(base, 77, edits=k)
        assert scene_fingerprint(p) != scene_fingerprint(base)
        assert len(p["provenance"]["edits"]) == k
        assert p["provenance"]["derived_from"]["image_filename"] == base["image_filename"]
        assert 3 <= len(p["objects"]) <= 10
        for a, b in itertools.combinations(p["objects"], 2):
            assert not footprints_overlap(a, b)
        assert p["relationships"] == compute_relationships(p["objects"])
    assert base == generate_scene(9)        # the input is not changed


def test_perturb_an_imported_clevr_scene(tmp_path):
    path = tmp_path / "CLEVR_val_scenes.json"
    path.write_text(json.dumps({"scenes": [CLEVR_VAL_0]}))
    real = load_clevr_scenes(path)[0]
    p = perturb_scene(real, 5, edits=2)
    assert p["provenance"]["derived_from"]["provenance"]["source"] == "clevr"
    assert p["image_filename"] == "CLEVR_val_000000_p5e2.png"
    assert scene_fingerprint(p) != scene_fingerprint(real)


# ---------------------------------------------------------------- CLEVR importer ----------------

def test_import_clevr_scene_file(tmp_path):
    bare = copy.deepcopy(CLEVR_VAL_0)
    bare["image_index"], bare["image_filename"] = 1, "CLEVR_val_000001.png"
    del bare["relationships"]
    for o in bare["objects"]:
        del o["pixel_coords"]
    path = tmp_path / "CLEVR_val_scenes.json"
    path.write_text(json.dumps({"info": {"split": "val", "version": "1.0"}, "scenes": [CLEVR_VAL_0, bare]}))

    loaded = load_clevr_scenes(path)
    assert len(loaded) == 2
    first, second = loaded
    assert first["image_filename"] == "CLEVR_val_000000.png" and first["split"] == "val"
    assert first["relationships"] == CLEVR_VAL_0["relationships"]
    assert [o["pixel_coords"] for o in first["objects"]] == [o["pixel_coords"] for o in CLEVR_VAL_0["objects"]]
    assert first["provenance"]["source"] == "clevr"
    assert first["provenance"]["file"] == "CLEVR_val_scenes.json"
    assert first["provenance"]["index"] == 0 and first["provenance"]["info"]["version"] == "1.0"
    assert len(first["provenance"]["sha256"]) == 64
    # missing relationships are computed CLEVR's way; missing pixel coords projected
    assert second["relationships"] == CLEVR_VAL_0["relationships"]
    assert all(abs(a["pixel_coords"][k] - b["pixel_coords"][k]) <= 1
               for a, b in zip(second["objects"], CLEVR_VAL_0["objects"]) for k in (0, 1))
    assert json.loads(json.dumps(loaded)) == loaded
    assert load_clevr_scenes(path, start=1, limit=5)[0]["image_index"] == 1


def test_import_single_scene_and_list(tmp_path):
    one = tmp_path / "one.json"
    one.write_text(json.dumps(CLEVR_VAL_0))
    assert load_clevr_scenes(one)[0]["objects"][3]["color"] == "purple"
    many = tmp_path / "many.json"
    many.write_text(json.dumps([CLEVR_VAL_0]))
    assert len(load_clevr_scenes(many)) == 1


@pytest.mark.parametrize("mutate, needle", [
    (lambda s: s["objects"][0].update(color="pink"), "color"),
    (lambda s: s["objects"][1].update(shape="cone"), "shape"),
    (lambda s: s["objects"][2].update({"3d_coords": [1, 2]}), "3d_coords"),
    (lambda s: s["relationships"]["left"].pop(), "relationships"),
    (lambda s: s["relationships"]["left"][0].append(0), "relationships"),
    (lambda s: s.update(objects="none"), "objects"),
])
def test_import_rejects_bad_scenes(tmp_path, mutate, needle):
    bad = copy.deepcopy(CLEVR_VAL_0)
    mutate(bad)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"scenes": [bad]}))
    with pytest.raises(SceneFormatError, match=needle):
        load_clevr_scenes(path)


def test_import_rejects_bad_files(tmp_path):
    with pytest.raises(SceneFormatError, match="no such file"):
        load_clevr_scenes(tmp_path / "missing.json")
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(SceneFormatError, match="not valid JSON"):
        load_clevr_scenes(broken)
    odd = tmp_path / "odd.json"
    odd.write_text(json.dumps({"hello": 1}))
    with pytest.raises(SceneFormatError):
        load_clevr_scenes(odd)


# ---------------------------------------------------------------- image folder ------------------

def _png(path, color):
    Image.new("RGB", (40, 30), color).save(path)


def test_load_image_folder(tmp_path):
    _png(tmp_path / "b.png", (200, 0, 0))
    _png(tmp_path / "a.png", (0, 200, 0))
    _png(tmp_path / "c.jpg", (0, 0, 200))
    (tmp_path / "notes.md").write_text("not an image")
    (tmp_path / "captions.json").write_text(json.dumps({"a.png": "a green square", "b.png": ["red one", "red"]}))
    (tmp_path / "b.txt").write_text("a red field\n\n")
    (tmp_path / "c.json").write_text(json.dumps(CLEVR_VAL_0))

    items = load_image_folder(tmp_path)
    assert [it["image_filename"] for it in items] == ["a.png", "b.png", "c.jpg"]
    a, b, c = items
    assert a["caption"] == "a green square" and a["captions"] == ["a green square"]
    assert b["captions"] == ["red one", "red", "a red field"]
    assert c["caption"] is None and c["captions"] == []
    assert (a["width"], a["height"]) == (40, 30)
    assert a["image_path"] == str((tmp_path / "a.png").resolve())
    assert a["provenance"]["source"] == "image_folder" and len(a["provenance"]["sha256"]) == 64
    assert not has_scene_graph(a) and "objects" not in a
    assert has_scene_graph(c) and len(c["objects"]) == 5
    assert c["relationships"] == CLEVR_VAL_0["relationships"]
    assert [it["image_index"] for it in items] == [0, 1, 2]
    assert json.loads(json.dumps(items)) == items


def test_load_image_folder_caption_list_format(tmp_path):
    _png(tmp_path / "x.png", (10, 10, 10))
    (tmp_path / "captions.json").write_text(json.dumps([{"image": "x.png", "captions": ["dark", "black"]}]))
    assert load_image_folder(tmp_path)[0]["captions"] == ["dark", "black"]


@pytest.mark.parametrize("captions, needle", [
    ({"missing.png": "ghost"}, "no such image"),
    ({"x.png": 5}, "caption must be"),
    ({"../x.png": "escape"}, "plain file names"),
    ([{"caption": "no name"}], "needs an 'image'"),
])
def test_load_image_folder_rejects_bad_captions(tmp_path, captions, needle):
    _png(tmp_path / "x.png", (10, 10, 10))
    (tmp_path / "captions.json").write_text(json.dumps(captions))
    with pytest.raises(SceneFormatError, match=needle):
        load_image_folder(tmp_path)


def test_load_image_folder_rejects_broken_images_and_missing_folder(tmp_path):
    (tmp_path / "bad.png").write_bytes(b"\x89PNG\r\n\x1a\nnot really")
    with pytest.raises(SceneFormatError, match="not a readable image"):
        load_image_folder(tmp_path)
    with pytest.raises(SceneFormatError, match="not a folder"):
        load_image_folder(tmp_path / "nope")
