"""CoDraw_1_0.json export: import a file, replay its dialogs through the rules, export it again."""
import csv
import io
import json
import random
import re
from pathlib import Path

import pytest
from django.core.management.base import CommandError

from games.codraw import clipart as ca
from games.codraw import exports, rules
from games.codraw.content import generate, import_codraw_json
from games.codraw.metric import original_similarity
from games.codraw.scenes import NOT_USED, parse_scene
from games.registry import GAMES


SAMPLE = Path(__file__).parent / "data" / "CoDraw_sample.json"
RELEASE_ROUND_KEYS = ["seq_t", "seq_d", "msg_t", "msg_d", "abs_t", "abs_b", "abs_d", "peeked", "score"]


@pytest.fixture
def codraw_file(tmp_path):
    """A small file in the released shape (tests/games/codraw/data/CoDraw_sample.json, written by hand
    after the dataset README: ``count``, ``stat`` by socket id, ``data`` by key; each round with
    ``abs_t`` and ``score``; 28-slot canvas strings; a first round with no Teller message and no
    score, seq numbers from 1, float coordinates, a Jenny who changed look and a ball dragged off
    the canvas (their slots keep what the interface left there), empty Drawer messages, a
    131-character message, a first canvas string that is empty and one that already holds pieces)."""
    path = tmp_path / "CoDraw_1_0.json"
    path.write_text(SAMPLE.read_text())
    return path, json.loads(SAMPLE.read_text())


def _export_via_rules(items, kit):
    records = [kit.play_dialog(item, match_id=f"m{i}").record() for i, item in enumerate(items)]
    return exports.codraw_json(records), records


def _placed(text):
    return {(p.idx, p.x, p.y, p.depth, p.flip, p.subtype) for p in parse_scene(text).placed}


def test_import_replay_export_gives_back_the_file(codraw_file, kit):
    path, original = codraw_file
    items = import_codraw_json(path)
    exported, records = _export_via_rules(items, kit)
    # every field, in the released order (keys included), as the file had it
    assert json.dumps(exported) == json.dumps(original)
    assert list(exported) == ["count", "stat", "data"]
    for entry in exported["data"].values():
        assert list(entry) == ["image_id", "abs_t", "socketId", "dialog"]
        for round_ in entry["dialog"]:
            assert list(round_) == [k for k in RELEASE_ROUND_KEYS if k in round_]
    for record in records:
        assert record["status"] == "finished" and record["outcome"]["ended_by"] == "teller"
    assert records[0]["outcome"]["peeked"] is True and records[1]["outcome"]["peeked"] is False
    # the replay started from the recorded canvas (the sun and Mike already drawn)
    assert records[2]["outcome"]["n_canvas"] == 3


def test_the_replayed_canvases_are_the_matchs_own(codraw_file, kit):
    """The strings come from the rules' canvases: the Drawer's pieces in the recorded slots."""
    path, original = codraw_file
    item = import_codraw_json(path)[2]                       # the file's order
    assert item["key"] == "test_00012"
    match = kit.play_dialog(item)
    rounds = match.state["rounds"]
    for mine, theirs in zip(rounds, original["data"]["test_00012"]["dialog"]):
        assert _placed(mine["abs_b"]) == _placed(theirs["abs_b"])
        assert _placed(mine["abs_d"]) == _placed(theirs["abs_d"])
    # without the replay setting the match starts from an empty canvas and numbers rounds from 0
    fresh = kit.Match(item, seed=7, config={})
    assert fresh.state["canvas"] == {}
    fresh.do("teller", {"type": "chat", "text": "hello"})
    fresh.do("drawer", {"type": "chat", "text": "hi"})
    assert fresh.state["rounds"][0]["seq_t"] == 0
    assert len(parse_scene(fresh.state["rounds"][0]["abs_b"])) == 28


def test_a_second_round_trip_is_exact(codraw_file, kit, tmp_path):
    path, original = codraw_file
    first, _ = _export_via_rules(import_codraw_json(path), kit)
    again = tmp_path / "again.json"
    again.write_text(exports.dumps([kit.play_dialog(item, match_id=f"m{i}").record()
                                    for i, item in enumerate(import_codraw_json(path))]))
    assert json.loads(again.read_text()) == first
    second, _ = _export_via_rules(import_codraw_json(again), kit)
    assert json.dumps(second) == json.dumps(first) == json.dumps(original)


def test_a_replay_that_draws_otherwise_is_exported_as_its_own(codraw_file, kit):
    """A Drawer who does not redraw the recording: its canvases, computed scores, its own socket."""
    path, original = codraw_file
    item = [i for i in import_codraw_json(path) if i["key"] == "val_00005"][0]
    match = kit.Match(item, seed=7, config={"replay_dialog": True}, match_id="other")
    match.do("teller", {"type": "chat", "text": item["dialog"][0]["msg_t"]})
    match.do("drawer", {"type": "place", "idx": 22, "x": 100, "y": 300, "depth": 1, "flip": 0})
    match.do("drawer", {"type": "chat", "text": "done"})
    match.do("teller", {"type": "end"})
    document = exports.codraw_json([match.record()])
    entry = document["data"]["val_00005"]
    assert entry["socketId"] == "/#groundtalk_other" and list(document["stat"]) == ["/#groundtalk_other"]
    stat = document["stat"]["/#groundtalk_other"]
    assert list(stat) == ["start", "end", "duration", "round"] and stat["round"] == 1
    assert stat["duration"] == (stat["end"] - stat["start"]) / 1000 > 0
    (round_,) = entry["dialog"]
    recorded = original["data"]["val_00005"]["dialog"][0]
    assert round_["abs_b"] == "" == recorded["abs_b"]          # the same empty start, as recorded
    assert round_["abs_d"] != recorded["abs_d"]
    assert _placed(round_["abs_d"]) == {(22, 100, 300, 1, 0, 0)}
    assert round_["score"] == original_similarity(round_["abs_d"], entry["abs_t"])
    assert round_["score"] != recorded["score"]


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
    assert list(round_) == ["seq_t", "seq_d", "msg_t", "msg_d", "abs_t", "abs_b", "abs_d", "score"]
    assert round_["abs_t"] == entry["abs_t"]
    assert _placed(round_["abs_d"]) == _placed(entry["abs_t"])
    assert round_["score"][0] == 5.0 and round_["score"][1] == [5, -1, -1, -1, -1, -0.5, -0.5]
    assert list(document) == ["count", "stat", "data"] and document["count"] == 2
    assert entry["socketId"] == "/#groundtalk_g0" and document["stat"]["/#groundtalk_g0"]["round"] == 1
    # the released palette: 28 slots in group order, Mike and Jenny five looks each, and every
    # slot keeps its flip whether or not it is on the canvas
    before, after = parse_scene(round_["abs_b"]), parse_scene(round_["abs_d"])
    assert len(before) == len(after) == 28 and before.trailing_comma
    types = [p.type_idx for p in after]
    assert types == sorted(types)
    assert [types.count(t) for t in range(8)] == list(ca.PALETTE_SLOTS)
    for human in (18, 19):
        looks = [p.subtype for p in after if p.idx == human]
        assert len(set(looks)) == 5
    unplaced_flips = [p.flip for p in after if not p.placed]
    assert set(unplaced_flips) == {0, 1}                      # random flips, as Abs.js deals them
    layout = parse_scene(records[0]["content"]["layout"])
    assert [(p.idx, p.subtype, p.flip) for p in before] == [(p.idx, p.subtype, p.flip) for p in layout]
    for slot, now in zip(layout.pieces, after.pieces):
        if not now.placed:
            assert (now.idx, now.subtype, now.flip, now.x) == (slot.idx, slot.subtype, slot.flip, NOT_USED)
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
    assert GAMES["codraw_v1"].export_writers()["codraw"](records, out, codraw_split="original") == 3
    assert json.loads(out.getvalue()) == everything


def test_a_removed_piece_and_a_new_look_keep_their_slots(kit):
    """As the original interface: a piece dragged off keeps its slot's y, depth and flip; Mike in
    another look moves to that look's slot, the old slot keeps what it had but x."""
    content = generate(5, {})
    match = kit.Match(content, seed=5)
    layout = parse_scene(content["layout"])
    looks = [p.subtype for p in layout if p.idx == 18]
    other = [p.idx for p in layout if p.idx not in (18, 19)][0]
    match.do("teller", {"type": "chat", "text": "draw"})
    match.do("drawer", {"type": "place", "idx": 18, "x": 120, "y": 280, "depth": 1, "flip": 1, "subtype": looks[0]})
    match.do("drawer", {"type": "place", "idx": other, "x": 300, "y": 100, "depth": 2, "flip": 1})
    match.do("drawer", {"type": "chat", "text": "ok"})
    match.do("teller", {"type": "chat", "text": "change"})
    match.do("drawer", {"type": "update", "idx": 18, "subtype": looks[3]})
    match.do("drawer", {"type": "remove", "idx": other})
    match.do("drawer", {"type": "chat", "text": "ok"})
    first, second = (parse_scene(r["abs_d"]) for r in match.state["rounds"])
    mike_slots = [i for i, p in enumerate(layout) if p.idx == 18]
    assert first.pieces[mike_slots[0]].placed and not first.pieces[mike_slots[3]].placed
    old, new = second.pieces[mike_slots[0]], second.pieces[mike_slots[3]]
    assert (old.x, old.y, old.depth, old.flip, old.subtype) == (NOT_USED, 280, 1, 1, looks[0])
    assert (new.x, new.y, new.depth, new.flip, new.subtype) == (120, 280, 1, 1, looks[3])
    slot = [i for i, p in enumerate(layout) if p.idx == other][0]
    gone = second.pieces[slot]
    assert (gone.x, gone.y, gone.depth, gone.flip) == (NOT_USED, 100, 2, 1) and not gone.placed
    # a look no slot has: the holding slot takes it
    unused = next(s for s in range(35) if s not in looks)
    match.do("teller", {"type": "chat", "text": "again"})
    match.do("drawer", {"type": "update", "idx": 18, "subtype": unused})
    match.do("drawer", {"type": "chat", "text": "ok"})
    third = parse_scene(match.state["rounds"][-1]["abs_d"])
    assert third.pieces[mike_slots[3]].subtype == unused and third.pieces[mike_slots[3]].placed
    assert len(third) == 28 and third.get(18).subtype == unused


def test_same_imported_scene_twice_gets_distinct_keys(codraw_file, kit):
    path, _ = codraw_file
    item = [i for i in import_codraw_json(path) if i["key"] == "val_00005"][0]
    records = [kit.play_dialog(item, match_id=m).record() for m in ("a", "b")]
    assert list(exports.codraw_json(records)["data"]) == ["val_00005", "val_00005_b"]


def test_the_slots_follow_the_interface_without_the_recorded_strings(codraw_file):
    """Each recorded canvas is what the rules write from the canvas before it and the pieces on
    the canvas after it (the recorded strings are only needed for their spelling: 130.5)."""
    _, original = codraw_file
    for entry in original["data"].values():
        for round_ in entry["dialog"]:
            before, after = parse_scene(round_["abs_b"]), parse_scene(round_["abs_d"])
            if not before.pieces:
                continue
            canvas = {}
            for piece in after.placed:
                canvas.setdefault(str(piece.idx), piece.to_dict())
            written = rules.merge_layout(before, canvas)
            assert [(p.idx, p.subtype, p.x, p.y, p.depth, p.flip) for p in written] == \
                [(p.idx, p.subtype, p.x, p.y, p.depth, p.flip) for p in after]
            if "." not in round_["abs_d"]:
                assert written.to_string() == round_["abs_d"]


@pytest.mark.django_db
def test_import_content_command_keeps_what_the_export_needs(codraw_file):
    from django.core.management import call_command

    from live.models import Content
    path, original = codraw_file
    out = io.StringIO()
    call_command("import_content", "codraw", str(path), stdout=out)
    assert "imported 3 codraw_v1 items" in out.getvalue()
    stored = {row.data["key"]: row.data for row in Content.objects.filter(game_id="codraw_v1")}
    assert list(stored) == list(original["data"])
    for key, entry in original["data"].items():
        item = stored[key]
        assert item["socketId"] == entry["socketId"] and item["stat"] == original["stat"][entry["socketId"]]
        assert item["dialog"] == entry["dialog"]
        first = next(r["abs_b"] or r["abs_d"] for r in entry["dialog"] if r["abs_b"] or r["abs_d"])
        assert item["layout"] == first                       # the recorded slots, exactly


@pytest.mark.django_db(transaction=True)
def test_simulate_replays_a_file_through_the_platform_and_exports_it_back(codraw_file, tmp_path):
    """The two script agents replay every recorded dialog through the match service; the export
    of those matches is the file again."""
    from django.core.management import call_command
    path, original = codraw_file
    out = io.StringIO()
    call_command("simulate", "codraw", "--matches", "3", "--content-file", str(path),
                 "--config", json.dumps({"replay_dialog": True}),
                 "--seat", "teller=codraw_script_teller", "--seat", "drawer=codraw_script_drawer",
                 stdout=out)
    assert "3 matches" in out.getvalue() or "matches: 3" in out.getvalue() or "3" in out.getvalue()
    exported = tmp_path / "export.json"
    call_command("export", "--format", "codraw", "--game", "codraw_v1", "--output", str(exported),
                 "--codraw-split", "original", stdout=io.StringIO(), stderr=io.StringIO())
    assert json.dumps(json.loads(exported.read_text())) == json.dumps(original)
    keys = list(csv.DictReader((tmp_path / "export.keys.csv").open(encoding="utf-8")))
    assert [(r["key"], r["split"], r["source_key"]) for r in keys] == \
        [(k, k.split("_")[0], k) for k in original["data"]]
    # the default: keys by the hash of the match id, which the authors' reader selects by split
    hashed = tmp_path / "hashed.json"
    err = io.StringIO()
    call_command("export", "--format", "codraw", "--game", "codraw_v1", "--output", str(hashed),
                 stdout=io.StringIO(), stderr=err)
    assert "hashed.keys.csv" in err.getvalue()
    document = json.loads(hashed.read_text())
    rows = list(csv.DictReader((tmp_path / "hashed.keys.csv").open(encoding="utf-8")))
    by_match = {r["match_id"]: r for r in keys}
    assert sorted(by_match) == sorted(r["match_id"] for r in rows)
    for split, prefix in (("train_full", "train"), ("dev", "val"), ("test", "test")):
        mine = {r["key"]: r["match_id"] for r in rows if r["split"] == prefix}
        assert sorted(mine) == list(authors_split(document, split))
        assert {m for m in mine.values()} == {m for m in by_match if exports.hash_split(m) == prefix}
        for key, match_id in mine.items():     # the same dialog as the recorded key of that match
            assert document["data"][key]["dialog"] == original["data"][by_match[match_id]["key"]]["dialog"]
    with pytest.raises(CommandError, match="ratios"):
        call_command("export", "--format", "codraw", "--codraw-ratios", "80,20", "--output",
                     str(tmp_path / "bad.json"), stdout=io.StringIO(), stderr=io.StringIO())
    assert not (tmp_path / "bad.json").exists()


def test_script_drawer_needs_a_replay():
    from games.codraw import agents
    content = generate(3, {})
    match_state = rules.initial_state(content, 3, {})
    state, _ = rules.apply(match_state, "teller", {"type": "chat", "text": "hi", "at": 1})
    with pytest.raises(ValueError, match="replay_dialog"):
        agents.ScriptDrawer().act(rules.view_for(state, "drawer"))


# ------------------------------------------------------------------------------- split keys
# A reader written from the authors' documented format (facebookresearch/codraw-models,
# codraw_data.py): a split's dialogs are the ``data`` entries whose key starts with ``train``
# (``train_full``), ``val`` (``dev``) or ``test``, in sorted key order; each gives its scene
# (``abs_t``) and its rounds (``msg_t``, ``msg_d``, ``abs_b``, ``abs_d``, ``peeked`` if present).
AUTHORS_PREFIX = {"train_full": "train", "dev": "val", "test": "test"}


def authors_split(document: dict, split: str) -> dict:
    keys = sorted(k for k in document["data"] if k.startswith(AUTHORS_PREFIX[split]))
    return {k: document["data"][k] for k in keys}


def authors_scenes_and_dialogs(data: dict) -> list:
    return [(d["abs_t"], [(e["msg_t"], e["msg_d"], e["abs_b"], e["abs_d"], e.get("peeked", False))
                          for e in d["dialog"]]) for d in data.values()]


@pytest.fixture(scope="module")
def many_records():
    """120 finished match records over three played dialogs, each with its own match id and time."""
    from tests.games.codraw.conftest import play_dialog
    items = import_codraw_json(SAMPLE)
    played = [play_dialog(item, match_id="x").record() for item in items]
    records = []
    for i in range(120):
        record = json.loads(json.dumps(played[i % 3]))
        record["match_id"] = f"{i:08x}-5b1c-4e7a-9d2f-{i * 7919:012x}"
        record["created_at"] = f"2026-11-01T10:{i // 60:02d}:{i % 60:02d}Z"
        record["batch"] = "pilot"
        records.append(record)
    return records


def _export(records, **options):
    out, keys = io.StringIO(), io.StringIO()
    n = exports.write_codraw_json(records, out, keys_out=keys, **options)
    rows = list(csv.DictReader(io.StringIO(keys.getvalue())))
    return n, json.loads(out.getvalue()), rows, out.getvalue() + keys.getvalue()


def test_the_authors_reader_finds_each_split_s_matches(many_records):
    n, document, rows, _ = _export(many_records)
    assert n == 120 == document["count"] == len(rows)
    by_id = {r["match_id"]: r for r in many_records}
    seen = []
    for split, prefix in AUTHORS_PREFIX.items():
        data = authors_split(document, split)
        matches = [row["match_id"] for row in rows if row["key"] in data]
        # exactly the matches the hash put in this split, and nothing else
        assert set(matches) == {m for m in by_id if exports.hash_split(m) == prefix}
        assert all(row["split"] == prefix for row in rows if row["key"] in data)
        # numbered from 0 in export order (creation time), zero-padded as the release's keys are
        assert list(data) == [f"{prefix}_{i:05d}" for i in range(len(data))]
        assert matches == sorted(matches, key=lambda m: by_id[m]["created_at"])
        # each key's scene and dialog are its match's
        expected = {}
        for row in rows:
            if row["key"] in data:
                entry, _, _ = exports.entry_of(by_id[row["match_id"]])
                expected[row["key"]] = entry
        assert authors_scenes_and_dialogs(data) == authors_scenes_and_dialogs(expected)
        seen += matches
    assert sorted(seen) == sorted(by_id)                      # every match in exactly one split
    counts = {p: sum(r["split"] == p for r in rows) for p in AUTHORS_PREFIX.values()}
    assert counts["train"] > counts["val"] and counts["train"] > counts["test"]
    assert 80 <= counts["train"] <= 110 and counts["val"] >= 4 and counts["test"] >= 4
    assert {r["batch"] for r in rows} == {"pilot"}
    assert {r["source_key"] for r in rows} == {"train_00001", "val_00005", "test_00012"}


def test_the_split_export_is_deterministic(many_records):
    first = _export(many_records)[3]
    shuffled = many_records[:]
    random.Random(4).shuffle(shuffled)
    assert _export(shuffled)[3] == first
    # a match keeps its split when the selection changes (only the numbering moves)
    _, _, rows, _ = _export(many_records[:50])
    _, _, all_rows, _ = _export(many_records)
    split_of = {r["match_id"]: r["split"] for r in all_rows}
    assert all(split_of[r["match_id"]] == r["split"] for r in rows)


def test_a_chosen_split_and_ratios(many_records):
    _, document, rows, _ = _export(many_records[:10], codraw_split="test")
    assert list(document["data"]) == [f"test_{i:05d}" for i in range(10)]
    assert authors_split(document, "train_full") == {} and authors_split(document, "dev") == {}
    assert [r["match_id"] for r in rows] == [r["match_id"] for r in many_records[:10]]
    _, document, rows, _ = _export(many_records, codraw_ratios="0,1,1")
    assert {r["split"] for r in rows} == {"val", "test"} and not authors_split(document, "train_full")
    _, document, _, _ = _export(many_records, codraw_ratios=(0, 0, 5))
    assert len(authors_split(document, "test")) == 120
    assert exports.parse_ratios("8:1:1") == (8.0, 1.0, 1.0)
    for bad in ("80,20", "a,b,c", "-1,1,1", "0,0,0", "nan,1,1"):
        with pytest.raises(ValueError):
            exports.parse_ratios(bad)
    with pytest.raises(ValueError, match="split"):
        _export(many_records, codraw_split="dev")
    # original: the recorded keys, and the key file says which split each names
    _, document, rows, _ = _export(many_records[:3], codraw_split="original")
    assert list(document["data"]) == ["train_00001", "val_00005", "test_00012"]
    assert [r["split"] for r in rows] == ["train", "val", "test"]


def test_more_than_99999_dialogs_keep_sorting_in_export_order():
    record = {"game_id": "codraw_v1", "status": "finished", "content": {"abs_t": ""}, "events": []}
    records = [{**record, "match_id": f"m{i:06d}"} for i in range(100_001)]
    keyed = exports._keyed(records, ("finished",), "train", exports.DEFAULT_RATIOS)
    keys = [k for k, _, _ in keyed]
    assert keys[0] == "train_000000" and keys[-1] == "train_100000" and keys == sorted(keys)
    assert all(re.fullmatch(r"train_\d{6}", k) for k in keys[:3])


def test_groundtalk_s_own_readers_read_the_split_export(many_records, tmp_path):
    from games.codraw.agents import load_database, split_keys
    _, document, _, _ = _export(many_records)
    path = tmp_path / "codraw.json"
    path.write_text(json.dumps(document))
    train = authors_split(document, "train_full")
    assert split_keys(document["data"], "train") == list(train)       # only the train split now
    assert load_database(path, "train").entries
    assert len(import_codraw_json(path)) == 120


def test_the_key_file_carries_each_match_s_arm(many_records):
    """The authors' layout has no place for the experiment: the key file says each key's arm,
    order, position and seed (games.records.arm_fields), blank where the record has none."""
    records = [dict(r, arm="literal" if i % 2 else "neural", arm_order=["neural", "literal"], arm_position=i % 2,
                    arm_seed=41) for i, r in enumerate(many_records[:6])]
    _, document, rows, _ = _export(records + many_records[6:8])
    assert list(rows[0]) == ["key", "split", "match_id", "batch", "source_key", "arm", "arm_order", "arm_position",
                             "arm_seed"]
    by_match = {r["match_id"]: r for r in rows}
    for i, record in enumerate(records):
        row = by_match[record["match_id"]]
        assert (row["arm"], row["arm_order"], row["arm_position"], row["arm_seed"]) == \
            ("literal" if i % 2 else "neural", "neural;literal", str(i % 2), "41")
    assert {(by_match[r["match_id"]]["arm"], by_match[r["match_id"]]["arm_seed"]) for r in many_records[6:8]} == {("", "")}
    assert sorted(document["data"]) == sorted(r["key"] for r in rows)
