"""Scene similarity against hand-computed values (the authors' current ``scene_similarity``)."""
import math

import pytest

from games.codraw.metric import COMPONENTS, WEIGHTS, clipart_similarity, scene_similarity, similarity
from games.codraw.scenes import Piece, Scene, parse_scene


def P(idx, x, y, depth=0, flip=0, subtype=0):
    return Piece(idx=idx, x=x, y=y, depth=depth, flip=flip, subtype=subtype)


def test_constants():
    assert WEIGHTS == (5, -1, -0.5, -0.5, -1, -1, -1, -1)
    assert len(COMPONENTS) == 8


def test_identical_scenes_score_five(readme):
    result = similarity(readme["abs_t"], readme["abs_t"])
    assert result.score == 5.0
    assert result.numerators == (7, 0, 0, 0, 0, 0, 0, 0)
    assert result.denominators == (7, 7, 7, 7, 7, 7, 42, 42)
    assert result.to_dict()["components"]["clipart"]["weighted"] == 5.0


def test_empty_prediction_scores_zero(readme):
    result = similarity("", readme["abs_t"])
    assert result.score == 0.0
    assert result.numerators == (0,) * 8
    assert result.denominators == (7, 7, 7, 7, 7, 7, 1, 1)       # |U|*(|I|-1) = -7 -> at least 1
    # a canvas string whose pieces are all unplaced is an empty prediction too
    unplaced = "2,s_3s.png,0,3,0,-10000,-10000,0,1,hb0_10s.png,1,10,2,-10000,-10000,0,0,"
    assert scene_similarity(unplaced, readme["abs_t"]) == 0.0
    assert scene_similarity("", "") == 0.0


def test_flip_mismatch():
    target = [P(3, 100, 50), P(10, 300, 250)]
    pred = [P(3, 100, 50), P(10, 300, 250, flip=1)]
    result = similarity(pred, target)
    assert result.numerators[1] == 1 and result.denominators[1] == 2
    assert result.score == 5.0 - 0.5                                # 5*2/2 - 1*1/2


def test_depth_mismatch():
    result = similarity([P(3, 100, 50, depth=2), P(10, 300, 250)], [P(3, 100, 50), P(10, 300, 250)])
    assert result.numerators[4] == 1
    assert result.score == 4.5


@pytest.mark.parametrize("pred_subtype, expected", [
    (10, 5.0),                     # same pose and expression
    (11, 5.0 - 0.5 * 1 / 2),       # expression 0 -> 1
    (15, 5.0 - 0.5 * 1 / 2),       # pose 2 -> 3
    (16, 5.0 - 0.5 / 2 - 0.5 / 2), # both
])
def test_expression_and_pose(pred_subtype, expected):
    target = [P(18, 100, 250, subtype=10), P(3, 400, 40)]
    pred = [P(18, 100, 250, subtype=pred_subtype), P(3, 400, 40)]
    assert scene_similarity(pred, target) == expected


def test_subtype_of_other_pieces_never_counts():
    result = similarity([P(20, 100, 300)], [P(20, 100, 300)])
    assert result.numerators[2] == result.numerators[3] == 0


def test_position_distance_and_cap():
    # dy = 200/400 = 0.5 exactly
    result = similarity([P(3, 100, 300)], [P(3, 100, 100)])
    assert result.numerators[5] == 0.5 and result.score == 4.5
    # opposite corners: sqrt(2) capped at 1
    result = similarity([P(3, 500, 400)], [P(3, 0, 0)])
    assert result.numerators[5] == 1.0 and result.score == 4.0


def test_pairwise_orders():
    target = [P(20, 125, 100), P(21, 250, 200), P(22, 375, 300)]
    pred = [P(20, 375, 100), P(21, 250, 200), P(22, 125, 300)]   # left-right mirrored, rows kept
    result = similarity(pred, target)
    assert result.numerators[6] == 3            # all three x orders flipped
    assert result.numerators[7] == 0            # no y order flipped
    assert result.numerators[5] == 1.0          # 0.5 + 0 + 0.5
    assert result.denominators == (3, 3, 3, 3, 3, 3, 6, 6)
    assert result.score == 5.0 - 1.0 / 3 - 3 / 6


def test_ties_in_the_target_count_as_order_errors():
    # (x_i - x_j) == 0 in the target makes the product 0, which the metric counts (<= 0)
    target = [P(20, 100, 100), P(21, 100, 300)]
    result = similarity(target, target)
    assert result.numerators[6] == 1 and result.numerators[7] == 0
    assert result.score == 5.0 - 1 / 2


def test_missing_and_extra_pieces():
    target = [P(3, 100, 50)]
    assert scene_similarity([P(3, 100, 50), P(20, 200, 300)], target) == 2.5     # 5 * 1/2
    assert scene_similarity([P(20, 200, 300)], target) == 0.0
    assert scene_similarity([P(3, 100, 50)], [P(3, 100, 50), P(20, 200, 300)]) == 2.5


def test_first_of_a_repeated_idx_is_used():
    target = [P(3, 100, 50)]
    assert scene_similarity([P(3, 100, 50), P(3, 400, 350, flip=1)], target) == 5.0


def test_readme_round_by_hand(readme):
    """The README's target against its Drawer canvas, every term worked out by hand.

    Common pieces: Mike (100,250,d1,f0,s10) vs (387,287,d0,f1,s10); Jenny (391,248,d1,f1,s4) vs
    (128,269,d0,f0,s18); soccer ball (279,115,d1,f1) vs (248,273,d0,f0). Extra: two trees. U=9, I=3.
    """
    result = similarity(readme["abs_d"], readme["abs_t"])
    assert (result.intersection, result.union) == (3, 9)
    n = result.numerators
    assert n[:5] == (3, 3, 1, 1, 3)             # |I|, flips, Jenny's expression, Jenny's pose, depths
    assert (n[6], n[7]) == (3, 1)
    assert result.denominators == (9, 9, 9, 9, 9, 9, 18, 18)
    d_mike = math.sqrt(0.574 ** 2 + 0.0925 ** 2)     # 287/500, 37/400
    d_jenny = math.sqrt(0.526 ** 2 + 0.0525 ** 2)    # 263/500, 21/400
    d_ball = math.sqrt(0.062 ** 2 + 0.395 ** 2)      # 31/500, 158/400
    assert n[5] == pytest.approx(d_mike + d_jenny + d_ball, rel=1e-14)
    expected = (5 * 3 / 9 - 3 / 9 - 0.5 / 9 - 0.5 / 9 - 3 / 9 - (d_mike + d_jenny + d_ball) / 9
                - 3 / 18 - 1 / 18)
    assert result.score == pytest.approx(expected, rel=1e-14)
    assert result.score == pytest.approx(0.498905, abs=1e-6)      # 15/9 - 7/9 - 1.50986/9 - 4/18
    assert sum(result.weighted) == pytest.approx(result.score, rel=1e-15)


def test_symmetric_and_accepts_every_form(readme):
    a, b = parse_scene(readme["abs_t"]), parse_scene(readme["abs_d"])
    assert scene_similarity(a, b) == scene_similarity(b, a)
    as_dicts = [p.to_dict() for p in b.placed]
    assert scene_similarity(as_dicts, readme["abs_t"]) == scene_similarity(b, a)
    assert scene_similarity(Scene(b.placed), a) == scene_similarity(b, a)


def test_adding_a_correct_piece_raises_the_score(readme):
    target = parse_scene(readme["abs_t"])
    canvas = []
    last = scene_similarity(canvas, target)
    for piece in target.placed:
        canvas.append(piece)
        now = scene_similarity(canvas, target)
        assert now > last
        last = now
    assert last == 5.0


def test_clipart_similarity():
    a = P(18, 100, 100, subtype=10)
    assert clipart_similarity(a, a) == 5.0
    assert clipart_similarity(a, P(19, 100, 100)) == 0.0
    assert clipart_similarity(a, P(18, 100, 300, depth=1, flip=1, subtype=16)) == 5 - 1 - 0.5 - 0.5 - 1 - 0.5
