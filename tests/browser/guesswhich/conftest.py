"""Fixtures for the GuessWhich / visual-dialog browser tests: the module-scoped headless Debian
Chromium of tests/browser (reused, not copied), plus small helpers to open a seat's page."""
from __future__ import annotations

import os

import pytest

from tests.browser.conftest import CHROMIUM, SCREENS, browser  # noqa: F401  (fixture re-exported)
from tests.browser.sync import wait_synced

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

VIEWPORT = {"width": 1366, "height": 768}


@pytest.fixture
def open_seat(live_server_url, browser):  # noqa: F811
    """open_seat(match, seat) -> a Playwright page on that seat's game page (1366x768)."""
    contexts, script_errors = [], []

    def _open(match, seat, viewport=VIEWPORT):
        ctx = browser.new_context(viewport=viewport)
        contexts.append(ctx)
        page = ctx.new_page()
        page.on("pageerror", lambda exc: script_errors.append(f"{seat.role}: {exc}"))
        page.on("console", lambda msg: msg.type == "error" and script_errors.append(f"{seat.role} console: {msg.text}"))
        page.goto(f"{live_server_url}/m/{match.id}/?seat={seat.token}")
        wait_synced(page, match.id)          # joined, and showing the match as the database has it
        return page

    yield _open
    for ctx in contexts:
        ctx.close()
    assert not script_errors, script_errors   # the pages ran without a script error
