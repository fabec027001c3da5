"""Refuse hostile HTTP input before any view or database sees it (issue 9).

:class:`HostileInputMiddleware` runs first in ``settings.MIDDLEWARE`` and answers 400, with the
site's styled page, when

* the path, or a name or value of the query string, contains a C0 control character (U+0000 to
  U+001F) or DEL, is not valid UTF-8 once percent-decoded, or has a ``%`` not followed by two hex
  digits. PostgreSQL refuses NUL in text parameters (psycopg: "PostgreSQL text fields cannot contain
  NUL (0x00) bytes"), so without this check ``?worker=a%00b`` or ``/p/%00/`` reached the
  database and ended in a 500;
* a form body (``application/x-www-form-urlencoded`` or ``multipart/form-data``) has the same
  faults, except that tab, line feed and carriage return are allowed there (typed text);
* the session or CSRF cookie (the cookies Django reads as input; the session key goes to the
  database) contains a control character.

It also gives the bare 405 responses of ``require_GET``/``require_POST`` the styled page (the
``Allow`` header is kept).

The checks are plain string work with no I/O, so the middleware runs inline on the event loop
under ASGI (no thread hop) as well as under WSGI (Django's test client).
"""
from __future__ import annotations

import logging
import re
from urllib.parse import unquote_to_bytes

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.conf import settings

from groundtalk_web.errors import error_response

logger = logging.getLogger(__name__)

#: C0 controls and DEL: never valid in a path or a query parameter
CONTROL = re.compile(r"[\x00-\x1f\x7f]")
#: the same, less tab, LF and CR, which typed text in a form may hold
FORM_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
BAD_PERCENT = re.compile(rb"%(?![0-9A-Fa-f]{2})")
FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


class HostileInput(ValueError):
    """Why a request is refused (logged, never shown)."""


def _decode(raw: bytes, what: str, control: re.Pattern) -> str:
    if BAD_PERCENT.search(raw):
        raise HostileInput(f"{what}: bad percent-encoding")
    try:
        text = unquote_to_bytes(raw).decode("utf-8")
    except UnicodeDecodeError:
        raise HostileInput(f"{what}: not UTF-8") from None
    if control.search(text):
        raise HostileInput(f"{what}: control character")
    return text


def check_urlencoded(raw: bytes, what: str, control: re.Pattern = CONTROL) -> None:
    """Every name and value of a query string or urlencoded body (split like Django's QueryDict)."""
    for field in raw.split(b"&"):
        for part in field.split(b"=", 1):
            _decode(part.replace(b"+", b" "), what, control)


def _raw_path(request) -> bytes | None:
    scope = getattr(request, "scope", None)
    if scope is not None:  # ASGI: the bytes the client sent, still percent-encoded
        raw = scope.get("raw_path")
        if raw:
            return raw.split(b"?", 1)[0]
        return None
    # WSGI: PATH_INFO is the percent-decoded bytes, as latin-1 text (PEP 3333)
    try:
        return request.META.get("PATH_INFO", "").encode("latin-1").replace(b"%", b"%25")
    except UnicodeEncodeError:
        return None


def _raw_query(request) -> bytes:
    scope = getattr(request, "scope", None)
    if scope is not None:
        raw = scope.get("query_string", b"")
        return raw if isinstance(raw, bytes) else raw.encode("utf-8")
    qs = request.META.get("QUERY_STRING", "")
    try:
        return qs.encode("latin-1")
    except UnicodeEncodeError:
        return qs.encode("utf-8")


def check_request(request) -> None:
    """Raise :class:`HostileInput` for a request no view should see (see the module docstring)."""
    raw_path = _raw_path(request)
    if raw_path is not None:
        _decode(raw_path, "path", CONTROL)
    if CONTROL.search(request.path) or "\ufffd" in request.path:
        raise HostileInput("path: control character or undecodable bytes")
    query = _raw_query(request)
    if query:
        check_urlencoded(query, "query string")
    for name in (settings.SESSION_COOKIE_NAME, settings.CSRF_COOKIE_NAME):
        if CONTROL.search(request.COOKIES.get(name, "")):
            raise HostileInput(f"cookie {name}: control character")
    if request.method in ("GET", "HEAD", "OPTIONS"):
        return
    content_type = request.content_type or ""
    if content_type == "application/x-www-form-urlencoded":
        check_urlencoded(request.body, "form", FORM_CONTROL)
    elif content_type == "multipart/form-data":
        try:
            fields = list(request.POST.lists())
            names = [f.name or "" for files in request.FILES.lists() for f in files[1]]
        except Exception as exc:  # a malformed or over-large body
            raise HostileInput(f"form: {type(exc).__name__}") from None
        for key, values in fields:
            for text in (key, *values):
                if FORM_CONTROL.search(text) or "\ufffd" in text:
                    raise HostileInput("form: control character or undecodable bytes")
        if any(CONTROL.search(n) for n in names):
            raise HostileInput("form: control character in a file name")


def _refusal(request, exc: Exception):
    logger.info("refused (%s): %r", exc, request.path[:200])
    return error_response(400)


def _styled(response):
    """A bare 405 (Django's ``require_GET`` and friends send an empty one) gets the styled page."""
    if response.status_code == 405 and not getattr(response, "streaming", False) and not response.content:
        allow = response.get("Allow")
        return error_response(405, headers={"Allow": allow} if allow else None)
    return response


class HostileInputMiddleware:
    sync_capable = True
    async_capable = True

    def __init__(self, get_response):
        self.get_response = get_response
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def __call__(self, request):
        if self.is_async:
            return self.__acall__(request)
        try:
            check_request(request)
        except Exception as exc:  # HostileInput, or a body Django itself refuses (too big, too many fields)
            return _refusal(request, exc)
        return _styled(self.get_response(request))

    async def __acall__(self, request):
        try:
            check_request(request)
        except Exception as exc:
            return _refusal(request, exc)
        return _styled(await self.get_response(request))
