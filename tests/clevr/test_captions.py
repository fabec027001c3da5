"""CLEVR-Dialog captions: the four kinds, always true, readable back, deterministic."""
from __future__ import annotations

from collections import Counter

from clevr.captions import caption_holds, generate_caption, ground_caption, parse_caption
from clevr.scenes import generate_scene


def test_captions_are_true_and_parse_back_on_many_scenes():
    kinds = Counter()
    for seed in range(150):
        scene = generate_scene(seed)
        cap = generate_caption(scene, seed)
        kinds[cap["kind"]] += 1
        assert parse_caption(cap["text"]) == cap["spec"]
        assert caption_holds(cap["text"], scene) is True
        assert cap["mentions"] and all(cap["mentions"])
    assert set(kinds) == {"obj-unique", "obj-count", "obj-extreme", "obj-relation"}
    assert min(kinds.values()) >= 20


def test_captions_are_seeded():
    scene = generate_scene(7)
    assert generate_caption(scene, 3) == generate_caption(scene, 3)
    assert len({generate_caption(scene, s)["text"] for s in range(20)}) > 3


def test_each_kind_on_a_hand_made_scene(scene5):
    # 0 large red metal cube, 1 small blue sphere, 2 large green cylinder, 3 small yellow cube,
    # 4 large red metal sphere (leftmost)
    for kind in ("obj-count", "obj-extreme", "obj-relation", "obj-unique"):
        cap = generate_caption(scene5, 11, kinds=(kind,))
        assert cap["kind"] == kind
        assert caption_holds(cap["text"], scene5)
    assert parse_caption("The image has two red objects.") == {"kind": "obj-count", "attrs": {"color": "red"},
                                                               "count": 2}
    assert caption_holds("The image has two red objects.", scene5) is True
    assert caption_holds("The image has three red objects.", scene5) is False
    assert caption_holds("The leftmost thing in the view is a red sphere.", scene5) is True
    assert caption_holds("The rightmost thing in the view is a red sphere.", scene5) is False
    spec = parse_caption("A large red metal sphere stands to the left of a red cube.")
    assert ground_caption(spec, scene5) == {"holds": True, "mentions": [[0], [4]]}
    assert caption_holds("A green cylinder stands to the left of a red cube.", scene5) is False
    assert parse_caption("a picture of some shapes") is None
