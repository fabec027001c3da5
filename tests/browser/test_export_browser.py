"""A researcher downloads a dataset from the staff export page (/research/export/)."""
from __future__ import annotations

import csv
import io

import pytest
from playwright.sync_api import expect

from live.models import Match, Seat
from live.services import SeatSpec, match_apply_action, match_create

from tests.support.factories import batch as make_batch
from tests.support.staff_users import staff_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def finished_colors_match(b) -> Match:
    seats = {role: SeatSpec(Seat.Kind.HUMAN) for role in ("speaker", "listener")}
    m = match_create(game_id="colors_v1", seats=seats, batch=b, seed=5, config={"rounds": 1})
    match_apply_action(match_id=m.id, role="speaker", action={"type": "chat", "text": "the dark green one"})
    match_apply_action(match_id=m.id, role="listener", action={"type": "click", "position": 0, "round": 1})
    m.refresh_from_db()
    assert m.status == Match.Status.FINISHED
    return m


def test_staff_downloads_a_colors_csv(live_server_url, browser, tmp_path):
    b = make_batch(slug="export-browser", game_id="colors_v1", config={"rounds": 1})
    match = finished_colors_match(b)
    active = match_create(game_id="colors_v1", batch=b, seed=6, config={"rounds": 1},
                          seats={r: SeatSpec(Seat.Kind.HUMAN) for r in ("speaker", "listener")})
    match_apply_action(match_id=active.id, role="speaker", action={"type": "chat", "text": "still playing"})
    staff_user("researcher", "pw-export")

    ctx = browser.new_context(viewport={"width": 1366, "height": 768}, accept_downloads=True)
    page = ctx.new_page()
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{live_server_url}/admin/login/?next=/research/")
    page.fill("#id_username", "researcher")
    page.fill("#id_password", "pw-export")
    page.click('input[type="submit"]')
    page.wait_for_url("**/research/")
    page.click("#export-link")
    page.wait_for_url("**/research/export/")
    page.select_option("#id_format", "colors-csv")
    page.select_option("#id_batch", "export-browser")
    # the count the filters select (finished by default: the active match is not among them)
    expect(page.locator("#export-count")).to_have_text(
        "1 matches selected (groundtalk-colors-csv-export-browser-finished.csv).")
    with page.expect_download() as info:
        page.click("#export-download")
    download = info.value
    assert download.suggested_filename == "groundtalk-colors-csv-export-browser-finished.csv"
    path = tmp_path / "export.csv"
    download.save_as(path)
    rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))
    assert [r["contents"] for r in rows] == ["the dark green one"]
    assert {r["gameid"] for r in rows} == {str(match.id)}
    assert errors == []
    ctx.close()


def test_a_stale_count_never_overwrites_the_current_one(live_server_url, browser):
    """Two quick changes ask for two counts; the first answer is held back until after the second
    (as a slow server or network may do): the page must show the count of the filters as they are."""
    b = make_batch(slug="export-race", game_id="colors_v1", config={"rounds": 1})
    finished_colors_match(b)
    staff_user("researcher", "pw-export")
    ctx = browser.new_context(viewport={"width": 1366, "height": 768})
    page = ctx.new_page()
    page.goto(f"{live_server_url}/admin/login/?next=/research/export/")
    page.fill("#id_username", "researcher")
    page.fill("#id_password", "pw-export")
    page.click('input[type="submit"]')
    page.wait_for_url("**/research/export/")
    expect(page.locator("#export-count")).to_contain_text("matches selected")

    held = []

    def hold_the_all_batch_count(route):
        if "count=1" in route.request.url and "batch=all" in route.request.url and not held:
            held.append(route)          # answered only after the later question's answer is shown
        else:
            route.continue_()

    page.route("**/research/export/?*", hold_the_all_batch_count)
    page.select_option("#id_format", "colors-csv")      # asks with batch=all: held
    page.select_option("#id_batch", "export-race")      # asks with batch=export-race: answered
    expect(page.locator("#export-count")).to_have_text(
        "1 matches selected (groundtalk-colors-csv-export-race-finished.csv).")
    assert len(held) == 1
    held[0].continue_()                                 # the stale answer arrives last
    page.wait_for_function("() => performance.getEntriesByType('resource')"
                           ".filter(e => e.name.includes('batch=all') && e.name.includes('count=1')"
                           " && e.name.includes('colors-csv')).length > 0")
    page.evaluate("() => new Promise(r => setTimeout(r, 300))")   # let its handler run, if it would
    expect(page.locator("#export-count")).to_have_text(
        "1 matches selected (groundtalk-colors-csv-export-race-finished.csv).")
    ctx.close()
