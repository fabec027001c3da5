"""The CLEVR renderer (clevr/render.py). No database."""
from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from clevr.render import object_id_map, render_image, render_png, visible_pixel_counts
from clevr.scenes import COLOR_RGB, COLORS, compute_relationships, generate_scene

LUMA = np.array([0.2126, 0.7152, 0.0722])


def one_object(shape="sphere", color="red", size="large", material="rubber", x=0.0, y=0.0, rotation=30.0):
    r = {"large": 0.7, "small": 0.35}[size]
    objects = [{"shape": shape, "color": color, "size": size, "material": material,
                "3d_coords": [x, y, r], "pixel_coords": [0, 0, 0.0], "rotation": rotation}]
    return {"image_index": 0, "image_filename": "t.png", "objects": objects,
            "relationships": compute_relationships(objects)}


def decode(png: bytes) -> np.ndarray:
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(float)


@pytest.mark.parametrize("size", [(480, 320), (160, 107), (320, 240)])
def test_png_has_the_requested_size(size):
    png = render_png(generate_scene(3), *size)
    with Image.open(io.BytesIO(png)) as im:
        assert im.format == "PNG" and im.size == size and im.mode == "RGB"


def test_render_is_deterministic_and_scene_dependent():
    a = render_png(generate_scene(5), 160, 107)
    assert a == render_png(generate_scene(5), 160, 107)
    assert a != render_png(generate_scene(6), 160, 107)


def test_empty_scene_renders_ground_only():
    img = decode(render_png({"objects": []}, 120, 80))
    assert img.std() < 20          # a smooth gray ground, no objects
    assert 60 < img.mean() < 200


def test_bad_sizes_are_refused():
    with pytest.raises(ValueError):
        render_png(generate_scene(1), 0, 10)
    with pytest.raises(ValueError):
        render_png(generate_scene(1), 100, 100, supersample=9)


@pytest.mark.parametrize("shape", ["sphere", "cube", "cylinder"])
def test_metal_and_rubber_look_different(shape):
    rubber = one_object(shape=shape, material="rubber")
    metal = one_object(shape=shape, material="metal")
    mask = object_id_map(rubber) == 0
    assert (object_id_map(metal) == 0).sum() == mask.sum()   # same silhouette
    lr = decode(render_png(rubber))[mask] @ LUMA
    lm = decode(render_png(metal))[mask] @ LUMA
    # metal carries a specular highlight far brighter than anything on matte rubber
    assert lm.max() > 230 and lr.max() < 170
    assert np.abs(decode(render_png(rubber)) - decode(render_png(metal)))[mask].mean() > 10


@pytest.mark.parametrize("material", ["rubber", "metal"])
def test_each_clevr_color_reads_as_itself(material):
    for color in COLORS:
        sc = one_object(shape="cube", color=color, material=material)
        mask = object_id_map(sc) == 0
        med = np.median(decode(render_png(sc))[mask], axis=0)
        nearest = min(COLORS, key=lambda c: float(np.sum((np.array(COLOR_RGB[c]) - med) ** 2)))
        assert nearest == color, (color, material, med)


def test_sizes_and_shapes_are_distinct():
    large = visible_pixel_counts(one_object(size="large"))[0]
    small = visible_pixel_counts(one_object(size="small"))[0]
    assert large > 3 * small
    masks = {s: object_id_map(one_object(shape=s)) == 0 for s in ("sphere", "cube", "cylinder")}
    for a in masks:
        for b in masks:
            if a < b:
                iou = (masks[a] & masks[b]).sum() / (masks[a] | masks[b]).sum()
                assert iou < 0.9, (a, b, iou)
    # a cube's silhouette fills its bounding box more than a sphere's does
    def fill(m):
        ys, xs = np.nonzero(m)
        return m.sum() / ((np.ptp(ys) + 1) * (np.ptp(xs) + 1))
    assert fill(masks["sphere"]) == pytest.approx(np.pi / 4, abs=0.05)
    assert fill(masks["cube"]) > fill(masks["sphere"]) + 0.03


def test_objects_are_drawn_at_their_pixel_coords():
    checked = 0
    for seed in (21, 22, 23):
        sc = generate_scene(seed)
        ids = object_id_map(sc)
        counts = visible_pixel_counts(sc)
        for k, o in enumerate(sc["objects"]):
            if counts[k] == visible_pixel_counts({"objects": [o]})[0]:   # nothing in front of it
                px, py, _ = o["pixel_coords"]
                assert ids[py, px] == k
                checked += 1
    assert checked >= 5


def test_nearer_objects_hide_farther_ones():
    front = {"shape": "cube", "color": "red", "size": "large", "material": "rubber",
             "3d_coords": [2.0, -2.0, 0.7], "rotation": 0.0}
    behind_dir = (-0.754490315914154, 0.6563112735748291)
    for dist, hidden in ((1.5, True), (5.0, False)):
        behind = {**front, "shape": "sphere", "size": "small", "color": "blue",
                  "3d_coords": [2.0 + dist * behind_dir[0], -2.0 + dist * behind_dir[1], 0.35]}
        alone = visible_pixel_counts({"objects": [behind]})[0]
        counts = visible_pixel_counts({"objects": [behind, front]})
        assert alone > 500
        assert counts[1] == visible_pixel_counts({"objects": [front]})[0]   # front is never hidden
        assert (counts[0] == 0) if hidden else (counts[0] == alone)


def test_render_image_returns_pil_image():
    im = render_image(generate_scene(2), 200, 150)
    assert isinstance(im, Image.Image) and im.size == (200, 150)
