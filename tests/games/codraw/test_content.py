"""Content: generated and imported targets, and the Drawer's palette."""
import json
import random

import pytest

from games.codraw import clipart as ca
from games.codraw.content import check_content, generate, import_codraw_json, make_palette
from games.codraw.scenes import parse_scene


def _others_by_group(palette):
    counts = [0] * 8
    for idx in palette:
        counts[ca.type_of(idx)] += 1
    return counts


def test_generate_is_deterministic():
    assert generate(11, {}) == generate(11, {})
    assert generate(11, {}) != generate(12, {})
    assert json.loads(json.dumps(generate(11, {}))) == generate(11, {})


@pytest.mark.parametrize("seed", range(40))
def test_generated_palette(seed):
    item = generate(seed, {})
    check_content(item)
    target = parse_scene(item["abs_t"])
    palette = item["palette"]
    assert 6 <= len(target.placed) <= 17
    assert ca.MIKE in palette and ca.JENNY in palette
    assert target.idxs <= set(palette)
    assert palette == sorted(set(palette))
    others = [idx for idx in palette if not ca.is_human(idx)]
    needed_others = [idx for idx in target.idxs if not ca.is_human(idx)]
    assert len(others) == max(18, len(needed_others))
    assert item["provenance"] == {"source": "generated", "generator": "codraw_park_v1", "seed": seed}


def test_palette_follows_the_original_slots():
    rng = random.Random(0)
    palette = make_palette(frozenset(), rng)
    assert _others_by_group(palette) == [3, 4, 1, 1, 2, 3, 2, 4]


def test_palette_when_needed_pieces_overflow_a_group():
    needed = frozenset({43, 44, 45, 46, 47, 48, 3})     # six toys and the sun
    palette = make_palette(needed, random.Random(1))
    assert needed <= set(palette)
    counts = _others_by_group(palette)
    assert counts[7] == 6 and sum(counts) - 2 == 18       # the toy slots overflow, others give way


def test_palette_when_the_target_alone_needs_more_than_18():
    needed = frozenset(range(20, 40))                     # 20 non-human pieces
    palette = make_palette(needed, random.Random(1))
    assert set(palette) == needed | {18, 19}


def test_full_palette():
    item = generate(3, {"full_palette": True})
    assert item["palette"] == list(range(58))


def test_generate_from_a_configured_pool(readme):
    pool = [{"abs_t": readme["abs_t"], "key": "train_00001", "image_id": 1,
             "provenance": {"source": "import", "file": "CoDraw_1_0.json", "key": "train_00001"}},
            readme["abs_t"].replace("469,31", "400,40")]
    picks = {generate(seed, {"scenes": pool})["abs_t"] for seed in range(20)}
    assert picks == {pool[0]["abs_t"], pool[1]}
    item = next(generate(s, {"scenes": pool}) for s in range(20) if generate(s, {"scenes": pool})["key"])
    assert item["provenance"]["source"] == "import" and item["provenance"]["key"] == "train_00001"
    assert "chosen_with_seed" in item["provenance"]
    check_content(item)
    assert generate(4, {"scenes": pool}) == generate(4, {"scenes": pool})


def test_check_content_refuses_bad_items(readme):
    good = generate(1, {})
    check_content(good)
    with pytest.raises(ValueError, match="lacks"):
        check_content({**good, "palette": [18, 19]})
    with pytest.raises(ValueError, match="distinct"):
        check_content({**good, "palette": good["palette"] + [good["palette"][0]]})
    with pytest.raises(ValueError, match="bad target"):
        check_content({**good, "abs_t": "1,s_3s.png"})
    with pytest.raises(ValueError, match="kind"):
        check_content({**good, "kind": "colors"})


def test_import_codraw_json(tmp_path, readme):
    path = tmp_path / "CoDraw_1_0.json"
    rounds = [{"seq_t": 0, "seq_d": 0, "msg_t": readme["msg_t"], "msg_d": "ok",
               "abs_b": readme["abs_b"], "abs_d": readme["abs_d"], "peeked": True}]
    path.write_text(json.dumps({"data": {
        "train_00001": {"image_id": 1, "abs_t": readme["abs_t"], "dialog": rounds},
        "val_00002": {"image_id": 2, "abs_t": "1,s_3s.png,0,3,0,100,50,0,0", "dialog": []},
        "test_00003": {"image_id": 3, "abs_t": "1,s_3s.png,0,3,0,-10000,-10000,0,0", "dialog": []},
    }}))
    items = import_codraw_json(path)
    assert [item["key"] for item in items] == ["train_00001", "val_00002"]   # the empty scene is skipped
    first, second = items
    assert first["abs_t"] == readme["abs_t"] and first["image_id"] == 1
    assert first["provenance"] == {"source": "import", "file": "CoDraw_1_0.json", "key": "train_00001"}
    # the recorded Drawer's palette (28 slots, 20 distinct clip arts) plus the target pieces it
    # lacks (this README example's palette has no pine tree, owl or viking helmet)
    recorded = {p.idx for p in parse_scene(readme["abs_b"]).pieces}
    assert len(recorded) == 20
    assert first["palette"] == sorted(recorded | {15, 24, 33})
    assert first["dialog"] == rounds
    assert 3 in second["palette"] and len(second["palette"]) == 20
    assert import_codraw_json(path) == items
    for item in items:
        check_content(item)
