"""Error pages in the site's style, for workers: plain words, no settings, no traceback.

Used by groundtalk_web/urls.py (``handler400``/``403``/``404``/``500``), by
:mod:`groundtalk_web.middleware` (hostile input, bare 405s) and for CSRF failures
(``templates/403_csrf.html`` is Django's own template name for those).

The pages are rendered without the request (no context processors: nothing here touches the
session, the user or the database), and if even that fails, a fixed page is sent instead, so
the 500 handler cannot fail in turn.
"""
from __future__ import annotations

import logging

from django.http import HttpResponse
from django.template import loader

logger = logging.getLogger(__name__)

TITLES = {
    400: "This address does not work",
    403: "This page is not open to you",
    404: "Page not found",
    405: "This page cannot be used that way",
    500: "Something went wrong on our side",
}

_FALLBACK = ('<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{title}</title></head>'
             '<body><h1>{title}</h1><p>Please go back to the task page and open the link from there.</p>'
             '</body></html>')


def error_response(status: int, template: str | None = None, headers: dict | None = None) -> HttpResponse:
    """The styled page for ``status`` (``templates/<status>.html`` unless ``template`` names another)."""
    title = TITLES.get(status, "This page does not work")
    try:
        body = loader.render_to_string(template or f"{status}.html", {"status": status, "title": title})
    except Exception:  # the error page itself must not fail
        logger.exception("error page %s could not be rendered", status)
        body = _FALLBACK.format(title=title)
    response = HttpResponse(body, status=status, content_type="text/html; charset=utf-8")
    response["Cache-Control"] = "no-store"
    response["X-Content-Type-Options"] = "nosniff"
    for name, value in (headers or {}).items():
        response[name] = value
    return response


def bad_request(request, exception=None):
    return error_response(400)


def permission_denied(request, exception=None):
    return error_response(403)


def page_not_found(request, exception=None):
    return error_response(404)


def server_error(request):
    return error_response(500)
