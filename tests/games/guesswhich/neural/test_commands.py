"""manage.py train_agent guesswhich_neural_alice and manage.py guesswhich_neural_eval at a tiny size."""
from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError


def test_train_then_evaluate(tmp_path):
    out = io.StringIO()
    ckpt = tmp_path / "alice.pt"
    call_command("train_agent", "guesswhich_neural_alice", "--dialogs", "40", "--epochs", "1", "--hidden", "16",
                 "--embed", "8", "--threads", "1", "--out", str(ckpt), "--verbosity", "0", stdout=out)
    text = out.getvalue()
    assert ckpt.is_file() and ckpt.with_suffix(".png").is_file()
    assert "sha256 " in text and "weights_sha256 " in text and "val_accuracy=" in text
    out = io.StringIO()
    report = tmp_path / "report.json"
    call_command("guesswhich_neural_eval", "--alice", str(ckpt), "--dialogs", "3", "--games", "2",
                 "--pool-size", "5", "--rounds", "2", "--plot", str(tmp_path / "eval.png"),
                 "--json", str(report), "--no-coop", "--verbosity", "0", stdout=out)
    table = out.getvalue()
    assert "| all |" in table and "neural ALICE" in table and "alice_exact (grounded)" in table
    data = json.loads(report.read_text())
    assert data["accuracy"]["per_type"]["all"]["n"] == 30
    for row in data["games"].values():
        assert len(row["ranks"]) == 2 and all(1 <= r <= 5 for r in row["ranks"])
    assert (tmp_path / "eval.png").stat().st_size > 1000


def test_bad_arguments_are_refused(tmp_path):
    with pytest.raises(CommandError):
        call_command("train_agent", "guesswhich_neural_alice", "--dialogs", "1", "--out", str(tmp_path / "x.pt"))
    with pytest.raises(CommandError, match="No checkpoint"):
        call_command("guesswhich_neural_eval", "--alice", str(tmp_path / "missing.pt"))
