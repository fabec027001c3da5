"""``./run.sh`` itself serves the neural agents of the shipped models file to a person in a real
browser (issue 25, item 1), once per mode:

* embedded (no DATABASE_URL, no REDIS_URL: a fresh SQLite of the test's own, GT_DEMO=1): run.sh
  starts the model server (``manage.py model_server`` on a free GT_MODEL_SERVER_PORT) beside the web
  process, which never imports torch and posts the torch agents' turns to it;
* the full stack (the test's PostgreSQL database and Redis database): run.sh starts the agent
  worker and the CPU families' model workers (``manage.py model_workers``).

For each game family whose neural demo batch exists (``colors-speak-to-neural``: the person speaks
to the neural listener; ``codraw-tell-to-neural``: the person describes, the neural Drawer draws;
``guesswhich-ask-neural``: the person asks the neural ALICE; ``gt_demo`` makes those whose agent the
models file declares), one page enters the batch's demo link, the person makes one move and the
test stops at the agent's first answer: it must come from the model (no fallback notice) and the
agent's seat records the model's checkpoint sha256. When the colour batch is not a demo batch (yet),
the test makes one for the shipped colour listener."""
from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import time
from contextlib import closing, contextmanager
from pathlib import Path

import httpx
import pytest
from django.conf import settings

from tests.browser.model_stack import SHOTS, watched_page
from tests.browser.sync import wait_painted
from tests.conftest import ROOT, child_env, free_port
from tests.support.waiting import wait_until

pytestmark = pytest.mark.browser

START_S = 600      # run.sh on a loaded machine: migrate a fresh database, the demo batches, torch, the models
ANSWER_S = 120     # the agent's first answer


JOINED_JS = "() => { const c = window.gtClient; return !!c && c.joined && c.lastSeq !== null; }"
ANSWERED_JS = "() => window.gtClient.pending.length === 0"   # the server took the person's action


def _type_and_send(page, text: str) -> None:
    page.wait_for_function(JOINED_JS, timeout=60000)   # the seat's socket has joined the match
    page.wait_for_selector("#chatinput:enabled", timeout=60000)
    page.fill("#chatinput", text)
    page.click("#send")
    page.wait_for_function(ANSWERED_JS, timeout=60000)


def play_colors(page) -> None:
    """The person speaks; the neural listener's click ends the round."""
    _type_and_send(page, "the bright red one")
    page.wait_for_function("() => (document.querySelector('#outcome')?.textContent || '').includes('Round 1: ')",
                           timeout=ANSWER_S * 1000)


def play_codraw(page) -> None:
    """The person (Teller) describes a piece; the neural Drawer's reply is its answer."""
    page.wait_for_selector("#turn.mine", timeout=60000)
    _type_and_send(page, "a big tree on the left, a sun in the top right corner")
    page.wait_for_selector(".msg.theirs", timeout=ANSWER_S * 1000)


def play_guesswhich(page) -> None:
    """The person asks; the neural ALICE answers."""
    page.wait_for_function(JOINED_JS, timeout=60000)
    page.wait_for_selector("#askinput:enabled", timeout=60000)
    page.fill("#askinput", "is there a red object?")
    page.click("#ask")
    page.wait_for_function(ANSWERED_JS, timeout=60000)
    page.wait_for_selector(".msg.a", timeout=ANSWER_S * 1000)


# slug -> (the agent's role, how the person plays)
FAMILIES = {
    "colors-speak-to-neural": ("listener", play_colors),
    "codraw-tell-to-neural": ("drawer", play_codraw),
    "guesswhich-ask-neural": ("answerer", play_guesswhich),
}
OWN_COLORS_BATCH = dict(slug="colors-speak-to-neural", title="Color game: you speak, the neural listener listens",
                        game_id="colors_v1", pairing="human-agent", human_roles=["speaker"],
                        agents={"listener": "colors_neural_listener"}, config={"rounds": 10}, entry_kinds=["demo"])


def base_env(port: int) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in {"GT_MODELS_FILE", "GT_AGENT_MODE", "GT_DEMO_ADMIN"}}
    env.update({"PORT": str(port), "HOST": "127.0.0.1", "GT_DEMO": "1", "PYTHONUNBUFFERED": "1"})
    return env


def run_log(mode: str, tmp_path: Path) -> Path:
    """run.sh's output (the web server's log with it): var/test-run-sh-<mode>.log, kept after the run."""
    return ROOT / "var" / f"test-run-sh-{mode}.log" if (ROOT / "var").is_dir() else tmp_path / "run-sh.log"


@contextmanager
def run_sh(env: dict, log: Path):
    """``./run.sh`` in a session of its own, until its server listens; stopped with SIGTERM (run.sh
    stops what it started), then anything of its session left is killed."""
    out = open(log, "w")
    proc = subprocess.Popen(["./run.sh"], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                            start_new_session=True)
    url = f"http://127.0.0.1:{env['PORT']}"
    try:
        deadline = time.monotonic() + START_S
        while True:
            assert proc.poll() is None, f"run.sh exited with {proc.returncode}:\n{log.read_text()[-4000:]}"
            assert time.monotonic() < deadline, f"run.sh did not serve in {START_S} s:\n{log.read_text()[-4000:]}"
            try:
                if httpx.get(url + "/", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(1)
        yield proc, url
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(90)
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(proc.pid, signal.SIGKILL)   # the session run.sh led: nothing of it outlives the test
        except ProcessLookupError:
            pass
        proc.wait(10)
        out.close()



def play_each(browser, url: str, slugs: list[str], label: str) -> None:
    """One page per family: enter the demo batch, make one move, wait for the agent's answer."""
    for slug in slugs:
        ctx, page, errors = watched_page(browser)
        page.goto(f"{url}/b/{slug}/demo/")
        page.click("#agree")
        page.click("#ready")
        page.wait_for_url("**/m/**", timeout=60000)
        FAMILIES[slug][1](page)
        wait_painted(page)
        page.screenshot(path=str(SHOTS / f"run-sh-{label}-{slug}.png"))
        ctx.close()
        assert not errors, (slug, errors)


# --------------------------------------------------------------------------------------- embedded
def sqlite_rows(path: Path, sql: str, *args) -> list[tuple]:
    with closing(sqlite3.connect(path)) as db:
        return db.execute(sql, args).fetchall()


def test_run_sh_embedded_serves_each_neural_family_from_its_model_server(browser, tmp_path):
    sqlite_path = tmp_path / "fresh.sqlite3"
    model_port = free_port()
    env = {k: v for k, v in base_env(free_port()).items() if k not in {"DATABASE_URL", "REDIS_URL"}}
    env.update({"SQLITE_PATH": str(sqlite_path), "GT_MODEL_SERVER_PORT": str(model_port)})
    with run_sh(env, run_log("embedded", tmp_path)) as (proc, url):
        log = run_log("embedded", tmp_path).read_text()
        assert "model server for families" in log and f"127.0.0.1:{model_port}" in log, log

        def families():
            try:
                found = httpx.get(f"http://127.0.0.1:{model_port}/health", timeout=5).json()["families"]
            except httpx.HTTPError:
                return None
            return found if all(f["state"] != "loading" for f in found.values()) else None

        health = wait_until(families, START_S, "every family of the model server loaded", every=1)
        slugs = [s for (s,) in sqlite_rows(sqlite_path, "SELECT slug FROM games_batch") if s in FAMILIES]
        if "colors-speak-to-neural" not in slugs:   # the demo batch is not there (yet): one of the test's own
            spec = json.dumps({k: v for k, v in OWN_COLORS_BATCH.items() if k != "slug"})
            make = ("import json; from live.models import Batch; Batch.objects.update_or_create("
                    f"slug={OWN_COLORS_BATCH['slug']!r}, defaults=json.loads({spec!r}))")
            subprocess.run([str(ROOT / ".venv/bin/python"), "manage.py", "shell", "-c", make], cwd=ROOT, env=env,
                           check=True, capture_output=True)
            slugs.insert(0, "colors-speak-to-neural")
        family_of = {}
        for slug in slugs:   # the batch's agent's family is ready (else its batch would show "cannot run")
            role = FAMILIES[slug][0]
            (name,) = sqlite_rows(sqlite_path, f"SELECT json_extract(agents, '$.{role}') FROM games_batch "
                                               "WHERE slug = ?", slug)[0]
            family_of[slug] = next(f for f in health.values() if name in f["agents"])
            assert family_of[slug]["state"] == "ready", (slug, family_of[slug])
        play_each(browser, url, slugs, "embedded")

        for slug in slugs:
            role = FAMILIES[slug][0]
            (match_id,) = sqlite_rows(sqlite_path, "SELECT m.id FROM games_match m JOIN games_batch b "
                                                   "ON m.batch_id = b.id WHERE b.slug = ?", slug)[0]
            events = sqlite_rows(sqlite_path, "SELECT type, actor FROM games_matchevent WHERE match_id = ? "
                                              "ORDER BY seq", match_id)
            assert ("agent_timed_out", "system") not in events, (slug, events)   # no fallback: the model answered
            assert any(actor == role for _, actor in events), (slug, events)
            record = wait_until(lambda: sqlite_rows(
                sqlite_path, "SELECT json_extract(agent_model, '$.checkpoint_sha256') FROM games_seat "
                             "WHERE match_id = ? AND role = ?", match_id, role)[0][0], 30, "the model recorded",
                                every=1)
            assert record == family_of[slug]["model"]["checkpoint_sha256"], (slug, record)


# --------------------------------------------------------------------------------------- full stack
@pytest.mark.django_db(transaction=True)
def test_run_sh_full_stack_serves_each_neural_family_from_its_model_workers(browser, tmp_path):
    if settings.GT_AGENT_MODE != "celery":
        pytest.skip("needs REDIS_URL and DATABASE_URL (the full stack)")
    from agents import liveness
    from agents.registry import all_agents
    from live.models import Batch, Match, MatchEvent, Seat

    env = {**base_env(free_port()), "DATABASE_URL": child_env()["DATABASE_URL"], "REDIS_URL": settings.REDIS_URL}
    with run_sh(env, run_log("full-stack", tmp_path)) as (proc, url):
        log = run_log("full-stack", tmp_path).read_text()
        assert "model workers for families" in log, log
        slugs = [s for s in Batch.objects.filter(slug__in=FAMILIES).values_list("slug", flat=True)]
        if "colors-speak-to-neural" not in slugs:
            Batch.objects.update_or_create(slug=OWN_COLORS_BATCH["slug"],
                                           defaults={k: v for k, v in OWN_COLORS_BATCH.items() if k != "slug"})
            slugs.insert(0, "colors-speak-to-neural")
        known = all_agents()
        queues = sorted({known[name].queue_name for b in Batch.objects.filter(slug__in=slugs)
                         for name in b.agents.values()})
        wait_until(lambda: liveness.dead_queues(queues) == [], START_S, f"{queues} served by model workers", every=1)
        play_each(browser, url, slugs, "full-stack")

        for slug in slugs:
            role = FAMILIES[slug][0]
            match = Match.objects.get(batch__slug=slug)
            events = list(MatchEvent.objects.filter(match=match).values_list("type", "actor"))
            assert ("agent_timed_out", "system") not in events, (slug, events)
            assert any(actor == role for _, actor in events), (slug, events)
            seat = wait_until(lambda: Seat.objects.filter(match=match, role=role,
                                                           agent_model__has_key="checkpoint_sha256").first(),
                              30, "the model recorded", every=1)
            assert len(seat.agent_model["checkpoint_sha256"]) == 64
