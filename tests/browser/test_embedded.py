"""The embedded default (no DATABASE_URL, no REDIS_URL): SQLite, the in-memory channel layer and
agents in the server process. A newcomer's first game: a person listens to the agent speaker; and
a visitor who follows the home page's words plays both seats of the two-person color game, one tab
per person, in one browser (issue 20, item 4)."""
from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from contextlib import closing

import pytest
from playwright.sync_api import expect

from ..conftest import ROOT, running_server
from .conftest import SCREENS
from .demo import enter_both_people
from .sync import wait_painted

pytestmark = pytest.mark.browser

# The speaker's target colour as drawn now (the page re-renders its swatches on every event).
TARGET_COLOR = "() => { const e = document.querySelector('.swatch.target'); return e && getComputedStyle(e).backgroundColor; }"


def embedded_env(sqlite_path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL", "GT_AGENT_MODE"}}
    env["SQLITE_PATH"] = str(sqlite_path)
    return env


@pytest.fixture(scope="module")
def embedded_database(tmp_path_factory):
    """A SQLite database as a newcomer's first ``run.sh`` leaves it (migrated, the demo batches of
    ``gt_demo``), made once per module (a migrate and gt_demo take tens of seconds on a loaded
    machine); each test serves a copy of its own."""
    path = tmp_path_factory.mktemp("embedded") / "template.sqlite3"
    env = embedded_env(path)
    for cmd in (["migrate", "-v0"], ["gt_demo"]):
        subprocess.run([sys.executable, "manage.py", *cmd], cwd=ROOT, env=env, check=True, capture_output=True)
    return path


@pytest.fixture
def embedded_server(tmp_path, embedded_database):
    path = tmp_path / "embedded.sqlite3"
    with closing(sqlite3.connect(embedded_database)) as src, closing(sqlite3.connect(path)) as dst:
        src.backup(dst)   # the whole database (WAL included), as the template's processes left it
    with running_server(embedded_env(path)) as url:
        yield url


def test_embedded_human_listens_to_agent_speaker(embedded_server, browser):
    ctx = browser.new_context(viewport={"width": 1366, "height": 768})
    page = ctx.new_page()
    page.goto(embedded_server + "/")
    page.click('tr:has-text("you listen, an agent speaks") >> text=play')
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


def test_a_visitor_plays_both_seats_of_a_two_person_demo_as_the_home_page_says(embedded_server, browser):
    ctx = browser.new_context(viewport={"width": 1366, "height": 768})
    home = ctx.new_page()
    errors = []
    ctx.on("page", lambda p: p.on("pageerror", lambda exc: errors.append(str(exc))))
    home.goto(embedded_server + "/")
    words = home.inner_text("#two-people")
    assert "play as the first person" in words and "play as a second person" in words
    wait_painted(home)
    home.screenshot(path=str(SCREENS / "home-demo.png"), full_page=True)
    tabs = enter_both_people(ctx, home, "colors-human-human")   # as the words say, from this tab
    assert tabs[0].url.split("?")[0] == tabs[1].url.split("?")[0]   # the same match, two seats
    speaker, listener = tabs if "speaker" in tabs[0].inner_text("#role-label") else tabs[::-1]
    assert "listener" in listener.inner_text("#role-label")
    for round_no in range(1, 11):
        label = f"Round {round_no} of 10"
        expect(speaker.locator("#round-label")).to_have_text(label)
        expect(listener.locator("#round-label")).to_have_text(label)
        speaker.fill("#chatinput", f"the one I mean in round {round_no}")
        speaker.click("#send")
        expect(listener.locator(".swatch.clickable")).to_have_count(3)
        want = speaker.wait_for_function(TARGET_COLOR).json_value()   # one evaluation: never a replaced node
        colors = listener.eval_on_selector_all(".swatch", "els => els.map(e => getComputedStyle(e).backgroundColor)")
        assert colors.count(want) == 1, (want, colors)
        listener.locator(f'.swatch[data-position="{colors.index(want)}"]').click()
    codes = []
    for tab in (speaker, listener):
        tab.wait_for_selector("#finished:not([hidden])")
        assert "10 of 10" in tab.inner_text("#final")
        tab.click("#continue")
        tab.wait_for_selector("#completion-code")
        codes.append(tab.inner_text("#completion-code"))
    assert len(set(codes)) == 2 and all(codes)   # two people, each with their own code
    ctx.close()
    assert not errors, errors
