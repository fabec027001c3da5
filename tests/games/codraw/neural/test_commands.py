"""manage.py train_agent codraw_neural_drawer / codraw_neural_teller and manage.py codraw_neural_eval
(the paper's Table 1) at a tiny size."""
from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from research.management.commands.codraw_neural_eval import BEGIN, END


def _train(kind: str, path, *extra) -> str:
    out = io.StringIO()
    call_command("train_agent", kind, "--dialogs", "6", "--epochs", "1", "--hidden", "16", "--embed", "8",
                 "--threads", "1", "--out", str(path), "--verbosity", "0", *extra, stdout=out)
    return out.getvalue()


def test_train_then_evaluate(tmp_path):
    drawer, teller, same = tmp_path / "drawer.pt", tmp_path / "teller.pt", tmp_path / "teller_a.pt"
    text = _train("codraw_neural_drawer", drawer)
    assert drawer.is_file() and drawer.with_suffix(".png").is_file()
    assert "sha256 " in text and "weights_sha256 " in text and "val_clipart_accuracy=" in text
    text = _train("codraw_neural_teller", teller)
    assert teller.is_file() and teller.with_suffix(".png").is_file()
    assert "val_token_accuracy=" in text and "val_choice_accuracy=" in text
    _train("codraw_neural_teller", same, "--half", "a")
    doc = tmp_path / "doc.md"
    doc.write_text(f"# Title\n\nbefore\n{BEGIN}\nold table\n{END}\nafter\n")
    out = io.StringIO()
    report = tmp_path / "report.json"
    call_command("codraw_neural_eval", "--drawer", str(drawer), "--teller", str(teller), "--same-half-teller",
                 str(same), "--scenes", "2", "--nn-dialogs", "4", "--json", str(report),
                 "--plot", str(tmp_path / "eval.png"), "--doc", str(doc), "--verbosity", "0", stdout=out)
    table = out.getvalue()
    assert "| script-based | script (recorded dialog) | neural (half a) |" in table
    assert "| machine-machine, crosstalk | neural (half b) | neural (half a) |" in table
    assert "| machine-machine, same half | neural (half a) | neural (half a) |" in table
    assert "| machine-machine, crosstalk | rule | rule |" in table
    assert "| script-based | script (recorded dialog) | nearest neighbour |" in table
    rows = json.loads(report.read_text())["rows"]
    assert len(rows) == 4 + 9 + 1 and all(len(row["scores"]) == 2 for row in rows)
    assert all(0 <= row["low"] <= row["mean"] <= row["high"] <= 5 for row in rows)
    assert (tmp_path / "eval.png").stat().st_size > 1000
    written = doc.read_text()
    assert "old table" not in written and written.count("| machine-machine") == 10
    assert written.startswith("# Title\n\nbefore\n") and written.endswith(f"{END}\nafter\n")
    with pytest.raises(CommandError, match="overlapping"):     # no crosstalk: both trained on half a
        call_command("codraw_neural_eval", "--drawer", str(drawer), "--teller", str(same), "--scenes", "1")


def test_bad_arguments_are_refused(tmp_path):
    with pytest.raises(CommandError):
        call_command("train_agent", "codraw_neural_drawer", "--dialogs", "1", "--out", str(tmp_path / "x.pt"))
    with pytest.raises(CommandError):
        call_command("train_agent", "codraw_neural_teller", "--dialogs", "1", "--out", str(tmp_path / "x.pt"))
    with pytest.raises(CommandError, match="No checkpoint"):
        call_command("codraw_neural_eval", "--drawer", str(tmp_path / "missing.pt"))
    with pytest.raises(CommandError, match="No checkpoint"):
        call_command("codraw_neural_eval", "--teller", str(tmp_path / "missing.pt"))


def test_training_on_peoples_dialogs_beats_chance_and_records_the_data_hash(tmp_path):
    """``train_agent codraw_neural_drawer --data`` on the hand-made file in the released shape
    (people's dialogs only, ``--dialogs 0``): split by its train_/val_ keys, held-out accuracy per
    condition above chance, the file's sha256 in the checkpoint, in the family and in the seat's
    record; ``--from`` fine-tunes a generated-data checkpoint on it, keeping its vocabulary and sizes."""
    from agents.checkpoints import file_sha256
    from games.codraw.neural.agents import NeuralDrawer
    from games.codraw.neural.model import load_checkpoint

    from tests.games.codraw.neural.test_corpus import HANDMADE
    from tests.support.model_seats import seat_record

    out = tmp_path / "people.pt"
    stdout = io.StringIO()
    call_command("train_agent", "codraw_neural_drawer", "--data", str(HANDMADE), "--dialogs", "0", "--epochs", "15",
                 "--hidden", "32", "--embed", "16", "--lr", "0.01", "--batch-size", "16", "--threads", "1",
                 "--out", str(out), "--verbosity", "0", stdout=stdout)
    text = stdout.getvalue()
    loaded = load_checkpoint(out)
    data = loaded.meta["data"]
    sha = file_sha256(HANDMADE)
    assert data["sha256"] == sha and data["format"] == "CoDraw_1_0.json" and data["split"] == "keys"
    assert data["val_dialogs"] == [f"val_{n:05d}" for n in range(10)] and data["train_dialogs"] == 30
    assert data["train_rounds"] + data["val_rounds"] == 123 and loaded.meta["training"]["people_rounds"] == 94
    final = loaded.meta["history"][-1]
    nothing_share = 5 / 29                           # always abstaining scores this; 1 in 58 clip arts is chance
    assert final["val_clipart_accuracy"] > nothing_share + 0.1, final
    assert final["val_adds_accuracy"] > 5 / 58 and final["val_nothing_accuracy"] > 0.5, final
    assert {f"val_{c}_accuracy" for c in ("adds", "moves", "several", "nothing")} <= set(final)
    assert f"sha256 {sha}" in text and "split by keys" in text and "| adds | moves | several | nothing |" in text
    assert (tmp_path / "people.png").is_file()

    agent = NeuralDrawer.load(str(out))
    assert agent.data_sha256 == sha
    record = seat_record(agent, out, loaded.sha256, family="games.codraw.neural.agents:NeuralDrawer",
                         game_id="codraw_v1", role="drawer", fallback="codraw_rule_drawer")
    assert record["data_sha256"] == sha and record["checkpoint_sha256"] == loaded.sha256

    generated = tmp_path / "generated.pt"
    _train("codraw_neural_drawer", generated)
    assert NeuralDrawer.load(str(generated)).data_sha256 == ""
    tuned = tmp_path / "tuned.pt"
    call_command("train_agent", "codraw_neural_drawer", "--data", str(HANDMADE), "--from", str(generated),
                 "--dialogs", "0", "--epochs", "1", "--threads", "1", "--out", str(tuned), "--verbosity", "0",
                 stdout=io.StringIO())
    tuned_loaded, base = load_checkpoint(tuned), load_checkpoint(generated)
    assert tuned_loaded.meta["data"]["sha256"] == sha and tuned_loaded.meta["training"]["from"] == base.sha256
    assert tuned_loaded.vocab.words == base.vocab.words and tuned_loaded.meta["config"] == base.meta["config"]


def test_bad_data_is_refused(tmp_path):
    from tests.games.codraw.neural.test_corpus import HANDMADE

    def run(*extra):
        call_command("train_agent", "codraw_neural_drawer", "--epochs", "1", "--threads", "1",
                     "--out", str(tmp_path / "x.pt"), "--verbosity", "0", *extra, stdout=io.StringIO())

    with pytest.raises(CommandError, match="no file"):
        run("--data", str(tmp_path / "missing.json"))
    bad = tmp_path / "bad.json"
    bad.write_text('{"rows": 1}')
    with pytest.raises(CommandError, match="not a CoDraw file"):
        run("--data", str(bad))
    with pytest.raises(CommandError, match="--from: no checkpoint"):
        run("--data", str(HANDMADE), "--from", str(tmp_path / "missing.pt"))
    with pytest.raises(CommandError, match="--data and --from"):      # the Teller's: test_teller_data.py
        call_command("train_agent", "guesswhich_coop", "--data", str(HANDMADE), "--out", str(tmp_path / "t.pt"))
    assert not (tmp_path / "x.pt").exists()
