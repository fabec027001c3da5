"""Summarise a py-spy raw (collapsed stacks) profile of a GroundTalk server process by where time goes.

    .venv/bin/python bench/profile_summary.py bench/out/profile-saturation-50-cpu.txt

Each sample is put in one category by its innermost frame that matches a rule (so ``json.dumps``
called by the ORM counts as JSON, a psycopg call counts as PostgreSQL whoever made it). Samples of
idle threads (recorded with ``--idle``) are split into "idle" and "waiting" kinds by their leaf.
Percentages are of all samples of the file; ``threads`` splits them into the event-loop thread and
the database worker threads (asgiref ``sync_to_async(thread_sensitive=False)`` runs on the loop's
default thread pool, threads ``uvloop_N``). bench/relay.py records one server process with
``--gil`` (only the thread holding the GIL: Python CPU time; psycopg waiting on PostgreSQL is not
in it) and another with ``--idle`` (every thread, waiting included: wall time).
"""
from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

FRAME = re.compile(r"^(?P<func>.*) \((?P<file>[^()]*?)(?::(?P<line>\d+))?\)$")

# (category, test on (func, file)) checked from the innermost frame outwards; first match wins
RULES = [
    ("idle: thread pool worker waiting for work", lambda f, p: p.endswith("concurrent/futures/thread.py") and f == "_worker"),
    ("event loop: uvloop C code (I/O, callbacks) or idle", lambda f, p: p.endswith("asyncio/runners.py") or
     (p.endswith("uvloop/__init__.py") and f in ("run", "new_event_loop"))),
    ("wait: broadcast future (thread waits for main loop + Redis publish)",
     lambda f, p: f == "broadcast_events" and p.endswith("live/broadcast.py")),
    ("JSON encode/decode", lambda f, p: "/json/" in p),
    ("PostgreSQL: health-check SELECT 1 (CONN_HEALTH_CHECKS)", lambda f, p: f == "is_usable"),
    ("PostgreSQL: psycopg calls (send, wait, parse)",
     lambda f, p: "django/db/backends/" in p and f in ("_execute", "execute", "_commit", "commit", "_rollback",
                                                       "executemany", "_executemany", "ensure_connection",
                                                       "connect", "get_new_connection", "_set_autocommit")),
    ("Django ORM (query build, SQL compile, model rows)", lambda f, p: "django/db/" in p),
    ("websocket permessage-deflate (zlib)", lambda f, p: "permessage_deflate" in p),
    ("websocket protocol (uvicorn + websockets)", lambda f, p: "/websockets/" in p or "uvicorn/" in p
     or "/daphne/" in p or "/autobahn/" in p or "/twisted/" in p),
    ("channel layer (channels_redis + redis-py)", lambda f, p: "channels_redis/" in p or "/redis/" in p
     or "msgpack" in p),
    ("Channels consumer + routing", lambda f, p: "/channels/" in p),
    ("asgiref sync_to_async thread hop", lambda f, p: "/asgiref/" in p),
    ("GroundTalk services + rules + views", lambda f, p: "/games/" in p or "/agents/" in p),
    ("Django other (settings, signals, timezone)", lambda f, p: "/django/" in p),
    ("asyncio / threads / queues", lambda f, p: "asyncio/" in p or "concurrent/futures" in p or p.endswith(
        ("threading.py", "queue.py", "selectors.py", "contextvars.py", "functools.py"))),
]


def parse(path: Path):
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        parts = stack.split(";")
        thread = ""
        if parts[0].startswith(("thread (", "process ")):
            thread, parts = parts[0], parts[1:]
        frames = []
        for part in parts:
            m = FRAME.match(part)
            if m:
                frames.append((m["func"], m["file"] or ""))
        yield thread, frames, int(count)


def categorise(frames: list[tuple[str, str]]) -> str:
    for func, path in reversed(frames):
        func = func.rsplit(".", 1)[-1]   # py-spy writes Class.method
        for name, test in RULES:
            if test(func, path):
                return name
    return "other"


def summarise(path: Path | str) -> dict:
    path = Path(path)
    categories, threads, leaves = Counter(), Counter(), Counter()
    total = 0
    for thread, frames, count in parse(path):
        total += count
        name = thread.split(":", 1)[1].strip() if ":" in thread else "MainThread"
        threads["event loop thread" if name.startswith("MainThread") else
                "db threads (the loop's default executor)" if name.startswith(("uvloop_", "asyncio_")) else
                f"other ({name.split('-')[0].split('_')[0]})"] += count
        categories[categorise(frames)] += count
        if frames:
            func, file = frames[-1]
            leaves[f"{func} ({'/'.join(file.split('/')[-2:])})"] += count

    def pct(counter: Counter, n: int | None = None) -> dict:
        return {k: round(100 * v / total, 1) for k, v in counter.most_common(n)} if total else {}

    return {"file": str(path), "samples": total, "categories": pct(categories), "threads": pct(threads),
            "top_leaves": pct(leaves, 20)}


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        print(json.dumps(summarise(arg), indent=1))
