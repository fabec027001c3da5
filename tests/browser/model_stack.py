"""The stack a person plays a model agent on in the browser tests, one per test run for every
neural browser test (``STACK_AGENTS``): a models file naming their agents (the web server and the
model process read it, and so does this process during each test, ``GT_MODELS_FILE``), ONE real
``manage.py model_workers`` process serving all their families (agents/serving/group.py: a thread
each, each family's timings log ``<timings>.<family_key>``), warmed up before the first test starts
(each queue heartbeats only then), and one uvicorn server on the test database. Started by the
first test that asks for it (the session fixture ``model_stack``, tests/browser/conftest.py) and
stopped after the last of the session's stack tests (or at the session's end); its files run on
one xdist worker (``SAME_WORKER`` in tests/conftest.py). It serves the families of the stack's
tests this session runs: a file run alone starts only its own. Also what those tests share: the watched page (:func:`watched_page`),
entering a batch and being paired (:func:`enter_paired`). The small neural ALICE two of them play
is the session's (tests/tiny_models.py)."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.conf import settings

from agents import liveness, registry
from tests.conftest import ROOT, SAME_WORKER, child_env, running_server, var_log
from tests.support.factories import lab_url
from tests.support.waiting import stop_process, wait_until

SHOTS = ROOT / "var" / "screenshots"
GROUP = "neural-stack"     # SAME_WORKER's name for the stack's test files


@dataclass(frozen=True)
class StackAgent:
    """One agent of the stack: the test file that plays it and its ``[[agent]]`` table's values;
    ``checkpoint`` None: the session's small neural ALICE."""
    file: str
    name: str
    game_id: str
    role: str
    family: str
    checkpoint: Path | None
    fallback: str
    version: str


# family_key: the agent. Each test asserts its checkpoint (sha256), version and family on the seat.
STACK_AGENTS = {
    "colors_neural_l0_browser": StackAgent(
        "tests/browser/colors/test_neural_agent_browser.py", "colors_neural_listener", "colors_v1", "listener",
        "games.colors.neural.agents:NeuralLiteralListener", ROOT / "models" / "colors" / "colors_neural_listener.pt",
        "colors_literal_listener", "l0-browser"),
    "codraw_neural_drawer_browser": StackAgent(
        "tests/browser/codraw/test_codraw_neural_drawer_browser.py", "codraw_neural_drawer", "codraw_v1", "drawer",
        "games.codraw.neural.agents:NeuralDrawer", ROOT / "models" / "codraw" / "codraw_neural_drawer.pt",
        "codraw_rule_drawer", "drawer-browser"),
    "codraw_neural_teller_browser": StackAgent(
        "tests/browser/codraw/test_codraw_neural_teller_browser.py", "codraw_neural_teller", "codraw_v1", "teller",
        "games.codraw.neural.agents:NeuralTeller", ROOT / "models" / "codraw" / "codraw_neural_teller.pt",
        "codraw_rule_teller", "teller-browser"),
    "guesswhich_neural_alice_browser": StackAgent(
        "tests/browser/guesswhich/test_guesswhich_neural_alice_browser.py", "guesswhich_neural_alice",
        "guesswhich_v1", "answerer", "games.guesswhich.neural.agents:NeuralAliceAgent", None, "alice_exact",
        "alice-browser"),
    "guesswhich_neural_qbot_browser": StackAgent(
        "tests/browser/guesswhich/test_guesswhich_neural_qbot_browser.py", "guesswhich_neural_qbot",
        "guesswhich_v1", "questioner", "games.guesswhich.neural.qbot:NeuralQBot", None, "qbot", "qbot-browser"),
}
assert {a.file for a in STACK_AGENTS.values()} == set(SAME_WORKER[GROUP]), "SAME_WORKER must list the stack's files"


def reset_registry() -> None:
    registry.all_agents.cache_clear()
    registry._built.clear()


def read_lines(path) -> list[dict]:
    """The worker's timing lines (JSON per line)."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def acted_turns(path, match_id, count: int, timeout: float = 30.0) -> list[dict]:
    """The worker's "acted" turn lines for a match, once there are ``count`` of them (or after
    ``timeout``: the caller's assert then shows what there is). The worker writes a turn's line
    after the turn's commit, so a test that has seen the move must still wait for its line."""
    deadline = time.monotonic() + timeout
    while True:
        acted = [line for line in read_lines(path) if line.get("event") == "turn"
                 and line.get("match") == str(match_id) and line.get("result") == "acted"]
        if len(acted) >= count or time.monotonic() > deadline:
            return acted
        time.sleep(0.1)


@dataclass
class ModelStack:
    url: str
    models_file: Path
    timings: Path            # each family's log is ``<timings>.<family_key>`` (the group command's)
    families: tuple[str, ...]
    waiting: set[str]        # the session's stack tests not run yet: at none, the stack stops
    close: Callable[[], None]
    closed: bool = False

    def done(self, nodeid: str) -> None:
        """A stack test ended: stop the processes once the session's last one has (the session's
        end stops them otherwise, e.g. when another xdist worker ran one)."""
        self.waiting.discard(nodeid)
        if not self.waiting and not self.closed:
            self.closed = True
            self.close()


def stack_items(items) -> list:
    """The items of the stack's test files among ``items`` (the session's)."""
    files = {agent.file for agent in STACK_AGENTS.values()}
    return [item for item in items if item.nodeid.split("::", 1)[0] in files]


@contextmanager
def shared_model_stack(request, folder: Path):
    """Start the stack for the families of this session's stack tests (all of them if none is
    among the session's items) in ``folder``; yield a :class:`ModelStack`; stop its processes after
    the last of those tests (:meth:`ModelStack.done`) or at the end."""
    if settings.GT_AGENT_MODE != "celery":
        pytest.skip("needs REDIS_URL and DATABASE_URL (the full stack)")
    items = stack_items(request.session.items)
    files = {item.nodeid.split("::", 1)[0] for item in items}
    families = [key for key, agent in STACK_AGENTS.items() if agent.file in files] or list(STACK_AGENTS)
    alice = None
    if any(STACK_AGENTS[key].checkpoint is None for key in families):
        alice = request.getfixturevalue("small_alice")[1]
    path = folder / "models.toml"
    path.write_text("".join(textwrap.dedent(agent_entry(
        name=a.name, game_id=a.game_id, role=a.role, family=a.family, family_key=key,
        checkpoint=a.checkpoint or alice, fallback=a.fallback, version=a.version))
        for key, a in ((key, STACK_AGENTS[key]) for key in families)))
    from groundtalk_web.celery import app

    with app.connection_for_write() as conn:   # no turn left over from an earlier run
        for key in families:
            conn.default_channel.queue_purge(f"model.{key}")
    env = {**child_env(), "GT_MODELS_FILE": str(path)}
    timings = folder / "timings.jsonl"
    with ExitStack() as resources:
        log = var_log("test-model-stack-workers.log")
        if log is not subprocess.DEVNULL:
            resources.callback(log.close)
        command = [sys.executable, "manage.py", "model_workers", "--no-supervise", "--timings", str(timings)]
        for key in families:
            command += ["--family", key]
        worker = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        resources.callback(stop_process, worker)
        # every family warmed up (its own "ready" line: a heartbeat may still be the last run's
        # worker, killed before it could take its beat back) and beats
        wait_until(lambda: all(any(line.get("event") == "ready" for line in read_lines(Path(f"{timings}.{key}")))
                               for key in families) and not liveness.dead_queues([f"model.{key}" for key in families]),
                   180, f"every family ({', '.join(families)}) warmed up and beating "
                        "(var/test-model-stack-workers*.log)", worker)
        url = resources.enter_context(running_server(env, "test-model-stack-server.log"))
        yield ModelStack(url, path, timings, tuple(families), {item.nodeid for item in items}, resources.close)


@contextmanager
def serving(stack: ModelStack, request, family_key: str):
    """For one test (``request``): this process reads the stack's models file (``GT_MODELS_FILE``,
    undone after the test); yield (base url, the timings path of ``family_key``)."""
    assert not stack.closed, "the model stack was stopped after the session's last stack test"
    assert family_key in stack.families, f"{family_key} is not served by this session's stack ({stack.families})"
    request.getfixturevalue("monkeypatch").setenv("GT_MODELS_FILE", str(stack.models_file))
    reset_registry()
    try:
        yield stack.url, Path(f"{stack.timings}.{family_key}")
    finally:
        reset_registry()
        stack.done(request.node.nodeid)


def agent_entry(*, name: str, game_id: str, role: str, family: str, family_key: str, checkpoint, fallback: str,
                version: str) -> str:
    """One ``[[agent]]`` table of a models file for a browser test: CPU, batches of up to 8 turns
    gathered for 5 ms, a 60 s turn timeout (a loaded test machine), the fallback named."""
    return f"""
    [[agent]]
    name = "{name}"
    game_id = "{game_id}"
    role = "{role}"
    family = "{family}"
    family_key = "{family_key}"
    checkpoint = "{checkpoint}"
    device = "cpu"
    batch_size = 8
    wait_ms = 5
    timeout_s = 60
    fallback = "{fallback}"
    version = "{version}"
    """


def watched_page(browser):
    """A 1366x768 page and the list its page errors and console errors are written to:
    ``(context, page, errors)``."""
    ctx = browser.new_context(viewport={"width": 1366, "height": 768})
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: msg.type == "error" and errors.append(f"console: {msg.text}"))
    SHOTS.mkdir(parents=True, exist_ok=True)
    return ctx, page, errors


def enter_paired(page, base: str, batch, person: str):
    """Enter ``batch`` through its signed lab link for ``person``, consent, say ready and be paired
    with the model at once; the match."""
    from live.models import Match

    page.goto(base + lab_url(batch, person))
    page.click("#agree")
    page.click("#ready")
    page.wait_for_url("**/m/**", timeout=30000)
    return Match.objects.get(batch=batch)
