"""Tiny trained neural color models shared by the tests of this folder (trained once per session)."""
from __future__ import annotations

import pytest
import torch

from games.colors.neural import train as neural_train

TINY = {"examples": 900, "epochs": 4, "seed": 3, "hidden": 32, "embed": 16, "val_examples": 300,
        "progress": False}


@pytest.fixture(scope="session")
def tiny_listener(tmp_path_factory):
    torch.set_num_threads(1)
    result = neural_train.train("colors_neural_listener", **TINY)
    path = tmp_path_factory.mktemp("neural") / "listener.pt"
    return result, path, result.save(path)


@pytest.fixture(scope="session")
def tiny_speaker(tmp_path_factory):
    torch.set_num_threads(1)
    result = neural_train.train("colors_neural_speaker", **{**TINY, "lr": 1e-2})
    path = tmp_path_factory.mktemp("neural") / "speaker.pt"
    return result, path, result.save(path)
