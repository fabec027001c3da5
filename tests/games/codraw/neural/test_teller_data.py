"""``train_agent codraw_neural_teller --data`` (games/codraw/neural/teller_train.py people_examples):
people's Teller messages of the hand-made file in the released shape (data/CoDraw_handmade.json)
become Teller examples (the target, the earlier messages, the pieces the Drawer drew for the
message); training on them beats the held-out baselines on messages of dialogs never trained on
and records the file's sha256 in the checkpoint, the family and the seat's record; ``--from``
fine-tunes a Teller checkpoint (and refuses a Drawer's); bad files are a CommandError."""
from __future__ import annotations

import io

import pytest
import torch
from django.core.management import call_command
from django.core.management.base import CommandError

from agents.checkpoints import file_sha256
from games.codraw.neural.agents import NeuralTeller
from games.codraw.neural.corpus import read_corpus, split_by_dialog
from games.codraw.neural.model import Config, build_model, load_checkpoint, save_checkpoint
from games.codraw.neural.teller_train import people_examples
from games.codraw.neural.vocab import Vocabulary

from tests.games.codraw.neural.test_corpus import HANDMADE
from tests.support.model_seats import seat_record

TINY = ("--epochs", "10", "--hidden", "32", "--embed", "16", "--lr", "0.01", "--val-dialogs", "2",
        "--threads", "1", "--verbosity", "0")


def _train(out, *extra) -> str:
    stdout = io.StringIO()
    call_command("train_agent", "codraw_neural_teller", "--data", str(HANDMADE), "--out", str(out), *extra,
                 stdout=stdout)
    return stdout.getvalue()


@pytest.fixture(scope="module")
def people(tmp_path_factory):
    """A Teller trained on the hand-made file's people's messages only (``--dialogs 0``): a few seconds."""
    torch.set_num_threads(1)
    out = tmp_path_factory.mktemp("cdt_people") / "teller.pt"
    return out, _train(out, "--dialogs", "0", *TINY)


def test_peoples_rounds_become_teller_examples():
    corpus = read_corpus(HANDMADE)
    examples, left_out = people_examples(corpus.examples, corpus.targets)
    assert len(examples) == 105 and left_out == 18        # 18 rounds after which the Drawer drew nothing
    by_text = {e["text"]: e for e in examples}
    girl = by_text["girl sitting under the tree facing right, she looks sad"]
    target = corpus.targets["train_00001"]
    assert girl["history"] == ["a big tree on the left"] and girl["target"] == target
    assert target[girl["choice"]]["idx"] == 19 and girl["choices"] == [girl["choice"]]      # Jenny
    assert [target[k]["idx"] for k in girl["described"]] == [16]                          # the oak tree, drawn
    cloud = by_text["small cloud top right"]
    assert cloud["history"] == ["a big tree on the left", girl["text"], "not yet"]        # chat stays in the history
    several = by_text["pizza and a hamburger on the table"]
    assert sorted(several["target"][k]["idx"] for k in several["choices"]) == [37, 41]
    assert "looks great" not in by_text and "not yet" not in by_text
    moved = by_text["move the dog a bit more to the right"]
    assert moved["choice"] in moved["described"]                                         # a correction
    train, val, keys, how = split_by_dialog(corpus.examples, 0.15, 0)
    assert how == "keys" and {e["dialog"] for e in people_examples(val, corpus.targets)[0]} <= set(keys)


def test_training_on_peoples_messages_beats_the_baselines_and_records_the_data(people):
    out, text = people
    loaded = load_checkpoint(out, expect="codraw_neural_teller")
    sha = file_sha256(HANDMADE)
    data = loaded.meta["data"]
    assert data["sha256"] == sha and data["format"] == "CoDraw_1_0.json" and data["split"] == "keys"
    assert data["val_dialogs"] == [f"val_{n:05d}" for n in range(10)]
    assert data["train_turns"] + data["val_turns"] == 105 and loaded.meta["training"]["people_turns"] == 81
    final = loaded.meta["history"][-1]
    # on the 24 held-out turns (10 dialogs never trained on): here about 21 against 43 and 0.30 against 0.15
    assert final["val_people_perplexity"] < 0.8 * final["people_unigram_perplexity"], final
    assert final["val_people_token_accuracy"] > final["people_majority_token_accuracy"] + 0.05, final
    assert 0 < final["people_chance_choice"] < 1 and "val_choice_accuracy" in final
    assert f"sha256 {sha}" in text and "split by keys" in text and "| neural Teller |" in text
    assert "unigram of people's training messages" in text and out.with_suffix(".png").is_file()

    agent = NeuralTeller.load(str(out))
    assert agent.data_sha256 == sha
    record = seat_record(agent, out, loaded.sha256, family="games.codraw.neural.agents:NeuralTeller",
                         game_id="codraw_v1", role="teller", fallback="codraw_rule_teller")
    assert record["data_sha256"] == sha and record["checkpoint_sha256"] == loaded.sha256
    view = NeuralTeller.warmup_view()
    action = agent.act(view)
    assert action["type"] in ("chat", "end")


def test_from_fine_tunes_a_teller_checkpoint_and_refuses_a_drawers(people, tmp_path):
    base_path, _ = people
    tuned = tmp_path / "tuned.pt"
    text = _train(tuned, "--from", str(base_path), "--dialogs", "2", "--epochs", "1", "--val-dialogs", "2",
                  "--threads", "1", "--verbosity", "0")
    tuned_loaded, base = load_checkpoint(tuned), load_checkpoint(base_path)
    assert tuned_loaded.meta["training"]["from"] == base.sha256 and tuned_loaded.meta["data"]["sha256"] == \
        file_sha256(HANDMADE)
    assert tuned_loaded.vocab.words == base.vocab.words and tuned_loaded.meta["config"] == base.meta["config"]
    before = tuned_loaded.meta["training"]["before"]        # the base, evaluated before fine-tuning
    assert before["val_people_perplexity"] == pytest.approx(base.meta["history"][-1]["val_people_perplexity"])
    assert "| before fine-tuning (--from) |" in text
    drawer = tmp_path / "drawer.pt"
    save_checkpoint(drawer, kind="codraw_neural_drawer", model=build_model(
        "codraw_neural_drawer", Config(vocab_size=4, embed=4, hidden=4)), vocab=Vocabulary.build(["a"]))
    with pytest.raises(CommandError, match="--from"):
        _train(tmp_path / "x.pt", "--from", str(drawer), "--dialogs", "0", "--epochs", "1")
    assert not (tmp_path / "x.pt").exists()


def test_bad_files_are_refused(tmp_path):
    out = tmp_path / "x.pt"

    def run(path, *extra):
        call_command("train_agent", "codraw_neural_teller", "--data", str(path), "--dialogs", "0", "--epochs", "1",
                     "--out", str(out), "--verbosity", "0", *extra, stdout=io.StringIO())

    with pytest.raises(CommandError, match="no file"):
        run(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"rows": 1}')
    with pytest.raises(CommandError, match="not a CoDraw file"):
        run(bad)
    bad.write_text("gameid,roundNum\n1,2\n")
    with pytest.raises(CommandError, match="not a CoDraw JSON file"):
        run(bad)
    bad.write_text('{"data": {"train_00000": {"abs_t": "3,x", "dialog": []}}}')
    with pytest.raises(CommandError, match="train_00000"):
        run(bad)
    # the held-out dialogs' Drawer drew nothing: nothing to validate the Teller on
    bad.write_text('{"data": {"train_00000": {"abs_t": "", "dialog": [{"msg_t": "hi", "abs_b": "", "abs_d": ""}]}, '
                   '"val_00000": {"abs_t": "", "dialog": [{"msg_t": "ok", "abs_b": "", "abs_d": ""}]}}}')
    with pytest.raises(CommandError, match="nothing to validate the Teller on"):
        run(bad)
    with pytest.raises(CommandError, match="val-fraction"):
        run(HANDMADE, "--val-fraction", "1.5")
    assert not out.exists()
