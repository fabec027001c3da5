"""A person plays an LLM partner in headless Chromium at 1366x768, in each game family and from both
seats (issue 23, item 5): colors (speaker / listener), GuessWhich (questioner / answerer), CoDraw
(teller / drawer) and visual dialog (questioner / answerer). Every model seat is a ``kind =
"openai"`` agent answered by the scripted stand-in (tests/support/openai_standin.py), its turns
played by ONE real ``manage.py agent_worker`` process for the eight agents, behind uvicorn, both
started once for the module. The person enters the batch through its lab link and plays a short
game to the done page. Asserted as the person sees it: the model's lines appear; where the model's
role streams (a chat line), "Your partner is typing…" (#gt-typing, static/gt/client.js) shows
partial words before the line (the stand-in streams the first line slowly); a role without a
stream field (a colour listener, a CoDraw drawer) shows no typing at all; no value hidden from the
person's role (games/<game>/hidden.py) is in the page; each model turn is recorded
(:class:`agents.models.AgentCall`, ``acted``) and no fallback stood in; a CoDraw drawer's turn is
one call for its canvas change and its reply. Screenshots, one per family, with the typing
indicator showing: var/screenshots/llm-partner-<game>.png."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time

import pytest
from django.conf import settings
from playwright.sync_api import expect

from agents import liveness
from agents.models import AgentCall
from games.codraw import content as codraw_content
from games.hidden import text_leaks
from games.registry import get_game
from live.models import Batch, Content, Match, MatchEvent

from tests.browser.model_stack import SHOTS, enter_paired, reset_registry, watched_page
from tests.browser.sync import wait_painted, wait_synced
from tests.conftest import ROOT, child_env, running_server, var_log
from tests.support.openai_standin import OpenAIStandin

pytestmark = [pytest.mark.browser, pytest.mark.celery, pytest.mark.django_db(transaction=True)]

#: (game, role) -> the rule agent that stands in when the model fails
AGENTS = {
    ("colors_v1", "speaker"): "colors_lexicon_speaker", ("colors_v1", "listener"): "colors_literal_listener",
    ("guesswhich_v1", "questioner"): "qbot", ("guesswhich_v1", "answerer"): "alice_exact",
    ("codraw_v1", "teller"): "codraw_rule_teller", ("codraw_v1", "drawer"): "codraw_rule_drawer",
    ("visdial_v1", "questioner"): "visdial_qbot", ("visdial_v1", "answerer"): "visdial_alice_exact",
}
#: the decision field a partner sees being written (games/<game>/llm.py ``stream_field``); None: none
STREAM_FIELD = {("colors_v1", "speaker"): "message", ("colors_v1", "listener"): None,
                ("guesswhich_v1", "questioner"): "question", ("guesswhich_v1", "answerer"): "answer",
                ("codraw_v1", "teller"): "message", ("codraw_v1", "drawer"): None,
                ("visdial_v1", "questioner"): "question", ("visdial_v1", "answerer"): "answer"}
PARTNER = {"speaker": "listener", "listener": "speaker", "questioner": "answerer", "answerer": "questioner",
           "teller": "drawer", "drawer": "teller"}
LINE = "the small red one just left of the big shiny cube"
# The first streamed line: 1.5 s before its first byte (the person's page is open by then),
# then its pieces 0.12 s apart, so the page shows it being written for a couple of seconds.
SLOW = {"latency_s": 1.5, "chunk_delay_s": 0.12}
# Every text the page's #gt-typing showed while visible (recorded from the first script on).
TYPING_WATCH = """
window.gtTypingSeen = [];
document.addEventListener("DOMContentLoaded", () => {
  const node = document.getElementById("gt-typing");
  if (!node) return;
  new MutationObserver(() => { if (!node.hidden) window.gtTypingSeen.push(node.textContent); })
    .observe(node, {childList: true, subtree: true, characterData: true, attributes: true});
});
"""
TYPING_TEXT = "() => { const n = document.getElementById('gt-typing'); return n && !n.hidden && n.textContent; }"


def page_leaks(page, game_id: str, state: dict, role: str) -> list:
    """Values hidden from ``role`` in ``state`` that are in the page's text (games.hidden.text_leaks).
    A value the role may see in some container (the GuessWhich secret id as one of the pool's
    thumbnails) is on the page legitimately: only values allowed nowhere are looked for."""
    hidden = [h for h in get_game(game_id).hidden.hidden_from(state, role) if not h.allowed_in]
    return text_leaks(page.content(), hidden)


def agent_name(game_id: str, role: str) -> str:
    return f"llm_{game_id.split('_')[0]}_{role}"


def models_file(base_url: str) -> str:
    return "".join(textwrap.dedent(f"""
    [[agent]]
    name = "{agent_name(game_id, role)}"
    kind = "openai"
    game_id = "{game_id}"
    role = "{role}"
    base_url = "{base_url}"
    model = "standin-1"
    api_key_env = ""
    timeout_s = 30
    fallback = "{fallback}"
    version = "browser-1"
    stream = true
    """) for (game_id, role), fallback in AGENTS.items())


@pytest.fixture(scope="module")
def llm_stack(django_db_setup, django_db_blocker, tmp_path_factory):
    """The stand-in, a models file naming the eight LLM agents (this process, the worker and the
    server read it), one agent_worker serving them all (its queues beating before a test starts)
    and uvicorn; yields (base url, stand-in)."""
    if settings.GT_AGENT_MODE != "celery":
        pytest.skip("needs REDIS_URL and DATABASE_URL (the full stack)")
    path = tmp_path_factory.mktemp("llm-partner") / "models.toml"
    names = [agent_name(*key) for key in AGENTS]
    with OpenAIStandin() as standin:
        path.write_text(models_file(standin.base_url))
        previous = os.environ.get("GT_MODELS_FILE")
        os.environ["GT_MODELS_FILE"] = str(path)
        reset_registry()
        from groundtalk_web.celery import app

        with app.connection_for_write() as conn:   # no turn left over from an earlier run
            for name in names:
                conn.default_channel.queue_purge(f"agent.{name}")
        with django_db_blocker.unblock():
            env = {**child_env(), "GT_MODELS_FILE": str(path)}
        worker = subprocess.Popen([sys.executable, "manage.py", "agent_worker", "--agents", ",".join(names),
                                   "--no-control", "--no-supervise", "--loglevel", "info"],
                                  cwd=ROOT, env=env, stdout=var_log("test-llm-partner-worker.log"),
                                  stderr=subprocess.STDOUT)
        try:
            with running_server(env, "test-llm-partner-server.log") as url:
                deadline = time.monotonic() + 120
                while liveness.dead_queues([f"agent.{n}" for n in names]):
                    assert worker.poll() is None, f"the agent worker exited with {worker.returncode}"
                    assert time.monotonic() < deadline, "the agent worker's queues did not beat in 120 s"
                    time.sleep(0.2)
                yield url, standin
        finally:
            worker.terminate()
            try:
                worker.wait(20)
            except subprocess.TimeoutExpired:
                worker.kill()
            if previous is None:
                os.environ.pop("GT_MODELS_FILE", None)
            else:
                os.environ["GT_MODELS_FILE"] = previous
            reset_registry()


# ------------------------------------------------------------------------------------ the person
def slow_first(game_id: str, role: str) -> dict:
    """The stand-in's step for the model's first streamed line: LINE, slowly."""
    field = STREAM_FIELD[(game_id, role)]
    decision = {"action": "message", "message": LINE} if (game_id, role) == ("codraw_v1", "teller") else {field: LINE}
    return {"content": json.dumps(decision), **SLOW}


def play_colors(page, match, person: str, typing) -> None:
    for round_no in (1, 2):
        expect(page.locator("#round-label")).to_have_text(f"Round {round_no} of 2")
        if person == "speaker":
            page.fill("#chatinput", f"the bright one, round {round_no}")
            page.click("#send")
        else:
            expect(page.locator(".msg.theirs")).to_have_count(round_no, timeout=60000)   # the model spoke
            page.locator(".swatch.clickable").first.click()
        expect(page.locator("#outcome")).to_contain_text(f"Round {round_no}: ", timeout=60000)


def thumb(image_id: str) -> str:
    return f'.thumb[data-id="{image_id}"]'


def play_guesswhich(page, match, person: str, typing) -> None:
    if person == "questioner":
        match.refresh_from_db()
        secret = match.state["secret_id"]
        wrong = [i for i in match.state["pool_ids"] if i != secret]
        for k, question in enumerate(["Is there a cube?", "What colour is the biggest thing?"], start=1):
            page.wait_for_selector("#askinput:enabled", timeout=60000)
            page.fill("#askinput", question)
            page.click("#ask")
            if k == 1:
                typing()   # the model's answer being written
            page.wait_for_selector(f".msg.a >> nth={k - 1}", timeout=60000)    # the model's answer
            page.click(thumb(wrong[k - 1]))
            page.wait_for_selector(f".msg.guess >> nth={k - 1}")
        page.wait_for_selector("text=until you find the secret one")
        page.click(thumb(secret))
        page.wait_for_selector("#rank")
        for i, key in enumerate(page.locator(".rating-row").evaluate_all("rows => rows.map(r => r.dataset.key)")):
            page.click(f'.rating-row[data-key="{key}"] label:nth-child({1 + i % 5}) span')
        page.click("#fb-submit")
    else:
        for k in (1, 2):
            page.wait_for_function("k => { const i = document.getElementById('answerinput');"
                                   " return !i.disabled && document.querySelectorAll('#chat .msg.q').length === k; }",
                                   arg=k, timeout=60000)       # the model's question
            page.fill("#answerinput", "yes, one red cube")
            page.click("#answer")
            page.wait_for_selector(f"#chat .msg.a >> nth={k - 1}")
        # the model guesses until it finds the secret, then rates the answers


def play_codraw(page, match, person: str, typing) -> None:
    if person == "teller":
        for round_no in (1, 2):
            page.wait_for_selector("#turn.mine", timeout=60000)
            page.fill("#chatinput", f"put a tree on the left ({round_no})")
            page.click("#send")
            expect(page.locator(".msg.theirs")).to_have_count(round_no, timeout=60000)   # the model's reply
        page.wait_for_selector("#turn.mine", timeout=60000)
        page.click("#end")
        page.click("#end-confirm")
    else:
        for round_no in (1, 2):
            page.wait_for_function("n => document.querySelector('#turn.mine')"
                                   " && document.querySelectorAll('.msg.theirs').length >= n",
                                   arg=round_no, timeout=60000)   # the model's message
            wait_synced(page, match.id)
            page.fill("#chatinput", f"ok, done ({round_no})")
            page.click("#send")
            page.wait_for_function("() => window.gtClient.pending.length === 0")
        # the model's third answer ends the game (scripted "done")


def play_visdial(page, match, person: str, typing) -> None:
    for k in (1, 2):
        if person == "questioner":
            page.wait_for_selector("#sendinput:enabled", timeout=60000)
            page.fill("#sendinput", f"what is left of the cube ({k})?")
            page.click("#send")
            if k == 1:
                typing()   # the model's answer being written
            page.wait_for_selector(f".msg.a >> nth={k - 1}", timeout=60000)    # the model's answer
        else:
            page.wait_for_selector(f".msg.q >> nth={k - 1}", timeout=60000)    # the model's question
            page.wait_for_selector("#sendinput:enabled")
            page.fill("#sendinput", f"a red sphere ({k})")
            page.click("#send")
            page.wait_for_selector(f".msg.a >> nth={k - 1}")


GAMES = {
    "colors_v1": ({"rounds": 2}, play_colors),
    "guesswhich_v1": ({"rounds": 2, "pool_size": 6}, play_guesswhich),
    "codraw_v1": ({}, play_codraw),
    "visdial_v1": ({"rounds": 2}, play_visdial),
}
CASES = [(game, person) for game in GAMES for person in ("speaker", "listener", "questioner", "answerer",
                                                         "teller", "drawer") if (game, person) in AGENTS]


@pytest.mark.parametrize("game_id,person", CASES, ids=[f"{g.split('_')[0]}-person-{p}" for g, p in CASES])
def test_a_person_plays_an_llm_partner(llm_stack, browser, game_id, person):
    base, standin = llm_stack
    model_role = PARTNER[person]
    streamed = STREAM_FIELD[(game_id, model_role)] is not None
    standin.reset()
    steps = [slow_first(game_id, model_role)] if streamed else []
    if (game_id, model_role) == ("codraw_v1", "teller"):   # one more message, then the model ends the game
        steps += [{}, {"content": json.dumps({"action": "done", "message": ""})}]
    if steps:
        standin.script(*steps)
    config, play = GAMES[game_id]
    content_pool = []
    if game_id == "codraw_v1":
        scene = Content.objects.create(game_id=game_id, key=f"llm-partner-{person}", data=codraw_content.generate(0, {}),
                                       provenance={"seed": 0})
        content_pool = [scene.pk]
    agent = agent_name(game_id, model_role)
    batch = Batch.objects.create(
        slug=f"llm-{game_id.split('_')[0]}-{person}", title="With an LLM partner", game_id=game_id,
        pairing=Batch.Pairing.HUMAN_AGENT, human_roles=[person], agents={model_role: agent}, config=config,
        max_wait_s=60, content_pool=content_pool)
    ctx, page, errors = watched_page(browser)
    ctx.add_init_script(TYPING_WATCH)
    match = enter_paired(page, base, batch, "ann")   # paired with the model at once
    leaked = []

    def typing() -> None:
        """While the model's first line is written: "Your partner is typing…" with its first words
        (a screenshot), and no hidden value in the page."""
        page.wait_for_function(f"() => {{ const t = ({TYPING_TEXT})(); return t && t.length > "
                               f"'Your partner is typing… '.length; }}", timeout=60000)
        page.screenshot(path=str(SHOTS / f"llm-partner-{game_id.split('_')[0]}-{person}.png"))
        match.refresh_from_db()
        leaked.extend(page_leaks(page, game_id, match.state, person))

    wait_synced(page, match.id)
    match.refresh_from_db()
    leaked += page_leaks(page, game_id, match.state, person)   # at the start
    model_first = model_role in get_game(game_id).rules.to_act(match.state)
    if streamed and model_first:
        typing()
    play(page, match, person, typing if streamed and not model_first else lambda: None)
    expect(page.locator("#finished")).to_be_visible(timeout=60000)
    if not streamed:
        wait_painted(page)
        page.screenshot(path=str(SHOTS / f"llm-partner-{game_id.split('_')[0]}-{person}.png"))
    match.refresh_from_db()
    wait_synced(page, match.id)
    seen = page.evaluate("() => window.gtTypingSeen")
    html = page.content()
    ctx.close()
    assert errors == [], errors

    assert match.status == Match.Status.FINISHED, match.status
    # what the page showed of the model's writing
    if streamed:
        partial = [t.split("…", 1)[1].strip() for t in seen if "…" in t]
        assert any(p and p != LINE and LINE.startswith(p) for p in partial), seen   # words before the line
        assert LINE in html                                                          # then the line itself
    else:
        assert seen == [], seen
    # no value hidden from the person's role in the page: at the start, and as the model's first
    # line is written
    assert leaked == [], leaked
    # every model move was the model's: recorded, played, no fallback
    assert not MatchEvent.objects.filter(match=match, type="agent_timed_out").exists()
    calls = list(AgentCall.objects.filter(match=match).order_by("seq", "attempt"))
    moves = list(MatchEvent.objects.filter(match=match, actor=model_role).exclude(action=None).order_by("seq"))
    assert calls and {c.outcome for c in calls} == {"acted"} and {c.role for c in calls} == {model_role}
    assert all(c.agent == agent and c.model_reported == "standin-1" and c.params["stream"] for c in calls)
    assert moves and all(e.client_action_id.startswith(f"agent:{model_role}:") for e in moves)
    assert sum(len(c.actions) for c in calls) == len(moves)                      # each move from a call
    assert len(standin.chat_requests()) == len(calls)
    if (game_id, model_role) == ("codraw_v1", "drawer"):   # a whole drawer turn from one answer: one call each
        assert len(calls) == 2 and [a["type"] for a in calls[0].actions] == ["place", "chat"]
