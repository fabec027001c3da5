"""The researcher's monitor in Chromium at 1366x768: the batch monitor (numbers, plots, a live
update when a match ends), a match page (readable log, images, the replay stepping back and
forth) and the agent comparison (a result, and the refusal of human-played vs agent-only)."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from live.models import Match

from tests.support.factories import batch as make_batch
from tests.support import play
from .conftest import SCREENS
from .sync import wait_painted
from tests.support.staff_users import staff_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

VIEWPORT = {"width": 1366, "height": 768}


@pytest.fixture
def staff_page(browser, live_server_url):
    staff_user("monitor", "pw-monitor")
    ctx = browser.new_context(viewport=VIEWPORT)
    page = ctx.new_page()
    problems = []
    page.on("pageerror", lambda exc: problems.append(str(exc)))
    page.on("console", lambda msg: problems.append(msg.text) if msg.type == "error" else None)
    page.goto(f"{live_server_url}/admin/login/?next=/research/")
    page.fill("#id_username", "monitor")
    page.fill("#id_password", "pw-monitor")
    page.click('input[type="submit"]')
    page.wait_for_url("**/research/")
    page.problems = problems
    yield page
    ctx.close()


def no_sideways_scroll(page):
    assert page.evaluate("() => document.documentElement.scrollWidth") <= VIEWPORT["width"]


def chart_drawn(page, canvas_id) -> dict:
    """The chart on a canvas: its datasets' labels and data, and how many pixels it painted."""
    return page.evaluate("""id => {
      const c = document.getElementById(id), chart = Chart.getChart(c);
      const px = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
      let painted = 0; for (let i = 3; i < px.length; i += 4) if (px[i] > 0) painted++;
      return {labels: chart.data.datasets.map(d => d.label), data: chart.data.datasets.map(d => d.data), painted};
    }""", canvas_id)


def test_batch_monitor_numbers_plots_and_live_update(staff_page, live_server_url):
    page = staff_page
    b = make_batch(slug="monitor-colors", title="Listener pilot", game_id="colors_v1", pairing="human-agent",
                   config={"rounds": 2})
    play.colors(b, hits=(True, True), agents={"listener": "colors_literal_listener"}, seed=11)
    play.colors(b, hits=(True, False), agents={"listener": "colors_pragmatic_listener"}, seed=12)
    live = play.colors(b, hits=(False, False), agents={"listener": "colors_pragmatic_listener"}, seed=13,
                       finish=False)
    page.goto(f"{live_server_url}/research/")
    page.click("text=Listener pilot")
    page.wait_for_url("**/research/batches/monitor-colors/")
    expect(page.locator('#match-counts [data-status="finished"] b')).to_have_text("2")
    expect(page.locator('#match-counts [data-status="active"] b')).to_have_text("1")
    expect(page.locator("#scores-note")).to_contain_text("2 ended matches")
    rows = page.locator("table.scores tbody tr")
    expect(rows).to_have_count(3)   # all groups, then one per listener
    expect(rows.nth(0)).to_contain_text("all groups")
    expect(rows.nth(0).locator("td").nth(2)).to_have_text("4")
    expect(rows.nth(0).locator("td").nth(3)).to_contain_text("75.0 %")
    expect(page.locator('tr[data-group="speaker: human · listener: colors_pragmatic_listener"] td').nth(3)) \
        .to_contain_text("50.0 % [")
    # each group's swatch in the table is its color in the plot; "all groups" is not plotted
    swatches = page.eval_on_selector_all("table.scores .swatch", "s => s.map(x => getComputedStyle(x).backgroundColor)")
    assert swatches == ["rgb(195, 201, 212)", "rgb(47, 111, 237)", "rgb(214, 69, 69)"]
    page.wait_for_function("() => Chart.getChart(document.getElementById('chart-accuracy'))")
    chart = chart_drawn(page, "chart-accuracy")
    assert chart["labels"] == ["speaker: human · listener: colors_literal_listener",
                               "speaker: human · listener: colors_pragmatic_listener"]
    assert chart["data"][0][0] == 100 and chart["data"][1][0] == 50
    assert chart["painted"] > 2000
    expect(page.locator("#matches tbody tr")).to_have_count(3)
    wait_painted(page)
    no_sideways_scroll(page)
    page.screenshot(path=str(SCREENS / "monitor_batch.png"), full_page=True)

    # the active match ends: the next poll shows it in the counts, the table and the plot
    play.act(live, "speaker", {"type": "chat", "text": "the last one"})
    live.refresh_from_db()
    target = live.state["rounds"][live.state["round"]]["positions"]["listener"][0]
    play.act(live, "listener", {"type": "click", "round": 2, "position": target})
    assert Match.objects.get(pk=live.pk).status == Match.Status.FINISHED
    expect(page.locator('#match-counts [data-status="finished"] b')).to_have_text("3")
    expect(page.locator('#match-counts [data-status="active"] b')).to_have_text("0")
    expect(rows.nth(0).locator("td").nth(2)).to_have_text("6")
    expect(rows.nth(0).locator("td").nth(3)).to_contain_text("66.7 %")
    page.wait_for_function("() => Chart.getChart(document.getElementById('chart-accuracy')).data.datasets[1].data[0] === 50")
    expect(page.locator(f'#matches tr[data-match="{live.id}"]')).to_contain_text("1/2 correct")
    assert page.problems == []


def test_match_page_log_images_and_replay(staff_page, live_server_url):
    page = staff_page
    b = make_batch(slug="monitor-gw", title="GuessWhich pilot", game_id="guesswhich_v1")
    m = play.guesswhich(b, agents={"questioner": "qbot", "answerer": "alice_exact"}, wrong_first=1)
    secret = m.content["secret_id"]
    page.goto(f"{live_server_url}/research/batches/monitor-gw/")
    page.click(f'#matches a[href="/research/matches/{m.id}/"]')
    page.wait_for_url(f"**/research/matches/{m.id}/")
    expect(page.locator("#replay-check")).to_contain_text("reproduces the stored state")
    expect(page.locator("#outcome")).to_contain_text("secret found at rank 2 of 6")
    # the pool, with the secret marked and every image loaded
    expect(page.locator("#pool figure")).to_have_count(6)
    expect(page.locator("#pool figure.secret")).to_have_attribute("data-image", secret)
    page.wait_for_function("() => [...document.querySelectorAll('#pool img')].every(i => i.complete && i.naturalWidth > 0)")
    # the log: chat as dialog lines, each event in words, the raw payload behind a click
    chat = page.locator("#log tr.chat-row")
    expect(chat).to_have_count(4)
    expect(chat.nth(0)).to_contain_text("questioner")
    expect(chat.nth(0).locator("q")).to_have_text("is there a red cube, question 1?")
    expect(page.locator("#log")).to_contain_text(f"Secret {secret} found at rank 2.")
    raw = page.locator("#log tr.chat-row").nth(0).locator("details.raw")
    expect(raw.locator("pre")).to_be_hidden()
    raw.locator("summary").click()
    expect(raw.locator("pre")).to_contain_text('"text": "is there a red cube, question 1?"')
    no_sideways_scroll(page)

    # the replay starts at the last step: the secret found, both final clicks marked
    steps = m.seq
    expect(page.locator("#replay-step")).to_contain_text(f"Step {steps} of {steps}")
    expect(page.locator(f'#pool figure[data-image="{secret}"] .marks')).to_have_text("click 2")
    expect(page.locator("#replay-next")).to_be_disabled()
    page.click("#replay-first")
    expect(page.locator("#replay-step")).to_contain_text(f"Step 1 of {steps} · event 1 · system")
    expect(page.locator("#replay-event")).to_contain_text("Match started")
    expect(page.locator("#replay-board")).to_contain_text("Round 1 of 2 · question")
    expect(page.locator("#pool .marks:not(:empty)")).to_have_count(0)
    expect(page.locator("#replay-prev")).to_be_disabled()
    # forward to the first question, then its answer and the first guess
    question_step = next(i for i, t in enumerate(page.evaluate(
        "() => JSON.parse(document.getElementById('match-log').textContent).steps.map(s => s.type)"))
        if t == "question_asked") + 1
    while page.evaluate("() => gtReplay.index") + 1 < question_step:
        page.click("#replay-next")
    expect(page.locator("#replay-step")).to_contain_text(f"Step {question_step} of {steps}")
    expect(page.locator("#replay-board")).to_contain_text("Q1: is there a red cube, question 1?")
    expect(page.locator("#replay-board")).not_to_contain_text("A1:")
    expect(page.locator(f'#log tr[data-seq="{question_step}"]')).to_have_class("chat-row current")
    page.keyboard.press("ArrowRight")
    expect(page.locator("#replay-board")).to_contain_text("A1: no")
    page.keyboard.press("ArrowRight")
    first_guess = m.outcome["round_guesses"][0]
    expect(page.locator(f'#pool figure[data-image="{first_guess}"] .marks')).to_have_text("guess r1")
    page.keyboard.press("ArrowLeft")
    expect(page.locator(f'#pool figure[data-image="{first_guess}"] .marks')).to_have_text("")
    wait_painted(page)
    page.screenshot(path=str(SCREENS / "monitor_match_guesswhich.png"), full_page=True)
    # the slider jumps anywhere; "show" in the log moves the replay to that event
    page.locator(f'#log tr[data-seq="{m.seq}"] .goto').click()
    expect(page.locator("#replay-step")).to_contain_text(f"Step {steps} of {steps}")
    assert page.problems == []


def test_match_page_codraw_and_colors_replay(staff_page, live_server_url):
    page = staff_page
    m = play.codraw(pieces=2)
    page.goto(f"{live_server_url}/research/matches/{m.id}/")
    expect(page.locator("#replay-check")).to_contain_text("reproduces the stored state")
    expect(page.locator("#log")).to_contain_text("the Drawer placed the")
    first = page.locator("img.replay-canvas").get_attribute("src")
    assert first == f"/research/matches/{m.id}/replay/{m.seq}.svg"
    page.click("#replay-first")
    expect(page.locator("img.replay-canvas")).to_have_attribute("src", f"/research/matches/{m.id}/replay/1.svg")
    expect(page.locator("#replay-board")).to_contain_text("0 pieces on the canvas")
    page.click("#replay-last")
    expect(page.locator("#replay-board")).to_contain_text("Game over · 2 pieces on the canvas")
    wait_painted(page)
    assert page.evaluate("() => document.querySelector('img.replay-canvas').naturalWidth") > 0
    no_sideways_scroll(page)
    page.screenshot(path=str(SCREENS / "monitor_match_codraw.png"), full_page=True)

    c = play.colors(hits=(True, False), seed=21)
    page.goto(f"{live_server_url}/research/matches/{c.id}/")
    expect(page.locator("#replay-board")).to_contain_text("Game over · score 1/2")
    page.click("#replay-first")
    expect(page.locator("#replay-board .sw")).to_have_count(3)
    expect(page.locator("#replay-board .sw.target")).to_have_count(1)
    page.click("#replay-next")
    page.click("#replay-next")
    expect(page.locator("#replay-board")).to_contain_text("speaker: the color number 1")
    wait_painted(page)
    page.screenshot(path=str(SCREENS / "monitor_match_colors.png"), full_page=False)
    assert page.problems == []


def test_codraw_and_visdial_monitors_and_the_visdial_image(staff_page, live_server_url):
    page = staff_page
    cb = make_batch(slug="monitor-codraw", title="CoDraw pilot", game_id="codraw_v1", config={})
    scores = [play.codraw(cb, pieces=n, seed=50 + n).outcome["score"] for n in (1, 3)]
    page.goto(f"{live_server_url}/research/batches/monitor-codraw/")
    row = page.locator("table.scores tbody tr")
    expect(row).to_have_count(1)
    expect(row.locator("td").nth(2)).to_contain_text(f"{sum(scores) / 2:.2f} [")
    page.wait_for_function("() => Chart.getChart(document.getElementById('chart-histogram'))")
    histogram = chart_drawn(page, "chart-histogram")
    assert sum(histogram["data"][0]) == 2 and histogram["painted"] > 500
    assert chart_drawn(page, "chart-rounds")["data"][0] == [pytest.approx(sum(scores) / 2)]
    wait_painted(page)
    page.screenshot(path=str(SCREENS / "monitor_batch_codraw.png"), full_page=True)

    vb = make_batch(slug="monitor-visdial", title="Visual dialog pilot", game_id="visdial_v1", config={"rounds": 2})
    v = play.visdial(vb)
    page.goto(f"{live_server_url}/research/batches/monitor-visdial/")
    expect(page.locator("table.scores tbody tr td").nth(2)).to_contain_text("100.0 %")
    expect(page.locator(f'#matches tr[data-match="{v.id}"]')).to_contain_text("2/2 rounds answered, complete")
    page.click(f'#matches a[href="/research/matches/{v.id}/"]')
    page.wait_for_function("() => { const i = document.getElementById('visdial-image'); return i.complete && i.naturalWidth > 0; }")
    expect(page.locator("#replay-board")).to_contain_text("Dialog complete")
    expect(page.locator("#replay-board")).to_contain_text("Q2: what color is object 2?")
    page.click("#replay-prev")     # the answer (the dialog's end, an event of the same action, came after it)
    expect(page.locator("#replay-event")).to_contain_text("answerer: “it is blue”")
    page.click("#replay-prev")     # the second question, not answered yet
    expect(page.locator("#replay-board")).to_contain_text("Round 2 of 2 · answer")
    expect(page.locator("#replay-board")).not_to_contain_text("A2:")
    wait_painted(page)
    no_sideways_scroll(page)
    page.screenshot(path=str(SCREENS / "monitor_match_visdial.png"), full_page=False)
    assert page.problems == []


def test_compare_page_result_and_refusal(staff_page, live_server_url):
    page = staff_page
    b = make_batch(slug="monitor-cmp", title="ALICE versions", game_id="guesswhich_v1")
    for k, version in enumerate(("alice_exact", "alice_exact", "alice_weak", "alice_weak", "alice_weak")):
        play.guesswhich(b, agents={"questioner": "qbot", "answerer": version}, seed=30 + k, wrong_first=k % 3)
    play.guesswhich(b, seed=40, wrong_first=0)          # people in both seats
    page.goto(f"{live_server_url}/research/")
    page.click("#compare-link")
    page.wait_for_url("**/research/compare/")
    expect(page.locator("#id_game")).to_have_value("guesswhich_v1")
    page.check('input[name="batch"][value="monitor-cmp"]')
    page.wait_for_url("**batch=monitor-cmp**")
    page.select_option("#id_a", "alice_exact")
    page.select_option("#id_b", "alice_weak")
    page.click("#compare-submit")
    expect(page.locator("#compare-result")).to_be_visible()
    expect(page.locator("#compare-result h2")).to_have_text("answerer: alice_exact vs alice_weak")
    expect(page.locator("#compare-result h3")).to_have_text("Mann-Whitney U on the secret's rank (two-sided)")
    test_row = page.locator("#test-table tbody tr").nth(0)
    expect(test_row.locator("td").nth(1)).to_have_text("2")
    expect(test_row.locator("td").nth(2)).to_have_text("3")
    expect(test_row.locator("td.p")).not_to_have_text("–")
    page.wait_for_function("() => window.gtCompareDrawn")
    curve = chart_drawn(page, "chart-curve")
    assert curve["labels"] == ["alice_exact", "alice_weak"] and curve["painted"] > 1000
    expect(page.locator("table.scores tbody tr")).to_have_count(2)
    wait_painted(page)
    no_sideways_scroll(page)
    page.screenshot(path=str(SCREENS / "monitor_compare.png"), full_page=True)

    # people against agents alone: refused, and the page says why
    page.select_option("#id_a", "human")
    page.click("#compare-submit")
    refusal = page.locator("#compare-refused")
    expect(refusal).to_be_visible()
    expect(refusal).to_contain_text("Group A, answerer human (1 with a human seat), and group B, answerer alice_weak (3 agent-only)")
    expect(refusal).to_contain_text("mix human-played matches with agent-only ones")
    expect(page.locator("#compare-result")).to_have_count(0)
    page.screenshot(path=str(SCREENS / "monitor_compare_refused.png"), full_page=False)
    assert page.problems == []
