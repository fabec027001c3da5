"""Tests for the CoDraw clip art (games/codraw/art.py): pure, no database."""
from __future__ import annotations

import io
import itertools
import json
import xml.etree.ElementTree as ET

import pytest

from games.codraw import art
from tests.conftest import ROOT

SVG_NS = "{http://www.w3.org/2000/svg}"
REPO = ROOT
STATIC_ART = REPO / "games" / "codraw" / "static" / "codraw" / "art"
ALL = list(art.all_pieces())


def _root(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def test_library_shape():
    assert len(ALL) == 56 + 2 * 35
    assert [i for i, s in ALL if s == 0] == list(range(58))
    assert art.num_subtypes(art.MIKE) == 35 and art.num_subtypes(art.JENNY) == 35
    assert art.GROUPS[0] == "sky" and art.GROUPS[17] == "large" and art.GROUPS[18] == "mike"
    assert art.GROUPS[19] == "jenny" and art.GROUPS[25] == "animal" and art.GROUPS[35] == "clothing"
    assert art.GROUPS[42] == "food" and art.GROUPS[57] == "toy"
    assert art.NAMES[3] == "sun" and art.NAMES[16] == "oak tree" and art.NAMES[57] == "campfire"


@pytest.mark.parametrize("idx,subtype", ALL)
def test_every_piece_is_well_formed_svg_with_manifest_size(idx, subtype):
    svg = art.svg_for(idx, subtype)
    root = _root(svg)  # raises on malformed XML
    assert root.tag == f"{SVG_NS}svg"
    info = art.art_info(idx, subtype)
    w, h = info["width"], info["height"]
    assert isinstance(w, int) and isinstance(h, int)
    assert root.get("width") == str(w) and root.get("height") == str(h)
    assert root.get("viewBox") == f"0 0 {w} {h}"
    assert root.find(f"{SVG_NS}title").text == art.title_for(idx, subtype)
    assert len(list(root.iter())) > 4  # it draws something
    for name, point in info["anchors"].items():
        x, y = point
        assert -1 <= x <= w + 1 and -1 <= y <= h + 1, (name, point, w, h)


@pytest.mark.parametrize("kid", [art.MIKE, art.JENNY])
def test_all_35_kid_variants_differ_pairwise(kid):
    svgs = [art.svg_for(kid, s) for s in range(35)]
    for a, b in itertools.combinations(range(35), 2):
        assert svgs[a] != svgs[b], (kid, a, b)
    # and the drawing itself differs, not only the <title>
    bodies = {svg.split("</title>", 1)[1] for svg in svgs}
    assert len(bodies) == 35


def test_mike_and_jenny_differ():
    for s in range(35):
        assert art.svg_for(art.MIKE, s).split("</title>")[1] != art.svg_for(art.JENNY, s).split("</title>")[1]


def test_expression_does_not_change_canvas_or_body_anchors():
    for kid in (art.MIKE, art.JENNY):
        for pose in range(7):
            infos = [art.art_info(kid, pose * 5 + e) for e in range(5)]
            assert len({(i["width"], i["height"]) for i in infos}) == 1
            assert len({json.dumps(i["anchors"], sort_keys=True) for i in infos}) == 1


def test_poses_have_different_limbs():
    for kid in (art.MIKE, art.JENNY):
        limbs = [tuple(map(tuple, (art.art_info(kid, p * 5)["anchors"][k]
                                   for k in ("hand_front", "hand_back", "foot_front", "foot_back"))))
                 for p in range(7)]
        assert len(set(limbs)) == 7


def test_kid_sizes_and_anchors_are_sensible():
    for kid in (art.MIKE, art.JENNY):
        for sub in range(35):
            info = art.art_info(kid, sub)
            a = info["anchors"]
            assert info["head_radius"] == art.HEAD_RADIUS
            expected = {"head_center", "head_top", "hat", "eyes", "hand_front", "hand_back",
                        "foot_front", "foot_back"}
            assert set(a) == expected
            if info["pose"] != "sitting":
                assert 150 <= info["height"] <= 190
            # the hat anchor is on the head, above the eyes; the kid faces right
            hx, hy = a["head_center"]
            assert abs(a["hat"][1] - (hy - art.HEAD_RADIUS + 6)) < 8
            assert a["hat"][1] < a["eyes"][1]
            assert a["eyes"][0] > hx - 1
            # the front hand is on the facing (right) side of the back hand, except arms up /
            # waving where the raised hands are on both sides
            if info["pose"] in ("arms out", "kicking", "running", "sitting"):
                assert a["hand_front"][0] > a["hand_back"][0]


def test_wearables_have_wear_anchors_sized_for_the_head():
    for idx in range(26, 34):  # hats
        info = art.art_info(idx)
        wx, wy = info["anchors"]["wear"]
        # the crown of the hat is centred on the head (a cap's brim sticks out to the front)
        assert 0.4 * info["width"] <= wx <= 0.6 * info["width"]
        assert info["height"] - 10 <= wy <= info["height"]
        assert 2 * art.HEAD_RADIUS <= info["width"] <= 3 * art.HEAD_RADIUS
    for idx in (34, 35):  # glasses span both eyes
        info = art.art_info(idx)
        assert info["anchors"]["wear"] == [info["width"] / 2, 11]
        assert 40 <= info["width"] <= 2 * art.HEAD_RADIUS


def test_size_classes_match_abstract_scenes_scale():
    for idx in (15, 16, 17):
        assert art.art_info(idx)["height"] >= 200  # trees
    small = [i for i in range(36, 58) if i not in (52, 56, 57, 51)]
    for idx in small:
        info = art.art_info(idx)
        assert max(info["width"], info["height"]) <= 100, art.NAMES[idx]


@pytest.mark.parametrize("idx,subtype", [(-1, 0), (58, 0), (0, 1), (18, 35), (19, -1), (3, 7)])
def test_bad_pieces_raise(idx, subtype):
    with pytest.raises(ValueError):
        art.svg_for(idx, subtype)


def test_generation_is_deterministic():
    fresh = art.svg_for.__wrapped__
    for idx, sub in [(0, 0), (18, 17), (19, 34), (47, 0)]:
        assert fresh(idx, sub) == fresh(idx, sub) == art.svg_for(idx, sub)


def test_names_match_clipart_module():
    clipart = pytest.importorskip("games.codraw.clipart")
    assert art.NAMES == tuple(clipart.NAMES)
    assert art.POSES == tuple(clipart.POSES)
    assert art.EXPRESSIONS == tuple(clipart.EXPRESSIONS)
    assert art.DEPTH_SCALE == tuple(clipart.DEPTH_SCALES)


def test_cli_writes_every_file_and_manifest(tmp_path):
    assert art.main(["--out", str(tmp_path)]) == 0
    svgs = sorted(p.name for p in tmp_path.glob("*.svg"))
    assert len(svgs) == len(ALL) + 1  # + background.svg
    man = json.loads((tmp_path / "manifest.json").read_text())
    assert man["depth_scale"] == [1.0, 0.7, 0.49] and man["faces"] == "right"
    assert len(man["pieces"]) == len(ALL)
    for piece in man["pieces"]:
        root = _root((tmp_path / piece["file"]).read_text())
        assert root.get("width") == str(piece["width"])
        assert root.get("height") == str(piece["height"])
    bg = _root((tmp_path / "background.svg").read_text())
    assert bg.get("viewBox") == "0 0 500 400"


def test_committed_static_art_is_up_to_date():
    """games/codraw/static/codraw/art must be what the generator writes (re-run the CLI after editing art.py)."""
    if not (STATIC_ART / "manifest.json").exists():
        pytest.skip("static art not generated")
    for idx, sub in ALL:
        assert (STATIC_ART / art.file_name(idx, sub)).read_text() == art.svg_for(idx, sub)
    assert json.loads((STATIC_ART / "manifest.json").read_text()) == json.loads(json.dumps(art.manifest()))


def test_readme_example_helmet_sits_on_kicking_mike():
    """The CoDraw README's target scene puts a viking helmet (idx 33) at (87, 181) and kicking
    angry Mike (subtype 10) at (100, 250), both depth 1, flip 0: our anchors must agree."""
    s = art.DEPTH_SCALE[1]
    mike, helmet = art.art_info(art.MIKE, 10), art.art_info(33)
    hat_x = 100 + (mike["anchors"]["hat"][0] - mike["width"] / 2) * s
    hat_y = 250 + (mike["anchors"]["hat"][1] - mike["height"] / 2) * s
    wear_x = 87 + (helmet["anchors"]["wear"][0] - helmet["width"] / 2) * s
    wear_y = 181 + (helmet["anchors"]["wear"][1] - helmet["height"] / 2) * s
    assert abs(hat_x - wear_x) <= 10 and abs(hat_y - wear_y) <= 10


def test_review_sheets_render(tmp_path):
    written = art.write_review(tmp_path)
    for p in written:
        if p.suffix == ".svg":
            _root(p.read_text())


def test_expressions_are_visibly_different_at_depth_2():
    """Rasterised at depth 2 (scale 0.49) the five faces of one pose differ in many pixels."""
    cairosvg = pytest.importorskip("cairosvg")
    np = pytest.importorskip("numpy")
    from PIL import Image

    for kid in (art.MIKE, art.JENNY):
        for pose in (0, 5):
            faces = []
            for e in range(5):
                info = art.art_info(kid, pose * 5 + e)
                png = cairosvg.svg2png(bytestring=art.svg_for(kid, pose * 5 + e).encode(), scale=0.49)
                img = np.asarray(Image.open(io.BytesIO(png)).convert("RGBA"), dtype=int)
                hx, hy = (round(v * 0.49) for v in info["anchors"]["head_center"])
                r = round(art.HEAD_RADIUS * 0.49)
                faces.append(img[hy - r:hy + r, hx - r:hx + r, :3])
            for a, b in itertools.combinations(range(5), 2):
                changed = (np.abs(faces[a] - faces[b]).sum(axis=2) > 60).sum()
                assert changed >= 25, (kid, pose, a, b, changed)
