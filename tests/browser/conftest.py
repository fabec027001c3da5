"""Headless Debian Chromium driven by Playwright (never a downloaded browser build)."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.browser.model_stack import shared_model_stack

CHROMIUM = os.environ.get("GT_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-quic", "--no-first-run"]
SCREENS = Path(__file__).resolve().parents[2] / "var" / "screens"

# Playwright's sync API keeps an event loop in this thread; the ORM calls these tests make
# between browser steps are plain synchronous ones.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


@pytest.fixture(scope="module")
def browser():
    """Module-scoped: Playwright's sync API runs an event loop in this thread while it is open,
    which must be closed again before the suite's asyncio tests run."""
    if not shutil.which(CHROMIUM) and not os.path.exists(CHROMIUM):
        pytest.fail(f"Chromium not found at {CHROMIUM}: install Debian's chromium package (test.sh does)")
    from playwright.sync_api import sync_playwright

    SCREENS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture(scope="session")
def model_stack(request, django_db_setup, django_db_blocker, tmp_path_factory):
    """The neural browser tests' one model process and server (tests/browser/model_stack.py),
    started by the first test that asks for it and stopped after the session's last test of it
    (or at the session's end)."""
    with shared_model_stack(request, tmp_path_factory.mktemp("model-stack")) as stack:
        yield stack
