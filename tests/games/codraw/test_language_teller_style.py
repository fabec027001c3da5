"""The rule Drawer on messages in the style of real CoDraw Tellers (issue 15, item 6): pieces held on
the canvas, pronouns meaning the last piece mentioned, pieces already drawn moved rather than
drawn again, people on the ground, every named piece drawn, spelling slips read."""
from __future__ import annotations

import pytest

from games.codraw import clipart as ca
from games.codraw import language as lang
from games.codraw.scenes import Piece

MIKE, JENNY, OAK, APPLE, PINE, SUN, CLOUD, RAIN, HOT_AIR, BALLOONS = 18, 19, 16, 17, 15, 3, 2, 5, 1, 52
BEAR, CAT, DOG, DUCK, OWL, SLIDE, TABLE, HOT_DOG = 20, 21, 22, 23, 24, 9, 14, 38
LEFT, RIGHT = 1, 0
GROUND = lang.GROUND_MIN_BOTTOM


def dialog(*messages: str, palette=None) -> tuple[dict[int, Piece], list[list[lang.Change]]]:
    canvas, focus, all_changes = {}, None, []
    for message in messages:
        canvas, focus, changes = lang.interpret(message, canvas, palette, focus)
        all_changes.append(changes)
    return canvas, all_changes


def inside(piece: Piece) -> bool:
    left, top, right, bottom = piece.box
    return left >= 0 and top >= 0 and right <= ca.CANVAS_W and bottom <= ca.CANVAS_H


def on_ground(piece: Piece) -> bool:
    return piece.box[3] >= GROUND[piece.depth] - 0.5


# ------------------------------------------------------------------------------- the cases
def test_a_distance_larger_than_the_canvas_keeps_mike_on_it():
    canvas, _ = dialog("Mike is standing 75 inches away from the left")
    mike = canvas[MIKE]
    assert inside(mike)
    # read as 0.75 in (a slip of the decimal point) from the left edge to his near side
    assert mike.box[0] == pytest.approx(0.75 * lang.INCH_PX, abs=1)
    canvas, _ = dialog("jenny 12 inches from the right")                   # 1.2 in
    assert canvas[JENNY].box[2] == pytest.approx(500 - 1.2 * lang.INCH_PX, abs=1)
    canvas, _ = dialog("a sun 6 inches from the left and 9 inches from the top")   # no reading fits
    assert inside(canvas[SUN]) and canvas[SUN].box[2] == pytest.approx(500, abs=1)


def test_he_means_the_bear_just_mentioned():
    canvas, changes = dialog("a small bear in the middle", "he is facing left")
    assert set(canvas) == {BEAR} and canvas[BEAR].flip == LEFT
    assert [(c.op, c.idx) for c in changes[1]] == [("update", BEAR)]


def test_the_kid_already_drawn_is_moved():
    canvas, changes = dialog("medium Mike in the middle", "kid is on left")
    assert set(canvas) == {MIKE} and canvas[MIKE].x < 200
    assert [(c.op, c.idx) for c in changes[1]] == [("update", MIKE)]
    # "a kid" is another one
    canvas, _ = dialog("medium Mike in the middle", "a kid on the left")
    assert set(canvas) == {MIKE, JENNY}


@pytest.mark.parametrize("tree", [
    "big oak tree on the left, top cut off",
    "small pine tree in the top left",
    "medium apple tree 0.2 inches from the top on the left",
])
def test_mike_right_of_the_tree_stands_on_the_grass(tree):
    canvas, _ = dialog(tree, "mike is right of the tree")
    mike = canvas[MIKE]
    the_tree = next(p for idx, p in canvas.items() if idx != MIKE)
    assert mike.x > the_tree.x and on_ground(mike) and inside(mike)


def test_a_balloon_is_the_bunch_of_balloons():
    canvas, _ = dialog("a girl holding a balloon on the right")
    assert set(canvas) == {JENNY, BALLOONS} and canvas[JENNY].x > 300
    jenny = canvas[JENNY]
    hand = ca.anchor_point(JENNY, jenny.subtype, "hand_front", jenny.x, jenny.y, jenny.depth, jenny.flip)
    expected = ca.centre_for(BALLOONS, 0, "hold", hand, canvas[BALLOONS].depth, canvas[BALLOONS].flip)
    assert abs(canvas[BALLOONS].x - expected[0]) <= 1 and abs(canvas[BALLOONS].y - expected[1]) <= 1
    canvas, _ = dialog("small hot air balloon in the top right")
    assert set(canvas) == {HOT_AIR}
    canvas, _ = dialog("balloons on the right")
    assert set(canvas) == {BALLOONS}


@pytest.mark.parametrize("message", [
    "there is a rain cloud on the left and a sun on the right",
    "a sun in the top left and a rain cloud next to it",
    "top right has a raincloud, left of it is the sun",
    "small rain cloud, sun",
])
def test_a_rain_cloud_mentioned_is_drawn(message):
    canvas, _ = dialog(message)
    assert set(canvas) == {RAIN, SUN}, message
    assert all(inside(p) for p in canvas.values())
    if "next to it" in message or "left of it" in message:
        assert abs(canvas[RAIN].x - canvas[SUN].x) < 160          # next to each other


# ------------------------------------------------------------------------------- pronouns
@pytest.mark.parametrize("messages, who, check", [
    (["Jenny is on the right.", "She is waving"], JENNY, lambda p: p.pose == ca.POSES.index("waving")),
    (["a dog next to Jenny", "she is facing left"], DOG, lambda p: p.flip == LEFT),
    (["a dog next to Jenny", "she is waving"], JENNY, lambda p: p.pose == ca.POSES.index("waving")),
    (["a small owl top left", "it is facing left"], OWL, lambda p: p.flip == LEFT),
    (["an owl in the middle", "he looks left"], OWL, lambda p: p.flip == LEFT),
    (["Mike is holding a hot dog.", "he is smiling"], MIKE, lambda p: p.expression == 2),
    (["Mike on the left", "a cat on the right, he is sitting"], MIKE, lambda p: p.pose == ca.POSES.index("sitting")),
    (["mike on the left, jenny on the right", "he is sad"], MIKE, lambda p: p.expression == 3),
    (["jenny on the right, mike on the left", "she is sad"], JENNY, lambda p: p.expression == 3),
    (["big duck bottom left", "Jenny is on the right", "the duck is small. it faces right"], DUCK,
     lambda p: p.flip == RIGHT and p.depth == 2),
    (["a cat", "Mike", "he is facing left"], MIKE, lambda p: p.flip == LEFT),
    (["Mike", "a cat", "he is facing left"], CAT, lambda p: p.flip == LEFT),
])
def test_pronouns_mean_the_last_piece_they_can(messages, who, check):
    canvas, changes = dialog(*messages)
    assert check(canvas[who]), messages
    changed = {c.idx for c in changes[-1] if c.op == "update"}
    assert changed == {who}, messages


def test_a_thing_someone_has_is_a_new_one():
    canvas, changes = dialog("Mike on the left wearing sunglasses", "Jenny on the right, she has glasses")
    assert {34, 35} <= set(canvas)
    assert canvas[35].x < 250 < canvas[34].x                 # the sunglasses stay on Mike


def test_it_as_a_landmark_is_the_piece_before():
    canvas, _ = dialog("big apple tree on the right", "a small dog in front of it")
    assert canvas[DOG].x == canvas[APPLE].x and canvas[DOG].box[3] > canvas[APPLE].box[3]


# ------------------------------------------------------------------------------- moving what is drawn
BASE = ["medium Mike on the left facing right", "medium Jenny on the right facing left",
        "big oak tree in the middle, top cut off", "small sun top left"]


@pytest.mark.parametrize("message, idx, check", [
    ("the boy should be on the right side", MIKE, lambda a, b: a.x > 300),
    ("girl is more to the left", JENNY, lambda a, b: a.x < b.x),
    ("kid on the right is smiling", MIKE, lambda a, b: a.expression == 2),
    ("tree should be a little more to the left", OAK, lambda a, b: a.x == b.x - 15),
    ("move the sun to the right", SUN, lambda a, b: a.x > b.x),
    ("sun is bigger", SUN, lambda a, b: a.depth == b.depth - 1),
    ("the sun should be in the top right corner", SUN, lambda a, b: a.x > 400 and a.y < 80),
    ("mike is facing left", MIKE, lambda a, b: a.flip == LEFT and (a.x, a.y) == (b.x, b.y)),
])
def test_pieces_already_drawn_are_moved_not_drawn_again(message, idx, check):
    before, _ = dialog(*BASE)
    after, changes = dialog(*BASE, message)
    assert [(c.op, c.idx) for c in changes[-1]] == [("update", idx)], message
    assert set(after) == set(before)
    assert check(after[idx], before[idx]), message


# ------------------------------------------------------------------------------- people on the ground
@pytest.mark.parametrize("message", [
    "Mike at the top of the picture",
    "jenny is above the slide",
    "big boy in the top left corner",
    "small girl right under the sun",
    "mike is next to the cloud",
    "jenny 0.1 inch from the top",
])
def test_people_stay_on_the_grass(message):
    canvas, _ = dialog("small sun top middle", "big slide on the left", "medium cloud on the right", message)
    person = canvas.get(MIKE) or canvas.get(JENNY)
    assert person is not None and on_ground(person) and inside(person), message


def test_a_person_on_something_may_leave_the_grass():
    canvas, _ = dialog("big table in the middle, 1 inch from the bottom", "small Mike sitting on the table")
    mike, table = canvas[MIKE], canvas[TABLE]
    assert mike.box[3] < table.box[3] and mike.box[3] < GROUND[mike.depth] + 60


# ------------------------------------------------------------------------------- on the canvas
@pytest.mark.parametrize("message", [
    "big apple tree 7 inches from the top",
    "sun 9 inches from the right",
    "a duck at the bottom right corner",
    "large pine tree far right, 5 inches from the top",
    "big slide 3 inches from the left and 3 inches from the bottom",
    "huge helicopter top right",
    "large Jenny at the very bottom",
    "big tent on the far left",
])
def test_every_piece_stays_on_the_canvas(message):
    canvas, changes = dialog(message)
    assert changes and changes[0], message
    assert all(inside(p) for p in canvas.values()), message


def test_cut_off_when_asked():
    canvas, _ = dialog("big oak tree cut off on the left")
    tree = canvas[OAK]
    assert tree.box[0] < 0 and tree.box[2] > 0.5 * tree.size[0] - 1         # most of it visible


# ------------------------------------------------------------------------------- every named piece
@pytest.mark.parametrize("message, named", [
    ("a sun, a cloud and a helicopter in the sky", {SUN, CLOUD, 0}),
    ("Mike is next to the slide", {MIKE, SLIDE}),
    ("the dog is facing the tree", {DOG, OAK}),
    ("jenny is holding a hot dog next to the table", {JENNY, HOT_DOG, TABLE}),
    ("there's a rain cloud above the bear", {RAIN, BEAR}),
    ("an owl on the apple tree", {OWL, APPLE}),
])
def test_every_piece_named_is_drawn(message, named):
    canvas, _ = dialog(message)
    assert set(canvas) == named, message
    assert all(inside(p) for p in canvas.values())


def test_a_landmark_not_in_the_palette_is_skipped():
    canvas, _ = dialog("Mike is next to the slide", palette=[MIKE, JENNY, SUN])
    assert set(canvas) == {MIKE}


# ------------------------------------------------------------------------------- spelling slips
@pytest.mark.parametrize("message, idx, check", [
    ("big oak tree on the rigth", OAK, lambda p: p.x > 300 and p.depth == 0),
    ("smal sun top lfet", SUN, lambda p: p.x < 200 and p.y < 100 and p.depth == 2),
    ("Jenny is sittin, facign left", JENNY, lambda p: p.pose == ca.POSES.index("sitting") and p.flip == LEFT),
    ("a meduim dog at the botom", DOG, lambda p: p.depth == 1 and p.y > 250),
    ("mike waveing, scaerd", MIKE, lambda p: p.pose == ca.POSES.index("waving") and p.expression == 4),
    ("a helicoptor in the mdidle", 0, lambda p: p.x == 250),
    ("larg bushy tree on the rigt", APPLE, lambda p: p.depth == 0 and p.x > 300),
])
def test_spelling_slips(message, idx, check):
    canvas, _ = dialog(message)
    assert set(canvas) == {idx}, message
    assert check(canvas[idx]), message


@pytest.mark.parametrize("message, drawn", [
    ("place a sun in the middle", {SUN}),                      # not "plane"
    ("he is having a hot dog", {MIKE, HOT_DOG}),               # not "waving"
    ("a tall pine tree on the left", {PINE}),                  # not "ball"
    ("mike in a red shirt on the left", {MIKE}),               # not "shift"
])
def test_common_words_are_not_slips(message, drawn):
    canvas, _ = dialog(message)
    assert set(canvas) == drawn, message
    if MIKE in canvas:
        assert canvas[MIKE].pose != ca.POSES.index("waving")


def test_all_pieces_of_a_long_dialog_stay_on_the_canvas():
    messages = [
        "hi! big apple tree on the right, cut off at the top and right",
        "small sun top left corner",
        "Jenny medium on the left, she is running to the right, scared face",
        "Mike, big, kicking, angry, 75 inches from the right, facing left",
        "a soccer ball at his feet",
        "a small bear in the middle. he is facing left",
        "kid is on left",
        "move the sun a lot to the right",
        "there is a rain cloud on the left and a balloon in jenny's hand",
        "a duck 9 inches from the bottom",
    ]
    canvas, _ = dialog(*messages)
    assert {RAIN, BALLOONS, 23, 47, BEAR, SUN, APPLE, JENNY, MIKE} <= set(canvas)
    assert HOT_AIR not in canvas
    for idx, piece in canvas.items():
        if idx != APPLE:                                      # the tree was asked to be cut off
            assert inside(piece), lang.name_of(idx)
    for person in (MIKE, JENNY):
        assert on_ground(canvas[person])


# ------------------------------------------------------------------------------- the paper's dialogs
def test_the_papers_bear_dialog():
    """Teller messages of the CoDraw paper's Table (dialog A): "his" and "he" are the bear."""
    canvas, changes = dialog(
        "in the top left corner is a medium sun very close to the top and left edge",
        "on the right hand side is a medium bear facing left with a basketball in his left hand",
        "on the right side of screen , medium bear , chest on horizon , paw almost touching right side of screen",
        "he also has a rainbow hat , but it 's not snugly on him , it 's only slightly touching his head .")
    bear = canvas[BEAR]
    assert bear.x > 300 and bear.flip == LEFT and MIKE not in canvas
    assert canvas[SUN].box[0] <= 5 and canvas[SUN].box[1] <= 5
    hat = canvas[31]                                             # the rainbow hat, by the bear
    assert abs(hat.x - bear.x) < 80 and [c.idx for c in changes[-1]] == [31]
    assert abs(canvas[46].x - bear.x) < 80                       # the basketball too


def test_animals_and_large_objects_stand_on_the_grass_birds_may_fly():
    canvas, _ = dialog("right top a kite , small size , tail is off screen . below kite dog medium size , facing left")
    assert canvas[DOG].box[3] >= GROUND[1] - 0.5 and canvas[DOG].flip == LEFT
    assert canvas[56].y < 100                                    # the kite stays up
    canvas, _ = dialog("small pine tree in the top left")
    assert canvas[PINE].box[3] >= ca.HORIZON_Y + 3.5
    canvas, _ = dialog("an owl in the top left", "a duck flying in the sky on the right")
    assert canvas[OWL].y < 100 and canvas[DUCK].y < 150
    canvas, _ = dialog("big sandbox in the middle, 0.5 in from the bottom", "a small cat in the sandbox")
    assert canvas[CAT].box[3] <= canvas[10].box[3]
