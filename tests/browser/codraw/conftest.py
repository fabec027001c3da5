"""The CoDraw browser tests use the same headless Debian Chromium as tests/browser (module-scoped
Playwright, flags and screenshot folder shared)."""
from __future__ import annotations

from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, SCREENS, browser  # noqa: F401
