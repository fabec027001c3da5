"""Issue 10: every player page serves the favicon and logs no console error (1366x768): the home
page and, for each game, the entry link, consent, instructions and waiting room."""
from __future__ import annotations

import pytest

from games.registry import GAMES
from live.models import Batch
from tests.support.factories import lab_url

from .conftest import SCREENS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = SCREENS.parent / "screenshots"


@pytest.mark.parametrize("game_id", list(GAMES))
def test_lobby_pages_log_no_console_error(live_server_url, browser, game_id):
    batch = Batch.objects.create(slug=f"console-{game_id.replace('_', '-')}", title="console", game_id=game_id,
                                 pairing=Batch.Pairing.HUMAN_HUMAN, config={}, max_wait_s=60)
    ctx = browser.new_context(viewport={"width": 1366, "height": 768})
    page = ctx.new_page()
    errors, icons = [], []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: msg.type == "error" and errors.append(f"console: {msg.text}"))
    page.on("response", lambda r: "favicon" in r.url and icons.append(r.status))
    page.goto(f"{live_server_url}/")
    page.goto(live_server_url + lab_url(batch, f"console-{game_id}"))
    page.click("#agree")
    page.wait_for_selector("#ready")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"instructions-{game_id}.png"))
    page.click("#ready")
    page.wait_for_selector("#waiting")
    href = page.eval_on_selector('link[rel="icon"]', "l => l.href")
    assert page.request.get(href).status == 200
    assert all(status == 200 for status in icons), icons
    ctx.close()
    assert not errors, errors
