"""The stack a person plays a model agent on in the browser tests: a models file of the test's own
naming the agent (this process, the web server and the worker all read it, ``GT_MODELS_FILE``), a
real ``manage.py model_worker`` process for its family (with its timings log), warmed up before the
test starts (its queue heartbeats only then), and uvicorn on the test database. Also what those
tests share: the watched page (:func:`watched_page`), entering a batch and being paired
(:func:`enter_paired`). The small neural ALICE they play is the session's (tests/tiny_models.py)."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from contextlib import contextmanager

import psutil
import pytest
from django.conf import settings

from agents import liveness, registry
from tests.conftest import ROOT, child_env, running_server
from tests.support.factories import lab_url

SHOTS = ROOT / "var" / "screenshots"


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


@contextmanager
def model_worker_stack(tmp_path, monkeypatch, *, entry: str, family: str, label: str):
    """Yield (base url, timings path) with the agent of ``entry`` (one ``[[agent]]`` table of the
    family ``family``) served by its own model worker; ``label`` names the logs in var/."""
    if settings.GT_AGENT_MODE != "celery":
        pytest.skip("needs REDIS_URL and DATABASE_URL (the full stack)")
    path = tmp_path / "models.toml"
    path.write_text(textwrap.dedent(entry))
    monkeypatch.setenv("GT_MODELS_FILE", str(path))
    reset_registry()
    from groundtalk_web.celery import app

    with app.connection_for_write() as conn:   # no turn left over from an earlier run
        conn.default_channel.queue_purge(f"model.{family}")
    env = {**child_env(), "GT_MODELS_FILE": str(path)}
    timings = tmp_path / "timings.jsonl"
    log = open(ROOT / "var" / f"test-{label}-worker.log", "w") if (ROOT / "var").is_dir() else subprocess.DEVNULL
    worker = subprocess.Popen([sys.executable, "manage.py", "model_worker", "--family", family, "--no-supervise",
                               "--timings", str(timings)], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 180
        # this worker warmed up (its own "ready" line: a heartbeat may still be the last run's worker,
        # killed before it could take its beat back) and beats
        while not any(line.get("event") == "ready" for line in read_lines(timings)) \
                or liveness.dead_queues([f"model.{family}"]):
            assert worker.poll() is None, f"the model worker exited with {worker.returncode}"
            assert time.monotonic() < deadline, "the model worker did not warm up in 180 s"
            time.sleep(0.2)
        with running_server(env, f"test-{label}-server.log") as url:
            yield url, timings
    finally:
        worker.terminate()
        try:
            worker.wait(20)
        except subprocess.TimeoutExpired:
            for child in psutil.Process(worker.pid).children(recursive=True):
                child.kill()
            worker.kill()
        reset_registry()


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
