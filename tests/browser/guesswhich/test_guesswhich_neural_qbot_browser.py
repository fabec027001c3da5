"""A person (the answerer) plays GuessWhich in headless Chromium at 1366x768 against the neural
QBot (games/guesswhich/neural/qbot.py ``NeuralQBot``) served by the browser tests' real ``manage.py
model_workers`` process (tests/browser/model_stack.py). Its answer model is a neural ALICE checkpoint, not in git:
a small one is trained once per session with the project's own training (games/guesswhich/neural/train.py).
The batch is entered through the lobby with a signed lab link; each round the person reads the
model's question on the page and answers it truthfully about the secret image (what the exact
ALICE says of its scene); the model then guesses its way to the secret and skips the feedback.
Every questioner move comes from the model (the worker's timing log, no fallback), the seat records
the checkpoint's sha256 and the family, and the bonus the page shows at the end is the server's.
Screenshot: var/screenshots/guesswhich-neural-qbot.png."""
from __future__ import annotations

import hashlib

import pytest

from clevr.alice import make_alice
from games.guesswhich.rules import view_for
from live.models import Batch, Match, MatchEvent, Seat

from tests.browser.model_stack import SHOTS, acted_turns, enter_paired, read_lines, serving, watched_page
from tests.browser.sync import wait_painted, wait_synced

pytestmark = [pytest.mark.browser, pytest.mark.celery, pytest.mark.django_db(transaction=True)]

FAMILY_KEY = "guesswhich_neural_qbot_browser"
FAMILY = "games.guesswhich.neural.qbot:NeuralQBot"
ROUNDS = 3

# The person's turn has come once the page shows the k-th question as pending with the box enabled.
QUESTION_DUE = """k => {
  const input = document.getElementById("answerinput"), pending = document.getElementById("pending");
  return !input.disabled && !pending.hidden && document.getElementById("pending-text").textContent.length > 0
    && document.querySelectorAll("#chat .msg.q").length === k;
}"""


@pytest.fixture(scope="module")
def alice_checkpoint(small_alice):
    """The session's small neural ALICE (the QBot's answer model; tests/tiny_models.py)."""
    return small_alice[1]


@pytest.fixture
def qbot_stack(model_stack, request):
    """The neural QBot served by the browser tests' model process; yields (base url, its timings path)."""
    with serving(model_stack, request, FAMILY_KEY) as stack:
        yield stack


def test_a_person_answers_the_neural_qbot_served_by_a_model_worker(qbot_stack, alice_checkpoint,
                                                                   browser):
    base, timings = qbot_stack
    sha = hashlib.sha256(alice_checkpoint.read_bytes()).hexdigest()
    assert read_lines(timings)[0]["event"] == "ready" and read_lines(timings)[0]["sha256"] == sha
    truthful = make_alice("alice_exact")          # what the person says of the secret scene
    batch = Batch.objects.create(
        slug="neural-qbot", title="GuessWhich with a neural QBot", game_id="guesswhich_v1",
        pairing=Batch.Pairing.HUMAN_AGENT, human_roles=["answerer"],
        agents={"questioner": "guesswhich_neural_qbot"}, config={"rounds": ROUNDS}, max_wait_s=60)
    ctx, page, errors = watched_page(browser)

    match = enter_paired(page, base, batch, "ann")   # paired with the model at once
    seen, given = [], []
    for k in range(1, ROUNDS + 1):
        page.wait_for_function(QUESTION_DUE, arg=k, timeout=60000)   # the model's question, via the worker
        wait_synced(page, match.id)
        question = page.inner_text("#pending-text")
        assert page.inner_text(f"#chat .msg.q >> nth={k - 1} >> .text") == question
        match.refresh_from_db()
        view = view_for(match.state, "answerer")
        assert view["expects"] == "answer" and view["round"] == k and view["pending_question"] == question
        answer = truthful.act(view)["text"]
        if k == 2:
            wait_painted(page)
            page.screenshot(path=str(SHOTS / "guesswhich-neural-qbot.png"))
        page.fill("#answerinput", answer)
        page.click("#answer")
        page.wait_for_selector(f"#chat .msg.a >> nth={k - 1}")
        seen.append(question)
        given.append(answer)
    # the model guesses after the last answer until it finds the secret, then skips the feedback
    page.wait_for_selector("#finished:not([hidden])", timeout=60000)
    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED
    wait_synced(page, match.id)
    assert page.inner_text("#bonus-final") == str(match.outcome["bonus"])     # the server's, as shown
    assert page.inner_text("#prompt") == "The game is over. Thank you!"
    assert page.locator("#chat .msg.q .text").all_inner_texts() == seen
    assert page.locator("#chat .msg.a .text").all_inner_texts() == given
    assert page.locator("#answerform").is_hidden()
    ctx.close()
    assert errors == [], errors

    outcome = match.outcome
    dialog = match.state["dialog"]
    assert [d["question"] for d in dialog] == seen and [d["answer"] for d in dialog] == given
    assert outcome["found"] and outcome["rounds_played"] == ROUNDS
    assert outcome["final_clicks"][-1] == match.state["secret_id"]
    assert len(set(outcome["final_clicks"])) == len(outcome["final_clicks"]) == outcome["rank"]
    assert outcome["feedback"] == {"skipped": True, "by": "questioner"}
    # every questioner move is the model's: asks and best guesses per round, final clicks up to the
    # secret, then the skipped feedback; no fallback acted
    assert not MatchEvent.objects.filter(match=match, type="agent_timed_out").exists()
    moves = list(MatchEvent.objects.filter(match=match, actor="questioner").exclude(action=None).order_by("seq"))
    assert all(e.client_action_id.startswith("agent:questioner:") for e in moves)
    assert [e.action["type"] for e in moves] == (["ask", "guess"] * ROUNDS + ["guess"] * outcome["rank"]
                                                 + ["skip_feedback"])
    assert [e.action["text"] for e in moves if e.action["type"] == "ask"] == seen
    guesses = [e.action["image_id"] for e in moves if e.action["type"] == "guess"]
    assert guesses == outcome["round_guesses"] + outcome["final_clicks"]
    acted = acted_turns(timings, match.id, len(moves))
    assert len(acted) == len(moves) == 2 * ROUNDS + outcome["rank"] + 1
    seat = Seat.objects.get(match=match, role="questioner")
    assert seat.agent_name == "guesswhich_neural_qbot"
    assert seat.agent_model["checkpoint_sha256"] == sha and seat.agent_model["version"] == "qbot-browser"
    assert seat.agent_model["family"] == FAMILY
