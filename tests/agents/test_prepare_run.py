"""``manage.py prepare_run``: run.sh's preparation in one Django process. A public address is
refused before anything is made (the SQLite file gets no table, no batch, no admin), then migrate,
the demo and the lines run.sh reads (torch=, families=, cpu_families=, gpu_families=), torch found
without being imported."""
from __future__ import annotations

import io
import os
import sqlite3
import subprocess
import sys
from contextlib import closing
from types import SimpleNamespace

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from agents.management.commands import prepare_run
from agents.serving import server as serving_server
from live.models import Batch
from tests.conftest import ROOT

SERVER_KEYS = ("DATABASE_URL", "REDIS_URL", "GT_AGENT_MODE", "GT_ALLOW_PUBLIC_DEMO", "DEBUG", "SECRET_KEY",
               "GT_PSEUDONYM_KEY")


def test_a_public_host_is_refused_before_migrating(tmp_path):
    """Embedded, on a fresh SQLite, as run.sh calls it for HOST=0.0.0.0 with DEBUG on and the demo
    admin to come: both reasons named, nothing made."""
    path = tmp_path / "fresh.sqlite3"
    env = {**{k: v for k, v in os.environ.items() if k not in SERVER_KEYS}, "SQLITE_PATH": str(path), "DEBUG": "1"}
    out = subprocess.run([sys.executable, "manage.py", "prepare_run", "--host", "0.0.0.0", "--demo", "--admin"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode != 0, out.stdout
    assert "refusing to listen on 0.0.0.0" in out.stderr and "DEBUG is on" in out.stderr, out.stderr
    assert "admin/admin exists once this run's demo creates it" in out.stderr, out.stderr
    assert "GT_ALLOW_PUBLIC_DEMO=1" in out.stderr and "families=" not in out.stdout
    if path.exists():   # opened to look for the users table, at most
        with closing(sqlite3.connect(path)) as db:
            assert db.execute("SELECT name FROM sqlite_master").fetchall() == []


def run(**opts) -> tuple[list[str], str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("prepare_run", stdout=out, stderr=err, **opts)
    return out.getvalue().splitlines(), err.getvalue()


FAKE = {"b_gpu": [SimpleNamespace(device="cuda:0")], "a_cpu": [SimpleNamespace(device="cpu")],
        "c_cpu": [SimpleNamespace(device="cpu"), SimpleNamespace(device="cpu")]}


@pytest.mark.django_db
def test_prepares_the_demo_and_prints_the_lines_run_sh_reads(settings, monkeypatch):
    settings.DEBUG = False
    settings.EMBEDDED = True
    monkeypatch.delenv("GT_ALLOW_PUBLIC_DEMO", raising=False)
    monkeypatch.setattr(serving_server, "torch_families", lambda: FAKE)
    monkeypatch.setitem(sys.modules, "torch", None)   # an `import torch` here would raise; find_spec: None
    lines, err = run(host="127.0.0.1", demo=True, admin=True)
    assert lines[-4:] == ["torch=0", "families=a_cpu b_gpu c_cpu", "cpu_families=a_cpu c_cpu", "gpu_families=b_gpu"]
    assert any(line.startswith("created batch ") for line in lines[:-4]) and err == ""
    assert "created staff account admin / admin (embedded demo only)" in lines
    assert get_user_model().objects.get(username="admin").check_password("admin") and Batch.objects.exists()

    monkeypatch.setattr(prepare_run.importlib.util, "find_spec", lambda name: object() if name == "torch" else None)
    monkeypatch.setattr(serving_server, "torch_families", lambda: {})
    lines, _ = run(host="localhost")   # no demo: migrate and the lines only
    assert lines == ["torch=1", "families=", "cpu_families=", "gpu_families="]


@pytest.mark.django_db
def test_the_families_are_model_families_keys():
    """The models file's own torch families, as ``manage.py model_families [--device]`` lists them."""
    lines, _ = run(host="127.0.0.1")
    by_key = dict(line.split("=", 1) for line in lines[-3:])
    for key, device in (("families", None), ("cpu_families", "cpu"), ("gpu_families", "gpu")):
        out = io.StringIO()
        call_command("model_families", device=device, stdout=out)
        assert by_key[key].split() == out.getvalue().split(), key


@pytest.mark.django_db
def test_refused_in_process_changes_nothing_and_the_allowance_warns(settings, monkeypatch):
    settings.DEBUG = False
    settings.EMBEDDED = True
    monkeypatch.delenv("GT_ALLOW_PUBLIC_DEMO", raising=False)
    with pytest.raises(CommandError, match="admin/admin exists once this run's demo creates it"):
        run(host="192.168.1.20", demo=True, admin=True)
    assert not get_user_model().objects.filter(username="admin").exists() and not Batch.objects.exists()
    with pytest.raises(CommandError, match="give it with --demo"):
        run(host="127.0.0.1", admin=True)
    lines, err = run(host="0.0.0.0", demo=True)   # no admin to come, DEBUG off: nothing to fear
    assert err == "" and Batch.objects.exists() and lines[-4].startswith("torch=")
    get_user_model().objects.create_user("admin", "", "a password of its own")
    run(host="0.0.0.0", demo=True, admin=True)   # gt_demo keeps the admin it finds: no admin/admin to come
    assert get_user_model().objects.get(username="admin").check_password("a password of its own")
    monkeypatch.setenv("GT_ALLOW_PUBLIC_DEMO", "1")
    settings.DEBUG = True
    _, err = run(host="0.0.0.0")
    assert err.startswith("warning: serving on 0.0.0.0 although DEBUG is on"), err
