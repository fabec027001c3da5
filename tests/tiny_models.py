"""Tiny neural models trained ONCE per test session and shared by every test that needs one
(tests/conftest.py installs these fixtures): the game tests, the model-worker tests and the browser
tests read the same checkpoint instead of each module training its own copy.

Each fixture trains with the project's own training code on one torch thread (seeded: the same
arguments give the same weights), saves the checkpoint under the session's temporary folder and
returns ``(result, path, (file sha256, weights sha256))``. Tests only read the result and load the
file (a test that changes weights changes its own loaded copy). torch is imported when a fixture
first runs, never when the conftest is read (most of the suite never needs it).
"""
from __future__ import annotations

import pytest

# The tiny color listener and speaker (games/colors/neural/train.py).
COLORS_TINY = {"examples": 900, "epochs": 4, "seed": 3, "hidden": 32, "embed": 16, "val_examples": 300,
               "progress": False}
# The small neural ALICE of GuessWhich (games/guesswhich/neural/train.py): its own answerer and the
# neural QBot's answer model; trained beyond the majority answer on held-out scenes.
ALICE_SMALL = {"dialogs": 150, "epochs": 3, "seed": 5, "hidden": 32, "embed": 16, "val_dialogs": 20,
               "progress": False}


def _one_thread():
    import torch

    torch.set_num_threads(1)


@pytest.fixture(scope="session")
def tiny_listener(tmp_path_factory):
    """The tiny neural color listener (L0)."""
    from games.colors.neural import train as neural_train

    _one_thread()
    result = neural_train.train("colors_neural_listener", **COLORS_TINY)
    path = tmp_path_factory.mktemp("colors_neural") / "listener.pt"
    return result, path, result.save(path)


@pytest.fixture(scope="session")
def tiny_speaker(tmp_path_factory):
    """The tiny neural color speaker (S0)."""
    from games.colors.neural import train as neural_train

    _one_thread()
    result = neural_train.train("colors_neural_speaker", **{**COLORS_TINY, "lr": 1e-2})
    path = tmp_path_factory.mktemp("colors_neural") / "speaker.pt"
    return result, path, result.save(path)


@pytest.fixture(scope="session")
def small_alice(tmp_path_factory):
    """The small neural ALICE (GuessWhich and visual-dialog answerer; the neural QBot's model)."""
    from games.guesswhich.neural import train as neural_train

    _one_thread()
    result = neural_train.train(**ALICE_SMALL)
    path = tmp_path_factory.mktemp("guesswhich_neural") / "guesswhich_neural_alice.pt"
    return result, path, result.save(path)
