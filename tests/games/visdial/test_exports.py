"""VisDial exports read by VisDial's own reader: one dialog per match even when matches share a
scene, ids mapped back by the side file, VisDial's caption style, nothing extra at the top level."""
from __future__ import annotations

import io
import json
import re

import pytest

from clevr.alice import Alice
from research.exports import export_formats
from games.guesswhich import exports as gw_exports
from games.guesswhich import rules as gw_rules
from games.visdial import content as vd_content
from games.visdial import exports as vd_exports
from games.visdial import rules as vd_rules
from games.registry import GAMES
from tests.clevr.conftest import small_content
from tests.games.visdial.conftest import play_record

QUESTIONS = ["How many cubes are there?", "Is there a red thing?", "what color is the large sphere?",
             "how many small things?", "Are there any metal cylinders?", "what shape is the leftmost thing?",
             "how many things are rubber?", "is there a blue cube?", "What colors are there?",
             "how many spheres?", "is there anything purple?", "how many large objects?"]


def visdial_record(content, k: int, match_id: str):
    """A 10-round dialog on ``content``; match ``k`` asks its own selection of questions."""
    alice = Alice()
    asked = [QUESTIONS[(k + j) % len(QUESTIONS)] for j in range(10)]
    script = []
    history = []
    for q in asked:
        a = alice.respond(content["scene"], q, history, content["caption"]).text
        script += [("questioner", {"type": "ask", "text": q}), ("answerer", {"type": "answer", "text": a})]
        history.append((q, a))
    return play_record(vd_rules, content, content["image_id"], {"rounds": 10}, script, "visdial_v1", match_id)


@pytest.fixture(scope="module")
def five_on_one_scene():
    content = vd_content.generate(7)
    return [visdial_record(content, k, f"00000000-0000-0000-0000-00000000000{k}") for k in range(5)]


def export_json(writer, records) -> dict:
    out = io.StringIO()
    writer(iter(records), out)
    return json.loads(out.getvalue())


def test_five_dialogs_on_one_scene_stay_five_in_the_reference_reader(five_on_one_scene, reference_reader):
    records = five_on_one_scene
    assert len({r["content"]["image_id"] for r in records}) == 1   # one scene, one seed
    data = export_json(GAMES["visdial_v1"].export_writers()["visdial"], records)
    reader = reference_reader(data)
    assert len(reader) == 5                                       # nothing silently replaced
    ids = [d["image_id"] for d in data["data"]["dialogs"]]
    assert len(set(ids)) == 5 and all(isinstance(i, int) and 0 < i < 2 ** 53 for i in ids)
    side = export_json(GAMES["visdial_v1"].export_writers()["visdial-image-ids"], records)
    by_id = {row["image_id"]: row for row in side["images"]}
    assert set(by_id) == set(ids)
    for rec in records:
        row = next(r for r in side["images"] if r["match_id"] == rec["match_id"])
        assert row["scene_image_id"] == rec["content"]["image_id"]
        assert row["image_filename"] == rec["content"]["image_filename"]
        assert row["caption"] == rec["content"]["caption"] and row["game_id"] == "visdial_v1"
        item = reader[row["image_id"]]
        assert item["num_rounds"] == 10 and len(item["dialog"]) == 10
        logged = [e["payload"]["text"] for e in rec["events"] if e["type"] == "question_asked"]
        answered = [e["payload"]["text"] for e in rec["events"] if e["type"] == "answer_given"]
        assert [t["question"] for t in item["dialog"]] == [vd_exports.norm_question(q) for q in logged]
        assert [t["answer"] for t in item["dialog"]] == [vd_exports.norm_answer(a) for a in answered]
        for turn in item["dialog"]:
            assert len(turn["answer_options"]) == 100 and turn["answer"] in turn["answer_options"]


def test_ids_are_stable_across_exports_and_selections(five_on_one_scene):
    all_ids = {d["image_id"] for d in vd_exports.to_visdial(five_on_one_scene)["data"]["dialogs"]}
    alone = vd_exports.to_visdial(five_on_one_scene[3:4])["data"]["dialogs"][0]["image_id"]
    assert alone in all_ids
    assert alone == vd_exports.dialog_image_id(five_on_one_scene[3]["match_id"])


def test_colliding_ids_are_separated(monkeypatch, five_on_one_scene):
    monkeypatch.setattr(vd_exports, "dialog_image_id", lambda mid, salt=0: 42 + salt)
    data = vd_exports.to_visdial(five_on_one_scene)
    side = vd_exports.image_id_map(five_on_one_scene)
    ids = [d["image_id"] for d in data["data"]["dialogs"]]
    assert ids == [42, 43, 44, 45, 46] == [r["image_id"] for r in side["images"]]


def test_top_level_and_caption_style_are_visdials(five_on_one_scene):
    data = vd_exports.to_visdial(five_on_one_scene)
    assert set(data) == {"version", "split", "data"}
    assert set(data["data"]) == {"questions", "answers", "dialogs"}
    caption = five_on_one_scene[0]["content"]["caption"]
    assert caption[0].isupper() and caption.endswith(".")          # ours, as the players saw it
    for d in data["data"]["dialogs"]:
        assert d["caption"] == caption.lower().rstrip(".")
        assert not d["caption"].endswith(".") and d["caption"] == d["caption"].lower()
        assert set(d) == {"image_id", "caption", "dialog"}
    for q in data["data"]["questions"]:
        assert q == q.lower() and not q.endswith("?")
    for a in data["data"]["answers"]:
        assert a == a.lower() and not a.endswith(".")
    original = vd_exports.to_visdial(five_on_one_scene, caption_style="original")
    assert {d["caption"] for d in original["data"]["dialogs"]} == {caption}
    with pytest.raises(ValueError):
        vd_exports.to_visdial(five_on_one_scene, caption_style="shouting")


def test_norm_caption():
    assert vd_exports.norm_caption("  A large red  Cube is present in the image. ") == \
        "a large red cube is present in the image"
    assert vd_exports.norm_caption("") == ""


def test_guesswhich_dialogs_on_one_pool_get_their_own_ids(reference_reader):
    content = small_content(4, seed=3)
    secret = content["secret_id"]
    records = []
    for k in range(3):
        script = []
        for j in range(2):
            script += [("questioner", {"type": "ask", "text": QUESTIONS[k + j]}),
                       ("answerer", {"type": "answer", "text": f"Answer {k}{j}."}),
                       ("questioner", {"type": "guess", "image_id": secret})]
        script.append(("questioner", {"type": "guess", "image_id": secret}))
        records.append(play_record(gw_rules, content, 3, {"rounds": 2}, script, "guesswhich_v1", f"gw-{k}"))
    data = export_json(GAMES["guesswhich_v1"].export_writers()["guesswhich-visdial"], records)
    side = export_json(GAMES["guesswhich_v1"].export_writers()["guesswhich-visdial-image-ids"], records)
    reader = reference_reader(data)
    assert len(reader) == 3 and set(data) == {"version", "split", "data"}
    src = content["sources"][secret]
    for row in side["images"]:
        assert row["scene_image_id"] == src["image_index"] and row["image_filename"] == src["image_filename"]
        item = reader[row["image_id"]]
        k = int(row["match_id"].split("-")[1])
        assert item["num_rounds"] == 2 and len(item["dialog"]) == 10      # padded as the reader does
        assert [t["answer"] for t in item["dialog"][:2]] == [f"answer {k}0", f"answer {k}1"]
        assert item["dialog"][2]["question"] == "" and item["dialog"][2]["answer"] == ""
        assert item["caption"] == content["caption"].lower().rstrip(".")


def test_side_files_are_export_formats():
    formats = export_formats()
    assert formats["visdial-image-ids"][0] == "visdial_v1"
    assert formats["guesswhich-visdial-image-ids"][0] == "guesswhich_v1"


def test_ids_do_not_depend_on_the_scene():
    """Two matches on two different scenes still get ids from their matches, not their seeds."""
    recs = [visdial_record(vd_content.generate(s), 0, f"m-{s}") for s in (1, 2)]
    data = vd_exports.to_visdial(recs)
    assert [d["image_id"] for d in data["data"]["dialogs"]] == \
        [vd_exports.dialog_image_id("m-1"), vd_exports.dialog_image_id("m-2")]
    assert all(re.fullmatch(r"\d+", str(d["image_id"])) for d in data["data"]["dialogs"])


def test_the_reference_reader_keeps_one_dialog_per_image_id(reference_reader):
    """What the issue saw: dialogs sharing an image id collapse in VisDial's reader (five dialogs on
    three ids read back as three), so the export must never share one."""
    turn = {"question": 0, "answer": 0, "answer_options": [0] * 100, "gt_index": 0}
    data = {"version": "1.0", "split": "train",
            "data": {"questions": ["how many cubes"], "answers": ["2"],
                     "dialogs": [{"image_id": i, "caption": f"c{k}", "dialog": [dict(turn) for _ in range(10)]}
                                 for k, i in enumerate([7, 7, 8, 8, 9])]}}
    reader = reference_reader(data)
    assert len(reader) == 3 and reader[7]["caption"] == "c1"          # the later dialog won


def shape(x):
    """The JSON structure of ``x``: key sets and value types, lists by their first item."""
    if isinstance(x, dict):
        return {k: shape(v) for k, v in x.items()}
    if isinstance(x, list):
        return [shape(x[0])] if x else []
    return type(x).__name__


# VisDial v1.0 as released (visdial_1.0_val.json), one dialog written out by hand: the shape only.
RELEASED = {
    "version": "1.0", "split": "val",
    "data": {
        "questions": ["is the photo in color", "is it a professional photo"],
        "answers": ["yes", "no", "i can't tell"],
        "dialogs": [{
            "image_id": 185565,
            "caption": "a bathroom with a toilet and a sink",
            "dialog": [{"question": k % 2, "answer": k % 3, "answer_options": [(k + j) % 3 for j in range(100)],
                        "gt_index": (3 - k % 3) % 3} for k in range(10)],
        }],
    },
}


def test_the_export_has_the_released_shape(five_on_one_scene, reference_reader):
    ours = vd_exports.to_visdial(five_on_one_scene)
    assert shape(ours) == shape(RELEASED)
    for data in (RELEASED, ours):
        reader = reference_reader(data)
        first = reader[data["data"]["dialogs"][0]["image_id"]]
        assert first["num_rounds"] == 10 and len(first["dialog"][0]["answer_options"]) == 100
        assert first["dialog"][0]["answer_options"][data["data"]["dialogs"][0]["dialog"][0]["gt_index"]] == \
            first["dialog"][0]["answer"]


def test_dialogs_longer_than_ten_rounds_are_cut_to_visdials_ten(reference_reader):
    content = vd_content.generate(9)
    script = []
    for k in range(12):
        script += [("questioner", {"type": "ask", "text": QUESTIONS[k]}),
                   ("answerer", {"type": "answer", "text": f"a{k}"})]
    rec = play_record(vd_rules, content, 9, {"rounds": 12}, script, "visdial_v1", "long-1")
    data = vd_exports.to_visdial([rec])
    (dialog,) = data["data"]["dialogs"]
    assert len(dialog["dialog"]) == 10
    assert [data["data"]["answers"][t["answer"]] for t in dialog["dialog"]] == [f"a{k}" for k in range(10)]
    (row,) = vd_exports.image_id_map([rec])["images"]
    assert row["rounds"] == 12 and row["rounds_exported"] == 10
    assert reference_reader(data)[dialog["image_id"]]["num_rounds"] == 10


def test_the_per_match_rows_carry_the_matchs_arm():
    """The side file's rows and GuessWhich's per-match rows carry the record's arm (issue 24);
    cells are empty where the record has none."""
    content = vd_content.generate(9)
    script = [("questioner", {"type": "ask", "text": QUESTIONS[0]}), ("answerer", {"type": "answer", "text": "yes"})]
    rec = {**play_record(vd_rules, content, 9, {"rounds": 1}, script, "visdial_v1", "arm-1"),
           "arm": "b", "arm_order": ["a", "b"], "arm_position": 1, "arm_seed": 17}
    plain = play_record(vd_rules, content, 9, {"rounds": 1}, script, "visdial_v1", "arm-2")
    rows = vd_exports.image_id_map([rec, plain], complete_only=False)["images"]
    assert [(r["arm"], r["arm_order"], r["arm_position"], r["arm_seed"]) for r in rows] == [
        ("b", "a;b", 1, 17), ("", "", "", "")]
    gw = gw_exports.match_row({"match_id": "g", "game_id": "guesswhich_v1", "events": [], "content": {},
                               "arm": "a", "arm_order": None, "arm_position": None, "arm_seed": 5})
    assert (gw["arm"], gw["arm_order"], gw["arm_position"], gw["arm_seed"]) == ("a", "", "", 5)
