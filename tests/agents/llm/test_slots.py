"""``max_concurrency`` (agents/llm/slots.py): the slots of one model at one endpoint are shared by
every process through Redis, a killed holder's slot comes back when its lease ends, waiting ends at
the deadline; without Redis a process-local semaphore counts."""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import uuid

import pytest
from django.conf import settings

from agents.llm import slots

from tests.conftest import ROOT

HOLDER = """
import os, sys, time
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "groundtalk_web.settings")
import django
django.setup()
from agents.llm import slots
slots.LEASE_MARGIN_S = 0
with slots.slot(sys.argv[1], 1, deadline=time.monotonic() + 5, lease_s=float(sys.argv[2])):
    print("held", flush=True)
    time.sleep(float(sys.argv[3]))
print("released", flush=True)
"""


def _holder(key: str, lease_s: float, hold_s: float) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, key, str(lease_s), str(hold_s)], cwd=ROOT,
                            env={**os.environ, "REDIS_URL": settings.REDIS_URL}, stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


def _key() -> str:
    return slots.key_for(f"http://test/{uuid.uuid4().hex}/v1", "m")


def test_a_slot_held_by_another_process_is_waited_for():
    key = _key()
    holder = _holder(key, lease_s=30, hold_s=1.5)
    try:
        assert slots.in_flight(key) == 1
        with pytest.raises(slots.NoSlot):
            with slots.slot(key, 1, deadline=time.monotonic() + 0.3, lease_s=5):
                pass
        started = time.monotonic()
        with slots.slot(key, 1, deadline=time.monotonic() + 10, lease_s=5) as waited:
            assert 0.5 < waited < 3 and time.monotonic() - started < 3   # it came free when the other released it
            assert slots.in_flight(key) == 1
        assert slots.in_flight(key) == 0
    finally:
        holder.wait(10)


def test_a_killed_holder_frees_its_slot_when_its_lease_ends():
    key = _key()
    holder = _holder(key, lease_s=1.0, hold_s=60)
    holder.kill()
    holder.wait(10)
    assert slots.in_flight(key) == 1              # the killed process never released it
    with slots.slot(key, 1, deadline=time.monotonic() + 5, lease_s=5) as waited:
        assert waited < 1.5


@pytest.mark.parametrize("redis_url", ["shared", ""])
def test_threads_never_hold_more_than_the_limit(redis_url, settings):
    if not redis_url:
        settings.REDIS_URL = ""    # the embedded mode: counted in this process
    key, limit, threads = _key(), 3, 9
    lock = threading.Lock()
    now = {"in": 0, "most": 0, "done": 0}

    def call():
        with slots.slot(key, limit, deadline=time.monotonic() + 20, lease_s=5):
            with lock:
                now["in"] += 1
                now["most"] = max(now["most"], now["in"])
            time.sleep(0.2)
            with lock:
                now["in"] -= 1
                now["done"] += 1

    workers = [threading.Thread(target=call) for _ in range(threads)]
    started = time.monotonic()
    for w in workers:
        w.start()
    for w in workers:
        w.join(30)
    assert now == {"in": 0, "most": limit, "done": threads}
    assert time.monotonic() - started >= 0.55     # three rounds of three
    if redis_url:
        assert slots.in_flight(key) == 0


def test_no_limit_takes_no_slot():
    key = _key()
    with slots.slot(key, 0, deadline=time.monotonic(), lease_s=1) as waited:
        assert waited == 0 and slots.in_flight(key) == 0
