"""The researcher's launch, review and bonus pages in Chromium at 1366x768, against a real uvicorn
server whose MTurk endpoint (GT_MTURK_ENDPOINT) and Prolific base URL (GT_PROLIFIC_API) point at the
local recorders of tests/support: what the pages send is checked on the wire."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from crowd.models import Launch, PayAction
from tests.browser import sync  # noqa: F401  (expect's 30 s timeout)
from tests.browser.conftest import SCREENS, browser  # noqa: F401  (the fixture)
from tests.conftest import child_env, running_server
from tests.support import crowd_helpers as h
from tests.support.mturk_server import MTurkRecorder
from tests.support.prolific_server import Recorder
from tests.support.staff_users import staff_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

VIEWPORT = {"width": 1366, "height": 768}


@pytest.fixture
def site(browser):  # noqa: F811
    with MTurkRecorder() as mt, Recorder() as pr:
        env = child_env()
        env.update(GT_MTURK_ENDPOINT=mt.url, AWS_ACCESS_KEY_ID="AKIDTEST", AWS_SECRET_ACCESS_KEY="secret",
                   GT_PROLIFIC_API=pr.base, PROLIFIC_API_TOKEN="tok-browser")
        env.pop("AWS_PROFILE", None)
        with running_server(env, "test-crowd-pages.log") as url:
            staff_user("researcher", "pw-r")
            ctx = browser.new_context(viewport=VIEWPORT)
            page = ctx.new_page()
            problems = []
            page.on("pageerror", lambda exc: problems.append(str(exc)))
            page.on("console", lambda msg: problems.append(msg.text) if msg.type == "error" else None)
            page.goto(f"{url}/admin/login/?next=/research/")
            page.fill("#id_username", "researcher")
            page.fill("#id_password", "pw-r")
            page.click('input[type="submit"]')
            page.wait_for_url("**/research/")
            yield page, url, mt, pr, problems
            ctx.close()


def no_sideways_scroll(page):
    assert page.evaluate("() => document.documentElement.scrollWidth") <= VIEWPORT["width"]


def test_launch_review_and_pay(site):
    page, url, mt, pr, problems = site
    b = h.batch(entry_kinds=["mturk", "prolific"], prolific_codes={"completed": "C0MPL3T3"})
    page.goto(f"{url}/research/batches/{b.slug}/")
    page.click("#launch-link")
    page.wait_for_url(f"**/research/batches/{b.slug}/launch/")
    expect(page.locator("#entry-url")).to_have_text(f"{url}/b/{b.slug}/")

    # live without the box: refused, nothing sent
    page.select_option("#id_target", "live")
    page.click("#launch-submit")
    expect(page.locator("#launch-error")).to_contain_text("Tick this box")
    assert mt.calls == [] and not Launch.objects.exists()
    page.screenshot(path=str(SCREENS / "crowd-launch-refused.png"), full_page=True)

    # the sandbox
    page.select_option("#id_target", "sandbox")
    page.fill("#id_places", "2")
    page.fill("#id_locales", "US CA")
    page.click("#launch-submit")
    expect(page.locator("#messages")).to_contain_text("Launched on the MTurk sandbox: HIT2")
    assert mt.ops() == ["CreateHITType", "CreateHITWithHITType"]
    assert mt.calls[0][1]["QualificationRequirements"][0]["LocaleValues"] == [{"Country": "US"}, {"Country": "CA"}]
    launch = Launch.objects.get()
    assert launch.hit_id == "HIT2" and not launch.live

    # Prolific: a draft study
    page.select_option("#id_platform", "prolific")
    page.click("#launch-submit")
    expect(page.locator("#messages")).to_contain_text("Launched on Prolific as a draft study")
    assert [r["path"] for r in pr.requests] == ["studies/"]
    assert pr.requests[0]["body"]["completion_codes"][0]["code"] == "C0MPL3T3"
    expect(page.locator(".launch-row")).to_have_count(2)
    no_sideways_scroll(page)
    page.screenshot(path=str(SCREENS / "crowd-launch.png"), full_page=True)

    # two workers came through the HIT and played
    p1 = h.participant(b, "A1WORKER", outcome={"correct": 3, "played": 3}, hit_id=launch.hit_id)
    p2 = h.participant(b, "A2WORKER", outcome={"correct": 1, "played": 3}, hit_id=launch.hit_id)
    page.goto(f"{url}/research/batches/{b.slug}/review/")
    expect(page.locator("tr.worker")).to_have_count(2)
    page.select_option("#id_rule-kind", "colors_accuracy")
    page.fill("#id_rule-cents_per_unit", "25")
    page.fill("#id_rule-cap_cents", "60")
    page.fill("#id_rule-budget_cents", "500")
    page.click("#rule-save")
    expect(page.locator("#unpaid-total")).to_have_text("85")
    expect(page.locator('tr[data-worker="A1WORKER"] td.bonus')).to_contain_text("60 preview")
    expect(page.locator('tr[data-worker="A1WORKER"] .dialog-line')).to_have_text("speaker: the bright one, A1WORKER")
    expect(page.locator('tr[data-worker="A1WORKER"] td.minutes')).to_have_text("7.0")
    page.screenshot(path=str(SCREENS / "crowd-review-preview.png"), full_page=True)

    page.check("#select-all")
    page.select_option("#action", "approve")
    page.click("#apply")
    expect(page.locator("#messages")).to_contain_text("approve: 2 sent")
    page.check("#select-all")
    page.select_option("#action", "bonus")
    page.click("#apply")
    expect(page.locator("#messages")).to_contain_text("bonus: 2 sent")
    expect(page.locator("#unpaid-total")).to_have_text("0")
    page.check("#select-all")                 # the second click pays nothing
    page.select_option("#action", "bonus")
    page.click("#apply")
    expect(page.locator("#messages")).to_contain_text("bonus: 0 sent, 2 already done")
    bonuses = [c for op, c in mt.calls if op == "SendBonus"]
    assert sorted((c["WorkerId"], c["BonusAmount"]) for c in bonuses) == [("A1WORKER", "0.60"), ("A2WORKER", "0.25")]
    assert {c["UniqueRequestToken"] for c in bonuses} == {f"gt-{b.id}-{p1.id}-bonus", f"gt-{b.id}-{p2.id}-bonus"}
    assert PayAction.objects.filter(status="sent").count() == 4
    expect(page.locator("#budget-left")).to_have_text("415")

    # a worker who left early: approving asks first, in plain words, and sends nothing until confirmed
    left = h.participant(b, "A3LEFT", hit_id=launch.hit_id)
    type(left).objects.filter(pk=left.pk).update(exit_reason="left_match", outcome="returned_early", pay="none",
                                                 pay_cents=0)
    page.reload()
    page.check('input[aria-label="select A3LEFT"]')
    page.select_option("#action", "approve")
    page.click("#apply")
    expect(page.locator("#confirm-unpaid")).to_contain_text("A3LEFT ended with “left_match”")
    expect(page.locator("#confirm-unpaid")).to_contain_text("pays each the full reward of the task")
    assert not PayAction.objects.filter(participant=left).exists()
    page.click("#confirm-approve")
    expect(page.locator("#messages")).to_contain_text("approve: 1 sent")
    assert PayAction.objects.get(participant=left).status == "sent"

    # a reject without a reason: refused on the page
    page.check('input[aria-label="select A1WORKER"]')
    page.select_option("#action", "reject")
    page.click("#apply")
    expect(page.locator("#messages")).to_contain_text("needs a reason")
    no_sideways_scroll(page)
    page.screenshot(path=str(SCREENS / "crowd-review-paid.png"), full_page=True)

    with page.expect_download() as dl:
        page.click("#reconciliation")
    text = open(dl.value.path()).read()
    assert "A1WORKER" in text and '"60","sent"' in text   # every cell quoted (docs/exports.md)
    # the one error: the refused live launch answers 400 (the form with its message), as it should
    assert problems == ["Failed to load resource: the server responded with a status of 400 (Bad Request)"]
