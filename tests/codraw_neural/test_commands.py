"""manage.py train_agent codraw_neural_drawer and manage.py codraw_neural_eval at a tiny size."""
from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError


def test_train_then_evaluate(tmp_path):
    out = io.StringIO()
    ckpt = tmp_path / "drawer.pt"
    call_command("train_agent", "codraw_neural_drawer", "--dialogs", "6", "--epochs", "1", "--hidden", "16",
                 "--embed", "8", "--threads", "1", "--out", str(ckpt), "--verbosity", "0", stdout=out)
    text = out.getvalue()
    assert ckpt.is_file() and ckpt.with_suffix(".png").is_file()
    assert "sha256 " in text and "weights_sha256 " in text and "val_clipart_accuracy=" in text
    out = io.StringIO()
    report = tmp_path / "report.json"
    call_command("codraw_neural_eval", "--checkpoint", str(ckpt), "--scenes", "2", "--json", str(report),
                 "--plot", str(tmp_path / "eval.png"), "--verbosity", "0", stdout=out)
    table = out.getvalue()
    assert "| neural |" in table and "| rule |" in table and "| empty | 0.00" in table
    data = json.loads(report.read_text())
    assert set(data["results"]) == {"template", "paraphrased"}
    assert all(len(row["scores"]) == 2 for rows in data["results"].values() for row in rows.values())
    assert (tmp_path / "eval.png").stat().st_size > 1000


def test_bad_arguments_are_refused(tmp_path):
    with pytest.raises(CommandError):
        call_command("train_agent", "codraw_neural_drawer", "--dialogs", "1", "--out", str(tmp_path / "x.pt"))
    with pytest.raises(CommandError, match="No checkpoint"):
        call_command("codraw_neural_eval", "--checkpoint", str(tmp_path / "missing.pt"))
