"""The clip-art library against the constants of the authors' released code."""
import pytest

from games.codraw import clipart as ca

# abs_render.IMAGE_NAMES of facebookresearch/codraw-models, written out group by group
RELEASED_PNGS = ([f"s_{i}s.png" for i in range(8)] + [f"p_{i}s.png" for i in range(10)]
                 + [f"hb0_{i}s.png" for i in range(35)] + [f"hb1_{i}s.png" for i in range(35)]
                 + [f"a_{i}s.png" for i in range(6)] + [f"c_{i}s.png" for i in range(10)]
                 + [f"e_{i}s.png" for i in range(7)] + [f"t_{i}s.png" for i in range(15)])


def test_groups_counts_and_offsets():
    assert ca.GROUP_PREFIXES == ("s", "p", "hb0", "hb1", "a", "c", "e", "t")
    assert ca.GROUP_SIZES == (8, 10, 35, 35, 6, 10, 7, 15)
    assert ca.GROUP_OFFSETS == (0, 8, 18, 19, 20, 26, 36, 43)
    assert len(ca.CLIPARTS) == 58 == ca.N_CLIPARTS
    assert [art.idx for art in ca.CLIPARTS] == list(range(58))
    assert sum(ca.PALETTE_SLOTS) == 28 and sum(ca.PALETTE_SLOTS) - 10 == 18


def test_global_index_scheme():
    assert ca.idx_of(0, 3) == 3 == ca.SUN
    assert ca.idx_of(1, 0) == 8
    assert ca.idx_of(2, 0) == ca.idx_of(2, 34) == 18 == ca.MIKE
    assert ca.idx_of(3, 17) == 19 == ca.JENNY
    assert ca.idx_of(4, 5) == 25
    assert ca.idx_of(5, 9) == 35
    assert ca.idx_of(6, 0) == 36
    assert ca.idx_of(7, 14) == 57
    for art in ca.CLIPARTS:
        assert ca.idx_of(art.type_idx, art.number) == art.idx


def test_png_names_match_released_list():
    assert list(ca.ALL_PNGS) == RELEASED_PNGS
    # abs_render.get_image_name: idx < 18 direct, humans 18 + 35*(idx-18) + subtype, others idx + 68
    for art in ca.CLIPARTS:
        if art.idx < 18:
            assert ca.png_name(art.idx) == RELEASED_PNGS[art.idx]
        elif art.is_human:
            for subtype in (0, 7, 34):
                assert ca.png_name(art.idx, subtype) == RELEASED_PNGS[18 + (art.idx - 18) * 35 + subtype]
        else:
            assert ca.png_name(art.idx) == RELEASED_PNGS[art.idx + 68]
    assert ca.png_name(ca.MIKE, 10) == "hb0_10s.png"
    assert ca.parse_png("hb1_4s.png") == (3, 4)
    assert ca.parse_png("t_14s.png") == (7, 14)


def test_pose_and_expression():
    assert len(ca.POSES) == 7 and len(ca.EXPRESSIONS) == 5
    assert ca.pose_of(10) == 2 and ca.expression_of(10) == 0       # hb0_10: kicking, angry
    assert ca.pose_of(34) == 6 and ca.expression_of(34) == 4
    assert ca.subtype_of(3, 3) == 18
    for subtype in range(35):
        assert ca.subtype_of(ca.pose_of(subtype), ca.expression_of(subtype)) == subtype
    assert ca.describe(ca.MIKE, 10) == "Mike (kicking, angry)"
    assert ca.lookup_pose("sitting down") == 5
    assert ca.lookup_expression("surprised") == 4


def test_depth_scales_and_draw_order():
    assert ca.DEPTH_SCALES == (1.0, 0.7, 0.49)
    mike_w, mike_h = ca.scaled_size(ca.MIKE, 2)
    assert (mike_w, mike_h) == (104 * 0.49, 181 * 0.49)
    pieces = [(57, 0), (18, 2), (3, 0), (7, 2), (0, 0), (19, 2), (40, 1)]
    ordered = sorted(pieces, key=lambda p: ca.draw_order_key(*p))
    # the sun first, then the other sky pieces, each part by (-depth, idx)
    assert ordered == [(3, 0), (7, 2), (0, 0), (18, 2), (19, 2), (40, 1), (57, 0)]


def test_names_are_unique_and_lookups_work():
    assert len(set(ca.NAMES)) == 58
    assert all(art.name and art.base_w > 0 and art.base_h > 0 for art in ca.CLIPARTS)
    assert ca.lookup("sun") == (3,)
    assert ca.lookup("Tree")[0] == ca.lookup("oak tree")[0] == 16
    assert ca.lookup("hot-air balloon") == (1,)
    assert ca.lookup("glasses")[0] == 34 and ca.lookup("sunglasses") == (35,)
    assert ca.lookup("hotdog") == (38,)
    assert ca.lookup("girl") == (19,) and ca.lookup("boy") == (18,)
    assert ca.lookup("dog") == (22,)
    assert ca.lookup("spaceship rocket") == ()


def test_roles_used_by_layout():
    assert {ca.get(i).role for i in range(8)} == {"sky"}
    assert all(ca.get(i).role == "hat" for i in range(26, 34))
    assert ca.get(34).role == ca.get(35).role == "eyewear"


def test_base_sizes_are_the_arts_sizes():
    from games.codraw import art
    for clip in ca.CLIPARTS:
        info = art.art_info(clip.idx, 0)
        assert (clip.base_w, clip.base_h) == (info["width"], info["height"]), clip.name
    assert ca.piece_size(ca.MIKE, 0, 0) == (104, 181)
    assert ca.piece_size(ca.MIKE, 25, 1) != ca.piece_size(ca.MIKE, 0, 1)     # sitting is smaller


def test_anchors_follow_position_depth_and_flip():
    w, h, anchors = ca.geometry(ca.MIKE, 10)
    ax, ay = anchors["hat"]
    x, y = ca.anchor_point(ca.MIKE, 10, "hat", 100, 250, 1, 0)
    assert (x, y) == (100 + (ax - w / 2) * 0.7, 250 + (ay - h / 2) * 0.7)
    xf, yf = ca.anchor_point(ca.MIKE, 10, "hat", 100, 250, 1, 1)
    assert yf == y and xf - 100 == -(x - 100)                # flipping mirrors about the centre
    assert ca.anchor_point(ca.SUN, 0, "hat", 100, 100, 0, 0) is None
    # centre_for is the inverse: the hat's wear anchor lands on the head's hat anchor
    hat = 33
    cx, cy = ca.centre_for(hat, 0, "wear", (x, y), 1, 0)
    assert ca.anchor_point(hat, 0, "wear", cx, cy, 1, 0) == pytest.approx((x, y))
    # a piece without the anchor is centred on the point
    assert ca.centre_for(ca.SUN, 0, "wear", (10, 20), 2, 1) == (10, 20)
    assert ca.faces_right(0) and not ca.faces_right(1)
