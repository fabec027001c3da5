"""A two-arm experiment from the admin's batch builder to the monitor (issue 24) in Chromium at
1366x768: the arms are built in the table under the arms' JSON (names, weights, an agent per
agent seat from the game's choices, rows added and removed), the JSON follows the table and the
table the JSON, an arm's problem is shown on its row, the experiment's fields (assignment,
budget, end questions, blind wait) are on the page; a few agent-against-agent matches per arm
(``simulate --batch SLUG --arms``) and a few end-question answers later, the monitor compares
both arms, with the preferences and "taken for a person". Screenshots: var/screens/arms_builder*.png."""
from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from playwright.sync_api import expect

from crowd.models import Participant, PartnerKindAnswer, PreferenceAnswer
from live.models import Batch, Match

from tests.conftest import child_env, running_server

from .conftest import SCREENS
from .test_batch_builder_browser import login
from .test_monitor_browser import VIEWPORT, no_sideways_scroll

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module")
def builder_server_url(django_db_setup, django_db_blocker):
    """A server of this module's own: saving in the admin writes a change-log row naming the batch's
    content type, which a server process caches by id, and an earlier test's flush gives the
    content types new ids (the session's server, after another test saved in the admin, would
    name one that is gone)."""
    with running_server(child_env(), "arms-builder-server.log") as url:
        yield url


def arms_json(page) -> list:
    return json.loads(page.locator("textarea.gt-arms-json").input_value())


def test_a_two_arm_batch_from_the_builder_to_the_monitors_comparison(builder_server_url, browser, agent_queues_served):
    live_server_url = builder_server_url
    get_user_model().objects.create_superuser("builder", "b@example.org", "pw-builder")
    ctx = browser.new_context(viewport=VIEWPORT)
    page = ctx.new_page()
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    login(page, live_server_url, "/admin/live/batch/add/")

    page.locator("#id_title").press_sequentially("Two listeners")
    page.select_option("#id_game_id", "colors_v1")
    page.select_option("#id_pairing", "human-agent")
    page.check("#id_colors_v1__roles input[value=speaker]")
    page.select_option("#id_colors_v1__agent__listener", "colors_literal_listener")
    page.fill("#id_colors_v1__set__rounds", "3")
    # the experiment's fields are on the page
    for field in ("#id_assignment", "#id_budget_usd", "#id_ask_partner_kind", "#id_ask_preference",
                  "#id_blind_wait_min_s", "#id_blind_wait_max_s"):
        expect(page.locator(field)).to_be_visible()
    table = page.locator("#arms-table")
    expect(table.locator("thead th")).to_contain_text(["Arm name", "Weight", "Agent as listener"])   # the agent seat only
    for _ in range(3):
        page.click("#arm-add")
    expect(table.locator("tbody tr")).to_have_count(3)
    page.click('#arms-table tbody tr[data-arm-index="2"] .gt-arm-remove')
    expect(table.locator("tbody tr")).to_have_count(2)
    rows = table.locator("tbody tr")
    # both named "literal" first: the server refuses, and the second row says why
    for i, agent in ((0, "colors_literal_listener"), (1, "colors_pragmatic_listener")):
        rows.nth(i).locator('input[data-field="name"]').fill("literal")
        rows.nth(i).locator('input[data-field="name"]').dispatch_event("change")
        rows.nth(i).locator('select[data-role="listener"]').select_option(agent)
    options = rows.nth(0).locator('select[data-role="listener"] option').evaluate_all("os => os.map(o => o.value)")
    assert "colors_pragmatic_listener" in options and not any(o.startswith("alice") for o in options)
    rows.nth(1).locator('input[data-field="weight"]').fill("2")
    rows.nth(1).locator('input[data-field="weight"]').dispatch_event("change")
    assert arms_json(page) == [{"name": "literal", "agents": {"listener": "colors_literal_listener"}, "weight": 1},
                               {"name": "literal", "agents": {"listener": "colors_pragmatic_listener"}, "weight": 2}]
    page.fill("#id_budget_usd", "25")
    page.check("#id_ask_partner_kind")
    page.click('input[name="_continue"]')
    expect(page.locator('#arms-table tr[data-arm-index="1"] .gt-arm-problems')).to_contain_text(
        "two arms are named 'literal'")
    expect(page.locator('#arms-table tr[data-arm-index="1"] input[data-field="name"]')).to_have_attribute("aria-invalid", "true")
    expect(page.locator('#arms-table tr[data-arm-index="0"] .gt-arm-problems')).to_have_text("")
    assert not Batch.objects.filter(slug="two-listeners").exists()
    page.evaluate("document.querySelector('.field-arms').scrollIntoView()")
    page.screenshot(path=str(SCREENS / "arms_builder_refused.png"))

    # the JSON is the source of truth: an edit there (a setting override) redraws the table and is kept
    arms = arms_json(page)
    arms[1]["name"] = "pragmatic"
    arms[1]["config"] = {"rounds": 2}
    page.fill("textarea.gt-arms-json", json.dumps(arms))
    expect(page.locator('#arms-table tr[data-arm-index="1"] input[data-field="name"]')).to_have_value("pragmatic")
    expect(page.locator(".gt-arm-problems div")).to_have_count(0)
    page.fill("textarea.gt-arms-json", "[{")
    expect(page.locator("#arms-json-problem")).to_contain_text("cannot be read")
    page.fill("textarea.gt-arms-json", json.dumps(arms))
    page.locator('#arms-table tr[data-arm-index="0"] input[data-field="weight"]').fill("2")
    page.locator('#arms-table tr[data-arm-index="0"] input[data-field="weight"]').dispatch_event("change")
    assert arms_json(page)[1]["config"] == {"rounds": 2} and arms_json(page)[0]["weight"] == 2
    page.click('input[name="_continue"]')
    page.wait_for_url("**/change/**")
    b = Batch.objects.get(slug="two-listeners")
    assert [(a["name"], a["agents"], a.get("weight"), a.get("config")) for a in b.arms] == [
        ("literal", {"listener": "colors_literal_listener"}, 2, None),
        ("pragmatic", {"listener": "colors_pragmatic_listener"}, 2, {"rounds": 2})]
    assert (str(b.budget_usd), b.ask_partner_kind, b.assignment) == ("25.00", True, "between")
    expect(page.locator("#arms-table tbody tr")).to_have_count(2)   # the saved arms, back in the table
    page.evaluate("document.querySelector('.field-arms').scrollIntoView()")
    page.screenshot(path=str(SCREENS / "arms_builder_saved.png"))

    # a few agent-against-agent matches per arm, recorded with their arm
    call_command("simulate", "--batch", b.slug, "--arms", "--matches", "4", "--seat", "speaker=colors_lexicon_speaker")
    played = {arm: Match.objects.filter(batch=b, arm=arm, status="finished").count() for arm in ("literal", "pragmatic")}
    assert played == {"literal": 4, "pragmatic": 4}
    # and some end-question answers (as people would give them), for the monitor's tables
    lit, prag = (list(Match.objects.filter(batch=b, arm=a).order_by("created_at")) for a in ("literal", "pragmatic"))
    for i in range(4):
        p = Participant.objects.create(batch=b, platform="lab", worker_id=f"person{i}")
        PreferenceAnswer.objects.create(participant=p, batch=b, match_a=lit[i], match_b=prag[i], arm_a="literal",
                                        arm_b="pragmatic", question="play_again", choice="b" if i < 3 else "a")
        PartnerKindAnswer.objects.create(participant=p, batch=b, match=lit[i], arm="literal", said_person=i < 1,
                                         confidence=3)
        PartnerKindAnswer.objects.create(participant=p, batch=b, match=prag[i], arm="pragmatic", said_person=i < 2,
                                         confidence=4)

    page.goto(f"{live_server_url}/research/batches/{b.slug}/")
    expect(page.locator("#arms-table tbody tr")).to_have_count(2)
    expect(page.locator('#arms-table tr[data-arm="literal"] td.num').first).to_have_text("4")
    expect(page.locator('#arms-table tr[data-arm="pragmatic"] td.num').first).to_have_text("4")
    expect(page.locator('#pairs-table tr[data-pair="literal|pragmatic"]').first).to_be_visible()
    prefs = page.locator('.prefs-table[data-question="play_again"] tr[data-pair="literal|pragmatic"] td')
    expect(prefs.nth(1)).to_have_text("4")
    expect(prefs.nth(3)).to_have_text("3")
    expect(page.locator('.bt-table[data-question="play_again"] tbody tr').first).to_have_attribute("data-arm", "pragmatic")
    expect(page.locator('#taken-table tr[data-arm="pragmatic"] td').nth(2)).to_have_text("2")
    expect(page.locator('#taken-table tr[data-arm="literal"] td').nth(4)).to_have_text("3.00 / 5")
    no_sideways_scroll(page)
    page.evaluate("document.getElementById('arms-table').scrollIntoView()")
    page.screenshot(path=str(SCREENS / "arms_builder_monitor.png"))
    page.evaluate("document.querySelector('.prefs-table').scrollIntoView()")
    page.screenshot(path=str(SCREENS / "arms_builder_preferences.png"))
    assert errors == []
    ctx.close()
