"""The Content-Security-Policy (issue 21, item 8; groundtalk_web/csp.py): every response of the
site carries a strict policy (scripts and styles only from the site's files, no inline code, no
eval), and no page needs more: no template and no rendered page has an inline script (other than
``application/json`` data blocks), an ``on*=`` handler, a ``style`` attribute or a ``<style>``
block. The walk takes every URL of the URL conf, each game's page, the worker's pages in each
state, the admin's pages for every model, and error answers. The browser side (a violation is a
console error): tests/browser/test_csp_browser.py and tests/browser/test_pages_console.py."""
from __future__ import annotations

import itertools
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.test import Client as DjangoClient
from django.urls import reverse

from crowd.models import Participant
from games.registry import GAMES as REGISTERED
from live.models import Batch, Seat
from live.services import match_create
from tests.support import crowd_helpers as h
from tests.support.platform_ids import mturk_rec  # noqa: F401 (a fixture: the review page asks MTurk)
from tests.crowd.test_staff import patterns, url_for, world  # noqa: F401 (a fixture)
from tests.support.factories import lab_url
from tests.support import play

from tests.conftest import ROOT

pytestmark = pytest.mark.django_db

_addresses = itertools.count(1)
UNSAFE = ("'unsafe-inline'", "'unsafe-eval'", "'unsafe-hashes'", "'wasm-unsafe-eval'", "*", "data:", "blob:",
          "http:", "https:", "'strict-dynamic'")


def Client(**kwargs) -> DjangoClient:  # noqa: N802
    """A client from an address of its own (TEST-NET-3): nothing here counts against others' rate limits."""
    return DjangoClient(REMOTE_ADDR=f"203.0.113.{next(_addresses) % 250 + 1}", raise_request_exception=False,
                        **kwargs)


def directives(response) -> dict[str, str]:
    """The response's Content-Security-Policy, directive name -> its sources (one string)."""
    header = response.get("Content-Security-Policy", "")
    parts = [p.strip().split(None, 1) for p in header.split(";") if p.strip()]
    return {p[0]: p[1] if len(p) > 1 else "" for p in parts}


def effective(policy: dict[str, str], name: str) -> list[str]:
    """The sources that govern ``name`` (its own directive, else default-src)."""
    return (policy.get(name) if name in policy else policy.get("default-src", "*")).split()


def assert_strict(response, what) -> dict[str, str]:
    policy = directives(response)
    assert policy, (what, response.status_code, "no Content-Security-Policy")
    for name in ("script-src", "script-src-elem", "script-src-attr", "style-src", "style-src-elem",
                 "style-src-attr", "object-src", "default-src"):
        sources = effective(policy, name)
        if name.startswith("style") and policy.get("sandbox") is not None and "default-src" in policy:
            continue   # the CoDraw SVG replays: a sandboxed image document, no script at all
        bad = [s for s in sources if s in UNSAFE or s.startswith(("'nonce-", "'sha"))]
        assert not bad, (what, name, bad, policy)
    assert effective(policy, "object-src") == ["'none'"], (what, policy)
    assert "frame-ancestors" in policy, (what, policy)
    return policy


class InlineCode(HTMLParser):
    """What in an HTML page a strict policy refuses: inline scripts (not JSON data blocks), event
    handler attributes, ``javascript:`` links, ``style`` attributes and ``<style>`` blocks."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "script" and not a.get("src") and (a.get("type") or "").lower() != "application/json":
            self.found.append(f"<script> without src at line {self.getpos()[0]}")
        if tag == "style":
            self.found.append(f"<style> block at line {self.getpos()[0]}")
        for name, value in attrs:
            if name.startswith("on"):
                self.found.append(f"<{tag} {name}=...> at line {self.getpos()[0]}")
            if name == "style":
                self.found.append(f"<{tag} style=...> at line {self.getpos()[0]}")
            if name in ("href", "src", "action", "formaction") and (value or "").strip().lower().startswith(
                    "javascript:"):
                self.found.append(f"<{tag} {name}=javascript:...> at line {self.getpos()[0]}")


def inline_code(html: str) -> list[str]:
    parser = InlineCode()
    parser.feed(html)
    return parser.found


def check(response, what) -> dict[str, str]:
    """The policy is strict and an HTML body needs nothing it refuses."""
    policy = assert_strict(response, what)
    if response.get("Content-Type", "").startswith("text/html") and not getattr(response, "streaming", False):
        found = inline_code(response.content.decode())
        assert not found, (what, found)
    return policy


# ------------------------------------------------------------------------------------ the walk
FILL = {"game_id": "colors_v1", "name": "background.png"}


def test_every_url_of_the_url_conf_answers_with_the_strict_policy(world, mturk_rec):
    """Anonymous and as a superuser, each route of the URL conf (filled with things that exist)."""
    root = get_user_model().objects.create_superuser("csp-root", "", "pw")
    token = world["batch"].participants.first().token
    seen = 0
    for route, p in patterns():
        names = set(p.pattern.converters)
        if p.name is None:   # favicon.ico: a redirect with no argument
            url = "/" + route
        elif names & {"token", "game_id", "name"}:   # url_for (staff pages) does not fill these
            url = reverse(p.name, kwargs={n: {"token": token, **FILL}[n] for n in names})
        else:
            url = url_for(route, p, world)
        for who in (None, root):
            c = Client()
            if who is not None:
                c.force_login(who)
            r = c.get(url)
            check(r, (url, who and who.username, r.status_code))
            seen += 1
    assert seen >= 2 * 30, seen


def active(game_id: str, roles: tuple[str, ...], config: dict):
    match = match_create(game_id=game_id, seats=play.seats(roles), seed=11, config=config, wake_agents=False)
    return match, {s.role: s for s in Seat.objects.filter(match=match)}


# every registered game, kept small: two rounds, a pool of six where the game has them
SMALL = {"rounds": 2, "pool_size": 6}
GAMES = [(spec.id, spec.roles, {k: v for k, v in SMALL.items() if k in spec.default_config})
         for spec in REGISTERED.values()]


@pytest.mark.parametrize("game_id, roles, config", GAMES, ids=[g[0] for g in GAMES])
def test_each_game_page_needs_no_inline_code_and_reaches_its_socket(game_id, roles, config):
    """Both seats of each game: the seat's data is a JSON block (never run), its scripts are files,
    and connect-src names this host's websocket in the scheme the page was loaded with."""
    match, seats = active(game_id, roles, config)
    for role in roles:
        for secure, scheme in ((False, "ws"), (True, "wss")):
            r = Client().get(f"/m/{match.id}/?seat={seats[role].token}", secure=secure)
            assert r.status_code == 200, (game_id, role, r.status_code)
            policy = check(r, (game_id, role))
            assert effective(policy, "connect-src") == ["'self'", f"{scheme}://testserver"], policy
            assert effective(policy, "frame-ancestors") == ["https://worker.mturk.com",
                                                            "https://workersandbox.mturk.com"], policy
            html = r.content.decode()
            block = re.search(r'<script id="gt-seat" type="application/json">(.*?)</script>', html, re.S)
            assert block and seats[role].token in block.group(1) and f'"role": "{role}"' in block.group(1), html[-800:]
            assert "static/gt/seat.js" in html


def test_a_worker_s_pages_in_every_state(settings):
    """Entry, consent, instructions of each game, the waiting room and the last page (with MTurk's
    submit form, whose address joins form-action on that page only)."""
    for game_id, _, _ in GAMES:
        b = Batch.objects.create(slug=f"csp-{game_id.replace('_', '-')}", title="csp", game_id=game_id,
                                 pairing=Batch.Pairing.HUMAN_HUMAN, config={}, max_wait_s=60, entry_kinds=["lab"])
        c = Client()
        r = c.get(lab_url(b, f"csp-{game_id}"))
        assert r.status_code == 302, (game_id, r.status_code)
        check(r, "entry")
        page = r["Location"]
        r = c.get(page)
        check(r, (game_id, "consent"))
        assert b'id="agree"' in r.content
        r = c.post(page, {"step": "consent", "agree": "yes"})
        r = c.get(page)
        check(r, (game_id, "instructions"))
        c.post(page, {"step": "ready"})
        r = c.get(page)
        if b'id="waiting"' in r.content:
            check(r, (game_id, "waiting"))
            assert b'data-status-url="/p/' in r.content and b"static/gt/waiting.js" in r.content
        else:   # a quiz or a practice first
            check(r, (game_id, "onboarding"))
    b = h.batch()
    p = h.participant(b, "A1CSPWORKER", submit_to="https://workersandbox.mturk.com")
    r = Client().get(f"/p/{p.token}/")
    assert r.status_code == 200 and b'id="mturk-submit"' in r.content
    policy = check(r, "done")
    assert effective(policy, "form-action") == ["'self'", "https://workersandbox.mturk.com",
                                                "https://worker.mturk.com"], policy
    other = h.participant(b, "A2CSPWORKER", platform="prolific")
    r = Client().get(f"/p/{other.token}/")
    assert effective(check(r, "done, Prolific"), "form-action") == ["'self'"]


def test_every_admin_page_for_every_model():
    root = get_user_model().objects.create_superuser("csp-admin", "", "pw")
    b = h.batch(entry_kinds=["mturk", "lab"])
    h.participant(b, "A1ADMINCSP", outcome={"correct": 1})
    play.colors(b)
    c = Client()
    c.force_login(root)
    urls = ["/admin/", "/admin/password_change/"]
    for model, model_admin in admin.site._registry.items():
        info = (model._meta.app_label, model._meta.model_name)
        urls.append(reverse(f"admin:{info[0]}_{info[1]}_changelist"))
        if model_admin.has_add_permission(_Req(root)):
            urls.append(reverse(f"admin:{info[0]}_{info[1]}_add"))
        first = model.objects.order_by("pk").first()
        if first is not None:
            urls.append(reverse(f"admin:{info[0]}_{info[1]}_change", args=[first.pk]))
    assert len(urls) > 15, urls
    for url in urls:
        r = c.get(url)
        assert r.status_code == 200, (url, r.status_code)
        check(r, url)
    r = Client().get("/admin/")   # anonymous: the redirect to the login page, and that page
    assert r.status_code == 302
    check(r, "admin, anonymous")
    r = Client().get("/admin/login/")
    assert r.status_code == 200
    check(r, "admin login")


class _Req:
    def __init__(self, user):
        self.user = user


def test_error_answers_and_files_carry_it_too(world):
    """What no view renders: hostile input (400), a cross-site POST on a crowd page (403), a wrong
    method (405), a missing page (404), a host not allowed (400), a static file."""
    c = Client()
    match = world["colors"]
    for url, status, kwargs in (
            ("/p/%00/", 400, {}), ("/no/such/page/", 404, {}), (f"/m/{match.id}/partner-gone", 405, {}),
            ("/", 400, {"HTTP_HOST": "evil.example"})):
        r = c.get(url, **kwargs)
        assert r.status_code == status, (url, r.status_code)
        check(r, url)
    token = h.participant(world["batch"], "A3CSPWORKER").token
    r = c.post(f"/p/{token}/", {"step": "leave"}, HTTP_SEC_FETCH_SITE="cross-site", HTTP_ORIGIN="https://evil.example")
    assert r.status_code == 403
    assert directives(r)["frame-ancestors"] != "'none'"   # a crowd page's refusal is shown in MTurk's frame
    check(r, "cross-site 403")
    r = c.get("/static/gt/client.js")
    assert r.status_code == 200
    check(r, "static file")


def test_a_page_that_sets_its_own_stricter_policy_keeps_it(world):
    """The CoDraw SVG replays carry ``default-src 'none'; sandbox``: the site's policy does not replace it."""
    root = get_user_model().objects.create_superuser("csp-svg", "", "pw")
    c = Client()
    c.force_login(root)
    r = c.get(f"/research/matches/{world['codraw'].id}/codraw/target.svg")
    assert r.status_code == 200
    policy = check(r, "svg")
    assert policy["default-src"] == "'none'" and "sandbox" in policy and policy["frame-ancestors"] == "'none'"


# ------------------------------------------------------------------------------ the templates
TEMPLATE_DIRS = [ROOT / "templates", *sorted(ROOT.glob("*/templates")),
                 *sorted(ROOT.glob("games/*/templates"))]   # each game's own (GameSpec templates)
HTML_IN_PYTHON = [ROOT / d for d in ("games", "crowd", "agents", "groundtalk_web")]


def template_files() -> list[Path]:
    return sorted(p for d in TEMPLATE_DIRS for p in d.rglob("*.html"))


def test_no_template_has_inline_code():
    """Each template as written (Django tags blanked): what the policy would refuse, with the file
    and line. json_script blocks are written by the filter at render time, not here."""
    files = template_files()
    assert len(files) > 40, files
    problems = {}
    for path in files:
        text = re.sub(r"\{%.*?%\}|\{\{.*?\}\}|\{#.*?#\}", lambda m: re.sub(r"[^\n]", "x", m.group(0)),
                      path.read_text(), flags=re.S)
        found = inline_code(text)
        if found:
            problems[str(path.relative_to(ROOT))] = found
    assert not problems, problems


HANDLER_OR_STYLE = re.compile(r"<[a-zA-Z][^<>]*\s(on[a-z]+|style)\s*=\s*['\"]|<script>|<style", re.S)


def test_no_html_written_in_python_has_inline_code():
    """HTML that views and the admin write from Python (format_html and the like)."""
    problems = []
    for folder in HTML_IN_PYTHON:
        for path in folder.rglob("*.py"):
            for n, line in enumerate(path.read_text().splitlines(), 1):
                if HANDLER_OR_STYLE.search(line):
                    problems.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not problems, problems


def test_the_checker_finds_what_it_looks_for():
    """The template and page checks above would see each kind of inline code."""
    assert len(inline_code('<script>alert(1)</script><script type="application/json">{}</script>'
                           '<script src="/static/x.js"></script>')) == 1
    assert inline_code('<input onclick="this.select()">') and inline_code('<p style="color:red">')
    assert inline_code("<style>p{}</style>") and inline_code('<a href="javascript:alert(1)">x</a>')
    assert HANDLER_OR_STYLE.search("""'<input type="text" readonly onclick="this.select()">'""")
    assert not HANDLER_OR_STYLE.search('ax.axhline(1, color="grey", linestyle="--")')
