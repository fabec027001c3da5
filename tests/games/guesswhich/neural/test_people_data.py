"""manage.py train_agent guesswhich_neural_alice --data: ALICE trained on people's dialogs, read from
GroundTalk's own visdial export (VisDial v1.0 JSON + the image-ids side file) of matches played here
through the rules: split by dialog, accuracy per answer type beside the majority answer, the data's
sha256 in the checkpoint and in the seat record; bad files and VisDial's photographs refused."""
from __future__ import annotations

import io
import json
import random

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from agents.checkpoints import file_sha256
from agents.management.commands.train_agent import Command as TrainAgent
from clevr.alice import make_alice
from games.guesswhich import content as gw_content
from games.guesswhich import rules as gw_rules
from games.guesswhich.neural import corpus
from games.guesswhich.neural.agents import NeuralAliceAgent
from games.guesswhich.neural.data import grounded_question, reword
from games.guesswhich.neural.model import load_checkpoint
from games.registry import GAMES
from games.visdial import content as vd_content
from games.visdial import rules as vd_rules
from tests.clevr.conftest import small_content
from tests.games.visdial.conftest import play_record
from tests.support.model_seats import seat_record

NUMBER_WORDS = corpus.NUMBER_WORDS


def person(answer: str, rng: random.Random) -> str:
    """How a person might give the grounded ALICE's answer: other words for the same thing, now and then."""
    a = answer.rstrip(".")
    r = rng.random()
    if a == "yes" and r < 0.3:
        return rng.choice(["Yeah", "yes, there is", "yep"])
    if a == "no" and r < 0.3:
        return rng.choice(["nope", "No, there isn't."])
    if a.isdigit() and int(a) <= 10 and r < 0.3:
        return NUMBER_WORDS[int(a)]
    if a == "I can't tell" and r < 0.5:
        return "not sure"
    return answer


def questions_and_answers(scene, caption, rng, rounds=10):
    alice, history, script = make_alice("alice_exact"), [], []
    for r in range(rounds):
        q = reword(grounded_question(scene, rng), rng)
        a = person(alice.respond(scene, q, history, caption, r + 1).text, rng)
        script.append((q, a))
        history.append((q, a))
    return script


def visdial_match(seed: int, k: int):
    content = vd_content.generate(seed)
    rng = random.Random(f"people:{seed}:{k}")
    script = []
    for q, a in questions_and_answers(content["scene"], content["caption"], rng):
        script += [("questioner", {"type": "ask", "text": q}), ("answerer", {"type": "answer", "text": a})]
    return play_record(vd_rules, content, seed, {"rounds": 10}, script, "visdial_v1", f"vd-{seed}-{k}")


def guesswhich_match(content, seed: int, match_id: str, rounds: int = 3):
    secret = next(p["scene"] for p in content["pool"] if p["id"] == content["secret_id"])
    script = []
    for q, a in questions_and_answers(secret, content["caption"], random.Random(match_id), rounds):
        script += [("questioner", {"type": "ask", "text": q}), ("answerer", {"type": "answer", "text": a}),
                   ("questioner", {"type": "guess", "image_id": content["secret_id"]})]
    script.append(("questioner", {"type": "guess", "image_id": content["secret_id"]}))
    return play_record(gw_rules, content, seed, {"rounds": rounds}, script, "guesswhich_v1", match_id)


def export(game_id: str, fmt: str, records, path):
    out = io.StringIO()
    GAMES[game_id].export_writers()[fmt](iter(records), out)
    path.write_text(out.getvalue())
    return path


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """GroundTalk's exports of 36 visual-dialog matches (two on some scenes) and of GuessWhich matches:
    one on a generated pool (its secret is rebuilt from the seed), one on a hand-made pool whose caption
    was not made from the secret's seed (its scene cannot be rebuilt: skipped and counted)."""
    folder = tmp_path_factory.mktemp("people")
    records = [visdial_match(500 + n % 30, n // 30) for n in range(36)]
    data = export("visdial_v1", "visdial", records, folder / "visdial.json")
    side = export("visdial_v1", "visdial-image-ids", records, folder / "visdial-ids.json")
    gw = [guesswhich_match(gw_content.generate(77, {"pool_size": 6}), 77, "gw-generated"),
          guesswhich_match(small_content(4, seed=2), 2, "gw-handmade")]
    gw_data = export("guesswhich_v1", "guesswhich-visdial", gw, folder / "gw.json")
    gw_side = export("guesswhich_v1", "guesswhich-visdial-image-ids", gw, folder / "gw-ids.json")
    return {"data": data, "side": side, "gw_data": gw_data, "gw_side": gw_side, "folder": folder}


def _train(*args) -> str:
    out = io.StringIO()
    call_command("train_agent", "guesswhich_neural_alice", "--threads", "1", "--verbosity", "0", *args, stdout=out)
    return out.getvalue()


def test_the_corpus_rebuilds_scenes_from_the_side_file_and_maps_peoples_answers(exported):
    c = corpus.read_corpus(exported["data"], exported["side"])
    assert c.format == "visdial" and c.sha256 == file_sha256(exported["data"]) and len(c.dialogs) == 36
    assert len(c.examples) == 360 and c.skipped == {}
    first = c.examples[0]
    assert first["scene"]["objects"] == vd_content.generate(500)["scene"]["objects"]
    assert first["caption"] == vd_content.generate(500)["caption"] and first["history"] == []
    assert c.examples[1]["history"] == [(first["question"], first["answer"])]
    vocab = ["yes", "no", "2", "I can't tell.", "red"]
    assert [corpus.canonical_answer(a, vocab) for a in ("Yeah", "yes, there is", "nope", "two", "not sure",
                                                          "Red.", "a purple cube")] == \
        ["yes", "yes", "no", "2", "I can't tell.", "red", None]
    train, val, held = corpus.split_by_dialog(c.examples, 0.25, 0)
    assert {e["dialog"] for e in train}.isdisjoint(held) and {e["dialog"] for e in val} == set(held) and len(held) == 9
    assert corpus.split_by_dialog(c.examples, 0.25, 0)[2] == held != corpus.split_by_dialog(c.examples, 0.25, 1)[2]
    gw = corpus.read_corpus(exported["gw_data"], exported["gw_side"])
    assert len(gw.dialogs) == 1 and len(gw.examples) == 3 and sum(gw.skipped.values()) == 1
    secret = gw_content.generate(77, {"pool_size": 6})
    assert gw.examples[0]["caption"] == secret["caption"]
    # a scene no seed rebuilds (an imported CLEVR scene) is read through the lookup (the command's: this database)
    handmade = small_content(4, seed=2)
    hidden = next(p["scene"] for p in handmade["pool"] if p["id"] == handmade["secret_id"])
    both = corpus.read_corpus(exported["gw_data"], exported["gw_side"], lookup=lambda match_id: {
        "scene": hidden, "caption": handmade["caption"]} if match_id == "gw-handmade" else None)
    assert len(both.dialogs) == 2 and both.skipped == {} and both.examples[-1]["scene"] is hidden


@pytest.mark.django_db
def test_the_commands_lookup_reads_this_databases_matches_only():
    assert TrainAgent.match_scene("not-a-uuid") is None
    assert TrainAgent.match_scene("00000000-0000-0000-0000-000000000000") is None


@pytest.mark.django_db
def test_training_on_peoples_dialogs_beats_the_majority_answer_and_records_the_data(exported, tmp_path):
    out = tmp_path / "people.pt"
    text = _train("--data", str(exported["data"]), "--image-ids", str(exported["side"]), "--dialogs", "60",
                  "--epochs", "6", "--hidden", "32", "--embed", "16", "--val-fraction", "0.25", "--out", str(out))
    sha = file_sha256(exported["data"])
    loaded = load_checkpoint(out)
    data = loaded.meta["data"]
    assert data["sha256"] == sha and data["format"] == "visdial" and data["image_ids_sha256"] == \
        file_sha256(exported["side"])
    assert len(data["val_dialogs"]) == 9 and data["train_dialogs"] == 27 and data["val_rounds"] == 90
    final, majority = loaded.meta["history"][-1], loaded.meta["training"]["majority_val"]
    assert final["val_accuracy"] > majority["all"] + 0.15, (final, majority)
    assert {"val_yesno_accuracy", "val_count_accuracy"} <= set(final)
    assert f"sha256 {sha}" in text and "| majority (" in text and "| neural ALICE |" in text
    assert data["answer_mapping"]["train_mapped"] > 0.9 * data["answer_mapping"]["train_rounds"]

    agent = NeuralAliceAgent.load(str(out))
    assert agent.data_sha256 == sha
    record = seat_record(agent, out, loaded.sha256, family="games.guesswhich.neural.agents:NeuralAliceAgent",
                         game_id="visdial_v1", role="answerer", fallback="visdial_alice_exact")
    assert record["data_sha256"] == sha and record["checkpoint_sha256"] == loaded.sha256

    tuned = tmp_path / "tuned.pt"
    _train("--data", str(exported["data"]), "--image-ids", str(exported["side"]), "--from", str(out),
           "--dialogs", "0", "--epochs", "1", "--out", str(tuned))
    again = load_checkpoint(tuned)
    assert again.meta["data"]["sha256"] == sha and again.meta["training"]["from"] == loaded.sha256
    assert again.answers == loaded.answers and again.meta["data"]["answer_mapping"]["added_answers"] == []


def test_bad_files_and_photographs_are_refused(exported, tmp_path):
    base = ["--dialogs", "2", "--epochs", "1", "--hidden", "8", "--embed", "8", "--out", str(tmp_path / "x.pt")]
    bad = tmp_path / "bad.json"
    for content in ("not json", json.dumps({"version": "1.0", "data": {"questions": []}}),
                    json.dumps({"version": "1.0", "split": "val", "data": {"questions": ["q"], "answers": ["a"],
                                "dialogs": [{"image_id": 1, "caption": "c", "dialog": [{"question": 3, "answer": 0}]}]}})):
        bad.write_text(content)
        with pytest.raises(CommandError, match="--data"):
            _train("--data", str(bad), "--image-ids", str(exported["side"]), *base)
    with pytest.raises(CommandError, match="no file"):
        _train("--data", str(tmp_path / "missing.json"), "--image-ids", str(exported["side"]), *base)
    with pytest.raises(CommandError, match="side file"):
        _train("--data", str(exported["data"]), "--image-ids", str(exported["data"]), *base)
    # the released VisDial v1.0 shape over COCO photographs: no side file, or ids no side file maps
    coco = tmp_path / "visdial_1.0_val.json"
    coco.write_text(json.dumps({"version": "1.0", "split": "val", "data": {
        "questions": ["is the photo in color"], "answers": ["yes"],
        "dialogs": [{"image_id": 185565, "caption": "a bathroom with a toilet and a sink",
                     "dialog": [{"question": 0, "answer": 0, "answer_options": [0] * 100, "gt_index": 0}]}]}}))
    with pytest.raises(CommandError, match="scene graphs, not pixels"):
        _train("--data", str(coco), *base)
    with pytest.raises(CommandError, match="scene graphs, not pixels"):
        _train("--data", str(coco), "--image-ids", str(exported["side"]), *base)
    with pytest.raises(CommandError, match="--image-ids goes with"):
        _train("--image-ids", str(exported["side"]), *base)
    assert not (tmp_path / "x.pt").exists()
