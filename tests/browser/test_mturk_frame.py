"""An MTurk HIT as MTurk shows it (issue 11, item 3): our entry link in an iframe of a page on
another site, which passes MTurk's parameters; the worker previews, accepts, consents, plays the
color game against an agent and submits the HIT to ``turkSubmitTo``, all inside the frame.

The "MTurk" side is a small HTTP server of the test on ``http://localhost:<port>`` (another site
than the game server's ``http://127.0.0.1:<port>``): it serves the HIT page with the iframe and
records the form posted to ``/mturk/externalSubmit``. The game server allows exactly that origin
as a frame ancestor (``GT_FRAME_ANCESTORS``), as it allows MTurk's worker sites in production.

Chromium here, like Safari, Brave and Chrome's incognito windows, keeps no ordinary third-party
cookie and no third-party sessionStorage in such a frame (checked: a ``SameSite=None; Secure``
cookie set in the frame is not sent back, a ``Partitioned`` one is). The participant's browser
binding lives in the session cookie, so the flow below works only because the crowd pages set
their cookies ``SameSite=None; Secure; Partitioned`` (groundtalk_web/crowd_pages.py), post their
forms without a CSRF cookie, and the seat client falls back to memory without sessionStorage.
"""
from __future__ import annotations

import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode

import pytest
from playwright.sync_api import expect

from crowd.models import Participant
from live.models import Batch

from ..conftest import child_env, free_port, running_server
from .conftest import SCREENS
from .sync import wait_painted

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

HIT_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>MTurk (test)</title></head>
<body style="margin:0;font-family:sans-serif"><div id="mturk-bar" style="padding:8px;background:#232f3e;color:#fff">
Amazon Mechanical Turk (test double) &middot; HIT {hit}</div>
<iframe id="hit" name="hit" src="{src}" style="width:100%;height:680px;border:0"></iframe></body></html>"""


class FakeMTurk:
    """The worker site's HIT page and the externalSubmit endpoint, on its own port."""

    def __init__(self):
        self.submissions: list[dict] = []
        self.frame_src = ""
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _send(self, body: str):
                data = body.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):   # noqa: N802
                if self.path.startswith("/favicon"):
                    self.send_response(204)   # no icon (a 404 would be a console error)
                    self.end_headers()
                    return
                self._send(HIT_PAGE.format(hit="H1", src=outer.frame_src))

            def do_POST(self):   # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
                form = {k: v[0] for k, v in parse_qs(body).items()}
                outer.submissions.append({"path": self.path, "form": form,
                                          "content_type": self.headers.get("Content-Type", "")})
                self._send('<!doctype html><p id="submitted">HIT submitted</p>')

        self.port = free_port()
        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def origin(self, host="localhost") -> str:
        return f"http://{host}:{self.port}"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def mturk_site():
    with FakeMTurk() as fake:
        yield fake


@pytest.fixture
def mturk(mturk_site):
    """The module's fake MTurk, with no submission and no frame yet."""
    mturk_site.submissions.clear()
    mturk_site.frame_src = ""
    return mturk_site


@pytest.fixture(scope="module")
def framed_server(mturk_site, django_db_setup, celery_worker_process):
    """The game server, framable by the fake MTurk's origin only (one per module: it keeps no state
    of its own between tests, the database is the test's)."""
    env = {**child_env(), "GT_FRAME_ANCESTORS": mturk_site.origin()}
    with running_server(env, "test-mturk-frame-server.log") as url:
        yield url


def entry_src(base: str, slug: str, mturk: FakeMTurk, assignment: str, worker: str = "A2WORKER") -> str:
    return f"{base}/b/{slug}/?" + urlencode({"assignmentId": assignment, "hitId": "H1", "workerId": worker,
                                             "turkSubmitTo": mturk.origin()})


def hit_frame(page):
    """The HIT page's one iframe (its name is the document's, and an error page has none)."""
    (frame,) = page.main_frame.child_frames
    return frame


def settled_frame_url(page, timeout_s: float = 20.0) -> str:
    """The frame's URL once it has committed a document (its own page or Chromium's error page);
    on a loaded machine the outer page's load event can come before the frame commits."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        url = hit_frame(page).url
        if url not in ("", "about:blank"):
            return url
        page.wait_for_timeout(100)   # a poll of the browser's state, not a fixed wait
    return hit_frame(page).url


def play_in_frame(page, match_rounds: int):
    frame = page.frame_locator("#hit")
    expect(frame.locator("#role-label")).to_contain_text("listener")
    for round_no in range(1, match_rounds + 1):
        expect(frame.locator("#round-label")).to_have_text(f"Round {round_no} of {match_rounds}")
        expect(frame.locator(".swatch.clickable")).to_have_count(3)   # the agent has spoken
        frame.locator(".swatch.clickable").first.click()
        expect(frame.locator("#outcome")).to_contain_text(f"Round {round_no}: ")
    expect(frame.locator("#finished")).to_be_visible()


def test_a_worker_enters_plays_and_submits_inside_mturks_frame(framed_server, mturk, browser):
    batch = Batch.objects.create(
        slug="framed", title="Color game in MTurk's frame", game_id="colors_v1",
        pairing=Batch.Pairing.HUMAN_AGENT, human_roles=["listener"], agents={"speaker": "colors_lexicon_speaker"},
        config={"rounds": 2}, entry_kinds=["mturk"], pay_cents=150)
    ctx = browser.new_context(viewport={"width": 1366, "height": 800})
    page = ctx.new_page()
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: msg.type == "error" and errors.append(f"console: {msg.text}"))
    frame = page.frame_locator("#hit")

    # the preview, before the worker accepts: MTurk's ASSIGNMENT_ID_NOT_AVAILABLE
    mturk.frame_src = entry_src(framed_server, batch.slug, mturk, "ASSIGNMENT_ID_NOT_AVAILABLE")
    page.goto(mturk.origin() + "/preview")
    expect(frame.locator("#preview-pay")).to_contain_text("$1.50")
    # accepted: MTurk shows the page again with the assignment
    mturk.frame_src = entry_src(framed_server, batch.slug, mturk, "ASSIGN1")
    page.goto(mturk.origin() + "/accepted")
    frame.locator("#agree").click()
    frame.locator("#ready").click()
    play_in_frame(page, 2)
    assert page.url == mturk.origin() + "/accepted"   # all of it inside the frame
    assert re.search(r"/m/[0-9a-f-]+/\?seat=", hit_frame(page).url)
    wait_painted(hit_frame(page))
    page.screenshot(path=str(SCREENS / "mturk-frame-game.png"))
    frame.locator("#continue").click()
    expect(frame.locator("#completion-code")).to_be_visible()
    wait_painted(hit_frame(page))
    page.screenshot(path=str(SCREENS / "mturk-frame-done.png"))
    code = frame.locator("#completion-code").inner_text()
    frame.locator("#mturk-submit button").click()
    expect(frame.locator("#submitted")).to_have_text("HIT submitted")
    cookies = {c["name"]: c for c in ctx.cookies() if c["domain"] == "127.0.0.1"}
    ctx.close()

    assert not errors, errors
    assert len(mturk.submissions) == 1, mturk.submissions
    submitted = mturk.submissions[0]
    assert submitted["path"] == "/mturk/externalSubmit"
    assert submitted["form"]["assignmentId"] == "ASSIGN1" and submitted["form"]["completionCode"] == code
    p = Participant.objects.get(batch=batch)
    assert (p.platform, p.worker_id, p.assignment_id, p.state) == ("mturk", "A2WORKER", "ASSIGN1", "done")
    assert p.completion_code == code and submitted["form"]["outcome"] == p.outcome == "completed"
    # the session that binds the participant to this browser, kept for MTurk's site only
    session = cookies["sessionid"]
    assert session["sameSite"] == "None" and session["secure"], session
    assert session.get("partitionKey") == "http://localhost", session   # the top-level site: scheme and host


def test_other_sites_and_other_pages_cannot_be_framed(framed_server, mturk, browser):
    """A site that is not a frame ancestor cannot frame the entry link; MTurk's cannot frame the
    admin or the researcher pages. Chromium shows its error page in the frame instead."""
    batch = Batch.objects.create(slug="not-framed", title="t", game_id="colors_v1",
                                 pairing=Batch.Pairing.HUMAN_AGENT, human_roles=["listener"],
                                 agents={"speaker": "colors_lexicon_speaker"}, config={"rounds": 2},
                                 entry_kinds=["mturk"])
    ctx = browser.new_context()
    page = ctx.new_page()
    console = []
    page.on("console", lambda m: console.append(m.text))
    cases = [
        (mturk.origin("evil.localhost"), entry_src(framed_server, batch.slug, mturk, "ASSIGN9")),   # another site
        (mturk.origin(), f"{framed_server}/admin/login/"),
        (mturk.origin(), f"{framed_server}/research/"),
        (mturk.origin(), entry_src(framed_server, batch.slug, mturk, "ASSIGN9")),   # the control: allowed
    ]
    for n, (outer, src) in enumerate(cases):
        mturk.frame_src = src
        page.goto(outer + "/hit")   # returns after the load event, which waits for the frame's own
        frame_url = settled_frame_url(page)
        blocked = frame_url == "chrome-error://chromewebdata/"
        assert blocked == (n < 3), (src, frame_url)
    assert any("violates the following Content Security Policy directive: "
               f'"frame-ancestors {mturk.origin()}"' in text for text in console), console
    ctx.close()
