"""Process-wide settings checked in fresh interpreters: groundtalk_web.gc_tuning (it changes the collector
of the process it runs in) and the GT_CHANNEL_LAYER choice."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROBE = ("import gc; from groundtalk_web import gc_tuning; print(gc_tuning.apply()); "
         "print(gc.get_threshold(), gc.get_freeze_count() > 0)")


def probe(value: str | None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "GT_GC_THRESHOLD"}
    if value is not None:
        env["GT_GC_THRESHOLD"] = value
    return subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True)


def test_server_default_freezes_startup_objects_and_raises_the_thresholds():
    out = probe(None)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == "(50000, 20, 10) True"


def test_thresholds_come_from_the_environment_and_default_means_cpython_settings():
    assert probe("1000,5,5").stdout.splitlines()[-1] == "(1000, 5, 5) True"
    assert probe("default").stdout.splitlines()[-1] == "(700, 10, 10) False"


def test_a_bad_setting_is_refused_clearly():
    for bad in ("50000,20", "a,b,c", "0,10,10"):
        out = probe(bad)
        assert out.returncode != 0 and "GT_GC_THRESHOLD" in out.stderr, (bad, out.stderr)


def test_an_unknown_channel_layer_setting_is_refused_clearly():
    env = {**os.environ, "REDIS_URL": "redis://127.0.0.1:6379/1", "GT_CHANNEL_LAYER": "nonsense"}
    out = subprocess.run([sys.executable, "-c", "import django, os; os.environ.setdefault('DJANGO_SETTINGS_MODULE', "
                          "'groundtalk_web.settings'); django.setup()"], cwd=ROOT, env=env, capture_output=True, text=True)
    assert out.returncode != 0 and "GT_CHANNEL_LAYER must be one of pubsub, pubsub-stock, core" in out.stderr
    env["GT_CHANNEL_LAYER"] = "core"
    ok = subprocess.run([sys.executable, "-c", "import django, os; os.environ.setdefault('DJANGO_SETTINGS_MODULE', "
                         "'groundtalk_web.settings'); django.setup()"], cwd=ROOT, env=env, capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr


def test_write_path_numbers_from_the_environment_are_checked():
    code = ("import django, os; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'groundtalk_web.settings'); "
            "django.setup(); from django.conf import settings; "
            "print(settings.GT_ASYNC_PG_POOL, settings.GT_BROADCAST_SNAPSHOT_MAX, settings.GT_CONDITIONAL_WRITES)")
    for name, bad in [("GT_ASYNC_PG_POOL", "0"), ("GT_ASYNC_PG_POOL", "many"), ("GT_BROADCAST_SNAPSHOT_MAX", "-1")]:
        out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={**os.environ, name: bad},
                             capture_output=True, text=True)
        assert out.returncode != 0 and f"{name} must be a whole number of at least" in out.stderr, (name, bad)
    env = {**os.environ, "GT_ASYNC_PG_POOL": "4", "GT_BROADCAST_SNAPSHOT_MAX": "0", "GT_CONDITIONAL_WRITES": "0"}
    ok = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.split() == ["4", "0", "False"]
