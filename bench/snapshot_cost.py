"""What rewriting a match snapshot costs PostgreSQL, by how the column is stored.

    .venv/bin/python bench/snapshot_cost.py [--updates 1000] [--db-url postgres://postgres@127.0.0.1:5432/test]

Every action rewrites ``games_match.state`` (a colors match's snapshot is 11-17 KB: the 50 rounds'
colours plus the history so far), and PostgreSQL compresses and stores a value that size out of line
(TOAST). This builds a temporary table shaped like ``games_match`` and, per storage choice, runs the
hot path's statements (lock the row, rewrite the snapshot, commit) ``--updates`` times, reporting the
PostgreSQL backend's CPU per update (from /proc, so run it on the database's machine) and the wall
time. The ``small`` row is the floor: the same statements with a 40-byte snapshot. First it times
reading and writing that snapshot in Python with the standard library and with orjson.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def snapshot_text(rounds_played: int) -> str:
    """A colors snapshot as the game writes it, ``rounds_played`` rounds in."""
    from games.colors.content import generate
    from games.colors.rules import initial_state

    state = initial_state(generate(7, {"rounds": 50}), 7, {"rounds": 50})
    state["history"] = [{"round": i + 1, "chosen": 0, "correct": True, "condition": "split",
                         "positions": {"speaker": [1, 2, 0], "listener": [0, 2, 1]},
                         "response_ms": 3000 + i, "speaker_words": 4} for i in range(rounds_played)]
    state["round"] = rounds_played
    return json.dumps(state)


def json_costs(text: str, number: int = 2000) -> None:
    """Reading and writing the snapshot in Python: the standard library against orjson."""
    import timeit

    import orjson

    state = json.loads(text)
    encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    for name, call in [("json.loads", lambda: json.loads(text)), ("orjson.loads", lambda: orjson.loads(text)),
                       ("json encode", lambda: encode(state)), ("orjson.dumps", lambda: orjson.dumps(state))]:
        print(f"  {name:30s} {1e6 * timeit.timeit(call, number=number) / number:8.1f} us")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=1000)
    parser.add_argument("--db-url", default=os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/test"))
    args = parser.parse_args()
    conn = psycopg.connect(args.db_url)
    cur = conn.cursor()
    cur.execute("SELECT pg_backend_pid(), 'lz4' = ANY(enumvals) FROM pg_settings "
                "WHERE name = 'default_toast_compression'")
    pid, has_lz4 = cur.fetchone()
    tick = os.sysconf("SC_CLK_TCK")

    def backend_cpu() -> float:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / tick

    big = snapshot_text(25)
    print(f"snapshot: {len(big)} bytes of JSON (a colors match 25 rounds in)")
    json_costs(big)
    print(f"PostgreSQL, {args.updates} updates each:")
    choices = [("pglz (PostgreSQL's default)", "pglz", "EXTENDED", big)]
    if has_lz4:
        choices.append(("lz4 (migration 0002)", "lz4", "EXTENDED", big))
        choices.append(("lz4, kept in the row (MAIN)", "lz4", "MAIN", big))
    choices.append(("small snapshot (floor)", "pglz", "EXTENDED", '{"round": 3}'))
    for name, method, storage, text in choices:
        cur.execute("CREATE TEMP TABLE snap (id int PRIMARY KEY, seq int, state jsonb)")
        cur.execute(f"ALTER TABLE snap ALTER COLUMN state SET COMPRESSION {method}")
        cur.execute(f"ALTER TABLE snap ALTER COLUMN state SET STORAGE {storage}")
        cur.execute("INSERT INTO snap VALUES (1, 0, %s)", [text])
        conn.commit()
        cpu, wall = backend_cpu(), time.perf_counter()
        for i in range(args.updates):
            cur.execute("SELECT seq FROM snap WHERE id = 1 FOR UPDATE")
            cur.execute("UPDATE snap SET state = %s::jsonb, seq = %s WHERE id = 1", [text, i])
            conn.commit()
        cpu, wall = backend_cpu() - cpu, time.perf_counter() - wall
        print(f"  {name:30s} PostgreSQL CPU {1e6 * cpu / args.updates:6.0f} us/update   "
              f"wall {1e6 * wall / args.updates:6.0f} us/update")
        cur.execute("DROP TABLE snap")
        conn.commit()
    conn.close()


if __name__ == "__main__":
    main()
