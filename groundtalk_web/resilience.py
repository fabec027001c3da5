"""HTTP requests that outlive a database restart.

Server processes keep their database connections (``CONN_MAX_AGE``) without Django's per-call
health check, which would cost the websocket path a round trip per action (docs/bench.md). After a
PostgreSQL restart every kept connection is dead, and the first request on each would fail. Two
guards make an HTTP request wait out a short outage instead of answering 500:

* :func:`check_connection_at_request_start` (``request_started``): a connection that has been
  idle since the previous request is checked (``SELECT 1``) and replaced if it is dead;
* :class:`DatabaseRetryMiddleware`: a view that fails because the database cannot be reached is
  run again on a new connection, with backoff, for up to ``GT_HTTP_DB_WAIT_S`` seconds; after
  that the worker sees the site's "try again in a moment" page (503, ``Retry-After``), never a
  traceback. Only connection-level errors (``OperationalError``, ``InterfaceError``) are retried:
  their transaction was rolled back, and every write behind a worker-facing view is one atomic,
  idempotent step (enter, consent, ready, leave), so running it again is safe.
"""
from __future__ import annotations

import logging
import time

from django.conf import settings
from django.db import InterfaceError, OperationalError, connections
from django.shortcuts import render

log = logging.getLogger(__name__)
RETRY_HEADER = "_gt_db_retries"


def _drop_connections() -> None:
    for conn in connections.all(initialized_only=True):
        try:
            conn.close()
        except Exception:   # closing a dead connection may itself fail
            conn.connection = None


def check_connection_at_request_start(**kwargs) -> None:
    for conn in connections.all(initialized_only=True):
        if conn.connection is not None and not conn.in_atomic_block and not conn.is_usable():
            _drop_connections()
            return


class DatabaseRetryMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not isinstance(exception, (OperationalError, InterfaceError)):
            return None
        if any(conn.in_atomic_block for conn in connections.all(initialized_only=True)):
            return None   # inside a test's or a caller's transaction: nothing to retry here
        started = getattr(request, RETRY_HEADER, None) or time.monotonic()
        tries = getattr(request, RETRY_HEADER + "_n", 0) + 1
        setattr(request, RETRY_HEADER, started)
        setattr(request, RETRY_HEADER + "_n", tries)
        _drop_connections()
        delay = min(0.1 * 2 ** tries, 2.0)
        if time.monotonic() - started + delay > settings.GT_HTTP_DB_WAIT_S:
            log.warning("database unavailable for %s %s after %d tries: %r", request.method, request.path,
                        tries, exception)
            response = render(request, "503.html", status=503)
            response["Retry-After"] = "5"
            return response
        time.sleep(delay)
        return self.get_response(request)   # the rest of the chain again, on a new connection
