"""Production safety (issue 11, item 4): the keys a full stack refuses to start without, the HTTPS
settings behind a proxy (``manage.py check --deploy`` clean), and the embedded demo that will not
listen on a public address while DEBUG is on or admin/admin exists (``manage.py gt_listen_check``;
run.sh makes its check first, before migrating, in ``manage.py prepare_run``)."""
from __future__ import annotations

import os
import secrets
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from contextlib import closing

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from tests.conftest import ROOT, free_port

#: what every process does first (uvicorn, a worker, manage.py): read the settings module
SETUP = "from groundtalk_web import settings; print(settings.SECRET_KEY, settings.GT_PSEUDONYM_KEY)"
FULL_STACK = {"DATABASE_URL": "postgres://postgres@127.0.0.1:5432/nothing", "REDIS_URL": "redis://127.0.0.1:6379/7"}
#: keys that ``check --deploy`` calls strong (50 characters of secrets.token_urlsafe)
KEY = secrets.token_urlsafe(50)
PSEUDONYM_KEY = secrets.token_urlsafe(50)
KEY_NAMES = ("SECRET_KEY", "GT_PSEUDONYM_KEY", "DATABASE_URL", "REDIS_URL", "DEBUG", "GT_HTTPS", "ALLOWED_HOSTS")


def start(env: dict, code: str = SETUP) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k not in KEY_NAMES}
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={**base, **env}, capture_output=True, text=True)


def last_line(out: subprocess.CompletedProcess) -> str:
    return (out.stderr.strip().splitlines() or [""])[-1]


@pytest.mark.parametrize("keys, message", [
    ({}, "SECRET_KEY must be set to a secret of your own"),
    ({"SECRET_KEY": "change-me", "GT_PSEUDONYM_KEY": "p"}, "SECRET_KEY must be set"),   # the old compose default
    ({"SECRET_KEY": "dev-only-insecure-key-change-me", "GT_PSEUDONYM_KEY": "p"}, "SECRET_KEY must be set"),
    ({"SECRET_KEY": KEY}, "GT_PSEUDONYM_KEY must be set to a secret of your own"),
    ({"SECRET_KEY": KEY, "GT_PSEUDONYM_KEY": "  "}, "GT_PSEUDONYM_KEY must be set"),
    ({"SECRET_KEY": KEY, "GT_PSEUDONYM_KEY": KEY}, "GT_PSEUDONYM_KEY must differ from SECRET_KEY"),
])
def test_the_full_stack_refuses_to_start_without_its_own_two_keys(keys, message):
    for stack in (FULL_STACK, {"DATABASE_URL": FULL_STACK["DATABASE_URL"]}, {"REDIS_URL": FULL_STACK["REDIS_URL"]}):
        out = start({**stack, **keys})
        assert out.returncode != 0, (stack, keys, out.stdout)
        assert "ImproperlyConfigured" in last_line(out) and message in last_line(out), last_line(out)


def test_the_full_stack_starts_with_two_keys_and_the_demo_without():
    out = start({**FULL_STACK, "SECRET_KEY": KEY, "GT_PSEUDONYM_KEY": PSEUDONYM_KEY})
    assert out.returncode == 0 and out.stdout.split() == [KEY, PSEUDONYM_KEY], out.stderr
    out = start({})   # embedded, on one machine: the public development key, pseudonyms from it
    assert out.returncode == 0 and out.stdout.split() == ["dev-only-insecure-key-change-me"] * 2, out.stderr


WEAK_KEYS = [
    "test-secret",                              # the test suite's old key: 11 characters
    KEY[:49],                                   # one short of 50
    "a" * 64,                                   # long, but one character
    "abcd" * 20,                                # four different characters
    "django-insecure-" + secrets.token_urlsafe(50),   # startproject's throwaway keys
]


@pytest.mark.parametrize("weak", WEAK_KEYS, ids=["11 characters", "49 characters", "one character", "four characters",
                                              "django-insecure prefix"])
def test_the_full_stack_refuses_a_weak_secret_key(weak):
    """Issue 21, item 8: a SECRET_KEY that ``manage.py check --deploy`` calls weak (security.W009)
    stops every process of the full stack at start-up (uvicorn, workers, manage.py), saying how to
    make a good one; the key itself is never printed."""
    for stack in (FULL_STACK, {"DATABASE_URL": FULL_STACK["DATABASE_URL"]}, {"REDIS_URL": FULL_STACK["REDIS_URL"]}):
        out = start({**stack, "SECRET_KEY": weak, "GT_PSEUDONYM_KEY": PSEUDONYM_KEY})
        line = last_line(out)
        assert out.returncode != 0 and "ImproperlyConfigured" in line and "SECRET_KEY is weak" in line, line
        assert "secrets.token_urlsafe(50)" in line and weak not in out.stderr, line


def test_a_key_just_strong_enough_starts_and_the_demo_takes_any():
    """The bounds are Django's: 50 characters of 5 different ones pass. The embedded demo on one
    machine keeps whatever key it is given (or its public development key)."""
    out = start({**FULL_STACK, "SECRET_KEY": "abcde" * 10, "GT_PSEUDONYM_KEY": PSEUDONYM_KEY})
    assert out.returncode == 0 and out.stdout.split()[0] == "abcde" * 10, out.stderr
    out = start({"SECRET_KEY": "test-secret"})
    assert out.returncode == 0 and out.stdout.split() == ["test-secret"] * 2, out.stderr


def production_env(**extra) -> dict:
    return {**FULL_STACK, "SECRET_KEY": secrets.token_urlsafe(50), "GT_PSEUDONYM_KEY": secrets.token_urlsafe(50),
            "GT_HTTPS": "1", "ALLOWED_HOSTS": "study.example.org", **extra}


def check_deploy(env: dict) -> subprocess.CompletedProcess:
    # DJANGO_ALLOW_ASYNC_UNSAFE: set by the browser tests' conftest for Playwright in this process
    # (tests/browser/conftest.py); a deployment never sets it, and check --deploy refuses it.
    base = {k: v for k, v in os.environ.items() if k not in KEY_NAMES and k != "DJANGO_ALLOW_ASYNC_UNSAFE"}
    return subprocess.run([sys.executable, "manage.py", "check", "--deploy"], cwd=ROOT, env={**base, **env},
                          capture_output=True, text=True)


def test_check_deploy_is_clean_for_https_behind_a_proxy():
    out = check_deploy(production_env())
    assert out.returncode == 0, out.stderr
    # the one silenced check is security.W021 (HSTS preload: the domain owner's decision; settings.py)
    assert out.stdout.strip() == "System check identified no issues (1 silenced).", out.stdout + out.stderr
    assert "WARNINGS" not in out.stderr


def test_check_deploy_names_what_is_missing_without_https():
    out = check_deploy(production_env(GT_HTTPS="0", DEBUG="1"))
    found = out.stdout + out.stderr
    for check in ("security.W004", "security.W008", "security.W012", "security.W016", "security.W018"):
        assert check in found, check


def test_https_settings():
    code = ("import django.conf, os; os.environ['DJANGO_SETTINGS_MODULE'] = 'groundtalk_web.settings'; "
            "s = django.conf.settings; print(s.SECURE_PROXY_SSL_HEADER, s.SECURE_SSL_REDIRECT, "
            "s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, s.SECURE_HSTS_SECONDS, "
            "s.SECURE_HSTS_INCLUDE_SUBDOMAINS, s.SECURE_HSTS_PRELOAD)")
    out = start(production_env(), code)
    assert out.stdout.strip() == "('HTTP_X_FORWARDED_PROTO', 'https') True True True 31536000 True False", out.stderr
    out = start(production_env(GT_HSTS_SECONDS="3600", GT_HSTS_PRELOAD="1", GT_SSL_REDIRECT="0"), code)
    assert out.stdout.strip() == "('HTTP_X_FORWARDED_PROTO', 'https') False True True 3600 True True", out.stderr
    out = start(production_env(GT_HTTPS="0"), code)
    assert out.stdout.strip() == "None False False False 0 False False", out.stderr


def test_behind_the_proxy_a_request_is_https_and_http_is_redirected(settings, client):
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_HSTS_SECONDS = 3600
    r = client.get("/b/anything/?worker=x")
    assert r.status_code == 301 and r["Location"].startswith("https://")
    r = client.get("/no/such/page", HTTP_X_FORWARDED_PROTO="https")
    assert r.status_code == 404 and r["Strict-Transport-Security"].startswith("max-age=3600")


# --- the embedded demo on a public address ------------------------------------------------------

PUBLIC = ["0.0.0.0", "::", "[::]", "192.168.1.20", "study.example.org"]
LOOPBACK = ["127.0.0.1", "127.0.1.1", "localhost", "::1", "[::1]"]


@pytest.mark.django_db
def test_listen_check_refuses_a_public_address_with_the_demo_admin(settings, monkeypatch):
    monkeypatch.delenv("GT_ALLOW_PUBLIC_DEMO", raising=False)
    settings.DEBUG = False
    for host in PUBLIC + LOOPBACK:
        call_command("gt_listen_check", host=host)   # nothing to fear yet
    admin = get_user_model().objects.create_superuser("admin", "", "admin")
    for host in PUBLIC:
        with pytest.raises(CommandError, match="admin/admin exists") as refused:
            call_command("gt_listen_check", host=host)
        assert "GT_ALLOW_PUBLIC_DEMO=1" in str(refused.value)
    for host in LOOPBACK:
        call_command("gt_listen_check", host=host)
    monkeypatch.setenv("GT_ALLOW_PUBLIC_DEMO", "1")
    call_command("gt_listen_check", host="0.0.0.0")   # told explicitly
    monkeypatch.delenv("GT_ALLOW_PUBLIC_DEMO")
    admin.set_password("a password of its own")
    admin.save()
    call_command("gt_listen_check", host="0.0.0.0")


@pytest.mark.django_db
def test_listen_check_refuses_a_public_address_with_debug(settings, monkeypatch):
    monkeypatch.delenv("GT_ALLOW_PUBLIC_DEMO", raising=False)
    settings.DEBUG = True
    with pytest.raises(CommandError, match="DEBUG is on"):
        call_command("gt_listen_check", host="0.0.0.0")
    call_command("gt_listen_check", host="127.0.0.1")
    monkeypatch.setenv("GT_ALLOW_PUBLIC_DEMO", "yes")
    call_command("gt_listen_check", host="0.0.0.0")


def run_sh(tmp_path, **env) -> subprocess.Popen:
    base = {k: v for k, v in os.environ.items() if k not in {*KEY_NAMES, "GT_AGENT_MODE", "GT_ALLOW_PUBLIC_DEMO"}}
    return subprocess.Popen(["./run.sh"], cwd=ROOT, env={**base, "SQLITE_PATH": str(tmp_path / "demo.sqlite3"), **env},
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)


def test_run_sh_embedded_will_not_serve_the_demo_on_a_public_address(tmp_path):
    """The embedded demo as a newcomer starts it, with HOST=0.0.0.0: refused before the server
    starts, and before anything is made (run.sh's ``manage.py prepare_run`` checks first: the
    admin/admin its demo would create counts); with GT_ALLOW_PUBLIC_DEMO=1 it serves."""
    port = free_port()
    proc = run_sh(tmp_path, HOST="0.0.0.0", PORT=str(port))
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode != 0, out
    assert "refusing to listen on 0.0.0.0" in out and "admin/admin exists" in out, out
    assert "GroundTalk on http" not in out and "created batch" not in out, out
    database = tmp_path / "demo.sqlite3"
    if database.exists():   # opened to look for the users table, at most
        with closing(sqlite3.connect(database)) as db:
            assert db.execute("SELECT name FROM sqlite_master").fetchall() == []

    # Served, with a models file without torch agents: the check is the test's, not the model
    # server's (which would import torch and load every family while the test waits for the port).
    (tmp_path / "models.toml").write_text("")
    proc = run_sh(tmp_path, HOST="0.0.0.0", PORT=str(port), GT_ALLOW_PUBLIC_DEMO="1",
                  GT_MODELS_FILE=str(tmp_path / "models.toml"))
    try:
        deadline = time.time() + 120
        while time.time() < deadline and proc.poll() is None:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.2)
        assert proc.poll() is None, proc.stdout.read()
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        out, _ = proc.communicate(timeout=30)
    assert "warning: serving on 0.0.0.0" in out and "admin/admin exists" in out, out
    assert "created staff account admin / admin" in out and "model server" not in out, out
