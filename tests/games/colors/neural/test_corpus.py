"""People's rounds for the neural colour agents (games/colors/neural/corpus.py) and training on them
(``train_agent colors_neural_listener --data FILE``): the readers on small hand-made files in both
formats, the split by game id, and a short run on a sample of the shared Colors in Context file."""
from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from agents.checkpoints import file_sha256
from games.colors.neural import model as neural
from games.colors.neural.agents import NeuralLiteralListener
from games.colors.neural.corpus import detect_format, read_corpus, split_by_game
from tests.support.model_seats import seat_record

FIXTURES = Path(__file__).parent / "fixtures"
RELEASED = FIXTURES / "filtered_corpus_small.csv"      # hand-made, the release's columns
GROUNDTALK = FIXTURES / "groundtalk_colors_small.csv"   # hand-made, GroundTalk's colors-csv columns
SHARED = Path(__file__).resolve().parents[4].parent / "shared" / "data" / "colors_in_context" / "dev_part.csv"


@pytest.mark.parametrize("path, fmt", [(RELEASED, "filteredCorpus.csv"), (GROUNDTALK, "colors-csv")])
def test_reader_reads_both_formats_by_header(path, fmt):
    corpus = read_corpus(path)
    assert corpus.format == fmt and corpus.sha256 == file_sha256(path)
    assert corpus.rows == 8 and corpus.games == ["1111-a", "2222-b", "3333-c"]
    assert corpus.skipped_rounds == 1            # 2222-b round 2: the listener spoke, the speaker never
    rounds = {(r["gameid"], r["round"]): r for r in corpus.rounds}
    assert len(rounds) == 4
    first = rounds[("1111-a", 1)]
    # colours in the listener's positions (LocL), the target by its status, never by the click
    assert first["colors"] == [[120, 80, 50], [240, 70, 50], [0, 90, 50]] and first["target"] == 2
    assert first["condition"] == "far" and first["text"] == "red"
    # the speaker's messages before the click, in order; the listener's and a late one are left out
    second = rounds[("1111-a", 2)]
    assert second["text"] == "blue the lighter one"
    assert second["colors"][second["target"]] == [210, 60, 45] and second["target"] == 0
    assert rounds[("3333-c", 1)]["target"] == 2 and rounds[("2222-b", 1)]["target"] == 1


def test_reader_refuses_another_file_naming_the_columns(tmp_path):
    other = tmp_path / "other.csv"
    other.write_text("gameid,message,target\n1,red,0\n")
    with pytest.raises(ValueError, match="roundNum.*filteredCorpus.csv.*colors-csv.*arm"):
        read_corpus(other)
    with pytest.raises(ValueError, match="lacks contents"):
        detect_format([c for c in next(csv.reader(RELEASED.open())) if c != "contents"])
    with pytest.raises(CommandError, match="not a colour-game corpus file"):
        call_command("train_agent", "colors_neural_listener", "--data", str(other), "--out", str(tmp_path / "x.pt"))
    assert not (tmp_path / "x.pt").exists()


def test_split_is_by_game_and_seeded():
    rounds = [{"gameid": f"g{g}", "round": r, "condition": "far"} for g in range(40) for r in range(5)]
    train, val, val_games = split_by_game(rounds, 0.15, seed=3)
    assert len(val_games) == 6 and {r["gameid"] for r in val} == set(val_games)
    assert not {r["gameid"] for r in train} & set(val_games)
    assert len(train) + len(val) == len(rounds)
    assert split_by_game(rounds, 0.15, seed=3)[2] == val_games
    assert split_by_game(rounds, 0.15, seed=4)[2] != val_games
    # every game keeps all its rounds on one side, however few games there are
    _, val, val_games = split_by_game(rounds[:10], 0.01, seed=0)
    assert len(val_games) == 1 and len(val) == 5
    with pytest.raises(ValueError, match="at least 2 games"):
        split_by_game(rounds[:5], 0.5, seed=0)


@pytest.mark.skipif(not SHARED.is_file(), reason=f"the shared Colors in Context file is not here ({SHARED}); "
                    "the real-data run needs /work/shared (../shared of the checkout)")
def test_short_training_on_real_rounds_beats_chance_and_records_the_data(tmp_path):
    # a small sample: every row of the shared file's first 60 games (about 3,000 rounds)
    with SHARED.open(newline="") as f:
        reader = csv.DictReader(f)
        games, rows = [], []
        for row in reader:
            if row["gameid"] not in games:
                if len(games) == 60:
                    continue
                games.append(row["gameid"])
            rows.append(row)
        header = reader.fieldnames
    sample = tmp_path / "sample.csv"
    with sample.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=header)
        writer.writeheader()
        writer.writerows(rows)
    out = tmp_path / "listener.pt"
    stdout = io.StringIO()
    call_command("train_agent", "colors_neural_listener", "--data", str(sample), "--examples", "0", "--epochs", "3",
                 "--hidden", "24", "--embed", "16", "--threads", "1", "--out", str(out), stdout=stdout, verbosity=0)
    loaded = neural.load_checkpoint(out)
    data = loaded.meta["data"]
    assert data["sha256"] == file_sha256(sample) and data["format"] == "filteredCorpus.csv"
    assert len(data["val_games"]) == 9 and set(data["val_games"]) <= set(games)
    final = loaded.meta["history"][-1]
    assert final["val_accuracy"] > 0.45, final          # chance is 1/3 on held-out games (about 450 rounds)
    assert {"val_far", "val_split", "val_close"} <= set(final)
    assert f"sha256 {data['sha256']}" in stdout.getvalue()
    # the held-out games were never trained on: the checkpoint's accuracy on them is the history's
    corpus = read_corpus(sample)
    held = [r for r in corpus.rounds if r["gameid"] in set(data["val_games"])]
    assert data["val_rounds"] == len(held) and data["train_rounds"] == len(corpus.rounds) - len(held)

    # what plays a seat says which data trained it (Seat.agent_model, agents/serving/family.py)
    agent = NeuralLiteralListener.load(str(out))
    assert agent.data_sha256 == data["sha256"]
    record = seat_record(agent, out, loaded.sha256, family="games.colors.neural.agents:NeuralLiteralListener",
                         game_id="colors_v1", role="listener", fallback="colors_literal_listener")
    assert record["data_sha256"] == data["sha256"] and record["checkpoint_sha256"] == loaded.sha256

    # --from fine-tunes that checkpoint (its vocabulary grown by the new file's words)
    tuned = tmp_path / "tuned.pt"
    call_command("train_agent", "colors_neural_listener", "--data", str(GROUNDTALK), "--from", str(out),
                 "--examples", "0", "--epochs", "1", "--threads", "1", "--out", str(tuned), stdout=io.StringIO(), verbosity=0)
    tuned_loaded = neural.load_checkpoint(tuned)
    assert tuned_loaded.meta["data"]["sha256"] == file_sha256(GROUNDTALK)
    assert tuned_loaded.meta["training"]["from"]["sha256"] == loaded.sha256
    assert tuned_loaded.vocab.words[:len(loaded.vocab.words)] == loaded.vocab.words
    assert tuned_loaded.meta["config"]["hidden"] == 24
