"""CoDraw_1_0.json export: import a file, replay its dialogs through the rules, export it again."""
import io
import json

import pytest

from games.codraw import exports, rules
from games.codraw.content import generate, import_codraw_json
from games.codraw.scenes import parse_scene


def _move(text, slot, x, y, flip=None):
    fields = text.split(",")
    fields[1 + 8 * slot + 4], fields[1 + 8 * slot + 5] = x, y
    if flip is not None:
        fields[1 + 8 * slot + 7] = flip
    return ",".join(fields)


@pytest.fixture
def codraw_file(tmp_path, readme, kit):
    """A small file in the released format, built from the README's example strings."""
    start = kit.unplace_all(readme["abs_b"])
    # round 2: Jenny changes her look (another of her palette slots) and moves to float coordinates,
    # the apple tree moves too
    fixed = _move(_move(readme["abs_d"], 13, "-10000", "-10000"), 14, "130.5", "268.7", flip="0")
    fixed = _move(fixed, 3, "440.25", "151.5")
    dog_palette = ("3,s_3s.png,0,3,0,-10000,-10000,0,0,hb0_0s.png,1,0,2,-10000,-10000,0,0,"
                   "a_2s.png,2,2,4,-10000,-10000,0,1,")
    data = {"data": {
        "train_00001": {"image_id": 1, "abs_t": readme["abs_t"], "socketId": "/#abc", "dialog": [
            {"seq_t": 0, "seq_d": 0, "msg_t": "hi, ready?", "msg_d": "ready", "abs_b": start,
             "abs_d": readme["abs_b"]},
            {"seq_t": 1, "seq_d": 1, "msg_t": readme["msg_t"], "msg_d": "ok", "abs_b": readme["abs_b"],
             "abs_d": readme["abs_d"]},
            {"seq_t": 2, "seq_d": 2, "msg_t": "she is scared, arms out, facing right", "msg_d": "fixed",
             "abs_b": readme["abs_d"], "abs_d": fixed, "peeked": True},
            {"seq_t": 3, "seq_d": 3, "msg_t": "perfect, thanks", "msg_d": "bye", "abs_b": fixed,
             "abs_d": fixed, "peeked": True},
        ]},
        "val_00005": {"image_id": 5, "abs_t": "2,s_3s.png,0,3,0,60,50,1,0,a_2s.png,1,2,4,300,320,0,1",
                      "dialog": [
            {"seq_t": 0, "seq_d": 0, "msg_t": "a big dog facing right at the bottom", "msg_d": "done",
             "abs_b": "", "abs_d": _move(dog_palette, 2, "300", "320")},
        ]},
    }}
    path = tmp_path / "CoDraw_1_0.json"
    path.write_text(json.dumps(data))
    return path, data


def _export_via_rules(items, kit):
    records = [kit.play_dialog(item, match_id=f"m{i}").record() for i, item in enumerate(items)]
    return exports.codraw_json(records), records


def _placed(text):
    return {(p.idx, p.x, p.y, p.depth, p.flip, p.subtype) for p in parse_scene(text).placed}


def test_import_then_export_gives_back_the_same_fields(codraw_file, kit):
    path, original = codraw_file
    exported, records = _export_via_rules(import_codraw_json(path), kit)
    assert set(exported) == {"data"}
    assert set(exported["data"]) == set(original["data"])
    for key, entry in original["data"].items():
        got = exported["data"][key]
        assert set(got) == {"image_id", "abs_t", "dialog"}
        assert got["image_id"] == entry["image_id"]
        assert got["abs_t"] == entry["abs_t"]
        assert len(got["dialog"]) == len(entry["dialog"])
        for mine, theirs in zip(got["dialog"], entry["dialog"]):
            for field in ("seq_t", "seq_d", "msg_t", "msg_d"):
                assert mine[field] == theirs[field]
            assert ("peeked" in mine) == ("peeked" in theirs)
            if "peeked" in theirs:
                assert mine["peeked"] is True
            # the same pieces on the canvas (palette slots are written in this project's order)
            assert _placed(mine["abs_b"]) == _placed(theirs["abs_b"])
            assert _placed(mine["abs_d"]) == _placed(theirs["abs_d"])
    # Jenny with her new look, at round(130.5) = 130 and round(268.7) = 269
    jenny = parse_scene(exported["data"]["train_00001"]["dialog"][2]["abs_d"]).get(19)
    assert (jenny.x, jenny.y, jenny.subtype, jenny.flip) == (130, 269, 11, 0)
    for record in records:
        assert record["status"] == "finished" and record["outcome"]["ended_by"] == "teller"
    assert records[0]["outcome"]["peeked"] is True and records[1]["outcome"]["peeked"] is False


def test_a_second_round_trip_is_exact(codraw_file, kit, tmp_path):
    path, _ = codraw_file
    first, _ = _export_via_rules(import_codraw_json(path), kit)
    again = tmp_path / "again.json"
    again.write_text(exports.dumps([kit.play_dialog(item, match_id=f"m{i}").record()
                                    for i, item in enumerate(import_codraw_json(path))]))
    assert json.loads(again.read_text()) == first
    second, _ = _export_via_rules(import_codraw_json(again), kit)
    assert second == first                      # strings and all


def test_replayed_records_replay_to_the_live_state(codraw_file, kit):
    path, _ = codraw_file
    for i, item in enumerate(import_codraw_json(path)):
        match = kit.play_dialog(item, match_id=f"m{i}")
        assert kit.replay(match.record()) == match.state


def test_generated_matches_export(kit):
    records = []
    for i, seed in enumerate([3, 4, 4]):
        content = generate(seed, {})
        match = kit.Match(content, seed=seed, match_id=f"g{i}")
        target = parse_scene(content["abs_t"])
        match.do("teller", {"type": "chat", "text": "copy everything"})
        for action in rules.canvas_actions(rules.canvas_scene(match.state), target):
            match.do("drawer", action)
        match.do("drawer", {"type": "chat", "text": "ok"})
        if i < 2:
            match.do("teller", {"type": "end"})
        records.append(match.record())
    document = exports.codraw_json(records)
    assert list(document["data"]) == ["groundtalk_g0", "groundtalk_g1"]        # g2 is not finished
    entry = document["data"]["groundtalk_g0"]
    assert entry["image_id"] == 3 and entry["abs_t"] == records[0]["content"]["abs_t"]
    (round_,) = entry["dialog"]
    assert "peeked" not in round_ and round_["seq_t"] == 0
    assert _placed(round_["abs_d"]) == _placed(entry["abs_t"])
    everything = exports.codraw_json(records, statuses=("finished", "active"))
    assert len(everything["data"]) == 3
    summary = exports.summary(records)
    assert summary["matches"] == 2 and summary["score_mean"] == 5.0 and summary["peek_rate"] == 0.0
    assert exports.summary([r["outcome"] for r in records]) == summary      # outcomes work too
    assert exports.summary([]) == {"matches": 0}
    text = exports.summarize([r["outcome"] for r in records])
    assert "2 matches" in text and "mean 5.000" in text
    out = io.StringIO()
    # the export's --status has already chosen the matches (finished by default): the writer keeps them all
    assert exports.EXPORT_FORMATS["codraw"](records, out) == 3
    assert json.loads(out.getvalue()) == everything


def test_same_imported_scene_twice_gets_distinct_keys(codraw_file, kit):
    path, _ = codraw_file
    item = import_codraw_json(path)[1]
    records = [kit.play_dialog(item, match_id=m).record() for m in ("a", "b")]
    assert list(exports.codraw_json(records)["data"]) == ["val_00005", "val_00005_b"]
