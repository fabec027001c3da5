"""The suite's own plumbing (tests/conftest.py): the connections of threads that ended are closed
after each test, so the in-process consumer tests' executor threads do not pile up PostgreSQL
connections in a test process (docs/testing.md, "In parallel")."""
from __future__ import annotations

import threading
import time

import pytest
from django.db import connection, connections

from tests.conftest import close_connections_of_ended_threads

pytestmark = pytest.mark.django_db(transaction=True)


def backend_exists(pid: int) -> bool:
    with connection.cursor() as cur:
        cur.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s", [pid])
        return cur.fetchone()[0] == 1


def test_the_connection_of_a_thread_that_ended_is_closed():
    if connection.vendor != "postgresql":
        pytest.skip("counts PostgreSQL's backends")
    pids, wrappers = [], []

    def work():
        with connections["default"].cursor() as cur:
            cur.execute("SELECT pg_backend_pid()")
            pids.append(cur.fetchone()[0])
        wrappers.append(connections["default"])   # kept, so the collector cannot close it first

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert backend_exists(pids[0])              # the ended thread left it open (CONN_MAX_AGE)
    assert close_connections_of_ended_threads() >= 1   # (with any other test thread that ended since)
    assert wrappers[0].connection is None
    deadline = time.monotonic() + 30            # the server ends the backend once the client has gone
    while backend_exists(pids[0]):
        assert time.monotonic() < deadline, "the backend of the closed connection is still there"
        time.sleep(0.1)


def test_a_live_thread_keeps_its_connection():
    if connection.vendor != "postgresql":
        pytest.skip("counts PostgreSQL's backends")
    opened, finish, pids = threading.Event(), threading.Event(), []

    def work():
        with connections["default"].cursor() as cur:
            cur.execute("SELECT pg_backend_pid()")
            pids.append(cur.fetchone()[0])
        opened.set()
        finish.wait(30)
        connections["default"].close()

    thread = threading.Thread(target=work)
    thread.start()
    try:
        assert opened.wait(30)
        close_connections_of_ended_threads()
        assert backend_exists(pids[0])
    finally:
        finish.set()
        thread.join()
