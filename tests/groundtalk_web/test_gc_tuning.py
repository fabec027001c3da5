"""Process-wide settings checked in fresh interpreters: groundtalk_web.gc_tuning (it changes the collector
of the process it runs in) and the numbers read from the environment."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
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


def test_write_path_numbers_from_the_environment_are_checked():
    code = ("import django, os; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'groundtalk_web.settings'); "
            "django.setup(); from django.conf import settings; "
            "print(settings.GT_ASYNC_PG_POOL, settings.GT_BROADCAST_SNAPSHOT_MAX)")
    for name, bad in [("GT_ASYNC_PG_POOL", "0"), ("GT_ASYNC_PG_POOL", "many"), ("GT_BROADCAST_SNAPSHOT_MAX", "-1")]:
        out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={**os.environ, name: bad},
                             capture_output=True, text=True)
        assert out.returncode != 0 and f"{name} must be a whole number of at least" in out.stderr, (name, bad)
    env = {**os.environ, "GT_ASYNC_PG_POOL": "4", "GT_BROADCAST_SNAPSHOT_MAX": "0"}
    ok = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.split() == ["4", "0"]


def test_reliability_seconds_from_the_environment_are_checked():
    code = ("import django, os; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'groundtalk_web.settings'); "
            "django.setup(); from django.conf import settings; "
            "print(settings.GT_WATCHDOG_S, settings.GT_AGENT_TIMEOUT_S, settings.GT_HTTP_DB_WAIT_S)")
    for name, bad in [("GT_WATCHDOG_S", "often"), ("GT_AGENT_TIMEOUT_S", "-1"), ("GT_HTTP_DB_WAIT_S", "nan")]:
        out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={**os.environ, name: bad},
                             capture_output=True, text=True)
        assert out.returncode != 0 and f"{name} must be a number of at least 0" in out.stderr, (name, bad)
    env = {**os.environ, "GT_WATCHDOG_S": "0.25", "GT_AGENT_TIMEOUT_S": "3", "GT_HTTP_DB_WAIT_S": "0"}
    ok = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.split() == ["0.25", "3.0", "0.0"]


# --- DEBUG and error pages (issue 9): Django's debug pages show settings and tracebacks to anyone
# who reaches the server, so DEBUG is off unless DEBUG=1, in the embedded mode too.
ERROR_PROBE = r"""
import os, sys, types
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "groundtalk_web.settings")
import django
django.setup()
from django.conf import settings
from django.test import Client
from django.test.utils import override_settings
from django.urls import path
from groundtalk_web import urls as real

def boom(request):
    raise RuntimeError("forced failure " + settings.SECRET_KEY)

mod = types.ModuleType("boom_urls")
mod.urlpatterns = [path("boom/", boom)] + real.urlpatterns
for code in (400, 403, 404, 500):
    setattr(mod, f"handler{code}", getattr(real, f"handler{code}"))
sys.modules["boom_urls"] = mod
print("DEBUG", settings.DEBUG)
with override_settings(ROOT_URLCONF="boom_urls"):
    c = Client(HTTP_HOST="localhost", raise_request_exception=False)
    for url in ("/boom/", "/no/such/page/", "/p/%00/"):
        r = c.get(url)
        print("PAGE", url, r.status_code, r.content.decode().replace("\n", " "))
    r = c.get("/static/gt/style.css")
    print("STATIC", r.status_code, b"".join(r.streaming_content)[:200].decode() if r.streaming else r.content[:200])
"""


def error_probe(env_changes: dict) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in {"DEBUG", "DATABASE_URL", "REDIS_URL", "GT_AGENT_MODE"}}
    env.update(env_changes)
    out = subprocess.run([sys.executable, "-c", ERROR_PROBE], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.splitlines()
    pages = {line.split(" ", 3)[1]: (int(line.split(" ", 3)[2]), line.split(" ", 3)[3])
             for line in lines if line.startswith("PAGE ")}
    static = next(line for line in lines if line.startswith("STATIC "))
    return {"debug": next(line for line in lines if line.startswith("DEBUG ")) == "DEBUG True",
            "pages": pages, "static": static, "stderr": out.stderr}


LEAKS = ("Traceback", "forced failure", "SECRET_KEY", os.environ.get("SECRET_KEY", "dev-only-insecure-key-change-me"), "INSTALLED_APPS", "DJANGO_SETTINGS_MODULE",
         "Using the URLconf", "Request Method:", 'File "')


def test_debug_is_off_by_default_in_every_mode_and_error_pages_are_plain():
    full = {"DATABASE_URL": os.environ.get("DATABASE_URL") or "postgres://postgres@127.0.0.1:5432/x",
            "REDIS_URL": os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/1"}
    for mode, env in (("embedded", {}), ("full stack", full), ("DEBUG=0", {"DEBUG": "0"})):
        result = error_probe(env)
        assert result["debug"] is False, mode
        for url, status in (("/boom/", 500), ("/no/such/page/", 404), ("/p/%00/", 400)):
            got, body = result["pages"][url]
            assert got == status, (mode, url, got)
            assert 'class="brand">GroundTalk' in body and "/static/gt/style.css" in body, (mode, url, body[:300])
            assert not [w for w in LEAKS if w in body], (mode, url, body[:500])
        # WhiteNoise still serves static files (found at start-up through the finders) with DEBUG off
        assert result["static"].startswith("STATIC 200 ") and "--ink" in result["static"], (mode, result["static"])
        assert "forced failure" in result["stderr"]   # the operator's log keeps the traceback


def test_debug_1_turns_the_debug_pages_on():
    result = error_probe({"DEBUG": "1"})
    assert result["debug"] is True
    assert result["pages"]["/boom/"][0] == 500 and "forced failure" in result["pages"]["/boom/"][1]
