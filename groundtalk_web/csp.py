"""The Content-Security-Policy of every response (issue 21, item 8; docs/operations.md, "Security headers").

The policy itself is ``settings.CONTENT_SECURITY_POLICY`` (django-csp's format): scripts, styles,
fonts and frames from this site only, images from this site and ``data:``, no plugins, no
``<base>``, forms posted to this site, and no site may frame the page. No ``'unsafe-inline'``
and no ``'unsafe-eval'`` anywhere: an injected script element, event handler attribute or style
attribute does nothing. Server data reaches a page's script through ``json_script`` blocks
(``type="application/json"``, which browsers do not execute) and ``data-`` attributes; each page's
code is a static file (static/gt/, static/games/<game>/). tests/groundtalk_web/test_csp.py walks the URL
conf and the templates.

:class:`SiteCSPMiddleware` is django-csp's middleware, first in ``settings.MIDDLEWARE`` so that it
sees every response (the hostile-input 400, the crowd pages' cross-site 403, WhiteNoise's files),
with what a fixed setting cannot say, per request:

* ``connect-src``: the game's websocket on this host (``ws://host`` or ``wss://host``, as the
  page was loaded). CSP level 3 lets ``'self'`` match it, but older Safari does not;
* ``frame-ancestors``: a crowd page (groundtalk_web/crowd_pages.py) marks its response with the
  origins of ``GT_FRAME_ANCESTORS`` (MTurk's worker and sandbox sites), which replace ``'none'``;
* ``form-action``: the last page of an MTurk worker posts its submit form to MTurk
  (``turkSubmitTo``); :func:`allow_form_action` adds that origin to that one response.

A response that already carries a policy keeps its own (the CoDraw SVG replays:
``default-src 'none'; sandbox``, stricter).
"""
from __future__ import annotations

from urllib.parse import urlsplit

from csp.middleware import CSPMiddleware, PolicyParts


def _origin(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return ""
    return f"{parts.scheme}://{parts.netloc}"


def _merge(response, attr: str, directives: dict) -> None:
    merged = dict(getattr(response, attr, None) or {})
    for name, sources in directives.items():
        merged[name] = [*merged.get(name, ()), *sources] if attr == "_csp_update" else list(sources)
    setattr(response, attr, merged)


def replace_directive(response, name: str, sources: list[str]) -> None:
    """This response's ``name`` directive is ``sources`` (instead of the setting's)."""
    _merge(response, "_csp_replace", {name: sources})


def allow_form_action(response, *urls: str) -> None:
    """Let this response's forms post to the origins of ``urls`` too (besides this site)."""
    origins = [o for o in dict.fromkeys(_origin(u) for u in urls) if o]
    if origins:
        _merge(response, "_csp_update", {"form-action": origins})


class SiteCSPMiddleware(CSPMiddleware):
    """django-csp's middleware, with this host's websocket in ``connect-src`` (see the module docstring)."""

    def get_policy_parts(self, request, response, report_only: bool = False) -> PolicyParts:
        parts = super().get_policy_parts(request, response, report_only)
        try:
            host = request.get_host()
        except Exception:   # DisallowedHost: the 400 for it gets the plain policy
            host = ""
        if host:
            ws = f"{'wss' if request.is_secure() else 'ws'}://{host}"
            update = dict(parts.update or {})
            update["connect-src"] = [*update.get("connect-src", ()), ws]
            parts.update = update
        return parts
