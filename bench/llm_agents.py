"""LLM agents benchmark (issue 23 item 6): concurrent human-agent colour matches whose listener is an
LLM agent (``kind = "openai"``) against an endpoint with a fixed 1 s latency, beside the torch
model worker in the same run.

    .venv/bin/python bench/llm_agents.py --plot docs/bench_llm_agents.png   # 64 and 256 matches; max_concurrency 8, 32, 128; torch
    .venv/bin/python bench/llm_agents.py --matches 2 --max-concurrency 2 --duration 3 --warmup 1   # the smoke size

The endpoint is the scripted stand-in (``tests/support/openai_standin.py``, its own process,
``--latency-s``, default 1.0): every chat completion answers a valid decision after that latency;
its ``GET /_stats`` says how many requests were in flight at once (the concurrency the endpoint
saw). The LLM listener is the colour game's own adapter (``games/colors/llm.py``, the game's default
prompt), declared in a models file of this script's own (``GT_MODELS_FILE``) with
``max_concurrency`` M, no ``reply_pacing`` (pacing off), no streaming, and a ``timeout_s`` long
enough (120 s) that every turn is the model's. It is served by a real ``manage.py agent_worker``
process (Celery's threads pool: 32 threads, the command's default for an LLM agent, or
``--worker-threads``) on PostgreSQL (a database of its own, created, migrated and dropped) and
Redis, where ``max_concurrency`` is counted (agents/llm/slots.py). The baseline is the torch path:
the committed neural literal listener served by ``manage.py model_worker`` (batch_size 64, a 3 ms
window, one torch thread), as in bench/model_batching.py, whose simulated people and log
measurements this script reuses.

The simulated people are **service-level bots, not websockets** (bench/model_batching.py): threads
call ``live.services.match_apply_action`` for the speaker, what a person's websocket consumer calls,
as soon as the listener has clicked. The web server and the websocket hop are not in these figures
(bench/relay.py measures them); no web process runs, so no watchdog either.

Figures per configuration and N, over the measured window (``--duration`` s after ``--warmup``):

* latency per agent turn: the speaker's chat committed (the turn became due) to the listener's
  click committed, from the match log (``MatchEvent.t``);
* **overhead, model time excluded**: the latency less the endpoint's time as the agent recorded it
  (``AgentCall.total_ms``, summed over the turn's calls: the request to the whole answer, retries
  included, waiting for a slot not); for torch, less the worker's ``model_ms``. For the LLM path the
  overhead is split into: waiting for a slot of ``max_concurrency`` (``AgentCall.queue_ms``), the
  rest ("own"), itself split at the moment the turn's calls were recorded (``AgentCall.created_at``):
  before it (the turn in the queue ``agent.<name>``, waiting for a free worker thread, the match
  read, the view and request built, the answer parsed and checked against the rules, the record)
  and after it (the action's write and commit);
* agent turns per second (clicks committed in the window);
* the endpoint's concurrency: the most chat completions in flight at once and their time-weighted
  mean over the window (the stand-in's ``/_stats``);
* turns the fallback played, the machine's load average and CPU use.

Results: JSON (``--out``, default bench/out/llm_agents.json), a plot (``--plot``), and the tables
of docs/bench.md ("Issue 23: LLM agents"), printed at the end.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import secrets
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import model_batching as mb   # noqa: E402  (bench/: the bots, the torch worker, the log measurements)

ROOT = mb.ROOT
PY = mb.PY
LLM_AGENT = "bench_llm_listener"
LLM_QUEUE = f"agent.{LLM_AGENT}"
MODEL = "standin-1"
log = mb.log


def worker_default_threads(max_concurrency: int) -> int:
    """The threads ``agent_worker`` starts for the one LLM agent of this benchmark (its
    ``default_threads``: the endpoint's ``max_concurrency``, 32 to 256), read without Django."""
    return min(256, max(32, max_concurrency or 256))


def llm_toml(base_url: str, max_concurrency: int, timeout_s: float) -> str:
    return f"""
[[agent]]
name = "{LLM_AGENT}"
kind = "openai"
game_id = "colors_v1"
role = "listener"
base_url = "{base_url}"
model = "{MODEL}"
api_key_env = ""
timeout_s = {timeout_s}
fallback = "colors_literal_listener"
version = "bench"
temperature = 0
max_concurrency = {max_concurrency}
"""


def models_file(workdir: Path, tag: str, base_url: str, max_concurrency: int, timeout_s: float) -> Path:
    """Both agents (the torch listener and the LLM listener), so that every process knows both."""
    path = workdir / f"models-{tag}.toml"
    path.write_text(mb.models_toml(64, 3.0, 1) + llm_toml(base_url, max_concurrency, timeout_s))
    return path


def use_models(path: Path) -> None:
    from agents import registry

    os.environ["GT_MODELS_FILE"] = str(path)
    registry.all_agents.cache_clear()
    registry._built.clear()


class Bots(mb.Bots):
    """bench/model_batching.py's simulated speakers, with the listener of this configuration."""

    def __init__(self, agent: str, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.agent = agent

    def _new_match(self, i: int):
        from live.models import Seat
        from live.services import SeatSpec, match_create

        self.seed += 1
        match = match_create(game_id="colors_v1", seed=self.seed, config={"rounds": self.rounds},
                             seats={"speaker": SeatSpec(Seat.Kind.HUMAN),
                                    "listener": SeatSpec(Seat.Kind.AGENT, agent_name=self.agent)})
        with self.lock:
            self.all_matches.append(match.id)
        return match


class AgentWorker:
    """A ``manage.py agent_worker`` process serving the LLM listener (Celery's threads pool)."""

    def __init__(self, env: dict, models: Path, workdir: Path, tag: str, threads: int | None) -> None:
        self.log = open(workdir / f"agent-worker-{tag}.log", "w")
        argv = [PY, "manage.py", "agent_worker", "--agents", LLM_AGENT, "--no-control", "--no-supervise",
                "--loglevel", "warning"]
        if threads:
            argv += ["--concurrency", str(threads)]
        self.proc = subprocess.Popen(argv, cwd=ROOT, env={**env, "GT_MODELS_FILE": str(models), "PYTHONUNBUFFERED": "1"},
                                     stdout=self.log, stderr=subprocess.STDOUT)

    def wait_ready(self, timeout: float = 120) -> float:
        """Seconds until its heartbeat is on the agent's queue (agents/liveness.py)."""
        from agents.liveness import dead_queues

        started = time.monotonic()
        while time.monotonic() - started < timeout:
            if dead_queues([LLM_QUEUE]) == []:
                return time.monotonic() - started
            if self.proc.poll() is not None:
                raise SystemExit(f"the agent worker exited with {self.proc.returncode}; see {self.log.name}")
            time.sleep(0.2)
        raise SystemExit("the agent worker did not start")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def purge(queue: str) -> None:
    from groundtalk_web.celery import app

    with app.connection_for_write() as conn:
        conn.default_channel.queue_purge(queue)


def end_matches(ids: list) -> None:
    """The run's matches are aborted, so that the turns still queued for them are stale (done at once)."""
    from live.models import Match

    for match_id in sorted(ids, key=str):   # one row a statement: never a lock held while a worker's batch waits
        Match.objects.filter(id=match_id, status=Match.Status.ACTIVE).update(status=Match.Status.ABORTED)


def wait_idle(standin, limit_s: float) -> None:
    """Until the endpoint has had no request in flight for a second (at most ``limit_s``)."""
    end, quiet_since = time.monotonic() + limit_s, None
    while time.monotonic() < end:
        if standin.stats()["in_flight"] == 0:
            quiet_since = quiet_since or time.monotonic()
            if time.monotonic() - quiet_since >= 1.0:
                return
        else:
            quiet_since = None
        time.sleep(0.2)


def llm_turns(match_ids: list, by_turn: dict) -> dict:
    """Per turn of the window ((match, seq) -> its log latency): the endpoint's time, the slot wait,
    when the record was written (ms), the outcome."""
    from agents.models import AgentCall

    rows = (AgentCall.objects.filter(match_id__in=match_ids, agent=LLM_AGENT)
            .values_list("match_id", "seq", "total_ms", "queue_ms", "created_at", "outcome", "attempt"))
    turns: dict = defaultdict(lambda: {"endpoint_ms": 0.0, "slot_ms": 0.0, "recorded_ms": 0.0, "outcome": "",
                                       "calls": 0})
    for mid, seq, total, queue, created, outcome, attempt in rows:
        key = (str(mid), seq)
        if key not in by_turn:
            continue
        t = turns[key]
        t["endpoint_ms"] += total or 0.0
        t["slot_ms"] += queue or 0.0
        t["recorded_ms"] = max(t["recorded_ms"], created.timestamp() * 1000)
        t["outcome"] = outcome
        t["calls"] += 1
    return turns


def click_times(match_ids: list, t0_ms: int, t1_ms: int) -> dict:
    """(match, due seq) -> when the listener's click committed (ms), for clicks in the window."""
    from live.models import MatchEvent

    rows = MatchEvent.objects.filter(match_id__in=match_ids, type="color_clicked", actor="listener",
                                     t__gte=t0_ms, t__lte=t1_ms).values_list("match_id", "seq", "t")
    return {(str(mid), seq - 1): t for mid, seq, t in rows}


def fallbacks(match_ids: list, t0_ms: int, t1_ms: int) -> int:
    from live.models import MatchEvent

    return MatchEvent.objects.filter(match_id__in=match_ids, type="agent_timed_out", t__gte=t0_ms,
                                     t__lte=t1_ms).count()


def run_n(args, path: str, label: str, n: int, agent: str, seed: int, standin, finish) -> tuple:
    """One N of one configuration: the bots for warmup + duration s; the window's bounds and figures."""
    from tqdm import tqdm

    bots = Bots(agent, n, args.rounds, args.bot_threads, args.poll_ms, seed=seed)
    bots.start()
    bar = tqdm(total=round(args.warmup + args.duration, 1), desc=f"{label:<22} N={n:>3}", unit="s",
               bar_format="{l_bar}{bar}| {n:.0f}/{total:.0f} s {postfix}", leave=True)
    started, shown = time.monotonic(), [0.0]

    def progress(b) -> None:   # at most twice a second
        elapsed = min(time.monotonic() - started, bar.total)
        if elapsed - shown[0] >= 0.5 or elapsed >= bar.total:
            shown[0] = elapsed
            bar.n = elapsed
            extra = ""
            if standin is not None and path == "llm":
                extra = f", endpoint in flight {standin.stats()['in_flight']}"
            bar.set_postfix_str(f"chats {b.chats}{extra}", refresh=False)
            bar.refresh()

    bots.run(args.warmup, progress)
    if standin is not None:
        standin.stats(reset=True)
    t0_ms, cpu0, load0 = int(time.time() * 1000), psutil.cpu_times(), os.getloadavg()
    bots.run(args.duration, progress)
    t1_ms, cpu1 = int(time.time() * 1000), psutil.cpu_times()
    endpoint = standin.stats() if standin is not None else None
    load1 = os.getloadavg()
    bar.close()
    bots.stop()
    finish(bots)
    busy = sum((getattr(cpu1, k) - getattr(cpu0, k)) for k in ("user", "system", "nice"))
    window_s = (t1_ms - t0_ms) / 1000
    common = {"matches": n, "window_s": round(window_s, 2), "bot_errors": len(bots.errors),
              "bot_error_examples": bots.errors[:3],
              "machine_cpu_pct": round(100 * busy / window_s / (psutil.cpu_count() or 1), 1) if window_s else 0,
              "load_avg_1m": [round(load0[0], 2), round(load1[0], 2)]}
    return bots, t0_ms, t1_ms, window_s, endpoint, common


def prime(args, timeout: float = 60) -> float:
    """One match until the LLM listener has clicked once: the worker builds the agent (and its
    client's first connection) on its first turn, which the measured windows should not include.
    Seconds it took."""
    bots = Bots(LLM_AGENT, 1, args.rounds, 1, args.poll_ms, seed=1)
    started = time.monotonic()
    bots.start()
    while bots.chats < 2 and time.monotonic() - started < timeout:   # the second chat: after the click
        bots.poll_once()
        time.sleep(0.05)
    took = time.monotonic() - started
    bots.stop()
    end_matches(list(bots.all_matches))
    if bots.chats < 2:
        raise SystemExit(f"the LLM listener did not play its first turn within {timeout:g} s")
    return took


def run_llm(args, max_concurrency: int, workdir: Path, env: dict, standin, results: list) -> None:
    from django.db import connection

    from agents.llm import slots

    tag = f"llm-m{max_concurrency}"
    models = models_file(workdir, tag, standin.base_url, max_concurrency, args.timeout_s)
    use_models(models)
    purge(LLM_QUEUE)
    slots._redis()[0].delete(slots.key_for(standin.base_url, MODEL))
    worker = AgentWorker(env, models, workdir, tag, args.worker_threads)
    try:
        ready_s = worker.wait_ready()
        first_s = prime(args)
        log(f"agent_worker, max_concurrency {max_concurrency}: ready in {ready_s:.1f} s; its first turn "
            f"(the agent built, the first connection) took {first_s:.1f} s")
        for n in args.matches:
            def finish(bots) -> None:   # the queued turns of this N are not left to the next one
                end_matches(list(bots.all_matches))
                purge(LLM_QUEUE)
                wait_idle(standin, 15)

            bots, t0_ms, t1_ms, window_s, endpoint, common = run_n(
                args, "llm", f"LLM max_concurrency {max_concurrency}", n, LLM_AGENT, 5000 * n + max_concurrency,
                standin, finish)
            ids = list(bots.all_matches)
            m = mb.measure(ids, t0_ms, t1_ms)
            clicks = click_times(ids, t0_ms, t1_ms)
            turns = llm_turns(ids, m["by_turn"])
            overhead, own, slot, after, before, endpoint_ms, lat = [], [], [], [], [], [], []
            for key, latency in m["by_turn"].items():
                t = turns.get(key)
                if t is None or not t["calls"]:
                    continue   # a turn the fallback played without a call (none expected)
                lat.append(latency)
                endpoint_ms.append(t["endpoint_ms"])
                overhead.append(latency - t["endpoint_ms"])
                slot.append(t["slot_ms"])
                own.append(latency - t["endpoint_ms"] - t["slot_ms"])
                if key in clicks:
                    after.append(clicks[key] - t["recorded_ms"])
                    before.append(latency - t["endpoint_ms"] - t["slot_ms"] - after[-1])
            outcomes = defaultdict(int)
            for t in turns.values():
                outcomes[t["outcome"]] += 1
            result = {"path": "llm", "max_concurrency": max_concurrency,
                      "worker_threads": args.worker_threads or worker_default_threads(max_concurrency), **common,
                      "turns": m["clicks"], "turns_per_s": round(m["clicks"] / window_s, 2) if window_s else 0.0,
                      "latency_ms": mb.pct(m["latency"]), "turns_with_calls": len(lat),
                      "endpoint_ms": mb.pct(endpoint_ms), "overhead_ms": mb.pct(overhead),
                      "slot_wait_ms": mb.pct(slot), "own_overhead_ms": mb.pct(own),
                      "record_to_commit_ms": mb.pct(after), "before_record_ms": mb.pct(before), "outcomes": dict(outcomes),
                      "fallbacks": fallbacks(ids, t0_ms, t1_ms),
                      "endpoint": endpoint, "endpoint_requests_per_s":
                          round(endpoint["chat_completions"] / endpoint["since_s"], 2) if endpoint["since_s"] else 0.0,
                      "ready_s": round(ready_s, 2)}
            results.append(result)
            log(f"  LLM max_concurrency {max_concurrency}, N={n}: {result['turns_per_s']} turns/s, latency p50 "
                f"{result['latency_ms'].get('p50')} ms, overhead p50 {result['overhead_ms'].get('p50')} p99 "
                f"{result['overhead_ms'].get('p99')} ms (slot wait p50 {result['slot_wait_ms'].get('p50')}, own p50 "
                f"{result['own_overhead_ms'].get('p50')} p99 {result['own_overhead_ms'].get('p99')}), endpoint "
                f"p50 {result['endpoint_ms'].get('p50')} ms, in flight max {endpoint['max_in_flight']} mean "
                f"{endpoint['mean_in_flight']}, fallbacks {result['fallbacks']}, bot errors {len(bots.errors)}, "
                f"load {common['load_avg_1m']}")
            connection.close()
    finally:
        worker.stop()


def run_torch(args, workdir: Path, env: dict, standin_url: str, results: list) -> None:
    from django.db import connection

    use_models(models_file(workdir, "torch", standin_url, 8, args.timeout_s))
    purge(f"model.{mb.FAMILY_KEY}")
    worker = mb.Worker(env, 64, 3.0, workdir, 1)   # its own models file: the torch listener alone
    try:
        warmup_s = worker.wait_ready()
        log(f"model_worker (torch, batch_size 64, wait 3 ms): ready (warm-up {warmup_s:.2f} s)")
        for n in args.matches:
            def finish(bots) -> None:
                time.sleep(min(2.0, 0.2 + n * 0.01))
                end_matches(list(bots.all_matches))
                purge(f"model.{mb.FAMILY_KEY}")

            bots, t0_ms, t1_ms, window_s, _, common = run_n(args, "torch", "torch model_worker", n, mb.AGENT,
                                                            7000 * n, None, finish)
            ids = list(bots.all_matches)
            m = mb.measure(ids, t0_ms, t1_ms)
            lines = [line for line in mb.read_lines(worker.timings) if line.get("event") == "turn"
                     and line.get("result") == "acted" and (str(line.get("match")), line.get("seq")) in m["by_turn"]]
            overhead = [m["by_turn"][(str(line["match"]), line["seq"])] - line["model_ms"] for line in lines
                        if "model_ms" in line]
            result = {"path": "torch", "max_concurrency": None, **common, "turns": m["clicks"],
                      "turns_per_s": round(m["clicks"] / window_s, 2) if window_s else 0.0,
                      "latency_ms": mb.pct(m["latency"]), "model_ms": mb.pct(line["model_ms"] for line in lines
                                                                             if "model_ms" in line),
                      "overhead_ms": mb.pct(overhead),
                      "worker_overhead_ms": mb.pct(line["overhead_ms"] for line in lines if "overhead_ms" in line),
                      "batch_size_seen": mb.pct(line["batch_size"] for line in lines),
                      "fallbacks": fallbacks(ids, t0_ms, t1_ms), "warmup_s": warmup_s}
            results.append(result)
            log(f"  torch, N={n}: {result['turns_per_s']} turns/s, latency p50 {result['latency_ms'].get('p50')} "
                f"ms, overhead p50 {result['overhead_ms'].get('p50')} p99 {result['overhead_ms'].get('p99')} ms, "
                f"model p50 {result['model_ms'].get('p50')} ms, batch p50 {result['batch_size_seen'].get('p50')}, "
                f"fallbacks {result['fallbacks']}, load {common['load_avg_1m']}")
            connection.close()
    finally:
        worker.stop()


def plot(results: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    configs = [("torch", None)] + sorted({("llm", r["max_concurrency"]) for r in results if r["path"] == "llm"},
                                         key=lambda c: c[1])
    ns = sorted({r["matches"] for r in results})
    fig, axes = plt.subplots(1, 3, figsize=(15, 5.4))
    width = 0.8 / max(1, len(configs))
    for i, (path_, mc) in enumerate(configs):
        rows = {r["matches"]: r for r in results if r["path"] == path_ and r["max_concurrency"] == mc}
        if not rows:
            continue
        label = "torch model_worker (neural listener)" if path_ == "torch" else f"LLM, max_concurrency {mc}"
        color = f"C{i}"
        xs = np.arange(len(ns)) + (i - (len(configs) - 1) / 2) * width
        get = lambda key, q: [rows[n][key].get(q, np.nan) if n in rows else np.nan for n in ns]   # noqa: E731
        axes[0].bar(xs, [rows[n]["turns_per_s"] if n in rows else np.nan for n in ns], width, label=label, color=color)
        own = "overhead_ms" if path_ == "torch" else "own_overhead_ms"
        p50, p99 = get(own, "p50"), get(own, "p99")
        axes[1].bar(xs, p50, width, label=f"{label} p50", color=color)
        axes[1].scatter(xs, p99, marker="_", s=200, color="black", zorder=3)
        if path_ == "llm":
            axes[2].bar(xs, [rows[n]["endpoint"]["max_in_flight"] if n in rows else np.nan for n in ns], width,
                        label=f"{label}: max", color=color)
            axes[2].scatter(xs, [rows[n]["endpoint"]["mean_in_flight"] if n in rows else np.nan for n in ns],
                            marker="o", color="black", zorder=3, s=18)
    for ax in axes:
        ax.set_xticks(np.arange(len(ns)), [f"{n} matches" for n in ns])
        ax.grid(alpha=0.3, axis="y")
        ax.legend(fontsize=7, loc="lower center", bbox_to_anchor=(0.5, 1.02), ncol=2, frameon=False)
    axes[0].set_ylabel("agent turns per second")
    axes[0].set_title("Throughput (endpoint latency 1 s)", pad=62)
    axes[1].set_yscale("log")
    axes[1].set_ylabel("ms per turn (bar p50, dash p99)")
    axes[1].set_title("Overhead, model time and slot wait excluded", pad=62)
    axes[2].set_ylabel("chat completions in flight (bar max, dot mean)")
    axes[2].set_title("Concurrency at the endpoint", pad=62)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def _ms(d: dict, key: str) -> str:
    value = d.get(key)
    if value is None:
        return "-"
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.1f}"


def markdown(results: list[dict]) -> str:
    rows = ["| path | max_concurrency | matches | turns/s | latency p50 / p99 | endpoint p50 | overhead p50 / p99 "
            "| slot wait p50 / p99 | own overhead p50 / p99 | of which before the record p50 / p99 | write p50 / p99 "
            "| endpoint in flight max / mean "
            "| fallbacks | machine CPU | load 1 min |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    order = sorted(results, key=lambda r: (r["path"] != "torch", r["max_concurrency"] or 0, r["matches"]))
    for r in order:
        lat, ov = r["latency_ms"], r["overhead_ms"]
        if r["path"] == "torch":
            rows.append(f"| torch model_worker | - | {r['matches']} | {r['turns_per_s']} | {_ms(lat, 'p50')} / "
                        f"{_ms(lat, 'p99')} | {_ms(r['model_ms'], 'p50')} (model) | {_ms(ov, 'p50')} / {_ms(ov, 'p99')} "
                        f"| - | {_ms(ov, 'p50')} / {_ms(ov, 'p99')} | - | - | - | {r['fallbacks']} "
                        f"| {r['machine_cpu_pct']} % | {r['load_avg_1m'][0]} → {r['load_avg_1m'][1]} |")
            continue
        e, sw, own = r["endpoint"], r["slot_wait_ms"], r["own_overhead_ms"]
        rows.append(f"| LLM agent_worker ({r['worker_threads']} threads) | {r['max_concurrency']} | {r['matches']} "
                    f"| {r['turns_per_s']} | {_ms(lat, 'p50')} / {_ms(lat, 'p99')} | {_ms(r['endpoint_ms'], 'p50')} "
                    f"| {_ms(ov, 'p50')} / {_ms(ov, 'p99')} | {_ms(sw, 'p50')} / {_ms(sw, 'p99')} "
                    f"| {_ms(own, 'p50')} / {_ms(own, 'p99')} | {_ms(r['before_record_ms'], 'p50')} / "
                    f"{_ms(r['before_record_ms'], 'p99')} | {_ms(r['record_to_commit_ms'], 'p50')} / "
                    f"{_ms(r['record_to_commit_ms'], 'p99')} "
                    f"| {e['max_in_flight']} / {e['mean_in_flight']:.1f} | {r['fallbacks']} | {r['machine_cpu_pct']} % "
                    f"| {r['load_avg_1m'][0]} → {r['load_avg_1m'][1]} |")
    return "\n".join(rows)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--matches", default="64,256", type=lambda s: [int(x) for x in s.split(",")])
    p.add_argument("--max-concurrency", default="8,32,128", type=lambda s: [int(x) for x in s.split(",")],
                   help="the LLM agent's max_concurrency, one configuration each")
    p.add_argument("--no-torch", action="store_true", help="skip the torch baseline")
    p.add_argument("--latency-s", type=float, default=1.0, help="the endpoint's latency before each answer")
    p.add_argument("--timeout-s", type=float, default=120.0, help="the LLM agent's timeout_s")
    p.add_argument("--worker-threads", type=int, default=None,
                   help="agent_worker --concurrency (default: the command's own, 32 for an LLM agent)")
    p.add_argument("--duration", type=float, default=30.0, help="measured seconds per (configuration, N)")
    p.add_argument("--warmup", type=float, default=6.0, help="unmeasured seconds before each window")
    p.add_argument("--rounds", type=int, default=30, help="rounds per match (a finished one is replaced)")
    p.add_argument("--bot-threads", type=int, default=8)
    p.add_argument("--poll-ms", type=float, default=10.0)
    p.add_argument("--db-name", default="groundtalk_bench_llm")
    p.add_argument("--redis-url", default="redis://127.0.0.1:6379/4")
    p.add_argument("--keep-db", action="store_true")
    p.add_argument("--fresh-db", action="store_true", help="migrate the database afresh instead of copying the "
                                                           "migrated template")
    p.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "llm_agents.json")
    p.add_argument("--plot", type=Path, default=None, help="a PNG of throughput, overhead and concurrency")
    args = p.parse_args()

    from tests.support.openai_standin import OpenAIStandin

    env = {**os.environ, "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{args.db_name}",
           "REDIS_URL": args.redis_url, "SECRET_KEY": os.environ.get("SECRET_KEY") or secrets.token_urlsafe(50),
           "GT_PSEUDONYM_KEY": secrets.token_urlsafe(50), "DEBUG": "0", "LOG_LEVEL": "WARNING",
           "DJANGO_SETTINGS_MODULE": "groundtalk_web.settings"}
    for name in ("GT_MODELS_FILE", "GT_AGENT_TIMEOUT_S", "GT_AGENT_MODE"):
        env.pop(name, None)
    started = time.monotonic()
    log(f"database {args.db_name}: {'reset and migrate' if args.fresh_db else 'a copy of the migrated template'}; "
        f"load average {os.getloadavg()[0]:.2f}")
    if args.fresh_db:
        mb.reset_database(env, args.db_name)
    else:
        mb.migrated_database(env, args.db_name)
    subprocess.run(["redis-cli", "-u", args.redis_url, "flushdb"], check=False, capture_output=True)
    os.environ.update(env)
    for name in ("GT_MODELS_FILE", "GT_AGENT_TIMEOUT_S", "GT_AGENT_MODE"):
        os.environ.pop(name, None)
    workdir = Path(tempfile.mkdtemp(prefix="gt-bench-llm-"))
    results: list[dict] = []
    with OpenAIStandin(model=MODEL, latency_s=args.latency_s) as standin:
        log(f"stand-in endpoint {standin.base_url}, latency {args.latency_s:g} s")
        use_models(models_file(workdir, "setup", standin.base_url, args.max_concurrency[0], args.timeout_s))
        import django

        django.setup()
        try:
            if not args.no_torch:
                run_torch(args, workdir, env, standin.base_url, results)
            for mc in args.max_concurrency:
                run_llm(args, mc, workdir, env, standin, results)
        finally:
            from django.db import connections

            connections.close_all()
            if not args.keep_db:
                mb.drop_database(args.db_name)
    out = {"results": results, "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
           "machine": {"cpus": psutil.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
                       "load_avg_end": [round(x, 2) for x in os.getloadavg()]},
           "took_s": round(time.monotonic() - started, 1), "workdir": str(workdir)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2))
    log(f"wrote {args.out} (the whole run took {out['took_s']:.0f} s)")
    if args.plot:
        plot(results, args.plot)
        log(f"wrote {args.plot}")
    print(markdown(results))


if __name__ == "__main__":
    main()
