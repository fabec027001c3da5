"""bench/llm_agents.py end to end at a tiny size: a real agent_worker plays an LLM listener against
the stand-in (latency 0.3 s), every figure present, the endpoint's concurrency within max_concurrency.

The LLM path only: the torch baseline is bench/model_batching.py's worker, smoke-tested by
tests/bench/test_model_batching.py. No timing is asserted (the figures live in docs/bench.md).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(not (settings.REDIS_URL and os.environ.get("DATABASE_URL", "").startswith("postgres")),
                                reason="needs the full stack")


def test_llm_agents_benchmark_runs_and_measures_the_overhead_and_the_endpoint(tmp_path):
    out, plot = tmp_path / "smoke.json", tmp_path / "smoke.png"
    db_name = f"groundtalk_bench_llm_ci{os.getpid()}"
    proc = subprocess.run(
        [sys.executable, "bench/llm_agents.py", "--no-torch", "--matches", "3", "--max-concurrency", "2",
         "--latency-s", "0.3", "--duration", "2", "--warmup", "0.5", "--rounds", "3", "--bot-threads", "2", "--poll-ms", "40",
         "--db-name", db_name, "--redis-url", settings.REDIS_URL, "--out", str(out), "--plot", str(plot)],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (r,) = json.loads(out.read_text())["results"]
    assert (r["path"], r["max_concurrency"], r["matches"]) == ("llm", 2, 3)
    assert r["turns"] > 0 and r["turns_per_s"] > 0 and r["bot_errors"] == 0 and r["fallbacks"] == 0, r
    assert r["turns_with_calls"] > 0 and set(r["outcomes"]) == {"acted"}, r
    # the endpoint's time as the agent recorded it covers the stand-in's latency; the overhead is the rest
    assert r["endpoint_ms"]["p50"] >= 300 and r["latency_ms"]["p50"] > r["endpoint_ms"]["p50"], r
    assert r["overhead_ms"]["n"] == r["own_overhead_ms"]["n"] == r["turns_with_calls"], r
    assert r["own_overhead_ms"]["p50"] > 0 and r["record_to_commit_ms"]["p50"] > 0, r
    # three matches, at most two calls at once: max_concurrency held at the endpoint
    assert r["endpoint"]["max_in_flight"] == 2 and r["endpoint"]["chat_completions"] > 0, r
    assert plot.stat().st_size > 0
    assert "| path | max_concurrency | matches |" in proc.stdout   # the docs table
    import psycopg

    conn = psycopg.connect(host="127.0.0.1", user="postgres", dbname="postgres")
    with conn.cursor() as cur:   # the benchmark dropped its database
        cur.execute("SELECT count(*) FROM pg_database WHERE datname = %s", [db_name])
        assert cur.fetchone()[0] == 0
    conn.close()
