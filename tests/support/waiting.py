"""Waiting in a test for a state another process reaches (a server up, a worker's answer), and
stopping such a process with everything it started."""
from __future__ import annotations

import subprocess
import time

import psutil


def wait_until(predicate, timeout: float, what: str, proc: subprocess.Popen | None = None, *,
               every: float = 0.2):
    """``predicate()``'s first true value, asked every ``every`` seconds for up to ``timeout``;
    an AssertionError naming ``what`` when it never is, or as soon as ``proc`` (the process that
    was to bring it about) has exited."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"the worker exited with {proc.returncode} before {what}")
        time.sleep(every)
    raise AssertionError(f"not {what} after {timeout} s")


def stop_process(proc: subprocess.Popen, wait_s: float = 20) -> None:
    """SIGTERM, then after ``wait_s`` seconds SIGKILL for it and every process under it (a
    supervisor's child, a Celery pool's children)."""
    proc.terminate()
    try:
        proc.wait(wait_s)
    except subprocess.TimeoutExpired:
        for child in psutil.Process(proc.pid).children(recursive=True):
            child.kill()
        proc.kill()
