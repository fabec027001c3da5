"""Scene strings (parse/format round trip on the released format) and the scene generator."""
import json

import pytest

from games.codraw import clipart as ca
from games.codraw.metric import scene_similarity
from games.codraw.scenes import (NOT_USED, Piece, Scene, SceneFormatError, format_scene, generate_scene,
                                 parse_scene, read_codraw_json)


def test_readme_target_parses(readme):
    scene = parse_scene(readme["abs_t"])
    assert len(scene) == 7 and not scene.trailing_comma
    assert [p.idx for p in scene] == [3, 15, 18, 19, 24, 33, 47]
    mike = scene.get(18)
    assert (mike.x, mike.y, mike.depth, mike.flip, mike.subtype) == (100, 250, 1, 0, 10)
    assert (mike.pose, mike.expression) == (2, 0)
    jenny = scene.get(19)
    assert (jenny.subtype, jenny.flip, jenny.png) == (4, 1, "hb1_4s.png")
    assert scene.get(33).name == "viking helmet" and scene.get(47).name == "soccer ball"


@pytest.mark.parametrize("key", ["abs_t", "abs_b", "abs_d"])
def test_round_trip_is_exact(readme, key):
    text = readme[key]
    scene = parse_scene(text)
    assert format_scene(scene) == text
    assert parse_scene(format_scene(scene)) == scene


def test_palette_pieces_are_kept_but_not_placed(readme):
    scene = parse_scene(readme["abs_d"])
    assert len(scene) == 28 and scene.trailing_comma
    assert [p.idx for p in scene.placed] == [17, 16, 18, 19, 47]
    assert scene.idxs == {16, 17, 18, 19, 47}
    unplaced = [p for p in scene if not p.placed]
    assert len(unplaced) == 23 and all(p.x == p.y == NOT_USED for p in unplaced)
    # the several Mike/Jenny slots keep their subtypes
    assert [p.subtype for p in scene if p.idx == 18] == [6, 5, 10, 33, 28]
    assert scene.get(18).subtype == 10


def test_float_coordinates_round_like_the_reference_and_keep_their_text():
    text = "3,s_2s.png,0,2,0,236.5,31.49,1,0,hb0_7s.png,1,7,2,237.5,-0.4,0,1,t_2s.png,2,2,7,1e2,399.9999,2,1"
    scene = parse_scene(text)
    cloud, mike, ball = scene.pieces
    assert (cloud.x, cloud.y) == (236, 31)             # int(round(236.5)) == 236: half to even
    assert (mike.x, mike.y) == (238, 0)
    assert (ball.x, ball.y) == (100, 400)
    assert format_scene(scene) == text
    assert scene == parse_scene("3,s_2s.png,0,2,0,236,31,1,0,hb0_7s.png,1,7,2,238,0,0,1,t_2s.png,2,2,7,100,400,2,1")
    assert cloud.moved(x=10).x_text is None


def test_one_coordinate_unused_means_not_placed():
    scene = parse_scene("1,s_3s.png,0,3,0,-10000,50,0,0")
    assert not scene.pieces[0].placed and scene.placed == ()


def test_blank_and_empty_scenes():
    assert parse_scene("") == Scene(()) and format_scene(parse_scene("")) == ""
    assert format_scene(parse_scene("0")) == "0"
    assert format_scene(parse_scene("0,")) == "0,"


@pytest.mark.parametrize("text", [
    "2,s_3s.png,0,3,0,10,10,0,0",                           # says 2, has 1 (IndexError there)
    "1,s_3s.png,0,3,0,10,10,0",                             # one field short
    "1,s_3s.png,0,3,8,10,10,0,0",                           # type 8
    "1,s_8s.png,0,8,0,10,10,0,0",                           # sky has 8 objects
    "1,s_3s.png,0,3,0,10,10,3,0",                           # depth 3
    "1,s_3s.png,0,3,0,10,10,0,2",                           # flip 2
    "1,s_3s.png,0,3,0,ten,10,0,0",                          # x not a number
    "1,s_3s.png,0,3,0,nan,10,0,0",                          # x not finite
    "x,s_3s.png,0,3,0,10,10,0,0",                           # count not a number
    "1.0,s_3s.png,0,3,0,10,10,0,0",                         # int("1.0") fails there too
    "1,s_3s.png,0,3,0,inf,10,0,0",                          # round(inf) overflows there
    "1,s_3s.png,0,3.0,0,10,10,0,0",                         # object not whole
    " ",                                                    # not empty: int(" ") fails
    "1,hb0_35s.png,0,35,2,10,10,0,0",                       # Mike has 35 subtypes
])
def test_malformed_strings_raise(text):
    with pytest.raises(SceneFormatError):
        parse_scene(text)


# What the reference reader (codraw-models abs_util_orig.AbsUtil.preprocess) accepts: the scene it
# reads, as (idx, subtype, depth, flip, x, y) of the placed pieces in string order.
REFERENCE_READS = [
    ("0,,", []),                                            # a count, then empty fields
    ("0,,,,,,,,,", []),
    ("0, junk ,more", []),                                  # fields after the count never read
    ("-1", []),                                             # range(-1) reads nothing
    (" 1 ,s_3s.png,0,3,0,10,20,0,1", [(3, 0, 0, 1, 10, 20)]),   # int(" 1 ") == 1
    ("+1,s_3s.png,0,3,0,10,20,0,1", [(3, 0, 0, 1, 10, 20)]),
    ("1,s_3s.png,0,3,0,10,10,0,0,extra", [(3, 0, 0, 0, 10, 10)]),   # fields after the pieces
    ("1,s_3s.png,0,3,0,10,10,0,0,,,", [(3, 0, 0, 0, 10, 10)]),
    ("1,s_4s.png,0,3,0,10,10,0,0", [(3, 0, 0, 0, 10, 10)]),   # the png name is skipped unread
    ("1,,,3,0,10,10,0,0", [(3, 0, 0, 0, 10, 10)]),            # so is the slot number
    ("1,whatever,slot,10,2,1e2, 7.5 ,1,1", [(18, 10, 1, 1, 100, 8)]),   # float(), round half even
    ("1,s_3s.png,0, 3 ,0,10,10, 2 , 1 ", [(3, 0, 2, 1, 10, 10)]),
    ("2,s_3s.png,0,3,0,-10000,50,0,0,s_1s.png,1,1,0,60,-10000,0,0", []),   # either at -10000
    ("1,s_3s.png,0,3,0,-10000.4,5,0,0", []),                  # rounds to -10000
    ("1,s_3s.png,0,3,0,1_000,5,0,0", [(3, 0, 0, 0, 1000, 5)]),   # Python's float() reads 1_000
]


@pytest.mark.parametrize("text,placed", REFERENCE_READS)
def test_what_the_reference_reader_accepts(text, placed):
    scene = parse_scene(text)
    assert [(p.idx, p.subtype, p.depth, p.flip, p.x, p.y) for p in scene.placed] == placed
    assert format_scene(scene) == text                       # spelled as it came
    assert parse_scene(format_scene(scene)) == scene


def test_moved_pieces_are_written_canonically():
    scene = parse_scene("1,whatever,slot,3,0, 10 ,20,0,1,,tail")
    moved = Scene((scene.pieces[0].moved(x=30),))
    assert format_scene(moved) == "1,s_3s.png,0,3,0,30,20,0,1"
    assert format_scene(parse_scene("0,,")) == "0,," and format_scene(parse_scene("0,,"), trailing_comma=True) == "0,"


def test_format_from_pieces_uses_positions_as_local_index():
    pieces = [Piece(idx=18, x=100, y=200, depth=1, flip=1, subtype=12), Piece(idx=3, x=50, y=40)]
    assert format_scene(pieces) == "2,hb0_12s.png,0,12,2,100,200,1,1,s_3s.png,1,3,0,50,40,0,0"
    assert format_scene(pieces, trailing_comma=True).endswith(",0,0,")
    with pytest.raises(ValueError):
        Piece(idx=3, subtype=1)
    with pytest.raises(KeyError):
        Piece(idx=58)


def test_read_codraw_json(tmp_path, readme):
    path = tmp_path / "CoDraw_1_0.json"
    path.write_text(json.dumps({"data": {"train_00001": {
        "image_id": 1, "abs_t": readme["abs_t"],
        "dialog": [{"seq_t": 0, "seq_d": 0, "msg_t": "hi", "msg_d": "ok", "abs_b": "", "abs_d": readme["abs_d"]}]}}}))
    data = read_codraw_json(path)
    assert data["train_00001"]["image_id"] == 1
    path.write_text(json.dumps({"data": {"bad": {"image_id": 2, "abs_t": "1,s_3s.png"}}}))
    with pytest.raises(SceneFormatError, match="bad"):
        read_codraw_json(path)
    path.write_text(json.dumps({"nothing": {}}))
    with pytest.raises(SceneFormatError):
        read_codraw_json(path)


# ----------------------------------------------------------------------------------- the generator
SEEDS = range(300)


@pytest.fixture(scope="module")
def generated():
    return [generate_scene(seed) for seed in SEEDS]


def _inside(piece):
    left, top, right, bottom = piece.box
    return left >= 0 and top >= 0 and right <= ca.CANVAS_W and bottom <= ca.CANVAS_H


def test_generator_is_deterministic_and_varied(generated):
    assert generate_scene(5) == generated[5]
    assert format_scene(generate_scene(5)) == format_scene(generated[5])
    assert len({format_scene(s) for s in generated}) == len(generated)


def test_generated_scenes_are_well_formed(generated):
    counts = [len(scene.placed) for scene in generated]
    assert min(counts) >= 6 and max(counts) <= 17
    assert 6.0 <= sum(counts) / len(counts) <= 8.5          # the dataset's mean is 6.67
    for scene in generated:
        idxs = [p.idx for p in scene]
        assert len(idxs) == len(set(idxs)), "a clip art is placed twice"
        assert all(p.placed for p in scene)
        assert all(_inside(p) for p in scene), [p for p in scene if not _inside(p)]
        assert parse_scene(format_scene(scene)) == scene


def _on_anchor(piece, people, person_anchor, own_anchor, tolerance=3):
    """Is ``piece``'s own anchor on one of the people's anchors (same depth)?"""
    mine = ca.anchor_point(piece.idx, 0, own_anchor, piece.x, piece.y, piece.depth, piece.flip) \
        or (piece.x, piece.y)
    for person in people:
        theirs = ca.anchor_point(person.idx, person.subtype, person_anchor, person.x, person.y,
                                 person.depth, person.flip)
        if person.depth == piece.depth and abs(mine[0] - theirs[0]) <= tolerance \
                and abs(mine[1] - theirs[1]) <= tolerance:
            return True
    return False


def test_generated_scenes_are_plausible(generated):
    worn = held = 0
    on_table_count = [0]
    for scene in generated:
        people = [p for p in scene if p.is_human]
        for piece in scene:
            art = piece.art
            if art.role == "sky":
                assert piece.y < ca.HORIZON_Y, f"{art.name} below the horizon"
            elif art.role in ("ground", "human"):
                assert piece.box[3] > ca.HORIZON_Y, f"{art.name} floating in the sky"
            elif art.role == "hat":
                worn += 1
                assert _on_anchor(piece, people, "hat", "wear"), f"{art.name} not on a head"
            elif art.role == "eyewear":
                worn += 1
                assert _on_anchor(piece, people, "eyes", "wear"), f"{art.name} not on a face"
            elif art.role == "held" and _on_anchor(piece, people, "hand_front", "hold"):
                held += 1
            elif art.role == "held":
                table = scene.get(14)
                on_table = (table is not None and art.group == "food" and table.box[0] <= piece.x <= table.box[2]
                            and table.box[1] <= piece.box[3] <= table.box[3])
                on_table_count[0] += on_table
                assert on_table or piece.box[3] > ca.HORIZON_Y, f"{art.name} neither held nor on the grass"
    assert worn > 50 and held > 30 and on_table_count[0] > 2


def test_generated_scenes_can_be_rebuilt_perfectly(generated):
    for scene in generated:
        xs = [p.x for p in scene]
        ys = [p.y for p in scene]
        assert len(set(xs)) == len(xs) and len(set(ys)) == len(ys), "ties cost points even when copied"
        assert scene_similarity(scene, scene) == 5.0


def test_generator_bounds():
    scene = generate_scene(1, min_pieces=17, max_pieces=17)
    assert len(scene.placed) == 17
    with pytest.raises(ValueError):
        generate_scene(1, min_pieces=5)
