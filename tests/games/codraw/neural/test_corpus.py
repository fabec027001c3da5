"""People's CoDraw dialogs for the neural Drawer (games/codraw/neural/corpus.py): the reader on the
hand-made file in the released shape (data/CoDraw_handmade.json, written by data/handmade.py) and on
GroundTalk's own codraw export of real matches, the split by dialog key, refusals."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents.checkpoints import file_sha256
from games.codraw import exports, rules
from games.codraw.content import generate
from games.codraw.neural.corpus import CONDITIONS, detect_format, read_corpus, split_by_dialog
from games.codraw.scenes import parse_scene

HANDMADE = Path(__file__).parent / "data" / "CoDraw_handmade.json"


def test_the_released_shape_is_read_round_by_round():
    corpus = read_corpus(HANDMADE)
    assert corpus.format == "CoDraw_1_0.json" and corpus.sha256 == file_sha256(HANDMADE)
    assert len(corpus.dialogs) == 40 and len(corpus.examples) == 123 and corpus.skipped_rounds == 0
    assert {e["condition"] for e in corpus.examples} == set(CONDITIONS)
    first = corpus.examples[0]
    assert first["text"] == "big sun in the top left corner" and first["canvas"] == []
    assert [(c["idx"], c["x"], c["y"], c["depth"]) for c in first["changes"]] == [(3, 60, 50, 0)]
    nothing = next(e for e in corpus.examples if e["text"] == "looks great")
    assert nothing["condition"] == "nothing" and nothing["abstain"] and not nothing["changes"]
    moved = next(e for e in corpus.examples if e["text"].startswith("move the dog"))
    assert moved["condition"] == "moves" and [c["x"] for c in moved["changes"]] == [440]
    several = next(e for e in corpus.examples if e["text"].startswith("pizza and a hamburger"))
    assert several["condition"] == "several" and {c["idx"] for c in several["changes"]} == {37, 41}


def test_the_key_prefixes_split_by_dialog_else_a_seeded_share_of_the_keys():
    corpus = read_corpus(HANDMADE)
    train, val, keys, how = split_by_dialog(corpus.examples, 0.2, seed=0)
    assert how == "keys" and keys == [f"val_{n:05d}" for n in range(10)]
    assert {e["dialog"] for e in train} == {f"train_{n:05d}" for n in range(30)}
    assert len(train) + len(val) == len(corpus.examples)
    renamed = [{**e, "dialog": e["dialog"].replace("val_", "train_9")} for e in corpus.examples]
    train, val, keys, how = split_by_dialog(renamed, 0.25, seed=4)
    assert how == "seeded" and len(keys) == 10
    assert {e["dialog"] for e in train}.isdisjoint(e["dialog"] for e in val)       # never by round
    assert split_by_dialog(renamed, 0.25, seed=4)[2] == keys != split_by_dialog(renamed, 0.25, seed=5)[2]
    with pytest.raises(ValueError, match="at least 2 dialogs"):
        split_by_dialog([e for e in corpus.examples if e["dialog"] == "train_00000"], 0.2, 0)


def test_groundtalks_own_export_is_read(kit, tmp_path):
    """Matches played through the rules (a person's words, the Drawer's canvas actions), exported
    by games/codraw/exports.py as ``manage.py export --format codraw`` writes it, read back."""
    records = []
    for i, seed in enumerate((3, 4, 5)):
        content = generate(seed, {})
        match = kit.Match(content, seed=seed, match_id=f"g{i}")
        target = parse_scene(content["abs_t"])
        match.do("teller", {"type": "chat", "text": "draw everything you see"})
        for action in rules.canvas_actions(rules.canvas_scene(match.state), target):
            match.do("drawer", action)
        match.do("drawer", {"type": "chat", "text": "done"})
        match.do("teller", {"type": "chat", "text": "looks great"})
        match.do("drawer", {"type": "chat", "text": "thanks"})
        match.do("teller", {"type": "end"})
        records.append(match.record())
    for split in ("original", "hash"):
        path = tmp_path / f"export_{split}.json"
        path.write_text(json.dumps(exports.codraw_json(records, split=split)))
        corpus = read_corpus(path)
        assert corpus.format == "codraw" and corpus.sha256 == file_sha256(path)
        assert len(corpus.dialogs) == 3 and len(corpus.examples) == 6
        conditions = [e["condition"] for e in corpus.examples]
        assert conditions.count("nothing") == 3 and conditions.count("several") == 3
        drawn = next(e for e in corpus.examples if e["condition"] == "several")
        key = drawn["dialog"]
        target = parse_scene(json.loads(path.read_text())["data"][key]["abs_t"])
        assert {c["idx"] for c in drawn["changes"]} == set(target.idxs)
    assert split_by_dialog(corpus.examples, 0.3, 0)[3] in ("keys", "seeded")
    assert detect_format({"data": {"train_00000": {"socketId": "/#abc"}}}) == "CoDraw_1_0.json"


def test_files_that_are_not_codraw_are_refused(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"rows": []}')
    with pytest.raises(ValueError, match="no \"data\" object"):
        read_corpus(bad)
    bad.write_text("gameid,roundNum\n1,2\n")
    with pytest.raises(ValueError, match="not a CoDraw JSON file"):
        read_corpus(bad)
    bad.write_text(json.dumps({"data": {"train_00000": {"abs_t": "3,x", "dialog": []}}}))
    with pytest.raises(ValueError, match="train_00000"):
        read_corpus(bad)
