"""Load benchmark: bot pairs play colors matches over websockets against the full stack, beside a bare relay.

    .venv/bin/python bench/relay.py --pairs 500 --duration 60 --mode human
    .venv/bin/python bench/relay.py --pairs 50 --duration 60 --mode saturation --profile 20

One run = one or more *targets*, each measured with the same bot code, the same N and the same pace:

* ``groundtalk``: uvicorn (or daphne) serving ``groundtalk_web.asgi:application`` on
  ``--server-workers`` processes (one port each; a player's port is picked round-robin, so with two
  workers the two players of a match sit on different processes and every event crosses Redis),
  PostgreSQL database ``groundtalk_bench`` (dropped and created by this script as a copy of a
  migrated template, or migrated afresh with ``--fresh-db``), Redis db 2,
  the project's channel layer (channels_redis's pub/sub layer);
* ``bare``: ``bench/bare_relay.py`` on as many processes, pairs kept within one process, no
  persistence (``--baseline``, on by default; ``--no-baseline`` skips it, ``--only-baseline`` runs
  only it).

Bots (one asyncio process, this one): both seats of every match connected and joined before the
clock starts. ``--mode human``: each player sends one action every ``--interval`` s (2 s) at a random
phase, open loop (a late server does not slow the bots down). ``--mode saturation``: each player keeps
exactly one action in flight (the next goes when the ack or error for the last one arrives). Actions
are chats whose text is ``"<id> <send time ns>"``; the listener clicks a colour instead once its round
has ``--round-messages`` messages and its view allows it, so rounds stay short as in a real game.
When a match ends (``--rounds`` rounds), the pair moves on to a spare match.

Figures: latency from a chat sent to the partner receiving its ``message_sent`` event (p50, p99,
max), send to ack, actions sent / acked / received, lost (acked, never received by the partner
after ``--drain`` s), duplicated, errors by code, acked actions per second, the PostgreSQL count of
logged actions against the acks, and CPU (per cent of one core) of the server processes, PostgreSQL,
Redis and the bot process over the measured window. Results are printed and written as JSON to
``bench/out/`` (``--out``); ``bench/report.py`` turns them into tables and plots.
"""
from __future__ import annotations

import argparse
import re
import asyncio
import json
import math
import os
import secrets
import random
import resource
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from urllib.parse import urlparse

import numpy as np
import psutil

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
OUT = BENCH / "out"
PY = sys.executable
DB_NAME = "groundtalk_bench"


def log(*parts) -> None:
    print(time.strftime("%H:%M:%S"), *parts, flush=True)


# ------------------------------------------------------------------------------------------ the stack
def pg_admin():
    import psycopg

    conn = psycopg.connect(host="127.0.0.1", port=5432, user="postgres", dbname="postgres")
    conn.autocommit = True
    return conn


def reset_database(env: dict, fresh: bool = True) -> float:
    """Drop, create and migrate the benchmark database (``fresh``, ``--fresh-db``), or drop it and
    create it as a copy of the migrated template (bench/model_batching.py's ``migrated_database``,
    shared with its runs and the smoke tests); returns seconds taken."""
    started = time.monotonic()
    if not fresh:
        from model_batching import migrated_database

        migrated_database(env, DB_NAME)
        return time.monotonic() - started
    conn = pg_admin()
    with conn.cursor() as cur:
        cur.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", [DB_NAME])
        cur.execute(f"DROP DATABASE IF EXISTS {DB_NAME}")
        cur.execute(f"CREATE DATABASE {DB_NAME}")
    conn.close()
    subprocess.run([PY, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True)
    return time.monotonic() - started


def db_check(url: str, rec: "Recorder") -> dict:
    """Compare the log in PostgreSQL with what the bots sent and were acked, action by action."""
    import psycopg

    conn = psycopg.connect(url)
    with conn.cursor() as cur:
        cur.execute("SELECT type, client_action_id FROM games_matchevent WHERE action IS NOT NULL")
        rows = cur.fetchall()
        cur.execute("SELECT count(*) FROM games_match WHERE status = 'finished'")
        finished = cur.fetchone()[0]
    conn.close()
    by_type = Counter(t for t, _ in rows)
    logged = Counter(i for _, i in rows)
    logged_ids = set(logged)
    out = {
        "actions_logged": len(rows), "by_type": dict(by_type), "matches_finished": finished,
        "acked_not_logged": len(rec.acked_ids - logged_ids),            # must be 0: an ack means durable
        "logged_twice": sum(1 for c in logged.values() if c > 1),       # must be 0: ids are idempotent
        "logged_not_sent": len(logged_ids - rec.sent_ids),              # must be 0
        "logged_not_acked": len(logged_ids - rec.acked_ids),            # committed, ack not seen before close
    }
    out["ok"] = out["acked_not_logged"] == 0 and out["logged_twice"] == 0 and out["logged_not_sent"] == 0
    return out


def flush_redis(url: str) -> None:
    import redis

    client = redis.Redis.from_url(url)
    client.flushdb()
    client.close()


def wait_port(port: int, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server on port {port} exited with {proc.returncode}; see bench/out/logs")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"server on port {port} did not listen within {timeout} s")


# The websocket options the project's own server commands use (run.sh, docker-compose.yml).
UVICORN_WS_ARGS = ["--ws-max-size", "65536", "--ws-per-message-deflate", "false"]


def start_servers(kind: str, ports: list[int], env: dict, label: str, extra: list[str],
                  app: str = "groundtalk_web.asgi:application") -> list[subprocess.Popen]:
    (OUT / "logs").mkdir(parents=True, exist_ok=True)
    procs = []
    for port in ports:
        if kind == "uvicorn":
            cmd = [PY, "-m", "uvicorn", app, "--host", "127.0.0.1", "--port", str(port),
                   "--no-access-log", "--log-level", "warning", "--loop", "uvloop", "--http", "httptools",
                   "--ws", "websockets", "--backlog", "4096", *UVICORN_WS_ARGS, *extra]
        elif kind == "daphne":
            cmd = [PY, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "-v", "0", *extra,
                   app]
        elif kind == "bare":
            cmd = [PY, str(BENCH / "bare_relay.py"), "--port", str(port)]
        else:
            raise ValueError(kind)
        logfile = open(OUT / "logs" / f"{label}-{kind}-{port}.log", "w")
        procs.append(subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=logfile, stderr=subprocess.STDOUT,
                                      start_new_session=True))
    for port, proc in zip(ports, procs):
        wait_port(port, proc)
    return procs


def stop_servers(procs: list[subprocess.Popen]) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
    deadline = time.monotonic() + 15
    for proc in procs:
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


# ------------------------------------------------------------------------------------------------ CPU
def _tree(pids: list[int]) -> list[psutil.Process]:
    out = []
    for pid in pids:
        try:
            proc = psutil.Process(pid)
            out += [proc, *proc.children(recursive=True)]
        except psutil.NoSuchProcess:
            pass
    return out


def cpu_snapshot(server_pids: list[int]) -> dict:
    """CPU seconds (user + system) per group of processes, keyed by pid, plus whole-machine times."""
    groups: dict[str, dict[int, float]] = {"server": {}, "postgres": {}, "redis": {}}
    for proc in _tree(server_pids):
        try:
            t = proc.cpu_times()
            groups["server"][proc.pid] = t.user + t.system
        except psutil.Error:
            pass
    for proc in psutil.process_iter(["name", "cmdline"]):
        name = proc.info["name"] or ""
        group = "postgres" if name.startswith("postgres") else "redis" if name.startswith("redis-server") else None
        if group == "postgres":
            cmdline = " ".join(proc.info["cmdline"] or [])
            if "(" in cmdline and DB_NAME not in cmdline:   # a client backend of another database
                group = None
        if group:
            try:
                t = proc.cpu_times()
                groups[group][proc.pid] = t.user + t.system
            except psutil.Error:
                pass
    usage = resource.getrusage(resource.RUSAGE_SELF)
    machine = psutil.cpu_times()
    return {"groups": groups, "bots": usage.ru_utime + usage.ru_stime, "wall": time.monotonic(),
            "machine_busy": sum(machine) - machine.idle - getattr(machine, "iowait", 0), "machine_total": sum(machine),
            "softirq": getattr(machine, "softirq", 0.0) + getattr(machine, "irq", 0.0)}


def cpu_report(a: dict, b: dict) -> dict:
    wall = b["wall"] - a["wall"]
    out = {}
    for group, after in b["groups"].items():
        before = a["groups"][group]
        out[group] = round(100 * sum(t - before.get(pid, 0.0) for pid, t in after.items()) / wall, 1)
    out["bots"] = round(100 * (b["bots"] - a["bots"]) / wall, 1)
    total = b["machine_total"] - a["machine_total"]
    busy = (b["machine_busy"] - a["machine_busy"]) / total
    out["machine_busy_pct_of_all_cores"] = round(100 * busy, 1)
    out["cores"] = psutil.cpu_count()
    # interrupts (loopback networking is partly done in softirq) and whatever else ran on the machine
    # meanwhile (other tests, the OS): busy cores minus the groups above
    out["kernel_irq"] = round(100 * (b["softirq"] - a["softirq"]) / total * out["cores"], 1)
    ours = sum(out[g] for g in ("server", "postgres", "redis", "bots", "kernel_irq"))
    out["other"] = round(max(0.0, 100 * busy * out["cores"] - ours), 1)
    return out


# ----------------------------------------------------------------------------------------------- bots
class Recorder:
    def __init__(self) -> None:
        self.t0 = 0          # monotonic ns: the window opens (first sends)
        self.t1 = 0          # the window closes (no new sends)
        self.sent = Counter()            # kind -> count (all)
        self.sent_window = Counter()
        self.acked = Counter()
        self.acked_window = Counter()
        self.acked_chats: set[str] = set()
        self.sent_ids: set[str] = set()
        self.acked_ids: set[str] = set()
        self.unacked_at_close = 0
        self.received: dict[str, int] = {}
        self.lat: list[tuple[int, int]] = []      # (send ns, partner-receipt latency ns) of first receipts
        self.ack_lat: list[int] = []
        self.errors = Counter()
        self.timeouts = 0
        self.disconnects = 0
        self.corrupt = 0
        self.duplicate_acks = 0
        self.send_late: list[int] = []
        self.loop_lag: list[int] = []
        self.connect_s: list[float] = []
        self.rotations = 0
        self.pool_empty = 0

    def lost(self) -> set[str]:
        return {i for i in self.acked_chats if i not in self.received}


class Pair:
    def __init__(self, index: int) -> None:
        self.index = index
        self.ended = asyncio.Event()
        self.players: list[Player] = []
        self.acked: set[str] = set()   # chats of this pair acked since it last changed match


class Player:
    def __init__(self, bench: "Bots", pair: Pair, role: str) -> None:
        self.bench, self.pair, self.role = bench, pair, role
        self.tag = f"{pair.index}{role[0]}"
        self.n = 0
        self.ws = None
        self.reader = None
        self.closing = False
        self.joined = asyncio.Event()
        self.pending: dict[str, tuple[int, str, asyncio.Future | None]] = {}
        self.reset_view()

    def reset_view(self) -> None:
        self.view: dict = {}
        self.view_seq = 0
        self.click_seq = 0
        self.round_msgs = 0

    async def connect(self, url: str, token: str) -> None:
        from websockets.asyncio.client import connect

        self.reset_view()
        self.closing = False
        self.joined = asyncio.Event()
        started = time.monotonic()
        self.ws = await connect(url, origin="http://127.0.0.1", proxy=None, open_timeout=60, close_timeout=5,
                                max_queue=None)
        self.reader = asyncio.create_task(self.read())
        await self.ws.send(json.dumps({"type": "join", "token": token, "last_seq": None}))
        await asyncio.wait_for(self.joined.wait(), 60)
        self.bench.rec.connect_s.append(time.monotonic() - started)

    async def close(self) -> None:
        self.closing = True   # the bot's own close (end of run or match rotation), not a disconnect
        if self.ws is not None:
            try:
                await self.ws.close()
            except Exception:
                pass
        if self.reader is not None:
            try:
                await asyncio.wait_for(self.reader, 5)
            except (asyncio.TimeoutError, Exception):
                self.reader.cancel()
        self.ws = self.reader = None

    def _resolve(self, action_id, now: int, ok: bool, code: str | None = None, seq: int = 0) -> None:
        entry = self.pending.pop(action_id, None)
        rec = self.bench.rec
        if entry is None:
            rec.duplicate_acks += 1
            return
        sent_ns, kind, fut = entry
        if ok:
            rec.acked[kind] += 1
            rec.acked_ids.add(action_id)
            if now < rec.t1:
                rec.acked_window[kind] += 1   # acks that arrived while the window was open
            rec.ack_lat.append(now - sent_ns)
            if kind == "chat":
                rec.acked_chats.add(action_id)
                self.pair.acked.add(action_id)
                if self.role == "listener":
                    self.round_msgs += 1
            else:
                self.round_msgs = 0
                self.click_seq = seq    # views up to the click's own seq still show the old round
        else:
            rec.errors[code] += 1
            if kind == "click":
                self.click_seq = self.view_seq
        if fut is not None and not fut.done():
            fut.set_result(ok)

    async def read(self) -> None:
        from websockets.exceptions import ConnectionClosed

        rec = self.bench.rec
        try:
            async for raw in self.ws:
                now = time.monotonic_ns()
                msg = json.loads(raw)
                kind = msg.get("type")
                if kind == "events":
                    for event in msg["events"]:
                        if event["type"] == "message_sent" and event["payload"]["role"] != self.role:
                            text = event["payload"]["text"]
                            try:
                                action_id, sent = text.split(" ")
                                sent = int(sent)
                            except ValueError:
                                rec.corrupt += 1
                                continue
                            count = rec.received.get(action_id, 0)
                            rec.received[action_id] = count + 1
                            if count == 0:
                                rec.lat.append((sent, now - sent))
                            if self.role == "listener":
                                self.round_msgs += 1
                    if msg.get("view") is not None:
                        self.view, self.view_seq = msg["view"], msg["seq"]
                    if msg.get("status") not in (None, "active"):
                        self.pair.ended.set()
                elif kind == "ack":
                    self._resolve(msg.get("id"), now, True, seq=msg.get("seq") or 0)
                elif kind == "error":
                    if msg.get("id") is None:
                        rec.errors[msg.get("code")] += 1
                    else:
                        self._resolve(msg.get("id"), now, False, msg.get("code"))
                elif kind == "joined":
                    self.view, self.view_seq = msg.get("view") or {}, msg.get("seq", 0)
                    if msg.get("status") not in (None, "active"):
                        self.pair.ended.set()
                    self.joined.set()
        except ConnectionClosed:
            pass
        except Exception as exc:  # a bug in the bot must show, not hang the run
            log("bot reader error:", repr(exc))
        if not self.bench.closing and not self.closing:
            rec.disconnects += 1
        for action_id in list(self.pending):   # nothing more will come on this connection
            entry = self.pending.pop(action_id)
            if self.bench.closing:
                rec.unacked_at_close += 1
            else:
                rec.errors["connection_closed"] += 1
            if entry[2] is not None and not entry[2].done():
                entry[2].set_result(False)

    def next_action(self) -> tuple[str, dict]:
        if (self.role == "listener" and self.round_msgs >= self.bench.args.round_messages
                and self.view.get("can_click") and self.view_seq > self.click_seq):
            return "click", {"type": "click", "position": random.randrange(3), "round": self.view.get("round")}
        return "chat", {"type": "chat", "text": None}

    async def act(self, want_future: bool) -> asyncio.Future | None:
        rec = self.bench.rec
        self.n += 1
        action_id = f"{self.tag}{self.n}"
        kind, action = self.next_action()
        fut = asyncio.get_running_loop().create_future() if want_future else None
        now = time.monotonic_ns()
        if kind == "chat":
            action["text"] = f"{action_id} {now}"
        else:
            self.click_seq = 1 << 62    # no second click until this one is answered
            self.round_msgs = 0
        self.pending[action_id] = (now, kind, fut)
        rec.sent[kind] += 1
        rec.sent_ids.add(action_id)
        if now < rec.t1:
            rec.sent_window[kind] += 1
        await self.ws.send(json.dumps({"type": "action", "id": action_id, "action": action}, separators=(",", ":")))
        return fut

    async def human_loop(self, phase: float) -> None:
        rec, interval = self.bench.rec, int(self.bench.args.interval * 1e9)
        offset = int(phase * 1e9)
        k = max(0, math.ceil((time.monotonic_ns() - rec.t0 - offset) / interval))
        while not self.pair.ended.is_set() and not self.bench.stopping:
            due = rec.t0 + offset + k * interval
            if due >= rec.t1:
                return
            delay = (due - time.monotonic_ns()) / 1e9
            if delay > 0:
                try:
                    await asyncio.wait_for(self.pair.ended.wait(), delay)
                    return
                except asyncio.TimeoutError:
                    pass
            if self.ws is None or self.bench.stopping:
                return
            rec.send_late.append(time.monotonic_ns() - due)
            await self.act(False)
            k += 1

    async def saturation_loop(self) -> None:
        rec = self.bench.rec
        while not self.pair.ended.is_set() and time.monotonic_ns() < rec.t1 and not self.bench.stopping:
            fut = await self.act(True)
            try:
                await asyncio.wait_for(fut, 30)
            except asyncio.TimeoutError:
                rec.timeouts += 1
                return


class Bots:
    def __init__(self, args, target: str, matches: list[dict], ports: list[int], on_window) -> None:
        self.args, self.target, self.ports, self.on_window = args, target, ports, on_window
        self.pool = list(matches)
        self.rec = Recorder()
        self.stopping = False
        self.closing = False
        self.connect_sem = asyncio.Semaphore(args.connect_concurrency)
        self.pairs = [Pair(i) for i in range(args.pairs)]
        for pair in self.pairs:
            pair.players = [Player(self, pair, "speaker"), Player(self, pair, "listener")]

    def url(self, pair: Pair, role_index: int, match_id: str) -> str:
        if self.target == "bare":
            port = self.ports[pair.index % len(self.ports)]
        else:
            # --route seat: the two players of a match on different processes (every event crosses
            # Redis, every other action misses the state cache); --route match: both on one process,
            # as a proxy that hashes the match id in the URL places them (docs/operations.md).
            slot = 2 * pair.index + role_index if self.args.route == "seat" else pair.index
            port = self.ports[slot % len(self.ports)]
        return f"ws://127.0.0.1:{port}/ws/match/{match_id}/"

    async def seat_pair(self, pair: Pair) -> bool:
        if not self.pool:
            self.rec.pool_empty += 1
            return False
        match = self.pool.pop(0)
        pair.ended = asyncio.Event()
        async with self.connect_sem:
            for i, player in enumerate(pair.players):
                await player.connect(self.url(pair, i, match["match_id"]), match[player.role])
        return True

    async def settle(self, pair: Pair, timeout: float) -> None:
        """Wait (bounded) until the pair has no action in flight and the partner has every acked chat."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pending = any(p.pending for p in pair.players)
            if not pending and all(i in self.rec.received for i in pair.acked):
                break
            await asyncio.sleep(0.1)
        pair.acked = set()

    async def run_pair(self, pair: Pair) -> None:
        phases = [random.uniform(0, self.args.interval) for _ in pair.players]
        while not self.stopping and time.monotonic_ns() < self.rec.t1:
            if self.args.mode == "human":
                await asyncio.gather(*(p.human_loop(ph) for p, ph in zip(pair.players, phases)))
            else:
                await asyncio.gather(*(p.saturation_loop() for p in pair.players))
            if not pair.ended.is_set():
                return  # the window closed; the global drain takes over
            # the match is over: let in-flight actions land, then move to a spare match
            await self.settle(pair, 10)
            for player in pair.players:
                await player.close()
            if time.monotonic_ns() >= self.rec.t1:
                return
            self.rec.rotations += 1
            if not await self.seat_pair(pair):
                return

    async def lag_monitor(self) -> None:
        step = 0.05
        while not self.closing:
            before = time.monotonic_ns()
            await asyncio.sleep(step)
            self.rec.loop_lag.append(time.monotonic_ns() - before - int(step * 1e9))

    async def progress(self) -> None:
        rec, last = self.rec, None
        while not self.closing:
            await asyncio.sleep(5)
            now = time.monotonic_ns()
            snap = (now, sum(rec.sent.values()), sum(rec.acked.values()), len(rec.lat))
            if last is not None:
                dt = (snap[0] - last[0]) / 1e9
                recent = np.array([l for _, l in rec.lat[last[3]:]]) / 1e6
                pct = (f"p50 {np.percentile(recent, 50):7.1f} ms  p99 {np.percentile(recent, 99):7.1f} ms"
                       if len(recent) else "no receipts")
                inflight = sum(len(p.pending) for pair in self.pairs for p in pair.players)
                lag = max(rec.loop_lag[-100:] or [0]) / 1e6
                log(f"  [{self.target}] t={(now - rec.t0) / 1e9:5.0f}s  sent {(snap[1] - last[1]) / dt:6.0f}/s  "
                    f"acked {(snap[2] - last[2]) / dt:6.0f}/s  received {(snap[3] - last[3]) / dt:6.0f}/s  {pct}  "
                    f"in flight {inflight}  errors {sum(rec.errors.values())}  bot lag max {lag:.0f} ms")
            last = snap

    async def run(self) -> dict:
        args, rec = self.args, self.rec
        log(f"[{self.target}] connecting {2 * args.pairs} players ...")
        started = time.monotonic()
        await asyncio.gather(*(self.seat_pair(pair) for pair in self.pairs))
        connect_s = time.monotonic() - started
        log(f"[{self.target}] all {2 * args.pairs} players joined in {connect_s:.1f} s; "
            f"running {args.mode} for {args.duration} s")
        monitors = [asyncio.create_task(self.lag_monitor()), asyncio.create_task(self.progress())]
        rec.t0 = time.monotonic_ns() + int(0.2e9)
        rec.t1 = rec.t0 + int(args.duration * 1e9)
        self.on_window("start")
        pair_tasks = [asyncio.create_task(self.run_pair(pair)) for pair in self.pairs]
        await asyncio.sleep((rec.t1 - time.monotonic_ns()) / 1e9)
        self.on_window("stop")
        # drain: no new sends; wait for acks and partner receipts (bounded)
        drain_started = time.monotonic()
        await asyncio.wait(pair_tasks, timeout=args.drain)
        self.stopping = True
        while time.monotonic() - drain_started < args.drain:
            inflight = sum(len(p.pending) for pair in self.pairs for p in pair.players)
            if not inflight and not rec.lost():
                break
            await asyncio.sleep(0.25)
        drain_s = time.monotonic() - drain_started
        for task in pair_tasks:
            task.cancel()
        self.closing = True
        await asyncio.gather(*(p.close() for pair in self.pairs for p in pair.players), return_exceptions=True)
        for task in monitors:
            task.cancel()
        return self.summary(connect_s, drain_s, rec.unacked_at_close)

    def summary(self, connect_s: float, drain_s: float, unacked: int) -> dict:
        rec, args = self.rec, self.args
        window = (rec.t1 - rec.t0) / 1e9
        lat = np.array([l for s, l in rec.lat if rec.t0 <= s < rec.t1], dtype=float) / 1e6
        ack = np.array(rec.ack_lat, dtype=float) / 1e6
        lag = np.array(rec.loop_lag, dtype=float) / 1e6
        late = np.array(rec.send_late, dtype=float) / 1e6

        def pct(a: np.ndarray) -> dict:
            if not len(a):
                return {"n": 0}
            return {"n": int(len(a)), "p50": round(float(np.percentile(a, 50)), 2),
                    "p90": round(float(np.percentile(a, 90)), 2), "p99": round(float(np.percentile(a, 99)), 2),
                    "max": round(float(a.max()), 2), "mean": round(float(a.mean()), 2)}

        lost = rec.lost()
        series = []
        if rec.lat:
            sends = np.array([s for s, _ in rec.lat], dtype=float)
            lats = np.array([l for _, l in rec.lat], dtype=float) / 1e6
            rel = (sends - rec.t0) / 1e9
            for second in range(int(math.ceil(window))):
                sel = lats[(rel >= second) & (rel < second + 1)]
                if len(sel):
                    series.append([second, int(len(sel)), round(float(np.percentile(sel, 50)), 2),
                                   round(float(np.percentile(sel, 99)), 2), round(float(sel.max()), 2)])
        return {
            "target": self.target, "pairs": args.pairs, "players": 2 * args.pairs, "mode": args.mode,
            "duration_s": round(window, 2), "connect_s": round(connect_s, 2), "drain_s": round(drain_s, 2),
            "sent": dict(rec.sent), "sent_in_window": dict(rec.sent_window),
            "acked": dict(rec.acked), "acked_in_window": dict(rec.acked_window),
            "acked_per_s": round(sum(rec.acked_window.values()) / window, 1),   # = persisted actions per second
            "offered_per_s": round(sum(rec.sent_window.values()) / window, 1),
            "received_chats": len(rec.received),
            "lost": len(lost), "lost_examples": sorted(lost)[:10],
            "duplicated": sum(1 for c in rec.received.values() if c > 1),
            "unacked_at_end": unacked, "errors": dict(rec.errors), "ack_timeouts": rec.timeouts,
            "unexpected_disconnects": rec.disconnects, "corrupt": rec.corrupt, "stray_acks": rec.duplicate_acks,
            "match_rotations": rec.rotations, "pairs_out_of_matches": rec.pool_empty,
            "latency_ms": pct(lat), "ack_latency_ms": pct(ack), "bot_loop_lag_ms": pct(lag),
            "send_lateness_ms": pct(late), "join_s": pct(np.array(rec.connect_s)),
            "latency_per_second": series,
            "latency_sample_ms": [round(float(x), 2) for x in
                                  (lat if len(lat) <= 20000 else np.random.default_rng(0).choice(lat, 20000))],
        }


# ------------------------------------------------------------------------------------------- profiler
def start_profiles(pids: list[int], seconds: int, label: str) -> list[tuple[subprocess.Popen, Path, str]]:
    """py-spy on the server processes: the first on CPU (--gil: the GIL holder), the second on wall time (--idle)."""
    spy = Path(PY).with_name("py-spy")
    out = []
    for pid, how in zip(pids, ("cpu", "wall")):
        path = OUT / f"profile-{label}-{how}.txt"
        cmd = [str(spy), "record", "--pid", str(pid), "--duration", str(seconds), "--rate", "97", "--format", "raw",
               "--full-filenames", "--threads", "--nonblocking", "--output", str(path)]
        cmd.append("--idle" if how == "wall" else "--gil")
        out.append((subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE), path, how))
    return out


# ----------------------------------------------------------------------------------------------- runs
def wait_quiet(limit_pct: float, max_wait: float) -> float:
    """Wait (bounded) until the machine is mostly idle; returns the last busy % measured."""
    deadline = time.monotonic() + max_wait
    while True:
        busy = 100 - psutil.cpu_times_percent(interval=2).idle
        if busy <= limit_pct or time.monotonic() >= deadline:
            return round(busy, 1)
        log(f"machine busy {busy:.0f}% (other work); waiting for it to settle ...")


def run_target(args, target: str) -> dict:
    label = args.label or f"{args.mode}-{args.pairs}"
    redis_url = args.redis_url
    env = {**os.environ, "DATABASE_URL": args.db_url, "REDIS_URL": redis_url, "SECRET_KEY": secrets.token_urlsafe(50),
           "GT_PSEUDONYM_KEY": secrets.token_urlsafe(50),
           "DEBUG": "0", "LOG_LEVEL": "WARNING", "PYTHONUNBUFFERED": "1",
           "GT_WS_RATE": str(args.ws_rate if args.ws_rate else (8 if args.mode == "human" else 100000)),
           "GT_WS_BURST": str(16 if args.mode == "human" and not args.ws_rate else 100000),
           "DJANGO_SETTINGS_MODULE": "groundtalk_web.settings", "GT_BENCH_PATCHES": args.patches}
    if "hc" in args.patches.split(","):
        env["GT_DB_HEALTH_CHECKS"] = "1"
    asgi_patches = {"serial", "trace"} & set(args.patches.split(","))
    if asgi_patches:
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(BENCH)])
    n_matches = args.pairs + args.spare_matches
    if target == "bare":
        import uuid

        matches = [{"match_id": str(uuid.uuid4()), "speaker": "speaker", "listener": "listener"}
                   for _ in range(n_matches)]
        ports = [args.bare_port + i for i in range(args.server_workers)]
        kind = "bare"
        setup = {}
    else:
        setup = {"migrate_s": round(reset_database(env, fresh=args.fresh_db), 1)}
        flush_redis(redis_url)
        started = time.monotonic()
        matches_file = OUT / f"matches-{label}.json"
        subprocess.run([PY, str(BENCH / "make_matches.py"), "--count", str(n_matches), "--rounds", str(args.rounds),
                        "--out", str(matches_file)], cwd=ROOT, env=env, check=True)
        matches = json.loads(matches_file.read_text())
        setup["create_matches_s"] = round(time.monotonic() - started, 1)
        ports = [args.port + i for i in range(args.server_workers)]
        kind = args.server
    if args.wait_quiet:
        setup["busy_before_pct"] = wait_quiet(15, args.wait_quiet)
    log(f"[{target}] starting {len(ports)} x {kind} on ports {ports[0]}..{ports[-1]}")
    app = "patched_asgi:application" if asgi_patches else "groundtalk_web.asgi:application"
    procs = start_servers(kind, ports, env, label, args.server_args.split() if args.server_args else [], app)
    pids = [p.pid for p in procs]
    snaps: dict = {}
    profiles: list = []
    holder: dict = {}

    def on_window(what: str) -> None:
        snaps[what] = cpu_snapshot(pids)
        if what == "start" and args.profile and target == "groundtalk":
            worker_pids = [p.pid for p in _tree(pids) if "uvicorn" in " ".join(p.cmdline()) or
                           "daphne" in " ".join(p.cmdline())]
            profiles.extend(start_profiles(worker_pids[:2] or pids[:2], args.profile, label))

    try:
        bots = Bots(args, target, matches, ports, on_window)
        holder["bots"] = bots
        try:
            import uvloop

            result = uvloop.run(bots.run())
        except ImportError:
            result = asyncio.run(bots.run())
    finally:
        stop_servers(procs)
    result["cpu_pct_of_one_core"] = cpu_report(snaps["start"], snaps["stop"])
    result["server"] = kind
    result["server_workers"] = len(ports)
    result["layer"] = "pubsub" if target == "groundtalk" else None
    result["route"] = args.route if target == "groundtalk" else None
    result["patches"] = args.patches if target == "groundtalk" else None
    result["setup"] = setup
    if target == "groundtalk":
        result["db_check"] = db_check(args.db_url, holder["bots"].rec)
    for proc, path, how in profiles:
        try:
            _, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
        if path.exists():
            from profile_summary import summarise

            result.setdefault("profile", {})[how] = summarise(path)
        else:
            result.setdefault("profile", {})[how] = {"error": err.decode(errors="replace")[-500:]}
    return result


def print_result(r: dict) -> None:
    lat, cpu = r["latency_ms"], r["cpu_pct_of_one_core"]
    log(f"== {r['target']} ({r['server']} x{r['server_workers']}"
        f"{', layer ' + r['layer'] if r.get('layer') else ''}{', patches ' + r['patches'] if r.get('patches') else ''})"
        f": {r['pairs']} pairs, {r['mode']}, {r['duration_s']} s")
    if lat.get("n"):
        log(f"   partner latency ms: p50 {lat['p50']}  p90 {lat['p90']}  p99 {lat['p99']}  max {lat['max']}"
            f"  (n={lat['n']});  ack p99 {r['ack_latency_ms'].get('p99')} ms")
    log(f"   offered {r['offered_per_s']}/s  acked {r['acked_per_s']}/s  sent {r['sent']}  acked {r['acked']}  "
        f"received chats {r['received_chats']}")
    log(f"   lost {r['lost']}  duplicated {r['duplicated']}  unacked {r['unacked_at_end']}  errors {r['errors']}  "
        f"timeouts {r['ack_timeouts']}  disconnects {r['unexpected_disconnects']}  rotations {r['match_rotations']}")
    if "db_check" in r:
        log(f"   PostgreSQL: {r['db_check']}")
    log(f"   CPU % of one core: server {cpu['server']}  postgres {cpu['postgres']}  redis {cpu['redis']}  "
        f"bots {cpu['bots']}  irq {cpu['kernel_irq']}  other {cpu['other']}  (machine busy {cpu['machine_busy_pct_of_all_cores']}% "
        f"of {cpu['cores']} cores)")
    log(f"   bot loop lag p99 {r['bot_loop_lag_ms'].get('p99')} ms max {r['bot_loop_lag_ms'].get('max')} ms; "
        f"send lateness p99 {r['send_lateness_ms'].get('p99')} ms")
    for how, prof in (r.get("profile") or {}).items():
        if "categories" in prof:
            top = ", ".join(f"{k} {v}%" for k, v in list(prof["categories"].items())[:8])
            log(f"   profile ({how}, {prof['samples']} samples): {top}")


def main() -> None:
    global DB_NAME
    parser = argparse.ArgumentParser(description="GroundTalk load benchmark (see the module docstring).")
    parser.add_argument("--pairs", type=int, default=500)
    parser.add_argument("--duration", type=float, default=60)
    parser.add_argument("--mode", choices=["human", "saturation"], default="human")
    parser.add_argument("--interval", type=float, default=2.0, help="human pace: seconds between a player's actions")
    parser.add_argument("--server-workers", type=int, default=2)
    parser.add_argument("--server", choices=["uvicorn", "daphne"], default="uvicorn")
    parser.add_argument("--server-args", default="", help="extra arguments for the server command")
    parser.add_argument("--route", choices=["seat", "match"], default="seat",
                        help="seat: a match's two players on different server processes (default); "
                             "match: both on the process its match id hashes to")
    parser.add_argument("--patches", default="",
                        help="experiments, comma-separated: hc (Django's connection health checks on), "
                             "serial and trace (bench/patched_asgi.py)")
    parser.add_argument("--baseline", action=argparse.BooleanOptionalAction, default=True,
                        help="also run the bare relay baseline (default: yes)")
    parser.add_argument("--only-baseline", action="store_true")
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--round-messages", type=int, default=6,
                        help="the listener clicks once its round has this many chat messages")
    parser.add_argument("--spare-matches", type=int, default=None,
                        help="extra matches for pairs whose match ends (default: 0 human, 4 x pairs saturation)")
    parser.add_argument("--drain", type=float, default=60,
                        help="at most this many seconds to wait for stragglers after the window (ends early)")
    parser.add_argument("--ws-rate", type=float, default=None,
                        help="GT_WS_RATE for the server (default: 8 human, unlimited saturation)")
    parser.add_argument("--connect-concurrency", type=int, default=50)
    parser.add_argument("--profile", type=int, default=0, help="py-spy the first two server processes for N s")
    parser.add_argument("--wait-quiet", type=float, default=120,
                        help="before each target, wait up to N s for the machine to be idle (other work)")
    parser.add_argument("--port", type=int, default=8101)
    parser.add_argument("--bare-port", type=int, default=8201)
    parser.add_argument("--db-url", default=f"postgres://postgres@127.0.0.1:5432/{DB_NAME}")
    parser.add_argument("--fresh-db", action="store_true", help="migrate the database afresh instead of copying the "
                                                               "migrated template (bench/model_batching.py)")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/2")
    parser.add_argument("--label", default="")
    parser.add_argument("--out", default="", help="JSON results file (default bench/out/<label>.json)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    DB_NAME = urlparse(args.db_url).path.lstrip("/")
    if not re.fullmatch(r"groundtalk_bench\w*", DB_NAME):   # this script drops and recreates it
        sys.exit("relay.py: --db-url must name a database called groundtalk_bench or groundtalk_bench_<suffix>")
    if args.spare_matches is None:
        args.spare_matches = 0 if args.mode == "human" else 4 * args.pairs
    if args.duration > 600 or args.pairs > 2000:
        sys.exit("relay.py: keep runs bounded (duration <= 600 s, pairs <= 2000)")
    random.seed(args.seed)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if hard < 4 * args.pairs + 200:
        log(f"warning: open-file limit {hard} is low for {2 * args.pairs} connections")
    OUT.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(BENCH))
    targets = ["bare"] if args.only_baseline else ["groundtalk", "bare"] if args.baseline else ["groundtalk"]
    label = args.label or f"{args.mode}-{args.pairs}"
    meta = {"label": label, "argv": sys.argv[1:], "started": time.strftime("%Y-%m-%d %H:%M:%S"),
            "machine": {"cpus": psutil.cpu_count(), "cpu_model": _cpu_model(), "memory_gb": round(
                psutil.virtual_memory().total / 2**30, 1), "python": sys.version.split()[0]},
            "args": vars(args), "code": _code_version(), "results": []}
    out_path = Path(args.out) if args.out else OUT / f"{label}.json"
    for target in targets:
        result = run_target(args, target)
        print_result(result)
        meta["results"].append(result)
        out_path.write_text(json.dumps(meta, indent=1))
    log(f"results written to {out_path.relative_to(ROOT) if out_path.is_relative_to(ROOT) else out_path}")


def _code_version() -> dict:
    """The commit measured, and whether the server's files differ from it (read-only git)."""
    def git(*cmd: str) -> str:
        try:
            return subprocess.run(["git", *cmd], cwd=ROOT, capture_output=True, text=True, timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""
    dirty = git("status", "--porcelain", "--", "games", "groundtalk_web", "agents")
    return {"commit": git("rev-parse", "--short", "HEAD"), "server_files_modified": bool(dirty)}


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


if __name__ == "__main__":
    main()
