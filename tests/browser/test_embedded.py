"""The embedded default (no DATABASE_URL, no REDIS_URL): SQLite, the in-memory channel layer and
agents in the server process. A newcomer's first game: a person listens to the agent speaker."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
from playwright.sync_api import expect

from ..conftest import ROOT, running_server
from .conftest import SCREENS
from .sync import wait_painted

pytestmark = pytest.mark.browser


@pytest.fixture
def embedded_server(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL", "GT_AGENT_MODE"}}
    env["SQLITE_PATH"] = str(tmp_path / "embedded.sqlite3")
    for cmd in (["migrate", "-v0"], ["gt_demo"]):
        subprocess.run([sys.executable, "manage.py", *cmd], cwd=ROOT, env=env, check=True, capture_output=True)
    with running_server(env) as url:
        yield url


def test_embedded_human_listens_to_agent_speaker(embedded_server, browser):
    ctx = browser.new_context(viewport={"width": 1366, "height": 768})
    page = ctx.new_page()
    page.goto(embedded_server + "/")
    page.click('tr:has-text("you listen, an agent speaks") >> text=play as a new lab participant')
    page.click("#agree")
    page.click("#ready")
    page.wait_for_url("**/m/**", timeout=15000)
    assert "listener" in page.inner_text("#role-label")
    for round_no in (1, 2):
        expect(page.locator("#round-label")).to_have_text(f"Round {round_no} of 10")
        expect(page.locator(".swatch.clickable")).to_have_count(3)   # the agent has spoken in this round
        assert page.locator(".msg.theirs").count() >= 1 and page.inner_text("#round-label") == f"Round {round_no} of 10"
        page.locator(".swatch.clickable").first.click()
        expect(page.locator("#outcome")).to_contain_text(f"Round {round_no}: ")
    wait_painted(page)
    page.screenshot(path=str(SCREENS / "colors-embedded-listener.png"))
    ctx.close()
