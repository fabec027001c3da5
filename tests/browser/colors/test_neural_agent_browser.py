"""A person (the speaker) plays the colors game in headless Chromium at 1366x768 against the neural
literal listener (games/colors/neural/agents.py) from the committed checkpoint
(models/colors/colors_neural_listener.pt), served by the browser tests' real ``manage.py
model_workers`` process (tests/browser/model_stack.py; issue 13): the batch is entered through the
lobby with a signed lab link, the person types a description each round, and every click of the
listener comes from the model: the worker's timing log has one acted turn per round, the seat
records the checkpoint's sha256 and version, and no fallback acted.
Screenshot: var/screenshots/neural-speaker.png."""
from __future__ import annotations

import hashlib

import pytest
from playwright.sync_api import expect

from agents.registry import agent_instance
from games.colors.rules import view_for
from live.models import Batch, Match, MatchEvent, Seat

from tests.browser.model_stack import SHOTS, acted_turns, enter_paired, read_lines, serving, watched_page
from tests.browser.sync import wait_painted, wait_synced
from tests.conftest import ROOT

pytestmark = [pytest.mark.browser, pytest.mark.celery, pytest.mark.django_db(transaction=True)]

CHECKPOINT = ROOT / "models" / "colors" / "colors_neural_listener.pt"
ROUNDS = 3
FAMILY = "colors_neural_l0_browser"


@pytest.fixture
def neural_stack(model_stack, request):
    """The neural listener served by the browser tests' model process; yields (base url, its timings path)."""
    with serving(model_stack, request, FAMILY) as stack:
        yield stack


def test_a_person_plays_the_neural_listener_served_by_a_model_worker(neural_stack, browser):
    base, timings = neural_stack
    sha = hashlib.sha256(CHECKPOINT.read_bytes()).hexdigest()
    assert read_lines(timings)[0]["event"] == "ready" and read_lines(timings)[0]["sha256"] == sha
    batch = Batch.objects.create(
        slug="neural", title="Colors with a neural listener", game_id="colors_v1",
        pairing=Batch.Pairing.HUMAN_AGENT, human_roles=["speaker"], agents={"listener": "colors_neural_listener"},
        config={"rounds": ROUNDS}, max_wait_s=60)
    describer = agent_instance("colors_lexicon_speaker")   # what the person types: a fitting description
    ctx, page, errors = watched_page(browser)

    match = enter_paired(page, base, batch, "ann")   # paired with the model at once
    texts = []
    for round_no in range(1, ROUNDS + 1):
        expect(page.locator("#round-label")).to_have_text(f"Round {round_no} of {ROUNDS}")
        wait_synced(page, match.id)
        match.refresh_from_db()
        text = describer.act(view_for(match.state, "speaker"))["text"]
        texts.append(text)
        page.fill("#chatinput", text)
        page.click("#send")
        # the listener's click (the model's) ends the round: the outcome is shown to the person
        expect(page.locator("#outcome")).to_contain_text(f"Round {round_no}: ")
        if round_no == 2:
            wait_painted(page)
            page.screenshot(path=str(SHOTS / "neural-speaker.png"))
    expect(page.locator("#finished")).to_be_visible()
    wait_painted(page)
    page.screenshot(path=str(SHOTS / "neural-speaker-finished.png"))
    ctx.close()
    assert errors == [], errors

    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED
    chats = list(MatchEvent.objects.filter(match=match, type="message_sent").values_list("actor", "payload"))
    assert [(actor, payload["text"]) for actor, payload in chats] == [("speaker", t) for t in texts]
    clicks = list(MatchEvent.objects.filter(match=match, type="color_clicked").order_by("seq"))
    assert len(clicks) == ROUNDS and {c.actor for c in clicks} == {"listener"}
    # every click is the model's answer: the worker acted on each turn, no fallback stood in
    assert not MatchEvent.objects.filter(match=match, type="agent_timed_out").exists()
    acted = acted_turns(timings, match.id, len(clicks))
    assert sorted(line["seq"] for line in acted) == [c.seq - 1 for c in clicks]
    assert [c.client_action_id for c in clicks] == [f"agent:listener:{c.seq - 1}" for c in clicks]
    seat = Seat.objects.get(match=match, role="listener")
    assert seat.agent_name == "colors_neural_listener"
    assert seat.agent_model["checkpoint_sha256"] == sha and seat.agent_model["version"] == "l0-browser"
    assert seat.agent_model["family"] == "games.colors.neural.agents:NeuralLiteralListener"
