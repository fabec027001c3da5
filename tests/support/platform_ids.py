"""Ids in each platform's real format, and the recording servers as fixtures (issue 21): tests
enter with ids a platform would send, and the server under test asks the recorders about them."""
from __future__ import annotations

import itertools

import pytest
from django.core.cache import cache

from tests.support.mturk_server import MTurkRecorder
from tests.support.prolific_server import Recorder

_n = itertools.count(1)


def mturk_worker() -> str:
    """An MTurk worker id: A and 13 capitals and digits, like A1B2C3D4E5F6G7."""
    return f"A{next(_n):013d}".replace("0", "Q")


def prolific_id() -> str:
    """A Prolific id: 24 hexadecimal digits."""
    return f"{0x60f6acb180a2b1d700000000 + next(_n):024x}"


@pytest.fixture
def mturk_rec(monkeypatch):
    """The MTurk recorder, reached through GT_MTURK_ENDPOINT with test credentials."""
    with MTurkRecorder() as r:
        monkeypatch.setenv("GT_MTURK_ENDPOINT", r.url)
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDTEST")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
        cache.clear()
        yield r
    cache.clear()


@pytest.fixture
def prolific_rec(monkeypatch):
    with Recorder() as r:
        monkeypatch.setenv("GT_PROLIFIC_API", r.base)
        monkeypatch.setenv("PROLIFIC_API_TOKEN", "test-token")
        cache.clear()
        yield r
    cache.clear()
