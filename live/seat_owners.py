"""Whose browser may use a seat, as live's pages, websocket and images ask it.

A seat with a participant belongs to the browser its participant is bound to; who that is, is the
crowd's to say (crowd/identity.py: an owner key in the browser's Django session). The crowd app
registers its check when Django starts (``CrowdConfig.ready``), the same way the agents app fills
live/agent_seats.py; so live imports no crowd code (the import contracts in pyproject.toml,
docs/architecture.md "Dependencies between apps").

Unregistered (the crowd app not installed), the safe answer: a seat with no participant (made by
simulate, the benchmark or tests) is used by its token alone, a seat with a participant by nobody.
"""
from __future__ import annotations

from importlib import import_module
from typing import Protocol

from django.conf import settings
from django.http.cookie import parse_cookie


class Check(Protocol):
    def __call__(self, session, seat, *, claim: bool = True) -> bool:
        """Whether the browser of ``session`` may use ``seat`` (``claim``: an HTTP request, whose
        session is saved, may bind a participant that has no browser yet)."""


def _no_crowd(session, seat, *, claim: bool = True) -> bool:
    return seat.participant_id is None


_check: Check = _no_crowd


def register(check: Check) -> None:
    global _check
    _check = check


def seat_allowed(session, seat, *, claim: bool = True) -> bool:
    """Whether this browser may use the seat (see the module docstring)."""
    return _check(session, seat, claim=claim)


def session_from_scope(scope):
    """The Django session a websocket's handshake carried in its cookie (None without one).
    Loads from the session store: call it in a worker thread."""
    raw = dict(scope.get("headers") or []).get(b"cookie", b"").decode("latin-1")
    key = parse_cookie(raw).get(settings.SESSION_COOKIE_NAME) if raw else None
    if not key:
        return None
    store = import_module(settings.SESSION_ENGINE).SessionStore(session_key=key)
    store.load()
    return store
