"""An experiment's arms in Chromium at 1366x768 (issue 24, items 3 and 5): a two-arm batch's
monitor shows each arm's accuracy with its interval, the chart, every pair's test with raw and
Holm p (research/arms.py's numbers), the pairs within subjects, the planner recomputed for a new
difference, and the cost per arm with the budget; the compare page shows the arms of one batch;
the export page warns of an empty file. Screenshots in
var/screens (arms_*.png)."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from agents.models import AgentCall
from crowd.models import Participant
from live.models import Match, Seat
from research import arms
from tests.support.factories import batch as make_batch
from tests.support.staff_users import staff_user
from .conftest import SCREENS
from .test_monitor_browser import VIEWPORT, chart_drawn, no_sideways_scroll

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def two_arm_batch():
    b = make_batch(slug="arms-pilot", title="Literal vs pragmatic listener", game_id="colors_v1",
                   pairing="human-agent", human_roles=["speaker"], agents={"listener": "colors_literal_listener"},
                   assignment="within", games_per_worker=2, pay_cents=150, budget_usd="40.00",
                   arms=[{"name": "literal", "agents": {"listener": "colors_literal_listener"}},
                         {"name": "pragmatic", "agents": {"listener": "colors_pragmatic_listener"}}])
    for i in range(8):
        p = Participant.objects.create(batch=b, platform="mturk" if i % 2 else "prolific", worker_id=f"W{i}",
                                       state=Participant.State.DONE, pay_cents=150)
        for arm, agent, correct in (("literal", "colors_literal_listener", 1 + i % 3),
                                    ("pragmatic", "colors_pragmatic_listener", 2 + i % 2)):
            m = Match.objects.create(batch=b, game_id="colors_v1", seed=i, content={}, state={}, arm=arm,
                                     status=Match.Status.FINISHED, outcome={"played": 3, "correct": correct})
            Seat.objects.create(match=m, role="speaker", kind=Seat.Kind.HUMAN, participant=p)
            Seat.objects.create(match=m, role="listener", kind=Seat.Kind.AGENT, agent_name=agent)
            AgentCall.objects.create(match=m, role="listener", seq=1, agent=agent, attempt=1, prompt_sha256="x",
                                     adapter_version="1", request={}, cost_usd=0.0125 if arm == "pragmatic" else 0.004)
    return b


@pytest.fixture
def staff_page(browser, live_server_url):
    staff_user("armstaff", "pw-arms")
    ctx = browser.new_context(viewport=VIEWPORT)
    page = ctx.new_page()
    problems = []
    page.on("pageerror", lambda exc: problems.append(str(exc)))
    page.on("console", lambda msg: problems.append(msg.text) if msg.type == "error" else None)
    page.goto(f"{live_server_url}/admin/login/?next=/research/")
    page.fill("#id_username", "armstaff")
    page.fill("#id_password", "pw-arms")
    page.click('input[type="submit"]')
    page.wait_for_url("**/research/")
    page.problems = problems
    yield page
    ctx.close()


def test_two_arm_monitor_compare_and_export(staff_page, live_server_url):
    page = staff_page
    b = two_arm_batch()
    expected = arms.batch_arm_statistics(batch=b)["metrics"][0]
    page.goto(f"{live_server_url}/research/batches/{b.slug}/")
    expect(page.locator("#arms-table tbody tr")).to_have_count(2)
    expect(page.locator('#arms-table tr[data-arm="literal"] td[data-metric="accuracy"] b')).to_have_text(
        f"{100 * expected['arms'][0]['value']:.1f} %")
    pair = expected["pairwise"]["pairs"][0]
    row = page.locator('#pairs-table tr[data-pair="literal|pragmatic"]')
    expect(row.locator(".p-raw")).to_have_text(f"{pair['p_value']:.4f}")
    expect(row.locator(".p-holm")).to_have_text(f"{pair['p_holm']:.4f}")
    expect(page.locator('#paired-table tr[data-pair="literal|pragmatic"] td').nth(2)).to_have_text("8")
    drawn = chart_drawn(page, "chart-arms")
    assert drawn["labels"] == ["accuracy (correct rounds)"] and drawn["painted"] > 1000
    assert drawn["data"][0] == pytest.approx([100 * a["value"] for a in expected["arms"]])
    # the planner: a new difference is sent to the JSON and the plan redrawn from it
    before = page.locator("#plan-status").inner_text()
    with page.expect_response(lambda r: "delta=0.25" in r.url):
        page.fill("#plan-delta", "0.25")
        page.locator("#plan-delta").dispatch_event("change")
    want = arms.plan(arms.metrics("colors_v1")[0], arms.batch_arm_matches(batch=b), ["literal", "pragmatic"], delta=0.25)
    expect(page.locator("#plan-status")).to_contain_text(f"{want['per_arm']} matches per arm")
    assert page.locator("#plan-status").inner_text() != before
    expect(page.locator('#costs-table tr[data-arm="pragmatic"] td').nth(6)).to_have_text("$0.1")   # 8 x 1.25 cents
    expect(page.locator("#budget")).to_contain_text("Budget $40.00")
    no_sideways_scroll(page)
    page.screenshot(path=str(SCREENS / "arms_monitor.png"), full_page=True)

    make_batch(slug="colors-pilot-speakers", title="Speaker pilot with a rather long title", game_id="colors_v1")
    page.goto(f"{live_server_url}/research/compare/?game=colors_v1&arm_batch={b.slug}")
    expect(page.locator("#arms-table tbody tr")).to_have_count(2)
    for label in page.locator(".batches label").all():   # each box beside its name, on one line
        box, text = label.locator("input").bounding_box(), label.bounding_box()
        assert text["height"] < 30 and abs((box["y"] + box["height"] / 2) - (text["y"] + text["height"] / 2)) < 3
    page.wait_for_function("() => window.gtArmsDrawn === true")
    no_sideways_scroll(page)
    page.screenshot(path=str(SCREENS / "arms_compare.png"), full_page=True)

    page.goto(f"{live_server_url}/research/export/")
    page.select_option("#id_batch", b.slug)
    page.select_option("#id_format", "codraw")
    expect(page.locator("#export-warning")).to_contain_text("The file would be empty")
    page.click("#export-download")
    expect(page.locator("#export-warning")).to_contain_text("Click Download again")
    page.screenshot(path=str(SCREENS / "arms_export_warning.png"), full_page=True)

    page.goto(f"{live_server_url}/research/batches/{b.slug}/")
    page.click("#review-link")
    expect(page.locator("#rule-form .rule-field")).to_have_count(5)
    bottoms = page.eval_on_selector_all("#rule-form .rule-field", "els => els.map(e => e.getBoundingClientRect().bottom)")
    assert max(bottoms) - min(bottoms) < 2        # one row at 1366 px, the fields on one line
    no_sideways_scroll(page)
    page.screenshot(path=str(SCREENS / "arms_review.png"), full_page=False)

    # "cannot run" on /research/ and the batch page: tests/research/test_arm_monitor.py (the server
    # here is a process of its own, whose workers' liveness this test cannot patch)
    assert page.problems == []
