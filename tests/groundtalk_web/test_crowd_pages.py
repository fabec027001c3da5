"""MTurk's frame (issue 11, item 3): which pages may be framed and by whom, the cookies crowd pages
set, and the origin check that stands in for the CSRF cookie on their POSTs
(groundtalk_web/crowd_pages.py). The framed flow in a real browser: tests/browser/test_mturk_frame.py."""
from __future__ import annotations

import itertools
import os
import subprocess
import sys

import pytest
from django.test import Client as DjangoClient

from crowd.models import Participant

from tests.conftest import ROOT
from tests.support.factories import batch as make_batch
from tests.support.factories import colors_match
from tests.support.staff_users import staff_user

from tests.groundtalk_web.test_csp import directives

MTURK = "https://worker.mturk.com https://workersandbox.mturk.com"
_addresses = itertools.count(1)


def Client(**kwargs) -> DjangoClient:  # noqa: N802
    """A client from an address of its own (TEST-NET-2): nothing here counts against others' rate limits."""
    return DjangoClient(REMOTE_ADDR=f"198.51.100.{next(_addresses)}", raise_request_exception=False, **kwargs)


@pytest.fixture
def world(db):
    batch = make_batch(slug="framed", game_id="colors_v1")
    consent = Participant.objects.create(batch=batch, platform="mturk", worker_id="W1", assignment_id="A1")
    match, seats = colors_match()
    return {"slug": batch.slug, "token": consent.token, "match": str(match.id), "seat": seats["listener"].token}


def assert_framable_by_mturk(response, url):
    assert "X-Frame-Options" not in response, url
    assert directives(response)["frame-ancestors"] == MTURK, url


def assert_not_framable(response, url):
    assert response["X-Frame-Options"] == "DENY", url
    assert directives(response)["frame-ancestors"] == "'none'", url


def test_crowd_pages_may_be_framed_by_mturk_only(world):
    client = Client()
    crowd = [f"/b/{world['slug']}/?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=H",   # MTurk's preview
             f"/b/{world['slug']}/?workerId=AW2&assignmentId=A2&hitId=H&turkSubmitTo=https://www.mturk.com",
             f"/p/{world['token']}/", f"/p/{world['token']}/status", f"/m/{world['match']}/?seat={world['seat']}"]
    for url in crowd:
        r = client.get(url)
        assert r.status_code in (200, 302), (url, r.status_code)
        assert_framable_by_mturk(r, url)
    # what a worker may meet there besides: errors (styled pages, shown in the frame too)
    for url, status in ((f"/p/{'x' * 32}/", 404), (f"/m/{world['match']}/?seat=nope", 404),
                        (f"/b/{world['slug']}/", 400), ("/b/no-such-batch/?worker=x", 404)):
        r = client.get(url)
        assert r.status_code == status, url
        assert_framable_by_mturk(r, url)
    r = client.post(f"/m/{world['match']}/partner-gone", {"seat": "nope"})
    assert r.status_code == 404
    assert_framable_by_mturk(r, "partner-gone")


def test_every_other_page_denies_every_frame(world):
    client = Client()
    for url in ("/", "/admin/login/", "/research/", "/schemas/colors_v1.json", "/no/such/page", "/p/"):
        r = client.get(url)
        assert_not_framable(r, url)
    staff = staff_user("staff", "pw-for-tests")
    client.force_login(staff)
    for url in ("/research/", f"/research/batches/{world['slug']}/", "/admin/", "/research/export/"):
        r = client.get(url)
        assert r.status_code == 200, url
        assert_not_framable(r, url)


def test_frame_ancestors_come_from_the_setting(world, settings):
    settings.GT_FRAME_ANCESTORS = ["https://frames.example.org"]
    r = Client().get(f"/p/{world['token']}/")
    assert directives(r)["frame-ancestors"] == "https://frames.example.org"
    settings.GT_FRAME_ANCESTORS = []
    r = Client().get(f"/p/{world['token']}/")
    assert directives(r)["frame-ancestors"] == "'none'" and "X-Frame-Options" not in r


def set_cookie_lines(response) -> dict[str, str]:
    return {name: morsel.OutputString() for name, morsel in response.cookies.items()}


def test_cookies_of_crowd_pages_reach_a_third_party_frame(world):
    """Over HTTPS every cookie a crowd page sets is SameSite=None; Secure; Partitioned, so that
    the browser keeps and sends it inside MTurk's frame (the consent page sets the CSRF cookie)."""
    r = Client().get(f"/p/{world['token']}/", secure=True)
    lines = set_cookie_lines(r)
    assert lines, "the consent page sets a cookie"
    for name, line in lines.items():
        attrs = [part.strip().lower() for part in line.split(";")]
        assert "samesite=none" in attrs and "secure" in attrs and "partitioned" in attrs, line
    # over plain HTTP to a host that is not loopback: the project's own settings (SameSite=Lax, as
    # browsers refuse SameSite=None without Secure, and Secure over HTTP)
    r = Client(HTTP_HOST="localhost").get(f"/p/{world['token']}/")   # loopback: browsers treat it as secure
    assert all("SameSite=None" in line and "Partitioned" in line for line in set_cookie_lines(r).values())
    r = Client().get(f"/p/{world['token']}/", HTTP_HOST="testserver")
    assert all("SameSite=Lax" in line and "Partitioned" not in line for line in set_cookie_lines(r).values())


def test_cookies_of_other_pages_keep_the_project_settings(world):
    r = Client().get("/admin/login/", secure=True)
    lines = set_cookie_lines(r)
    assert "csrftoken" in lines
    assert "SameSite=Lax" in lines["csrftoken"] and "Partitioned" not in lines["csrftoken"]


CROSS_SITE = [
    {"HTTP_SEC_FETCH_SITE": "cross-site", "HTTP_ORIGIN": "https://evil.example"},
    {"HTTP_SEC_FETCH_SITE": "same-site", "HTTP_ORIGIN": "https://other.testserver"},
    {"HTTP_ORIGIN": "https://evil.example"},                   # a browser without Fetch Metadata
    {"HTTP_ORIGIN": "null"},                                    # a sandboxed frame, a data: page
]


def test_a_cross_site_post_changes_nothing(world):
    """A form on another site cannot consent, ready or leave for a worker, nor end a match, even
    with the right token (the CSRF cookie is not needed: these views act on the token in the request)."""
    client = Client()
    for headers in CROSS_SITE:
        r = client.post(f"/p/{world['token']}/", {"step": "consent", "agree": "yes"}, **headers)
        assert r.status_code == 403 and 'class="brand">GroundTalk' in r.content.decode(), headers
        assert_framable_by_mturk(r, "refused")
        r = client.post(f"/m/{world['match']}/partner-gone", {"seat": world["seat"]}, **headers)
        assert r.status_code == 403, headers
    assert Participant.objects.get(token=world["token"]).state == Participant.State.CONSENT


def test_a_same_origin_post_needs_no_csrf_cookie(world):
    """Inside a frame whose cookies the browser blocks, the page's own forms still work."""
    strict = Client(enforce_csrf_checks=True)
    r = strict.post(f"/p/{world['token']}/", {"step": "consent", "agree": "yes"}, HTTP_SEC_FETCH_SITE="same-origin",
                    HTTP_ORIGIN="http://testserver")
    assert r.status_code == 302
    assert Participant.objects.get(token=world["token"]).state == Participant.State.INSTRUCTIONS
    r = strict.post(f"/p/{world['token']}/", {"step": "ready"}, HTTP_ORIGIN="http://testserver")  # Origin only
    assert r.status_code == 302
    assert Participant.objects.get(token=world["token"]).state == Participant.State.WAITING


def test_other_posts_keep_django_csrf(world):
    r = Client(enforce_csrf_checks=True).post("/admin/login/", {"username": "a", "password": "b"},
                                              HTTP_SEC_FETCH_SITE="same-origin")
    assert r.status_code == 403


@pytest.mark.parametrize("value", ["worker.mturk.com", "https://worker.mturk.com/path", "*", "'self'"])
def test_a_bad_frame_ancestors_setting_is_refused_clearly(value):
    env = {**os.environ, "GT_FRAME_ANCESTORS": value}
    out = subprocess.run([sys.executable, "-c", "import django, os; os.environ.setdefault('DJANGO_SETTINGS_MODULE', "
                          "'groundtalk_web.settings'); django.setup()"], cwd=ROOT, env=env, capture_output=True,
                         text=True)
    assert out.returncode != 0 and "GT_FRAME_ANCESTORS must list origins" in out.stderr, (value, out.stderr[-500:])
