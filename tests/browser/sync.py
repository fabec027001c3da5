"""Waits for the exact state a browser test means, never for a time or a partial state (issue 9).

A page's seat client (static/gt/client.js, ``window.gtClient``) applies the server's events in
seq order and renders the view that comes with them in the same task, so "the client has applied
seq N" implies "the page shows the view as of seq N". :func:`wait_synced` waits until a page has
applied every event the database holds for its match, with none of its own actions unanswered;
on a CoDraw page also until the canvases have drawn that view (their images load asynchronously:
``gtCodraw.settled()``). Read the page after that, not after a selector that an older view, or
the page's own optimistic render, may satisfy as well.
"""
from __future__ import annotations

from playwright.sync_api import expect

# Playwright's expect() waits 5 s by default, its page waits 30 s: a loaded machine needs the latter.
expect.set_options(timeout=30_000)

SYNCED_JS = """seq => {
  const c = window.gtClient;
  if (!c || !c.joined || c.lastSeq === null || c.lastSeq < seq || c.pending.length) return false;
  return !window.gtCodraw || !gtCodraw.settled || gtCodraw.settled();
}"""


def match_seq(match_id) -> int:
    from live.models import Match

    return Match.objects.values_list("seq", flat=True).get(pk=match_id)


def wait_synced(page, match_id, timeout: float = 30000) -> int:
    """Wait until ``page`` shows its match as the database has it now; returns that seq."""
    seq = match_seq(match_id)
    page.wait_for_function(SYNCED_JS, arg=seq, timeout=timeout)
    return seq


def wait_painted(page, timeout: float = 30000) -> None:
    """Before a screenshot: every image of the page loaded (CoDraw: every canvas drawn), then two
    animation frames, so what is drawn is on the screen."""
    page.wait_for_function("() => [...document.images].every(i => i.complete)"
                           " && (!window.gtCodraw || !gtCodraw.settled || gtCodraw.settled())", timeout=timeout)
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


def track_presence(page) -> None:
    """Record the partner-presence notices this page's client receives (``window.gtPresence``)."""
    page.evaluate("""() => {
      window.gtPresence = [];
      const c = window.gtClient, original = c.onPresence;
      c.onPresence = (p) => { window.gtPresence.push(p.connected); original(p); };
    }""")


def wait_partner_back(page, timeout: float = 30000) -> None:
    """After :func:`track_presence` and a partner's reload: wait until this page has been told the
    partner is connected again. Every join announces "connected" and is the last presence notice
    of a reload (a "disconnected" comes before it, or not at all when the new socket joined before
    the old one closed)."""
    page.wait_for_function("() => window.gtPresence.length > 0 && window.gtPresence.at(-1) === true",
                           timeout=timeout)
