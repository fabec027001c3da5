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
