"""Keep workers' tokens and ids out of the logs (issue 11, item 4).

A participant's token is the key to its pages (``/p/<token>/``), a seat's token the key to its
game (``/m/<match>/?seat=<token>``), and entry links carry platform ids (``?workerId=``,
``?PROLIFIC_PID=``, a lab token). Access logs are read and kept by more people than the
database, so :class:`RedactTokens` rewrites every line of the loggers in :data:`LOGGERS` before
it is written:

* ``/p/<token>`` becomes ``/p/[token]``;
* every query-string value becomes ``[v]`` (the names stay: ``/b/demo/?workerId=[v]&assignmentId=[v]``).

:func:`install` adds the filter to uvicorn's access and error loggers (the error logger also
writes websocket handshakes) and to Django's request loggers (``Not Found: /p/<token>/``). It is
called from ``groundtalk_web/asgi.py``, so every server process has it, however it was started
(run.sh, docker-compose, a bare ``uvicorn`` command). The filter changes only the strings of a
record's arguments, never their number: uvicorn's access formatter unpacks them.
"""
from __future__ import annotations

import logging
import re

LOGGERS = ("uvicorn.access", "uvicorn.error", "django.request", "django.server", "django.security.csrf")

_PARTICIPANT = re.compile(r"/p/[^/?#\s\"'&]+")
_QUERY_VALUE = re.compile(r"([?&][^=&#\s\"'?]+=)[^&#\s\"']*")


def redact(text: str) -> str:
    """``text`` without participant tokens and query-string values."""
    if "/p/" not in text and "=" not in text:
        return text
    text = _PARTICIPANT.sub("/p/[token]", text)
    return _QUERY_VALUE.sub(r"\1[v]", text)


def _clean(value):
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, tuple):
        return tuple(_clean(v) for v in value)
    return value


class RedactTokens(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redact(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(_clean(a) for a in record.args)
        elif isinstance(record.args, dict):
            record.args = {k: _clean(v) for k, v in record.args.items()}
        return True


_FILTER = RedactTokens()


def install() -> None:
    """Add the filter to :data:`LOGGERS` (once per logger)."""
    for name in LOGGERS:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
