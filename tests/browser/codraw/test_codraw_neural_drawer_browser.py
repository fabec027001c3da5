"""A person (the Teller) plays CoDraw in headless Chromium at 1366x768 against the neural Drawer
(games/codraw/neural/agents.py ``NeuralDrawer``) from the committed checkpoint
(models/codraw/codraw_neural_drawer.pt), served by the browser tests' real ``manage.py model_workers`` process
(tests/browser/model_stack.py): the batch is entered through the lobby with a signed lab link;
each round the person types a description of one piece of the scene shown to them (what the rule
Teller would say: the test's stand-in for a person's wording) and waits for the Drawer; after a
few rounds the person ends the game. Every Drawer move comes from the model (the worker's timing
log, no fallback), the pieces it drew belong to the scene, the seat records the checkpoint's
sha256 and version, and the page shows the server's score.
Screenshots: var/screenshots/codraw-neural-drawer*.png."""
from __future__ import annotations

import hashlib

import pytest
from playwright.sync_api import expect

from games.codraw import content as codraw_content
from games.codraw.agents import RuleTeller
from games.codraw.rules import view_for
from live.models import Batch, Content, Match, MatchEvent, Seat

from tests.browser.model_stack import SHOTS, acted_turns, enter_paired, read_lines, serving, watched_page
from tests.browser.sync import wait_painted, wait_synced
from tests.browser.codraw.test_codraw_browser import final_score_from_db
from tests.conftest import ROOT

pytestmark = [pytest.mark.browser, pytest.mark.celery, pytest.mark.django_db(transaction=True)]

CHECKPOINT = ROOT / "models" / "codraw" / "codraw_neural_drawer.pt"
FAMILY = "codraw_neural_drawer_browser"
ROUNDS = 4
# The scene is fixed (the batch's content pool): the rule Teller's messages and the model's greedy
# moves are then the same every run. On a scene drawn at random the model sometimes draws a clip art
# that is not in the scene (with the rule Teller's words of issue 20: about 45 of 100 scenes
# simulated offline), which made this test fail by chance (issue 20).
SCENE_SEED = 0


@pytest.fixture
def drawer_stack(model_stack, request):
    """The neural Drawer served by the browser tests' model process; yields (base url, its timings path)."""
    with serving(model_stack, request, FAMILY) as stack:
        yield stack


def test_a_person_describes_a_scene_to_the_neural_drawer_served_by_a_model_worker(drawer_stack, browser):
    base, timings = drawer_stack
    sha = hashlib.sha256(CHECKPOINT.read_bytes()).hexdigest()
    assert read_lines(timings)[0]["event"] == "ready" and read_lines(timings)[0]["sha256"] == sha
    scene = Content.objects.create(game_id="codraw_v1", key=f"neural-drawer-browser-{SCENE_SEED}",
                                   data=codraw_content.generate(SCENE_SEED, {}), provenance={"seed": SCENE_SEED})
    batch = Batch.objects.create(
        slug="neural-drawer", title="CoDraw with a neural Drawer", game_id="codraw_v1",
        pairing=Batch.Pairing.HUMAN_AGENT, human_roles=["teller"], agents={"drawer": "codraw_neural_drawer"},
        config={}, max_wait_s=60, content_pool=[scene.pk])
    describer = RuleTeller(peek=False)          # what the person types: one piece of the scene per message
    ctx, page, errors = watched_page(browser)

    match = enter_paired(page, base, batch, "bea")   # paired with the model at once
    assert match.content_ref_id == scene.pk
    sent = []
    for round_no in range(1, ROUNDS + 1):
        page.wait_for_selector("#turn.mine", timeout=60000)   # the Drawer has answered (or the game began)
        wait_synced(page, match.id)
        match.refresh_from_db()
        action = describer.act(view_for(match.state, "teller"))
        if action is None or action["type"] != "chat":
            break
        page.fill("#chatinput", action["text"])
        page.click("#send")
        sent.append(action["text"])
        # the model's turn: its canvas move and its reply, which gives the turn back. (Not "wait for
        # the Drawer's turn": the model may take it and answer before the page shows it.)
        expect(page.locator(".msg.theirs")).to_have_count(round_no, timeout=60000)
        if round_no == 2:
            page.wait_for_selector("#turn.mine", timeout=60000)
            wait_painted(page)
            page.screenshot(path=str(SHOTS / "codraw-neural-drawer.png"))
    page.wait_for_selector("#turn.mine", timeout=60000)
    page.click("#end")
    page.click("#end-confirm")
    expect(page.locator("#finished")).to_be_visible()
    wait_painted(page)
    page.screenshot(path=str(SHOTS / "codraw-neural-drawer-finished.png"))
    expected = final_score_from_db(match)
    assert float(page.get_attribute("#final-score", "data-score")) == pytest.approx(expected, abs=1e-9)
    ctx.close()
    assert errors == [], errors

    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED and match.state["ended_by"] == "teller"
    assert len(sent) >= 3
    target = {p["idx"] for p in match.state["target"]}
    drawn = {int(idx) for idx in match.state["canvas"]}
    assert drawn and drawn <= target, (sent, drawn, target)     # the model drew pieces of the scene described
    assert expected > 0.5
    # every Drawer move is the model's: the worker acted on each of its turns, no fallback
    assert not MatchEvent.objects.filter(match=match, type="agent_timed_out").exists()
    moves = list(MatchEvent.objects.filter(match=match, actor="drawer").exclude(action=None).order_by("seq"))
    assert moves and all(e.client_action_id.startswith("agent:drawer:") for e in moves)
    acted = acted_turns(timings, match.id, len({e.client_action_id for e in moves}))
    assert len(acted) == len({e.client_action_id for e in moves})
    seat = Seat.objects.get(match=match, role="drawer")
    assert seat.agent_name == "codraw_neural_drawer"
    assert seat.agent_model["checkpoint_sha256"] == sha and seat.agent_model["version"] == "drawer-browser"
    assert seat.agent_model["family"] == "games.codraw.neural.agents:NeuralDrawer"
