"""The cost of one action on the server, without websockets: queries, round trips, bytes, CPU.

    .venv/bin/python bench/action_cost.py [--actions 300] [--profile]

Runs ``live.services.match_apply_action`` the way the websocket consumer does (one call per
action, ``close_old_connections()`` before and after it as ``channels.db.database_sync_to_async``
does) against the benchmark database (``DATABASE_URL``, default ``groundtalk_bench``; it must be
migrated: run bench/relay.py once) and reports per action: SQL statements, PostgreSQL round trips
(statements + commits + health checks), bytes of JSON written, wall and CPU time. The channel-layer
broadcast after commit goes to Redis db 2 as in the benchmark. ``--profile`` adds a pyinstrument
call tree.
"""
from __future__ import annotations

import argparse
import os
import secrets
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/groundtalk_bench")
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/2")
os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(50))   # the full stack refuses to start without both
os.environ.setdefault("GT_PSEUDONYM_KEY", secrets.token_urlsafe(50))   # keys, and with a weak SECRET_KEY
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "groundtalk_web.settings")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--actions", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--round-messages", type=int, default=6)
    parser.add_argument("--profile", action="store_true", help="print a pyinstrument call tree")
    parser.add_argument("--pyspy", default="", help="also record py-spy (--gil, raw) of the timed loop to this file")
    parser.add_argument("--pyspy-seconds", type=int, default=5)
    args = parser.parse_args()

    import django

    django.setup()
    from django.db import close_old_connections, connection
    from django.db.backends.postgresql.base import DatabaseWrapper

    from games.colors.content import generate
    from live.models import Match, Seat
    from live.services import SeatSpec, match_apply_action, match_create

    counts = {"statements": 0, "commits": 0, "health_checks": 0}

    def wrapper(execute, sql, params, many, context):
        counts["statements"] += 1
        return execute(sql, params, many, context)

    original_usable, original_commit = DatabaseWrapper.is_usable, DatabaseWrapper._commit

    def is_usable(self):
        counts["health_checks"] += 1
        return original_usable(self)

    def commit(self):
        counts["commits"] += 1
        return original_commit(self)

    DatabaseWrapper.is_usable, DatabaseWrapper._commit = is_usable, commit

    content = generate(12345, {"rounds": args.rounds})
    current = {"round": 1, "created": 0}

    def new_match():
        current["created"] += 1
        current["round"] = 1
        current["match"] = match_create(
            game_id="colors_v1", seats={r: SeatSpec(Seat.Kind.HUMAN) for r in ("speaker", "listener")},
            seed=current["created"], config={"rounds": args.rounds}, content=content)

    new_match()
    row = Match.objects.filter(pk=current["match"].pk).values_list("content", "state").get()
    import json

    sizes = {"content_json_bytes": len(json.dumps(row[0])), "state_json_bytes_at_start": len(json.dumps(row[1]))}

    def one(i: int) -> None:
        """Speaker and listener alternate; every round-messages-th listener action is a click."""
        role = "speaker" if i % 2 == 0 else "listener"
        click = role == "listener" and (i // 2) % args.round_messages == args.round_messages - 1
        if click:
            action = {"type": "click", "position": 0, "round": current["round"]}
        else:
            action = {"type": "chat", "text": f"{i}.{role} {time.monotonic_ns()}"}
        close_old_connections()
        try:
            match_apply_action(match_id=current["match"].pk, role=role, action=action, client_action_id=f"a{i}")
        finally:
            close_old_connections()
        if click:
            current["round"] += 1
            if current["round"] > args.rounds:
                new_match()

    for i in range(20):   # warm up: connection, caches
        one(i)
    for key in counts:
        counts[key] = 0
    n = args.actions
    profiler = None
    spy = None
    if args.pyspy:
        import subprocess

        spy = subprocess.Popen([str(Path(sys.executable).with_name("py-spy")), "record", "--pid", str(os.getpid()),
                                "--rate", "250", "--format", "raw", "--full-filenames", "--gil", "--nonblocking",
                                "--duration", str(args.pyspy_seconds), "--output", args.pyspy],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1.0)
    if args.profile:
        from pyinstrument import Profiler

        profiler = Profiler(interval=0.0005)
        profiler.start()
    wall0, cpu0 = time.perf_counter(), time.process_time()
    with connection.execute_wrapper(wrapper):
        for i in range(20, 20 + n):
            one(i)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    if profiler:
        profiler.stop()
    if spy:
        spy.wait(timeout=args.pyspy_seconds + 30)
    state_bytes = len(json.dumps(Match.objects.only("state").get(pk=current["match"].pk).state))
    per = {k: round(v / n, 2) for k, v in counts.items()}
    print(f"actions: {n} (chats, and a click every {args.round_messages} listener actions); rounds {args.rounds}; "
          f"matches played {current['created']}")
    print(f"per action: SQL statements {per['statements']}, commits {per['commits']}, health checks "
          f"{per['health_checks']}  -> PostgreSQL round trips {per['statements'] + per['commits'] + per['health_checks']}")
    print(f"JSON sizes: {sizes}; state after the run {state_bytes} bytes")
    print(f"per action: wall {1000 * wall / n:.2f} ms, CPU of this process {1000 * cpu / n:.2f} ms "
          f"(serial, one connection: at most {n / wall:.0f} actions/s per thread)")
    if profiler:
        print(profiler.output_text(unicode=False, color=False, show_all=False))


if __name__ == "__main__":
    main()
