"""A researcher builds batches in the admin's batch builder (research/batch_builder.py): only the
chosen game's roles, agents and settings are offered, an impossible batch is refused with a clear
message beside its field, a saved one shows its entry links, and a batch whose agent has no
worker is shown as one that cannot run."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from live.models import Batch

from .conftest import SCREENS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def login(page, base: str, next_url: str) -> None:
    page.goto(f"{base}/admin/login/?next={next_url}")
    page.fill("#id_username", "builder")
    page.fill("#id_password", "pw-builder")
    page.click('input[type="submit"]')
    page.wait_for_url(f"**{next_url}")


def test_builder_offers_the_games_choices_and_refuses_a_bad_batch(live_server_url, browser, agent_queues_served):
    get_user_model().objects.create_superuser("builder", "b@example.org", "pw-builder")
    ctx = browser.new_context(viewport={"width": 1366, "height": 768})
    page = ctx.new_page()
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    login(page, live_server_url, "/admin/live/batch/add/")

    page.locator("#id_title").press_sequentially("Pilot colors")
    expect(page.locator("#id_slug")).to_have_value("pilot-colors")   # the admin's prepopulated slug
    page.select_option("#id_game_id", "guesswhich_v1")
    guesswhich = page.locator("fieldset.gt-game-guesswhich_v1")
    expect(guesswhich).to_be_visible()
    expect(page.locator("fieldset.gt-game-colors_v1")).to_be_hidden()
    # the answerer seat offers GuessWhich's answerers only
    options = page.locator("#id_guesswhich_v1__agent__answerer option").all_inner_texts()
    assert any(o.startswith("alice_exact") for o in options) and not any("colors" in o for o in options)

    page.select_option("#id_game_id", "colors_v1")
    colors = page.locator("fieldset.gt-game-colors_v1")
    expect(colors).to_be_visible()
    expect(guesswhich).to_be_hidden()
    page.select_option("#id_pairing", "human-agent")
    page.check("#id_colors_v1__roles input[value=listener]")
    page.fill("#id_colors_v1__set__rounds", "5")
    # no agent for the speaker seat: refused, with the reason beside the field
    page.click('input[name="_continue"]')
    message = page.locator(".field-colors_v1__agent__speaker .errorlist")
    expect(message).to_contain_text("A human-agent batch needs an agent for the speaker seat")
    assert not Batch.objects.filter(slug="pilot-colors").exists()
    page.screenshot(path=str(SCREENS / "batch-builder-refused.png"), full_page=True)

    # the page kept what was typed; choose the agent and save
    expect(page.locator("#id_colors_v1__set__rounds")).to_have_value("5")
    page.select_option("#id_colors_v1__agent__speaker", "colors_lexicon_speaker")
    page.click('input[name="_continue"]')
    page.wait_for_url("**/change/**")
    b = Batch.objects.get(slug="pilot-colors")
    assert (b.game_id, b.human_roles, b.agents, b.config) == (
        "colors_v1", ["listener"], {"speaker": "colors_lexicon_speaker"}, {"rounds": 5})
    # the change page shows its game's fields filled in, and the entry links to paste
    expect(page.locator("#id_colors_v1__agent__speaker")).to_have_value("colors_lexicon_speaker")
    links = page.locator(".field-entry_links input").evaluate_all("els => els.map(e => e.value)")
    assert f"{live_server_url}/b/pilot-colors/" in links
    assert any("PROLIFIC_PID={{%PROLIFIC_PID%}}" in link for link in links)
    page.screenshot(path=str(SCREENS / "batch-builder-saved.png"), full_page=True)
    assert errors == []
    ctx.close()


def test_a_batch_whose_worker_is_gone_is_shown_as_such(live_server_url, browser):
    """No worker beats for the agent's queue (no agent_worker in this test): the list says so."""
    from django.conf import settings

    if settings.GT_AGENT_MODE != "celery":
        pytest.skip("workers exist only on the full stack")
    from agents import liveness

    Batch.objects.create(slug="no-worker", title="No worker", game_id="colors_v1",
                         pairing=Batch.Pairing.HUMAN_AGENT, human_roles=["speaker"],
                         agents={"listener": "colors_pragmatic_listener"})
    if not liveness.dead_queues(["agent.colors_pragmatic_listener"]):
        pytest.skip("a worker of this test session serves the queue")
    get_user_model().objects.create_superuser("builder", "b@example.org", "pw-builder")
    ctx = browser.new_context(viewport={"width": 1366, "height": 768})
    page = ctx.new_page()
    login(page, live_server_url, "/admin/live/batch/")
    row = page.locator("#result_list tr", has_text="no-worker")
    expect(row).to_contain_text("No worker is running for agent 'colors_pragmatic_listener'")
    expect(row.locator("td.field-can_run img")).to_have_attribute("alt", "False")
    ctx.close()
