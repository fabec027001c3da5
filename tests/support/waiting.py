"""Waiting in a test for a state another process reaches (a server up, a worker's answer)."""
from __future__ import annotations

import subprocess
import time


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
