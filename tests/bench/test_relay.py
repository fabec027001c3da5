"""bench/relay.py end to end at a tiny size: both targets run, every action is accounted for.

No timing is asserted (the figures live in docs/bench.md); this keeps the benchmark working.
"""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(not (settings.REDIS_URL and os.environ.get("DATABASE_URL", "").startswith("postgres")),
                                reason="needs the full stack")


def free_ports(n: int) -> int:
    """The first of ``n`` consecutive free ports."""
    for base in range(20100, 30000, 10):
        try:
            socks = []
            for port in range(base, base + n):
                s = socket.socket()
                s.bind(("127.0.0.1", port))
                socks.append(s)
            for s in socks:
                s.close()
            return base
        except OSError:
            for s in socks:
                s.close()
    raise RuntimeError("no free ports")


def test_relay_benchmark_runs_both_targets_and_accounts_for_every_action(tmp_path):
    out = tmp_path / "smoke.json"
    base = free_ports(4)
    db_url = f"postgres://postgres@127.0.0.1:5432/groundtalk_bench_ci{os.getpid()}"
    proc = subprocess.run(
        [sys.executable, "bench/relay.py", "--pairs", "4", "--duration", "3", "--mode", "human", "--interval", "0.5",
         "--drain", "10", "--wait-quiet", "0", "--port", str(base), "--bare-port", str(base + 2),
         "--db-url", db_url, "--redis-url", "redis://127.0.0.1:6379/3", "--label", "ci-smoke", "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=240)
    try:
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        results = {r["target"]: r for r in json.loads(out.read_text())["results"]}
        assert set(results) == {"groundtalk", "bare"}
        for r in results.values():
            assert r["acked"] == r["sent"] and sum(r["sent"].values()) > 0
            assert r["lost"] == 0 and r["duplicated"] == 0 and r["unexpected_disconnects"] == 0
            assert r["latency_ms"]["n"] > 0
        check = results["groundtalk"]["db_check"]
        assert check["ok"] and check["actions_logged"] == sum(results["groundtalk"]["acked"].values())
    finally:
        import psycopg

        conn = psycopg.connect(host="127.0.0.1", user="postgres", dbname="postgres")
        conn.autocommit = True
        with conn.cursor() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS groundtalk_bench_ci{os.getpid()} WITH (FORCE)")
        conn.close()
