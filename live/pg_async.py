"""PostgreSQL on the event loop, for the one-statement conditional write (live/match_store.py).

A seat's action that can be written in one statement needs neither a transaction nor Django's ORM,
so the websocket consumer runs it here, on the server's event loop, instead of handing it to a
database thread and back (that hop was about a quarter of the server's CPU per action,
docs/bench.md). The connections are psycopg 3's asynchronous ones in psycopg_pool's
``AsyncConnectionPool``: one pool per event loop (a pool belongs to the loop it runs on), up to
``GT_ASYNC_PG_POOL`` connections, opened as needed. They are made with Django's own connection
parameters and adapters (jsonb read as text, timestamps in UTC) and a client-side binding cursor,
as Django's connections are, so a statement means the same here and in a database thread; they
are in autocommit, so one statement is one transaction.

Anything unusual (no connection within ``TIMEOUT_S``, a broken connection, a statement error)
raises :class:`Unavailable`; the pool throws a broken connection away by itself, and after a
connection-level error it checks its idle ones (a database restart breaks them all). The caller
then takes the thread path, which handles it as before. A statement is never sent twice.
"""
from __future__ import annotations

import asyncio
import logging

import psycopg
from psycopg_pool import AsyncConnectionPool, PoolTimeout
from django.db import connection
from django.conf import settings

log = logging.getLogger(__name__)
TIMEOUT_S = 10.0   # waiting for a free connection; then the thread path


class Unavailable(Exception):
    """The statement could not be run here (nothing was written); use the thread path."""


_pools: dict[asyncio.AbstractEventLoop, AsyncConnectionPool] = {}
_checks: dict[asyncio.AbstractEventLoop, asyncio.Task] = {}


def _kwargs() -> dict:
    params = dict(connection.get_connection_params())
    params.pop("cursor_factory", None)
    return {**params, "autocommit": True, "cursor_factory": psycopg.AsyncClientCursor}


async def _pool() -> AsyncConnectionPool:
    loop = asyncio.get_running_loop()
    pool = _pools.get(loop)
    if pool is None:
        for other in [other for other in _pools if other.is_closed()]:   # loops that ended (tests)
            del _pools[other]

        pool = _pools[loop] = AsyncConnectionPool(
            kwargs=_kwargs(), min_size=0, max_size=settings.GT_ASYNC_PG_POOL, timeout=TIMEOUT_S,
            open=False, name="gt-event-loop")
        await pool.open()
    return pool


def _check_soon(pool: AsyncConnectionPool) -> None:
    """Test the pool's idle connections in the background (once at a time per loop)."""
    loop = asyncio.get_running_loop()
    running = _checks.get(loop)
    if running is None or running.done():
        _checks[loop] = loop.create_task(pool.check())


async def fetchone(sql: str, params: list):
    """Run one statement (autocommit) and return its first row, or None.

    Raises :class:`Unavailable` when no connection could be had or the statement failed; in both
    cases the statement did not commit. If the caller is cancelled while the statement runs, the
    pool discards the connection (the statement may still commit; the action's id makes a resend
    safe).
    """
    pool = await _pool()
    try:
        async with pool.connection() as conn:
            cur = await conn.execute(sql, params)
            return await cur.fetchone() if cur.description is not None else None
    except (psycopg.Error, OSError) as exc:
        log.warning("event-loop statement failed, taking the thread path: %s", exc)
        if isinstance(exc, (psycopg.OperationalError, OSError)) and not isinstance(exc, PoolTimeout):
            _check_soon(pool)
        raise Unavailable(str(exc)) from exc


async def close() -> None:
    """Close this loop's pool (a server shutting down)."""
    pool = _pools.pop(asyncio.get_running_loop(), None)
    if pool is not None:
        await pool.close()


def close_all() -> None:
    """Forget every loop's pool (tests): a pool can only be closed on its own loop, so the
    connections of ended loops close when they are collected (the test session's teardown also
    ends every connection to the test database)."""
    _pools.clear()
    _checks.clear()
