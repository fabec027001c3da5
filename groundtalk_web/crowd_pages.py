"""The crowd pages inside a crowd platform's frame (issue 11, item 3).

An MTurk HIT with an ExternalQuestion shows our entry link in an ``<iframe>`` on MTurk's worker
site, and the worker plays, and submits, inside that frame. Every other page of the site keeps
``X-Frame-Options: DENY`` (``django.middleware.clickjacking.XFrameOptionsMiddleware``).

:func:`crowd_page` marks a view a worker reaches from a platform (``groundtalk_web/urls.py``: the
entry link, the participant page and its status poll, the game page, partner-gone and the match
images). :class:`CrowdPageMiddleware`, in ``settings.MIDDLEWARE`` right after the CSP one, so
that it sees every response for those addresses whatever made it (the view, a 404, a rate limit,
the database's "one moment" page), then

* replaces ``X-Frame-Options`` with the Content-Security-Policy's ``frame-ancestors`` and the
  origins of ``settings.GT_FRAME_ANCESTORS`` (MTurk's worker and sandbox sites by default;
  every other page has ``'none'``). Browsers let only those pages frame ours; X-Frame-Options
  cannot name a site (``ALLOW-FROM`` is gone). The rest of the policy is the site's
  (groundtalk_web/csp.py, whose middleware, outside this one, writes the header);
* gives every cookie such a response sets ``SameSite=None; Secure; Partitioned`` when the
  request came over HTTPS (or to a loopback host, which browsers treat as secure), so that the
  browser keeps and sends it inside a frame whose top-level page is another site. ``Partitioned``
  (CHIPS) stores the cookie for that top-level site only: a browser that blocks ordinary
  third-party cookies (Chrome's incognito or its setting, Safari) still keeps a partitioned one.
  Over plain HTTP on another host the cookies keep the project's settings (a frame cannot work
  there anyway: MTurk requires HTTPS, and browsers refuse ``SameSite=None`` without ``Secure``);
* replaces Django's CSRF token check on these views (:func:`crowd_page` exempts them) with a
  same-origin check that needs no cookie, :func:`same_origin_request`. A CSRF token lives in a
  cookie, and a frame's cookies may be blocked; these views act only on a secret that is in the
  request itself (the participant token in ``/p/<token>/``, the seat token of partner-gone), which
  another site cannot know, so a cross-site form could not name a participant anyway. The origin
  check refuses it besides (docs/crowd.md, "Cross-site requests").
"""
from __future__ import annotations

import logging
from http.cookies import Morsel
from urllib.parse import urlsplit

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.conf import settings
from django.urls import Resolver404, resolve
from django.views.decorators.csrf import csrf_exempt

from groundtalk_web.csp import replace_directive
from groundtalk_web.errors import error_response
from groundtalk_web.loopback import is_loopback

logger = logging.getLogger(__name__)

UNSAFE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}


def crowd_page(view):
    """Mark ``view`` as a page a worker reaches from a crowd platform: it may be framed by
    ``GT_FRAME_ANCESTORS`` and its POSTs are checked by origin instead of by CSRF cookie (see the
    module docstring; :class:`CrowdPageMiddleware` does both)."""
    view = csrf_exempt(view)   # a new function (functools.wraps), so the mark stays on this route's view
    view.gt_crowd_page = True
    return view


def is_crowd_path(path_info: str) -> bool:
    try:
        match = resolve(path_info)
    except Resolver404:
        return False
    return getattr(match.func, "gt_crowd_page", False)


def _origin_host(origin: str) -> str:
    parts = urlsplit(origin)
    return parts.netloc.lower() if parts.scheme in ("http", "https") else ""


def same_origin_request(request) -> bool:
    """Whether a state-changing request comes from a page of this site (how Go's
    ``http.CrossOriginProtection`` decides, without a token): ``Sec-Fetch-Site`` when the browser
    sends it (all current ones do), else ``Origin`` against the request's host and
    ``CSRF_TRUSTED_ORIGINS``; a request with neither header is not from a browser's cross-site
    form or script and passes (the token in it is still required by the view)."""
    fetch_site = request.headers.get("Sec-Fetch-Site")
    if fetch_site is not None:
        return fetch_site in ("same-origin", "none")
    origin = request.headers.get("Origin")
    if origin is None:
        return True
    if origin in settings.CSRF_TRUSTED_ORIGINS:
        return True
    host = _origin_host(origin)
    try:
        return bool(host) and host == request.get_host().lower()
    except Exception:   # DisallowedHost: not ours
        return False


class _PartitionedMorsel(Morsel):
    """A cookie with the ``Partitioned`` attribute (CHIPS), which ``http.cookies`` writes only
    from Python 3.14 on (``morsel["partitioned"]``)."""

    def OutputString(self, attrs=None):
        return super().OutputString(attrs) + "; Partitioned"


def frameable_cookies(response) -> None:
    """Every cookie of ``response``: ``SameSite=None; Secure; Partitioned``."""
    for name, morsel in list(response.cookies.items()):
        framed = _PartitionedMorsel()
        framed.set(morsel.key, morsel.value, morsel.coded_value)
        framed.update({k: v for k, v in morsel.items() if v})
        framed["samesite"] = "None"
        framed["secure"] = True
        response.cookies[name] = framed


def frame_ancestors() -> list[str]:
    """The ``frame-ancestors`` sources of a crowd page."""
    return list(settings.GT_FRAME_ANCESTORS) or ["'none'"]


class CrowdPageMiddleware:
    """See the module docstring. Plain string work and one URL resolve, no I/O: runs inline under
    ASGI and WSGI alike."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response):
        self.get_response = get_response
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def _refuse(self, request):
        if request.method in UNSAFE_METHODS and not same_origin_request(request):
            logger.warning("cross-site %s refused (Sec-Fetch-Site %r, Origin %r)", request.method,
                           request.headers.get("Sec-Fetch-Site"), request.headers.get("Origin"))
            return error_response(403)
        return None

    def _framed(self, request, response):
        response.headers.pop("X-Frame-Options", None)
        replace_directive(response, "frame-ancestors", frame_ancestors())
        if response.cookies and (request.is_secure() or is_loopback(request.META.get("HTTP_HOST", ""))):
            frameable_cookies(response)
        return response

    def __call__(self, request):
        if self.is_async:
            return self.__acall__(request)
        if not is_crowd_path(request.path_info):
            return self.get_response(request)
        response = self._refuse(request) or self.get_response(request)
        return self._framed(request, response)

    async def __acall__(self, request):
        if not is_crowd_path(request.path_info):
            return await self.get_response(request)
        response = self._refuse(request) or await self.get_response(request)
        return self._framed(request, response)
