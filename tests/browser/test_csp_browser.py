"""The Content-Security-Policy in a real browser (issue 21, item 8; groundtalk_web/csp.py): each
game's page works under it (its scripts load, its socket connects, nothing is refused), and code
that an attacker got into the page does not run: an event handler attribute, a script element and a
style attribute are all refused (without the policy, each of them runs). (eval: Playwright's own
evaluation is exempt from the page's policy, so the header's lack of 'unsafe-eval' is checked in
tests/groundtalk_web/test_csp.py.)"""
from __future__ import annotations

import pytest

from tests.groundtalk_web.test_csp import GAMES, active

from .sync import wait_painted, wait_synced

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# from the first script on: every refusal, with what was refused
RECORD = """window.gtViolations = [];
document.addEventListener("securitypolicyviolation",
  (e) => window.gtViolations.push(e.effectiveDirective + " " + (e.target && e.target.outerHTML || "").slice(0, 120)));"""

INJECT = """() => {
  const box = document.createElement("div");
  box.innerHTML = '<img id="injected-img" src="/static/gt/favicon.svg" onload="window.gtInjected = (window.gtInjected || 0) + 1">'
    + '<p id="injected-p" style="color: rgb(1, 2, 3)">injected</p>';
  document.body.append(box);
  const script = document.createElement("script");
  script.textContent = "window.gtInjected = (window.gtInjected || 0) + 10";
  document.body.append(script);
}"""

@pytest.mark.parametrize("game_id, roles, config", GAMES, ids=[g[0] for g in GAMES])
def test_each_game_page_works_under_the_policy_and_injected_code_does_not_run(live_server_url, browser, game_id,
                                                                           roles, config):
    match, seats = active(game_id, roles, config)
    ctx = browser.new_context(viewport={"width": 1366, "height": 768})
    ctx.add_init_script(RECORD)
    page = ctx.new_page()
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: msg.type == "error" and errors.append(f"console: {msg.text}"))
    response = page.goto(f"{live_server_url}/m/{match.id}/?seat={seats[roles[0]].token}")
    policy = response.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "unsafe" not in policy, policy
    wait_synced(page, match.id)        # the page's own scripts ran and its websocket is connected
    wait_painted(page)
    assert page.evaluate("() => window.GT_SEAT.role") == roles[0]
    assert errors == [], errors        # nothing of the page itself was refused
    assert page.evaluate("() => window.gtViolations") == []
    page.evaluate(INJECT)
    page.wait_for_function("() => document.getElementById('injected-img').complete")
    page.wait_for_function("() => window.gtViolations.length >= 3")
    assert page.evaluate("() => window.gtInjected") is None
    assert page.evaluate("() => getComputedStyle(document.getElementById('injected-p')).color") != "rgb(1, 2, 3)"
    refused = {v.split(" ")[0] for v in page.evaluate("() => window.gtViolations")}
    assert {"script-src-attr", "script-src-elem", "style-src-attr"} <= refused, refused
    assert any("Content Security Policy" in e for e in errors), errors   # each refusal is a console error
    ctx.close()
