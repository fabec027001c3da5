"""Tiny neural models trained ONCE per test session and shared by every test that needs one
(tests/conftest.py installs these fixtures): the game tests, the model-worker tests and the browser
tests read the same checkpoint instead of each module training its own copy.

Each fixture trains with the project's own training code on one torch thread (seeded: the same
arguments give the same weights), saves the checkpoint under the session's temporary folder and
returns ``(result, path, (file sha256, weights sha256))``. Tests only read the result and load the
file (a test that changes weights changes its own loaded copy). torch is imported when a fixture
first runs, never when the conftest is read (most of the suite never needs it).

In an xdist run (test.sh) the workers share one training per run: the first worker that needs a
model trains it under a lock in the run's temporary folder and pickles the result beside the
checkpoint; the others wait for the lock and load both.
"""
from __future__ import annotations

import fcntl
import os
import pickle
from pathlib import Path

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


def _trained_once(tmp_path_factory, folder: str, filename: str, train):
    """``(result, path, sums)`` of ``train()``, saved as ``folder/filename``: trained here, or in an
    xdist run by whichever worker of the run came first (the others load its pickled result)."""
    _one_thread()   # the process's torch runs on one thread from here on, whoever trained
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        result = train()
        path = tmp_path_factory.mktemp(folder) / filename
        return result, path, result.save(path)
    # a worker's base temporary folder is popen-gwN inside the run's own
    shared = Path(tmp_path_factory.getbasetemp()).parent / "tiny-models" / folder
    shared.mkdir(parents=True, exist_ok=True)
    path, pickled = shared / filename, shared / (filename + ".result.pickle")
    with open(shared / (filename + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if pickled.exists():
            with open(pickled, "rb") as f:
                result, sums = pickle.load(f)
            return result, path, sums
        result = train()
        sums = result.save(path)
        with open(pickled.with_suffix(".tmp"), "wb") as f:
            pickle.dump((result, sums), f)
        pickled.with_suffix(".tmp").rename(pickled)
        return result, path, sums


@pytest.fixture(scope="session")
def tiny_listener(tmp_path_factory):
    """The tiny neural color listener (L0)."""
    def train():
        from games.colors.neural import train as neural_train

        return neural_train.train("colors_neural_listener", **COLORS_TINY)

    return _trained_once(tmp_path_factory, "colors_neural_listener", "listener.pt", train)


@pytest.fixture(scope="session")
def tiny_speaker(tmp_path_factory):
    """The tiny neural color speaker (S0)."""
    def train():
        from games.colors.neural import train as neural_train

        return neural_train.train("colors_neural_speaker", **{**COLORS_TINY, "lr": 1e-2})

    return _trained_once(tmp_path_factory, "colors_neural_speaker", "speaker.pt", train)


@pytest.fixture(scope="session")
def small_alice(tmp_path_factory):
    """The small neural ALICE (GuessWhich and visual-dialog answerer; the neural QBot's model)."""
    def train():
        from games.guesswhich.neural import train as neural_train

        return neural_train.train(**ALICE_SMALL)

    return _trained_once(tmp_path_factory, "guesswhich_neural", "guesswhich_neural_alice.pt", train)
