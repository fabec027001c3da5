"""bench/model_batching.py end to end at a tiny size: a real model worker (the committed neural
listener) under both configurations, every figure present, the turns counted from the match log.

No timing is asserted (the figures live in docs/bench.md); this keeps the benchmark working.
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


def test_model_batching_benchmark_runs_both_configurations(tmp_path):
    out, plot = tmp_path / "smoke.json", tmp_path / "smoke.png"
    db_name = f"groundtalk_bench_model_ci{os.getpid()}"
    proc = subprocess.run(
        [sys.executable, "bench/model_batching.py", "--matches", "1,3", "--batch-sizes", "4,1", "--duration", "3",
         "--warmup", "0.5", "--rounds", "3", "--bot-threads", "2", "--poll-ms", "40", "--model-repeats", "3",
         "--db-name", db_name,
         "--redis-url", settings.REDIS_URL, "--out", str(out), "--plot", str(plot)],
        cwd=ROOT, capture_output=True, text=True, timeout=400)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    data = json.loads(out.read_text())
    results = {(r["batch_size"], r["matches"]): r for r in data["results"]}
    assert set(results) == {(4, 1), (4, 3), (1, 1), (1, 3)}
    for r in results.values():
        assert r["turns"] > 0 and r["turns_per_s"] > 0 and r["bot_errors"] == 0, r
        assert r["latency_ms"]["n"] > 0 and r["latency_ms"]["p50"] <= r["latency_ms"]["p99"], r
        assert r["worker_model_ms"]["n"] > 0 and r["worker_overhead_ms"]["n"] > 0 and r["e2e_overhead_ms"]["n"] > 0, r
        assert r["worker_cpu_pct"] > 0 and r["bench_cpu_pct"] > 0 and r["postgres_cpu_pct"] >= 0, r
    assert results[(1, 3)]["batch_size_seen"]["max"] == 1, results[(1, 3)]   # batching off: one turn per act_batch
    assert plot.stat().st_size > 0
    assert "| batch_size | wait_ms | matches |" in proc.stdout   # the docs table
    assert [r["views"] for r in data["model_only"]] == [1, 3]   # the model-only part
    assert all(r["batched_call_ms"] > 0 and r["one_by_one_per_turn_ms"] > 0 for r in data["model_only"])
    import psycopg

    conn = psycopg.connect(host="127.0.0.1", user="postgres", dbname="postgres")
    with conn.cursor() as cur:   # the benchmark dropped its database
        cur.execute("SELECT count(*) FROM pg_database WHERE datname = %s", [db_name])
        assert cur.fetchone()[0] == 0
    conn.close()


def test_profile_summary_buckets_each_threads_samples(tmp_path):
    """``--profile``'s summary of py-spy's raw output (no py-spy needed): per thread group, the
    innermost frame that names a library decides the bucket; a thread parked waiting for work is
    idle; the GroundTalk frames with most samples are listed."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("model_batching", ROOT / "bench" / "model_batching.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    raw = tmp_path / "raw.txt"
    raw.write_text(
        "thread (1): MainThread;run (agents/serving/worker.py:150);_run_batch (agents/serving/worker.py:230);"
        "write_actions_if_current (live/match_store.py:290);execute (django/db/backends/utils.py:100);"
        "Connection.wait (psycopg/connection.py:495) 6\n"
        "thread (1): MainThread;run (agents/serving/worker.py:150);_run_batch (agents/serving/worker.py:240);"
        "view_for (games/colors/rules.py:80) 3\n"
        "thread (1): MainThread;_consume (agents/serving/worker.py:188);drain_events (kombu/connection.py:1);"
        "_epoll.poll (kombu/utils/eventio.py:83) 1\n"
        "thread (2): ThreadPoolExecutor-0_1;Thread._bootstrap (threading.py:1002);"
        "_worker (concurrent/futures/thread.py:81) 4\n")
    summary = bench.summarize_profile(raw)
    main = summary["MainThread"]
    assert main["samples"] == 10
    assert main["share_pct"] == {"PostgreSQL": 60.0, "python (CPU)": 30.0, "waiting for messages (broker poll)": 10.0}
    assert main["top_own_frames_pct"][0] == ["write_actions_if_current (live/match_store.py:290)", 60.0]
    assert summary["ThreadPoolExecutor"] == {"samples": 4, "share_pct": {"idle": 100.0}, "top_own_frames_pct": []}
