"""``manage.py train_agent`` and ``manage.py colors_neural_eval`` end to end on tiny settings."""
from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from games.colors.neural import model as neural


def test_train_agent_writes_checkpoint_plot_and_hashes(tmp_path):
    out = tmp_path / "models" / "tiny_listener.pt"
    stdout = io.StringIO()
    call_command("train_agent", "colors_neural_listener", "--examples", "60", "--epochs", "2", "--hidden", "16",
                 "--embed", "8", "--threads", "1", "--out", str(out), stdout=stdout, verbosity=0)
    text = stdout.getvalue()
    assert out.is_file() and out.with_suffix(".png").is_file()
    assert out.with_suffix(".png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    loaded = neural.load_checkpoint(out)
    assert f"sha256 {loaded.sha256}" in text and f"weights_sha256 {loaded.weights_sha256}" in text
    training = loaded.meta["training"]
    assert (training["examples"], training["epochs"], training["hidden"]) == (60, 2, 16)
    assert [row["epoch"] for row in loaded.meta["history"]] == [1, 2]


def test_train_agent_refuses_bad_arguments(tmp_path):
    with pytest.raises(CommandError, match="examples"):
        call_command("train_agent", "colors_neural_speaker", "--examples", "3", "--out", str(tmp_path / "x.pt"))
    with pytest.raises(CommandError, match="not usable"):
        call_command("train_agent", "colors_neural_speaker", "--device", "nonsense", "--out", str(tmp_path / "x.pt"))
    assert not (tmp_path / "x.pt").exists()


def test_colors_neural_eval_reports_every_listener_and_condition(tiny_listener, tiny_speaker, tmp_path):
    plot = tmp_path / "eval.png"
    stdout = io.StringIO()
    call_command("colors_neural_eval", "--listener", str(tiny_listener[1]), "--speaker", str(tiny_speaker[1]),
                 "--rounds", "12", "--plot", str(plot), stdout=stdout)
    text = stdout.getvalue()
    for setting in ("lexicon speaker", "neural speaker", "people's phrasing (held out)",
                    "training phrasing, new contexts"):
        assert f"**{setting}**" in text
    for listener in ("rule literal L0", "rule pragmatic L1 (RSA)", "neural L0", "neural L2 (blended)", "random"):
        assert text.count(f"| {listener} |") == 4
    assert "| listener | all | far | split | close |" in text
    assert plot.read_bytes()[:4] == b"\x89PNG"
    with pytest.raises(CommandError, match="No checkpoint"):
        call_command("colors_neural_eval", "--listener", str(tmp_path / "missing.pt"))
