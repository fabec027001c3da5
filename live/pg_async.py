"""PostgreSQL on the event loop, for the one-statement conditional write (live/match_store.py).

A seat's action that can be written in one statement needs neither a transaction nor Django's ORM,
so the websocket consumer runs it here, on the server's event loop, instead of handing it to a
database thread and back (that hop was about a quarter of the server's CPU per action,
docs/bench.md). These are psycopg2's own asynchronous connections (psycopg2 is the project's
driver; ``async_=True`` connections are always in autocommit, so one statement is one transaction)
driven with the loop's reader and writer callbacks, in a small per-loop pool.

Anything unusual (a broken connection, a statement error) raises :class:`Unavailable` after the
connection is thrown away; the caller then takes the thread path, which handles it as before. A
statement is never sent twice.
"""
from __future__ import annotations

import asyncio
import logging

import psycopg2
import psycopg2.extensions as ext
import psycopg2.extras

log = logging.getLogger(__name__)

class Unavailable(Exception):
    """The statement could not be run here (nothing was written); use the thread path."""


class _Pool:
    def __init__(self, loop: asyncio.AbstractEventLoop, params: dict, size: int):
        self.loop, self.params, self.size = loop, params, size
        self.idle: list = []
        self.opened = 0
        self.waiters: list[asyncio.Future] = []

    async def acquire(self):
        while True:
            if self.idle:
                return self.idle.pop()
            if self.opened < self.size:
                self.opened += 1
                try:
                    conn = psycopg2.connect(**self.params, async_=True)
                    await _wait(conn)
                except BaseException:
                    self.opened -= 1
                    raise
                return conn
            waiter = self.loop.create_future()
            self.waiters.append(waiter)
            await waiter

    def release(self, conn, *, broken: bool = False) -> None:
        if broken or conn.closed:
            self.opened -= 1
            try:
                conn.close()
            except Exception:  # pragma: no cover - closing a broken connection
                pass
        else:
            self.idle.append(conn)
        while self.waiters:
            waiter = self.waiters.pop(0)
            if not waiter.done():
                waiter.set_result(None)
                break


_pools: dict[asyncio.AbstractEventLoop, _Pool] = {}


def _params() -> dict:
    from django.db import connection

    params = dict(connection.get_connection_params())
    params.pop("cursor_factory", None)
    return params


def _pool() -> _Pool:
    loop = asyncio.get_running_loop()
    pool = _pools.get(loop)
    if pool is None:
        for other in [other for other in _pools if other.is_closed()]:   # loops that ended (tests)
            _close(_pools.pop(other))
        psycopg2.extras.register_uuid()   # Django does it too; UUID parameters as uuid
        from django.conf import settings

        pool = _pools[loop] = _Pool(loop, _params(), settings.GT_ASYNC_PG_POOL)
    return pool


async def _wait(conn) -> None:
    """Drive an asynchronous psycopg2 connection until its current operation is complete."""
    loop = asyncio.get_running_loop()
    fd = conn.fileno()
    while True:
        state = conn.poll()
        if state == ext.POLL_OK:
            return
        ready = loop.create_future()

        def wake(future=ready):
            if not future.done():
                future.set_result(None)

        if state == ext.POLL_READ:
            add, remove = loop.add_reader, loop.remove_reader
        elif state == ext.POLL_WRITE:
            add, remove = loop.add_writer, loop.remove_writer
        else:  # pragma: no cover - psycopg2 documents no other state
            raise psycopg2.OperationalError(f"unexpected poll state {state}")
        add(fd, wake)
        try:
            await ready
        finally:
            remove(fd)


async def fetchone(sql: str, params: list):
    """Run one statement (autocommit) and return its first row, or None.

    Raises :class:`Unavailable` when no connection could be had or the statement failed; in both
    cases the statement did not commit. If the caller is cancelled while the statement runs, the
    connection is closed (the statement may still commit; the action's id makes a resend safe).
    """
    pool = _pool()
    try:
        conn = await pool.acquire()
    except (psycopg2.Error, OSError) as exc:
        raise Unavailable(f"no connection: {exc}") from exc
    broken = True
    try:
        cur = conn.cursor()
        cur.execute(sql, params)
        await _wait(conn)
        row = cur.fetchone() if cur.description is not None else None
        cur.close()
        broken = False
        return row
    except (psycopg2.Error, OSError) as exc:
        log.warning("event-loop statement failed, taking the thread path: %s", exc)
        raise Unavailable(str(exc)) from exc
    finally:
        pool.release(conn, broken=broken)


def _close(pool: _Pool) -> None:
    for conn in pool.idle:
        conn.close()
    pool.idle.clear()
    pool.opened = 0


def close_all() -> None:
    """Close this process's event-loop connections (tests; a server shutting down)."""
    for pool in list(_pools.values()):
        _close(pool)
    _pools.clear()
