"""The rule Teller says places in words a person uses (issue 20, item 4): no inches or other units,
at most 140 characters, every piece described once, relative places on the side they name; the
rule Drawer recovers every piece with its size, facing, pose and expression from those words."""
from __future__ import annotations

import re
import statistics

import pytest

from games.codraw import agents as A
from games.codraw import clipart as ca
from games.codraw import content, rules
from games.codraw import language as lang
from games.codraw.scenes import Piece, parse_scene

# default scenes, full palettes, and crowded scenes (14-17 pieces)
SCENES = [(seed, {}) for seed in range(60)] + [(seed, {"full_palette": True}) for seed in range(100, 120)] \
    + [(seed, {"min_pieces": 14, "max_pieces": 17}) for seed in range(200, 220)]
UNITS = re.compile(r"\d|\b(inch|inches|in\.|cm|mm|px|pixels?|centimet\w*|percent|feet|foot)\b|\bin from\b|"
                   r"\bcentered\b|[\"%]")
OAK, DOG = 16, 22


def play(seed: int, config: dict, teller=None, drawer=None) -> tuple[dict, dict]:
    item = content.generate(seed, config)
    state = A.play(item, {"teller": teller or A.RuleTeller(), "drawer": drawer or A.RuleDrawer()}, seed=seed)
    return item, state


def teller_texts(state: dict) -> list[str]:
    return [m["text"] for m in state["chat"] if m["role"] == "teller"]


@pytest.fixture(scope="module")
def games() -> list[tuple[dict, dict]]:
    return [play(seed, config) for seed, config in SCENES]


def test_no_units_and_short_messages(games):
    said = [text for _, state in games for text in teller_texts(state)]
    assert len(said) > 900
    for text in said:
        assert not UNITS.search(text), text
        assert 0 < len(text) <= 140, text
    # the words people use for places
    joined = "\n".join(said)
    for words in ("on the left", "on the right", "in the middle", "on the far left", "near the bottom",
                  "just below the horizon", "in the sky", " of the ", "under the ", "in front of ",
                  "behind ", "'s head", "'s hand"):
        assert words in joined, words


def test_every_piece_is_described_once(games):
    for item, state in games:
        target = A.target_order(parse_scene(item["abs_t"]).placed)
        said = teller_texts(state)
        assert len(said) == len(target), said            # the rule Drawer needs no correction
        canvas, focus, named = {}, None, []
        for text in said:
            canvas, focus, changes = lang.interpret(text, canvas, None, focus)
            assert [c.op for c in changes] == ["place"], text      # one new piece, nothing redone
            named.append(changes[0].idx)
        assert named == [p.idx for p in target]
        assert len(set(said)) == len(said)


def test_the_rule_drawer_recovers_every_stated_detail(games):
    scores = []
    for item, state in games:
        target = {p.idx: p for p in parse_scene(item["abs_t"]).placed}
        drawn = {p.idx: p for p in parse_scene(state["rounds"][-1]["abs_d"]).placed}
        assert set(drawn) == set(target)
        for idx, piece in target.items():
            got = drawn[idx]
            assert got.depth == piece.depth, (idx, "size")
            assert got.flip == piece.flip, (idx, "facing")
            if ca.is_human(idx):
                assert (got.pose, got.expression) == (piece.pose, piece.expression), (idx, "pose, expression")
            # a region's centre or a place by another piece, not the exact spot
            assert abs(got.x - piece.x) <= 120 and abs(got.y - piece.y) <= 120, idx
        scores.append(rules.score(state))
    # measured 4.92 (min 4.81) on seeds 0-59; with inches it was 4.98
    assert statistics.fmean(scores) > 4.8 and min(scores) > 4.5


_RELATIVE = re.compile(r"\b(left of|right of|next to|above|under|in front of|behind) "
                       r"(Mike|Jenny|the [a-z ]+?)(?:,|$)")
_KINDS = {"left of": "left_of", "right of": "right_of", "next to": "near", "above": "above",
          "under": "below", "in front of": "front", "behind": "behind"}


def test_relative_places_are_on_the_side_they_name(games):
    seen = {kind: 0 for kind in _KINDS.values()}
    for _, state in games:
        canvas, focus = {}, None
        for text in teller_texts(state):
            before = canvas
            canvas, focus, changes = lang.interpret(text, canvas, None, focus)
            found = _RELATIVE.search(text)
            if not found or found.group(2) in ("the center", "the middle", "the horizon"):
                continue
            name = found.group(2).removeprefix("the ")
            landmark = next(idx for idx in before if lang.name_of(idx) == name)
            piece, other = canvas[changes[0].idx], before[landmark]
            kind = _KINDS[found.group(1)]
            assert lang.relation_holds(kind, piece, other), text
            seen[kind] += 1
    assert all(count > 0 for count in seen.values()), seen


@pytest.mark.parametrize("message, check", [
    ("a dog left of the oak tree", lambda d, t: d.box[2] < t.box[0] and d.box[3] >= lang.GROUND_MIN_BOTTOM[1] - 1),
    ("a dog right of the oak tree", lambda d, t: d.box[0] > t.box[2]),
    ("a dog to the left of the oak tree, near the bottom", lambda d, t: d.x < t.x and d.box[3] > 370),
    ("a dog in front of the oak tree", lambda d, t: d.x == t.x and d.box[3] > t.box[3]),
    ("a dog behind the oak tree, a bit to the left", lambda d, t: d.x == t.x - lang.NUDGE_PX and d.box[3] < t.box[3]),
    ("a dog in front of the oak tree, a bit to the right", lambda d, t: d.x == t.x + lang.NUDGE_PX),
    ("a dog under the oak tree, slightly to the left", lambda d, t: d.x == t.x - lang.NUDGE_PX and d.y > t.y),
])
def test_relative_phrases(message, check):
    canvas, _, _ = lang.interpret("big oak tree in the middle", {})
    after, _, changes = lang.interpret(message, canvas)
    assert [(c.op, c.idx) for c in changes] == [("place", DOG)]
    assert check(after[DOG], after[OAK]), message


def test_region_words():
    def one(message: str) -> Piece:
        after, _, changes = lang.interpret(message, {})
        assert len(changes) == 1, message
        return after[changes[0].idx]

    # across: far left < left < left of center < just left of center < middle, and mirrored
    xs = [one(f"small dog {words}").x for words in lang.X_PHRASES]
    assert xs == sorted(xs) and len(set(xs)) == len(xs) and xs[4] == 250
    assert [x + y for x, y in zip(xs, reversed(xs))] == [500] * len(xs)
    assert one("a big tree a bit left of the middle").x == lang.NEAR_CENTRE_X
    # down: the back of the grass, the default band, near the bottom, the very bottom
    bottoms = [one(f"medium Mike on the left, {words}").box[3] if words else one("medium Mike on the left").box[3]
               for words in lang.GROUND_Y_PHRASES]
    assert bottoms == sorted(bottoms) and len(set(bottoms)) == 4
    assert bottoms[0] == pytest.approx(lang.GROUND_MIN_BOTTOM[1], abs=1) and bottoms[-1] > 395
    assert one("small oak tree just below the horizon").box[3] == pytest.approx(ca.HORIZON_Y + 4, abs=1)
    ys = [one(f"small sun on the left, {words}").y for words in lang.SKY_Y_PHRASES]
    assert ys == sorted(ys) and one("small sun just above the horizon").box[3] == pytest.approx(ca.HORIZON_Y, abs=1)


class SloppyDrawer(A.RuleDrawer):
    """A Drawer that draws every piece as read, then flips the first and moves the last far off,
    as a careless person might (to exercise the peek's corrections)."""

    def goal(self, view):
        before, canvas, changes = super().goal(view)
        if len(canvas) >= 2:
            canvas = dict(canvas)
            first, last = list(canvas)[0], list(canvas)[-1]
            canvas[first] = canvas[first].moved(flip=1 - canvas[first].flip)
            piece = canvas[last]
            canvas[last] = piece.moved(x=500 - piece.x if abs(250 - piece.x) > 120 else (piece.x + 200) % 500)
        return before, canvas, changes


def test_corrections_say_only_what_is_wrong():
    checked = 0
    for seed in range(10):
        item, state = play(seed, {}, drawer=SloppyDrawer())
        target = A.target_order(parse_scene(item["abs_t"]).placed)
        said = teller_texts(state)
        described, fixes = said[:len(target)], said[len(target):]
        assert state["peek"]["used"] and fixes, said
        for text in fixes:
            assert text not in described and not UNITS.search(text) and len(text) <= 140, text
            assert " should be " in text, text
            first = lang.interpret(described[0], {})[0]
            name = lang.the_name(next(iter(first)))
            if text.startswith(name + " "):
                assert text == f"{name} should be {lang.facing_words(target[0].flip)}"   # only the flip
        checked += 1
    assert checked == 10
