"""An LLM agent's recorded calls in Chromium (research/agent_calls.py): the batch monitor's table per
agent, drawn by static/gt/monitor.js from the JSON it polls, and the match page's table with the
request opened by a click. The calls are the real agent's against the stand-in server."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from agents.models import AgentCall

from tests.support.factories import batch as make_batch
from tests.support.llm_agents import openai_entry, reset_registry, use_tiny_roles, write_models_file
from tests.support.llm_matches import llm_colors_match
from tests.support.openai_standin import OpenAIStandin
from .test_monitor_browser import staff_page  # noqa: F401 - the logged-in staff page

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def llm(tmp_path, monkeypatch):
    use_tiny_roles(monkeypatch)
    with OpenAIStandin() as server:
        write_models_file(tmp_path, monkeypatch, openai_entry(
            server.base_url, extra="images = true\nprice_in = 2.5\nprice_out = 10.0"))
        yield server
    monkeypatch.delenv("GT_MODELS_FILE", raising=False)
    reset_registry()


def test_the_monitor_and_the_match_page_show_the_calls(llm, staff_page, live_server_url):  # noqa: F811
    page = staff_page
    b = make_batch(slug="llm-browser", game_id="colors_v1", config={"rounds": 2})
    llm.script({"content": "not json"})
    m = llm_colors_match(b, rounds=2)
    calls = list(AgentCall.objects.filter(match=m))
    assert len(calls) == 3
    page.goto(f"{live_server_url}/research/batches/llm-browser/")
    row = page.locator('#llm-stats tr[data-agent="llm_speaker"]')
    expect(row).to_be_visible()
    cells = row.locator("td")
    expect(cells.nth(1)).to_have_text("2")     # turns
    expect(cells.nth(2)).to_have_text("3")     # calls
    expect(cells.nth(3)).to_have_text("1")     # repairs
    expect(cells.nth(6)).to_have_text(f"{sum(c.prompt_tokens for c in calls):,}")
    expect(cells.nth(8)).to_contain_text("$0.0")
    expect(cells.nth(9)).to_contain_text(" / ")
    page.goto(f"{live_server_url}/research/matches/{m.id}/")
    table = page.locator('table.llm[data-role="speaker"]')
    expect(table.locator("tbody tr")).to_have_count(3)
    request = table.locator("details.request").first
    expect(request.locator("pre")).not_to_be_visible()
    request.locator("summary").click()
    expect(request.locator("pre")).to_be_visible()
    expect(request.locator("pre")).to_contain_text('"sha256:')
    assert page.problems == []
