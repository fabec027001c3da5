"""Model batching benchmark (issue 13 item 6): concurrent human-agent colors matches on ONE model.

    .venv/bin/python bench/model_batching.py                       # 1, 16, 64, 256 matches; batch 64 and 1
    .venv/bin/python bench/model_batching.py --matches 2 --duration 3 --out /tmp/x.json   # the smoke size

The model is the neural literal listener from the committed checkpoint
(``models/colors/colors_neural_listener.pt``, ``games.colors.neural.agents:NeuralLiteralListener``),
declared in a models file of this script's own (``GT_MODELS_FILE``) and served by a real
``manage.py model_worker`` process (its own process, CPU torch, on PostgreSQL and Redis; the
database a copy of a migrated template kept between runs, ``--fresh-db`` migrates afresh). For each
configuration (``--batch-sizes``: 64 = batching on with ``--wait-ms``; 1 = batching off) the worker is
started afresh, waits for its warm-up, and then each N of ``--matches`` is run for ``--duration`` s.

The simulated people are **service-level bots, not websockets**: this process creates N matches
(speaker: a person's seat, listener: the model) and calls ``live.services.match_apply_action`` for
each speaker from a thread pool (``--bot-threads``), exactly what a person's websocket consumer calls
(the async fast path aside), as soon as it is the speaker's turn: a poller reads every match's
``(seq, round)`` every ``--poll-ms`` and a speaker speaks again once the listener has clicked. A
finished match (``--rounds`` rounds) is replaced by a fresh one. The web server and the websocket
hop are therefore NOT in these figures (bench/relay.py measures them).

Figures per (batch size, N), over the measured window only:

* latency per turn: from the speaker's chat committed to the listener's click committed, both read
  from the match log (``MatchEvent.t``, server ms), p50 / p99 / max;
* turns per second: listener clicks committed in the window / window;
* how much of the window the worker spent in its batches (read, model, writes, commit: the sum of
  its ``batch`` lines' ``total_ms``), beside the whole machine's CPU use: a worker well under 100 %
  is waiting for turns, and the figure is then what the load and the machine gave, not its limit;
* from the worker's timing lines (``--timings``): ``model_ms`` (the act_batch call), ``overhead_ms``
  (due to committed, less model time: queue, window, read, submit), ``batch_size``, and per turn
  the log latency less its model time ("e2e overhead").

Results: JSON (``--out``, default bench/out/model_batching.json) and a plot (``--plot``); the
tables in docs/bench.md ("Model batching") come from ``--markdown``.
"""
from __future__ import annotations

import argparse
import json
import os
import secrets
import platform
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path

import numpy as np
import psutil

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
CHECKPOINT = ROOT / "models" / "colors" / "colors_neural_listener.pt"
FAMILY_KEY = "bench_l0"
AGENT = "bench_neural_listener"
TEMPLATE_PREFIX = "groundtalk_bench_tpl_"   # migrated templates (migrated_database), shared with llm_agents.py
TEXTS = ["the light blue one", "dark green", "kind of teal", "the darker one", "bright red", "not blue",
         "pale pink", "the greyish one", "purple", "orange"]


def log(*parts) -> None:
    print(time.strftime("%H:%M:%S"), *parts, flush=True)


def models_toml(batch_size: int, wait_ms: float, threads: int = 1) -> str:
    return f"""
[[agent]]
name = "{AGENT}"
game_id = "colors_v1"
role = "listener"
family = "games.colors.neural.agents:NeuralLiteralListener"
family_key = "{FAMILY_KEY}"
checkpoint = "{CHECKPOINT}"
device = "cpu"
batch_size = {batch_size}
wait_ms = {wait_ms}
threads = {threads}
timeout_s = 60
fallback = "colors_literal_listener"
version = "bench"
"""


def reset_database(env: dict, name: str) -> None:
    import psycopg

    conn = psycopg.connect(host="127.0.0.1", user="postgres", dbname="postgres")
    conn.autocommit = True
    with conn.cursor() as cur:
        cur.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        cur.execute(f"CREATE DATABASE {name}")
    conn.close()
    subprocess.run([PY, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True)


def drop_database(name: str) -> None:
    import psycopg

    conn = psycopg.connect(host="127.0.0.1", user="postgres", dbname="postgres")
    conn.autocommit = True
    with conn.cursor() as cur:
        cur.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    conn.close()


def migrated_database(env: dict, name: str) -> None:
    """``name`` created afresh as a copy of a migrated template (``groundtalk_bench_tpl_<hash of
    the migrations>``, made once and kept, shared by every run of this script, bench/llm_agents.py
    and bench/relay.py and their smoke tests: a copy takes a second where migrating takes tens)."""
    import hashlib

    import psycopg

    digest = hashlib.sha256()
    for path in sorted(ROOT.glob("*/migrations/*.py")):
        digest.update(path.name.encode() + path.read_bytes())
    template = f"{TEMPLATE_PREFIX}{digest.hexdigest()[:10]}"
    conn = psycopg.connect(host="127.0.0.1", user="postgres", dbname="postgres")
    conn.autocommit = True
    with conn.cursor() as cur:
        cur.execute("SELECT pg_advisory_lock(hashtext(%s))", [template])   # one run makes the template
        try:
            cur.execute("SELECT 1 FROM pg_database WHERE datname = %s", [template])
            if cur.fetchone() is None:
                cur.execute("SELECT datname FROM pg_database WHERE datname LIKE %s", [TEMPLATE_PREFIX.replace("_", "\\_") + "%"])
                for (old,) in cur.fetchall():   # templates of earlier migrations
                    cur.execute(f'DROP DATABASE IF EXISTS "{old}" WITH (FORCE)')
                log(f"database {template}: create and migrate (once)")
                reset_database({**env, "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{template}"}, template)
            cur.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            cur.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
        finally:
            cur.execute("SELECT pg_advisory_unlock(hashtext(%s))", [template])
    conn.close()


def read_lines(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def pct(values) -> dict:
    a = np.asarray(list(values), dtype=float)
    if not len(a):
        return {"n": 0}
    return {"n": int(len(a)), "p50": round(float(np.percentile(a, 50)), 2),
            "p99": round(float(np.percentile(a, 99)), 2), "max": round(float(a.max()), 2),
            "mean": round(float(a.mean()), 2)}


class Worker:
    """A ``manage.py model_worker`` process for one configuration."""

    def __init__(self, env: dict, batch_size: int, wait_ms: float, workdir: Path, threads: int) -> None:
        tag = f"b{batch_size}-w{wait_ms:g}"
        self.models = workdir / f"models-{tag}.toml"
        self.models.write_text(models_toml(batch_size, wait_ms, threads))
        self.timings = workdir / f"timings-{tag}.jsonl"
        self.timings.unlink(missing_ok=True)
        self.log = open(workdir / f"worker-{tag}.log", "w")
        self.env = {**env, "GT_MODELS_FILE": str(self.models), "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen([PY, "manage.py", "model_worker", "--family", FAMILY_KEY, "--no-supervise",
                                      "--timings", str(self.timings)], cwd=ROOT, env=self.env,
                                     stdout=self.log, stderr=subprocess.STDOUT)

    def wait_ready(self, timeout: float = 300) -> float:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            lines = read_lines(self.timings)
            if lines and lines[0].get("event") == "ready":
                return float(lines[0].get("warmup_s", 0))
            if self.proc.poll() is not None:
                raise SystemExit(f"the model worker exited with {self.proc.returncode}; see {self.log.name}")
            time.sleep(0.2)
        raise SystemExit("the model worker did not become ready")

    def cpu_s(self) -> float:
        """The worker process's CPU seconds so far (user + system)."""
        try:
            t = psutil.Process(self.proc.pid).cpu_times()
        except psutil.Error:
            return 0.0
        return t.user + t.system

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            for child in psutil.Process(self.proc.pid).children(recursive=True):
                child.kill()
            self.proc.kill()
        self.log.close()


class Bots:
    """N simulated people in the speaker's seat, each speaking as soon as its listener clicked."""

    def __init__(self, n: int, rounds: int, threads: int, poll_ms: float, seed: int) -> None:
        self.n, self.rounds, self.poll_s, self.seed = n, rounds, poll_ms / 1000, seed
        self.pool = ThreadPoolExecutor(max_workers=threads)
        self.slots: list[dict] = []
        self.all_matches: list = []
        self.errors: list[str] = []
        self.lock = threading.Lock()
        self.chats = 0

    def _new_match(self, i: int):
        from live.models import Seat
        from live.services import SeatSpec, match_create

        self.seed += 1
        match = match_create(game_id="colors_v1", seed=self.seed, config={"rounds": self.rounds},
                             seats={"speaker": SeatSpec(Seat.Kind.HUMAN),
                                    "listener": SeatSpec(Seat.Kind.AGENT, agent_name=AGENT)})
        with self.lock:
            self.all_matches.append(match.id)
        return match

    def _speak(self, slot: dict) -> None:
        from django.db import close_old_connections

        from live.services import IllegalAction, match_apply_action

        try:
            close_old_connections()
            if slot["finished"]:
                match = self._new_match(slot["i"])
                slot.update(id=match.id, round=0, finished=False)
            k = slot["k"] = slot["k"] + 1
            match_apply_action(match_id=slot["id"], role="speaker",
                               action={"type": "chat", "text": TEXTS[(slot["i"] + k) % len(TEXTS)]},
                               client_action_id=f"bench:{slot['i']}:{k}")
            with self.lock:
                self.chats += 1
        except IllegalAction as exc:   # e.g. the match just ended: the next poll replaces it
            self.errors.append(f"{exc.code}: {exc}")
        except Exception as exc:   # reported in the results, the run goes on
            self.errors.append(repr(exc))
        finally:
            slot["busy"] = False

    def start(self) -> None:
        for i in range(self.n):
            match = self._new_match(i)
            self.slots.append({"i": i, "id": match.id, "round": 0, "finished": False, "k": 0, "busy": True})
        for slot in self.slots:
            self.pool.submit(self._speak, slot)

    def poll_once(self) -> None:
        """Read every match's round; a speaker whose listener clicked speaks again."""
        from live.models import Match

        ids = [s["id"] for s in self.slots]
        rows = {mid: (status, rnd) for mid, status, rnd in
                Match.objects.filter(id__in=ids).values_list("id", "status", "state__round")}
        for slot in self.slots:
            if slot["busy"] or slot["id"] not in rows:
                continue
            status, rnd = rows[slot["id"]]
            if status == Match.Status.FINISHED:
                slot["finished"] = True
            elif rnd == slot["round"]:
                continue   # the listener has not clicked yet
            slot["round"] = rnd
            slot["busy"] = True
            self.pool.submit(self._speak, slot)

    def run(self, duration: float, progress) -> None:
        end = time.monotonic() + duration
        while time.monotonic() < end:
            self.poll_once()
            progress(self)
            time.sleep(self.poll_s)

    def stop(self) -> None:
        self.pool.shutdown(wait=True)


def measure(match_ids: list, t0_ms: int, t1_ms: int) -> dict:
    """Per turn latency from the match log: speaker chat committed -> listener click committed."""
    from live.models import MatchEvent

    events = (MatchEvent.objects.filter(match_id__in=match_ids, type__in=["message_sent", "color_clicked"])
              .order_by("match_id", "seq").values_list("match_id", "seq", "type", "actor", "t"))
    latencies, turns = [], {}
    last_chat: dict = {}
    clicks = 0
    for mid, seq, typ, actor, t in events:
        if typ == "message_sent" and actor == "speaker":
            last_chat.setdefault(mid, t)   # the first chat of the round: the listener's turn begins
        elif typ == "color_clicked" and actor == "listener":
            start = last_chat.pop(mid, None)
            if t0_ms <= t <= t1_ms:
                clicks += 1
                if start is not None:
                    latencies.append(t - start)
                    turns[(str(mid), seq - 1)] = t - start
    return {"latency": latencies, "clicks": clicks, "by_turn": turns}


def run_config(args, batch_size: int, wait_ms: float, workdir: Path, env: dict, results: list) -> None:
    from django.db import connection
    from tqdm import tqdm

    from agents import registry

    # the registry of THIS process must know the agent (match_create names it)
    own = workdir / f"models-main-b{batch_size}-w{wait_ms:g}.toml"
    own.write_text(models_toml(batch_size, wait_ms, args.torch_threads))
    os.environ["GT_MODELS_FILE"] = str(own)
    registry.all_agents.cache_clear()
    registry._built.clear()
    from groundtalk_web.celery import app

    with app.connection_for_write() as conn:
        conn.default_channel.queue_purge(f"model.{FAMILY_KEY}")
    worker = Worker(env, batch_size, wait_ms, workdir, args.torch_threads)
    try:
        warmup_s = worker.wait_ready()
        log(f"worker batch_size={batch_size} wait_ms={wait_ms:g}: ready (warm-up {warmup_s:.2f} s)")
        for n in args.matches:
            bots = Bots(n, args.rounds, args.bot_threads, args.poll_ms, seed=1000 * n + batch_size)
            bots.start()
            bar = tqdm(total=round(args.warmup + args.duration, 1), desc=f"batch {batch_size:>3}/{wait_ms:g} ms N={n:>3}",
                       unit="s", bar_format="{l_bar}{bar}| {n:.0f}/{total:.0f} s {postfix}", leave=True)
            started = time.monotonic()

            shown = [0.0]

            def progress(b: Bots) -> None:   # at most twice a second
                elapsed = min(time.monotonic() - started, bar.total)
                if elapsed - shown[0] >= 0.5 or elapsed >= bar.total:
                    shown[0] = elapsed
                    bar.n = elapsed
                    bar.set_postfix_str(f"chats {b.chats}", refresh=False)
                    bar.refresh()

            bots.run(args.warmup, progress)
            spies = start_profiles(args, worker, f"b{batch_size}-w{wait_ms:g}-n{n}") if args.profile else []
            t0_ms, cpu0 = int(time.time() * 1000), psutil.cpu_times()
            worker_cpu0, own_cpu0, svc0 = worker.cpu_s(), sum(psutil.Process().cpu_times()[:2]), services_cpu_s()
            bots.run(args.duration, progress)
            t1_ms, cpu1 = int(time.time() * 1000), psutil.cpu_times()
            worker_cpu1, own_cpu1, svc1 = worker.cpu_s(), sum(psutil.Process().cpu_times()[:2]), services_cpu_s()
            bar.close()
            profiles = finish_profiles(spies)
            bots.stop()
            # let the last turns land so they are not left in the queue for the next N
            time.sleep(min(2.0, 0.2 + n * 0.01))
            m = measure(list(bots.all_matches), t0_ms, t1_ms)
            window_s = (t1_ms - t0_ms) / 1000
            turn_lines = [line for line in read_lines(worker.timings)
                          if line.get("event") == "turn" and line.get("result") == "acted"
                          and line.get("match") in {str(x) for x in bots.all_matches}]
            in_window = [line for line in turn_lines if (str(line["match"]), line["seq"]) in m["by_turn"]]
            e2e_overhead = [m["by_turn"][(str(line["match"]), line["seq"])] - line["model_ms"]
                            for line in in_window if "model_ms" in line]
            busy = sum((getattr(cpu1, k) - getattr(cpu0, k)) for k in ("user", "system", "nice"))
            bench_cpu = own_cpu1 - own_cpu0
            # the worker's own busy time: its batches (read, model, writes, commit) ending in the window
            batch_ms = sum(line["total_ms"] for line in read_lines(worker.timings) if line.get("event") == "batch"
                           and t0_ms <= datetime.fromisoformat(line["at"]).timestamp() * 1000 <= t1_ms)
            result = {
                "batch_size": batch_size, "wait_ms": wait_ms, "matches": n,
                "window_s": round(window_s, 2), "turns": m["clicks"],
                "turns_per_s": round(m["clicks"] / window_s, 2) if window_s else 0.0,
                "latency_ms": pct(m["latency"]),
                "worker_model_ms": pct(line["model_ms"] for line in in_window if "model_ms" in line),
                "worker_overhead_ms": pct(line["overhead_ms"] for line in in_window if "overhead_ms" in line),
                "worker_queue_ms": pct(line["queue_ms"] for line in in_window if "queue_ms" in line),
                "worker_submit_ms": pct(line["submit_ms"] for line in in_window if "submit_ms" in line),
                "e2e_overhead_ms": pct(e2e_overhead),
                "batch_size_seen": pct(line["batch_size"] for line in in_window),
                "bot_errors": len(bots.errors), "bot_error_examples": bots.errors[:3],
                "machine_cpu_pct": round(100 * busy / window_s / (psutil.cpu_count() or 1), 1) if window_s else 0,
                "worker_batches_pct": round(100 * batch_ms / 1000 / window_s, 1) if window_s else 0,
                "worker_cpu_pct": round(100 * (worker_cpu1 - worker_cpu0) / window_s, 1) if window_s else 0,
                "bench_cpu_pct": round(100 * bench_cpu / window_s, 1) if window_s else 0,
                "postgres_cpu_pct": services_cpu_pct(svc0, svc1, window_s)["postgres"],
                "redis_cpu_pct": services_cpu_pct(svc0, svc1, window_s)["redis"],
                "profiles": profiles,
                "warmup_s": warmup_s,
            }
            results.append(result)
            log(f"  N={n}: {result['turns_per_s']} turns/s, latency p50 {result['latency_ms'].get('p50')} "
                f"p99 {result['latency_ms'].get('p99')} ms, model p50 {result['worker_model_ms'].get('p50')} ms, "
                f"overhead p50 {result['worker_overhead_ms'].get('p50')} ms, batch p50 "
                f"{result['batch_size_seen'].get('p50')}, worker in batches {result['worker_batches_pct']} % of the "
                f"time, machine CPU {result['machine_cpu_pct']} % (of one core: worker {result['worker_cpu_pct']}, bench "
                f"{result['bench_cpu_pct']}, PostgreSQL {result['postgres_cpu_pct']}, Redis {result['redis_cpu_pct']}), "
                f"bot errors {len(bots.errors)}")
            connection.close()
    finally:
        worker.stop()


def services_cpu_s() -> dict:
    """CPU seconds so far of each PostgreSQL and Redis process on this machine, by (kind, pid)
    (all of them: other work on a shared machine counts too)."""
    seen = {}
    for proc in psutil.process_iter(["name", "cpu_times"]):
        name, times = proc.info["name"] or "", proc.info["cpu_times"]
        kind = "postgres" if name.startswith("postgres") else "redis" if name.startswith("redis") else None
        if kind and times is not None:
            seen[(kind, proc.pid)] = times.user + times.system
    return seen


def services_cpu_pct(before: dict, after: dict, window_s: float) -> dict:
    """Per kind, the CPU its processes used in the window, % of one core (a process that ended
    within the window is not counted: an underestimate when connections close)."""
    used = {"postgres": 0.0, "redis": 0.0}
    for (kind, pid), cpu in after.items():
        used[kind] += cpu - before.get((kind, pid), 0.0)
    return {k: round(100 * v / window_s, 1) if window_s else 0 for k, v in used.items()}


def start_profiles(args, worker: Worker, tag: str) -> list:
    """py-spy (the ``bench`` extra) on the worker and on this process (the simulated people) for the
    measured window: collapsed stacks, idle included (a thread waiting for PostgreSQL or Redis is
    in its socket read), summed up by ``summarize_profile``."""
    spy = Path(PY).with_name("py-spy")
    if not spy.exists():
        raise SystemExit(f"--profile needs py-spy ({spy}): pip install -e '.[bench]'")
    args.profile.mkdir(parents=True, exist_ok=True)
    spies = []
    for who, pid in (("worker", worker.proc.pid), ("bench", os.getpid())):
        for kind in ("wall", "cpu"):   # wall: every sample (--idle); cpu: only the threads on a CPU
            out = args.profile / f"{tag}-{who}-{kind}.txt"
            proc = subprocess.Popen([str(spy), "record", "--pid", str(pid), "--duration",
                                     str(int(round(args.duration))), "--rate", "100", "--threads", "--nonblocking",
                                     "--format", "raw", "--output", str(out)] + (["--idle"] if kind == "wall" else []),
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            spies.append((f"{who}_{kind}", proc, out))
    return spies


def finish_profiles(spies: list) -> dict:
    summary = {}
    for who, proc, out in spies:
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
        summary[who] = {"file": str(out), **summarize_profile(out)} if out.exists() else {"file": None}
    return summary


# Where a sampled stack is: the first rule whose pattern is in a frame, innermost frame first.
PROFILE_BUCKETS = [
    ("waiting for messages (broker poll)", ("kombu/utils/eventio.py",)),
    ("PostgreSQL", ("psycopg", "django/db/backends/")),
    ("Redis", ("redis/", "kombu/", "channels_redis", "celery/")),
    ("model", ("torch/", "act_batch")),
]
IDLE_LEAVES = ("sleep", "queue.py", "threading.py", "Bots.run (", "selectors.py", "concurrent/futures/thread.py",
               "subprocess.py")   # only the innermost frame: waiting for work


def summarize_profile(path: Path) -> dict:
    """Per thread group (``MainThread``, ``ThreadPoolExecutor``, ...): its samples and their shares
    per bucket of ``PROFILE_BUCKETS`` (waiting for PostgreSQL or Redis is in those libraries' socket
    calls; the rest is Python on the CPU), and the innermost GroundTalk frames (``agents/``,
    ``live/``, ``games/``, ``bench/``) with most samples. py-spy raw, ``--threads``: one
    ``thread (id): name;outermost;...;innermost count`` per line."""
    groups: dict[str, dict] = {}
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frames = stack.split(";")
        name = frames[0].split(": ", 1)[-1].split("-")[0] if frames[0].startswith("thread") else "?"
        g = groups.setdefault(name, {"samples": 0, "buckets": {}, "ours": {}})
        n = int(count)
        g["samples"] += n
        bucket = "python (CPU)"
        for frame in ([] if any(p in frames[-1] for p in IDLE_LEAVES) else reversed(frames[1:])):
            hit = next((b for b, pats in PROFILE_BUCKETS if any(p in frame for p in pats)), None)
            if hit:
                bucket = hit
                break
        if any(p in frames[-1] for p in IDLE_LEAVES):
            bucket = "idle"
        g["buckets"][bucket] = g["buckets"].get(bucket, 0) + n
        own = next((f for f in reversed(frames[1:]) if any(d in f for d in ("agents/", "live/", "games/", "bench/"))),
                   None)
        if own:
            g["ours"][own] = g["ours"].get(own, 0) + n
    out = {}
    for name, g in sorted(groups.items(), key=lambda kv: -kv[1]["samples"]):
        total = g["samples"]
        out[name] = {"samples": total,
                     "share_pct": {k: round(100 * v / total, 1) for k, v in sorted(g["buckets"].items(),
                                                                                   key=lambda kv: -kv[1])},
                     "top_own_frames_pct": [[k, round(100 * v / total, 1)]
                                            for k, v in sorted(g["ours"].items(), key=lambda kv: -kv[1])[:10]]}
    return out


def model_only(sizes: list[int], repeats: int) -> list[dict]:
    """The model alone, in this process: ``act_batch`` on n views at once against n calls of one view
    (what batching can save at best, before any queue or database)."""
    import torch

    from games.colors.neural.agents import NeuralLiteralListener

    model = NeuralLiteralListener.load(str(CHECKPOINT), "cpu")
    base = NeuralLiteralListener.warmup_view()

    def views(n: int) -> list[dict]:
        return [{**base, "messages": [{"role": "speaker", "text": TEXTS[i % len(TEXTS)], "at": 0}]} for i in range(n)]

    model.act_batch(views(4))
    rows = []
    for n in sizes:   # medians of single calls: a busy shared machine preempts some of them
        batch = views(n)
        calls = []
        for _ in range(repeats):
            t = time.perf_counter()
            model.act_batch(batch)
            calls.append(time.perf_counter() - t)
        ones = []
        for _ in range(max(1, repeats * 16 // n)):
            for v in batch[:16]:
                t = time.perf_counter()
                model.act_batch([v])
                ones.append(time.perf_counter() - t)
        batched, single = float(np.median(calls)), float(np.median(ones))
        rows.append({"views": n, "batched_call_ms": round(1000 * batched, 3),
                     "batched_per_turn_ms": round(1000 * batched / n, 3),
                     "one_by_one_per_turn_ms": round(1000 * single, 3),
                     "speedup": round(single * n / batched, 2), "torch_threads": torch.get_num_threads()})
        log(f"model only, {n} views: one act_batch {rows[-1]['batched_call_ms']} ms "
            f"({rows[-1]['batched_per_turn_ms']} ms a turn) against {rows[-1]['one_by_one_per_turn_ms']} ms a turn "
            f"one by one: x{rows[-1]['speedup']}")
    return rows


def plot(results: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    for bs, wait in sorted({(r["batch_size"], r["wait_ms"]) for r in results}, key=lambda c: (-c[0], c[1])):
        rows = sorted((r for r in results if (r["batch_size"], r["wait_ms"]) == (bs, wait)), key=lambda r: r["matches"])
        label = f"batch_size {bs}" + (" (batching off)" if bs == 1 else f", wait {wait:g} ms")
        xs = [r["matches"] for r in rows]
        (line,) = a.plot(xs, [r["turns_per_s"] for r in rows], marker="o", label=label)
        color = line.get_color()
        b.plot(xs, [r["latency_ms"].get("p50", np.nan) for r in rows], marker="o", color=color, label=f"{label} p50")
        b.plot(xs, [r["latency_ms"].get("p99", np.nan) for r in rows], marker="x", linestyle="--", color=color,
               label=f"{label} p99")
    for ax in (a, b):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("concurrent human-agent matches")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    a.set_ylabel("agent turns per second")
    a.set_title("Throughput, one neural listener (CPU)")
    b.set_yscale("log")
    b.set_ylabel("chat committed -> click committed (ms)")
    b.set_title("Per-turn latency")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def compare_runs(groups: dict[str, list[Path]], path: Path) -> dict:
    """Several runs of this script per label (e.g. before and after a change, each run batched
    and unbatched at one N): every run's turns/s and the worker's CPU per turn, plotted (the spread
    is what a single run hides), and their medians, min and max returned."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    summary: dict = {}
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    for x, (label, files) in enumerate(groups.items()):
        runs = [json.loads(Path(f).read_text())["results"] for f in files]
        for offset, (bs, name) in ((-0.12, (64, "batched")), (0.12, (1, "unbatched"))):
            rows = [r for results in runs for r in results if (r["batch_size"] == 1) == (bs == 1)]
            tps = [r["turns_per_s"] for r in rows]
            cpu = [10 * r["worker_cpu_pct"] / r["turns_per_s"] for r in rows if r.get("worker_cpu_pct") and r["turns_per_s"]]
            color = "C0" if bs != 1 else "C1"
            a.scatter([x + offset] * len(tps), tps, color=color, label=name if x == 0 else None)
            b.scatter([x + offset] * len(cpu), cpu, color=color, label=name if x == 0 else None)
            summary[f"{label} {name}"] = {"turns_per_s": pct(tps), "worker_cpu_ms_per_turn": pct(cpu)}
    for ax in (a, b):
        ax.set_xticks(range(len(groups)), list(groups))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    a.set_ylabel("agent turns per second (64 matches)")
    a.set_title("Throughput, each run")
    b.set_ylabel("worker CPU ms per turn")
    b.set_title("The worker's CPU per turn, each run")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    return summary


def markdown(results: list[dict]) -> str:
    rows = ["| batch_size | wait_ms | matches | turns/s | latency p50 | p99 | model p50 | worker overhead p50 / p99 "
            "| e2e overhead p50 | batch p50 | worker in batches | machine CPU | bot errors |",
            "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in sorted(results, key=lambda r: (-r["batch_size"], r["wait_ms"], r["matches"])):
        rows.append(f"| {r['batch_size']} | {r['wait_ms']:g} | {r['matches']} | {r['turns_per_s']} | {r['latency_ms'].get('p50')} "
                    f"| {r['latency_ms'].get('p99')} | {r['worker_model_ms'].get('p50')} "
                    f"| {r['worker_overhead_ms'].get('p50')} / {r['worker_overhead_ms'].get('p99')} "
                    f"| {r['e2e_overhead_ms'].get('p50')} | {r['batch_size_seen'].get('p50')} | {r.get('worker_batches_pct')} % "
                    f"| {r['machine_cpu_pct']} % | {r['bot_errors']} |")
    return "\n".join(rows)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--matches", default="1,16,64,256", type=lambda s: [int(x) for x in s.split(",")])
    p.add_argument("--batch-sizes", default="64,1",
                   help="worker configurations, one after the other: BATCH_SIZE or BATCH_SIZE@WAIT_MS (default "
                        "wait: --wait-ms; batch size 1 always waits 0)")
    p.add_argument("--wait-ms", type=float, default=3.0)
    p.add_argument("--duration", type=float, default=15.0, help="measured seconds per (batch size, N)")
    p.add_argument("--warmup", type=float, default=3.0, help="unmeasured seconds before each window")
    p.add_argument("--rounds", type=int, default=30, help="rounds per match (a finished one is replaced)")
    p.add_argument("--bot-threads", type=int, default=8)
    p.add_argument("--poll-ms", type=float, default=10.0,
                   help="how often the bots read their matches' rounds (each poll reads all N matches)")
    p.add_argument("--torch-threads", type=int, default=1,
                   help="the worker's torch CPU threads (models file 'threads'; 0: torch's default)")
    p.add_argument("--model-repeats", type=int, default=20, help="calls per size in the model-only part (0: skip)")
    p.add_argument("--model-only", action="store_true", help="only the model part (no database, no worker)")
    p.add_argument("--db-name", default="groundtalk_bench_model")
    p.add_argument("--redis-url", default="redis://127.0.0.1:6379/2")
    p.add_argument("--keep-db", action="store_true")
    p.add_argument("--fresh-db", action="store_true", help="migrate the database afresh instead of copying the "
                                                           "migrated template")
    p.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "model_batching.json")
    p.add_argument("--plot", type=Path, default=None, help="a PNG of throughput and latency")
    p.add_argument("--markdown", action="store_true", help="print the docs/bench.md table")
    p.add_argument("--profile", type=Path, default=None,
                   help="a folder: py-spy the worker and this process during each measured window (the bench extra)")
    p.add_argument("--compare", nargs="+", metavar="LABEL=A.json,B.json",
                   help="no run: plot earlier runs' --out files per label (each run's turns/s and worker CPU per "
                        "turn) to --plot, and print their medians")
    args = p.parse_args()
    if args.compare:
        groups = {item.partition("=")[0]: [Path(f) for f in item.partition("=")[2].split(",")] for item in args.compare}
        summary = compare_runs(groups, args.plot or ROOT / "bench" / "out" / "model_batching_runs.png")
        print(json.dumps(summary, indent=1))
        return

    def config(item: str) -> tuple[int, float]:
        size, _, wait = item.partition("@")
        return int(size), (0.0 if int(size) == 1 else float(wait or args.wait_ms))

    args.batch_sizes = [config(x) for x in args.batch_sizes.split(",")]

    if args.model_only:
        sys.path.insert(0, str(ROOT))
        rows = model_only(args.matches, args.model_repeats or 20)
        print("| views | one act_batch (ms) | per turn batched (ms) | per turn one by one (ms) | speed-up |")
        print("| ---: | ---: | ---: | ---: | ---: |")
        for r in rows:
            print(f"| {r['views']} | {r['batched_call_ms']} | {r['batched_per_turn_ms']} "
                  f"| {r['one_by_one_per_turn_ms']} | {r['speedup']} |")
        return
    env = {**os.environ, "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{args.db_name}",
           "REDIS_URL": args.redis_url, "SECRET_KEY": os.environ.get("SECRET_KEY") or secrets.token_urlsafe(50),
           "GT_PSEUDONYM_KEY": secrets.token_urlsafe(50), "DEBUG": "0", "LOG_LEVEL": "WARNING",
           "DJANGO_SETTINGS_MODULE": "groundtalk_web.settings"}
    env.pop("GT_MODELS_FILE", None)
    log(f"database {args.db_name}: {'reset and migrate' if args.fresh_db else 'a copy of the migrated template'}")
    if args.fresh_db:
        reset_database(env, args.db_name)
    else:
        migrated_database(env, args.db_name)
    subprocess.run(["redis-cli", "-u", args.redis_url, "flushdb"], check=False, capture_output=True)
    os.environ.update(env)
    sys.path.insert(0, str(ROOT))
    workdir = Path(tempfile.mkdtemp(prefix="gt-bench-model-"))
    first = workdir / "models-setup.toml"
    first.write_text(models_toml(args.batch_sizes[0][0], args.batch_sizes[0][1], args.torch_threads))
    os.environ["GT_MODELS_FILE"] = str(first)
    import django

    django.setup()
    results: list[dict] = []
    model_rows = model_only(args.matches, args.model_repeats) if args.model_repeats else []
    try:
        for bs, wait in args.batch_sizes:
            run_config(args, bs, wait, workdir, env, results)
    finally:
        from django.db import connections

        connections.close_all()
        if not args.keep_db:
            drop_database(args.db_name)
    out = {"results": results, "model_only": model_rows, "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
           "machine": {"cpus": psutil.cpu_count(), "platform": platform.platform(), "python": platform.python_version()},
           "checkpoint": str(CHECKPOINT.relative_to(ROOT)), "workdir": str(workdir)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2))
    log(f"wrote {args.out}")
    if args.plot:
        plot(results, args.plot)
        log(f"wrote {args.plot}")
    print(markdown(results))
    if model_rows:
        print("\n| views | one act_batch (ms) | per turn batched (ms) | per turn one by one (ms) | speed-up |")
        print("| ---: | ---: | ---: | ---: | ---: |")
        for r in model_rows:
            print(f"| {r['views']} | {r['batched_call_ms']} | {r['batched_per_turn_ms']} "
                  f"| {r['one_by_one_per_turn_ms']} | {r['speedup']} |")


if __name__ == "__main__":
    main()
