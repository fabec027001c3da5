"""A Redis database of its own for each pytest process that runs tests (a pytest plugin; the
suite's ``addopts`` load it with ``-p``).

Celery queues, a worker's purge, the model workers' heartbeats and the rate-limit counts live in
one Redis database, so two processes that run tests at the same time (two ``./test.sh`` runs, or
the pytest-xdist workers of one run) never share one: each takes the first free database of
:data:`DATABASES` and holds it with a lock in ``/tmp`` until it exits. The xdist controller runs no
test and takes none. ``TEST_REDIS_URL`` picks the database by hand (one process: ``-n 0``). Only
with ``DATABASE_URL`` set and ``REDIS_URL`` not (test.sh).

The variable must be set before pytest-django reads the settings (``groundtalk_web/env.py`` reads
``REDIS_URL`` once): hence a wrapper of ``pytest_load_initial_conftests``, which runs before
pytest-django's own.
"""
from __future__ import annotations

import fcntl
import os

import pytest

# 0 is a developer's default; 2, 3 and 7 are the bench's (bench/, tests/bench).
DATABASES = (1, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14, 15)
_held: list[int] = []    # the locks' file descriptors, open as long as the process lives
_spare: list[int] = []


def take_database() -> int:
    """The first database no other process holds; held until this process exits."""
    for db in DATABASES:
        fd = os.open(f"/tmp/groundtalk-test-redis-{db}.lock", os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        _held.append(fd)
        return db
    raise pytest.UsageError("every test Redis database is in use by another test process "
                            f"({', '.join(map(str, DATABASES))}; locks /tmp/groundtalk-test-redis-*.lock)")


def spare_database() -> int:
    """One more database of this process's own, the same for the whole process (a test's private
    broker, tests/agents/test_liveness.py): from the same pool, so never another process's."""
    if not _spare:
        _spare.append(take_database())
    return _spare[0]


def _runs_tests(config) -> bool:
    """False for the controller of an xdist run (its workers run the tests)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return True
    numprocesses = getattr(config.known_args_namespace, "numprocesses", None)
    return not numprocesses or getattr(config.known_args_namespace, "collectonly", False)


@pytest.hookimpl(wrapper=True)
def pytest_load_initial_conftests(early_config, parser, args):
    if os.environ.get("DATABASE_URL") and not os.environ.get("REDIS_URL") and _runs_tests(early_config):
        if os.environ.get("TEST_REDIS_URL"):
            if os.environ.get("PYTEST_XDIST_WORKER"):
                raise pytest.UsageError("TEST_REDIS_URL names one Redis database: run one process (-n 0)")
            os.environ["REDIS_URL"] = os.environ["TEST_REDIS_URL"]
        else:
            os.environ["REDIS_URL"] = f"redis://127.0.0.1:6379/{take_database()}"
    return (yield)
