"""A person (the questioner) plays GuessWhich in headless Chromium at 1366x768 against the neural
ALICE (games/guesswhich/neural/agents.py ``NeuralAliceAgent``) served by the browser tests' real
``manage.py model_workers`` process (tests/browser/model_stack.py). Its checkpoint is not in git: a small one is
trained once per session with the project's own training (games/guesswhich/neural/train.py). The batch is
entered through the lobby with a signed lab link; each round the person asks a question, reads
the model's answer in the chat and picks a best guess; then finds the secret image and rates the
answers. Every answer comes from the model (the worker's timing log, no fallback) and is one of
its answer vocabulary, the seat records the checkpoint's sha256 and version, and the rank shown
is the server's. Screenshot: var/screenshots/guesswhich-neural-alice.png."""
from __future__ import annotations

import hashlib

import pytest

from games.guesswhich.neural.model import load_checkpoint
from games.guesswhich.neural.agents import ANSWER_MAX
from games.guesswhich.rules import C as GW
from live.models import Batch, Match, MatchEvent, Seat

from tests.browser.model_stack import SHOTS, acted_turns, enter_paired, read_lines, serving, watched_page
from tests.browser.sync import wait_painted

pytestmark = [pytest.mark.browser, pytest.mark.celery, pytest.mark.django_db(transaction=True)]

FAMILY = "guesswhich_neural_alice_browser"
ROUNDS = 3
QUESTIONS = ["How many objects are there?", "Is there a red thing?", "What shape is the leftmost thing?"]


def thumb(image_id: str) -> str:
    return f'.thumb[data-id="{image_id}"]'


@pytest.fixture(scope="module")
def alice_checkpoint(small_alice):
    """The session's small neural ALICE (tests/tiny_models.py), trained on the project's generated dialogs."""
    return small_alice[1]


@pytest.fixture
def alice_stack(model_stack, request):
    """The neural ALICE served by the browser tests' model process; yields (base url, its timings path)."""
    with serving(model_stack, request, FAMILY) as stack:
        yield stack


def test_a_person_plays_guesswhich_with_the_neural_alice_served_by_a_model_worker(alice_stack, alice_checkpoint,
                                                                                  browser):
    base, timings = alice_stack
    sha = hashlib.sha256(alice_checkpoint.read_bytes()).hexdigest()
    assert read_lines(timings)[0]["event"] == "ready" and read_lines(timings)[0]["sha256"] == sha
    answers = {a[:ANSWER_MAX] for a in load_checkpoint(alice_checkpoint).answers}   # as the agent sends them
    batch = Batch.objects.create(
        slug="neural-alice", title="GuessWhich with a neural ALICE", game_id="guesswhich_v1",
        pairing=Batch.Pairing.HUMAN_AGENT, human_roles=["questioner"],
        agents={"answerer": "guesswhich_neural_alice"}, config={"rounds": ROUNDS}, max_wait_s=60)
    ctx, page, errors = watched_page(browser)

    match = enter_paired(page, base, batch, "cai")   # paired with the model at once
    secret, pool = match.state["secret_id"], match.state["pool_ids"]
    wrong = [i for i in pool if i != secret]
    for k, question in enumerate(QUESTIONS, start=1):
        page.wait_for_selector("#askinput:enabled", timeout=30000)
        page.fill("#askinput", question)
        page.click("#ask")
        page.wait_for_selector(f".msg.a >> nth={k - 1}", timeout=60000)   # the model's answer, via the worker
        if k == 2:
            wait_painted(page)
            page.screenshot(path=str(SHOTS / "guesswhich-neural-alice.png"))
        page.click(thumb(wrong[k - 1]))
        page.wait_for_selector(f".msg.guess >> nth={k - 1}")
    page.wait_for_selector("text=until you find the secret one")
    page.click(thumb(wrong[0]))                   # one wrong final click, then the secret
    page.wait_for_selector(f"{thumb(wrong[0])}.ruled")
    page.click(thumb(secret))
    page.wait_for_selector("#rank")
    match.refresh_from_db()
    assert match.outcome["found"] and match.outcome["rank"] == 2
    assert page.inner_text("#rank") == "2"
    for i, key in enumerate(GW.RATING_KEYS):
        page.click(f'.rating-row[data-key="{key}"] label:nth-child({1 + i % 5}) span')
    page.click("#fb-submit")
    page.wait_for_selector("#finished:not([hidden])")
    ctx.close()
    assert errors == [], errors

    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED
    dialog = match.state["dialog"]
    assert [d["question"] for d in dialog] == QUESTIONS
    assert all(d["answer"] in answers for d in dialog)          # the model's own answers
    # every answer is the model's: the worker acted on each question, no fallback
    assert not MatchEvent.objects.filter(match=match, type="agent_timed_out").exists()
    given = list(MatchEvent.objects.filter(match=match, actor="answerer").exclude(action=None).order_by("seq"))
    assert len(given) == ROUNDS and all(e.client_action_id.startswith("agent:answerer:") for e in given)
    acted = acted_turns(timings, match.id, ROUNDS)
    assert len(acted) == ROUNDS
    seat = Seat.objects.get(match=match, role="answerer")
    assert seat.agent_name == "guesswhich_neural_alice"
    assert seat.agent_model["checkpoint_sha256"] == sha and seat.agent_model["version"] == "alice-browser"
    assert seat.agent_model["family"] == "games.guesswhich.neural.agents:NeuralAliceAgent"
