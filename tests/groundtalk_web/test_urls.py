"""Hostile HTTP input (issue 9, item 5), on PostgreSQL, which refuses NUL in text parameters.

Every example of the issue gets a 4xx page in the site's style and writes nothing; then every URL
pattern of groundtalk_web/urls.py is sent many malformed variants (path segments, query
parameters, form fields, cookies, methods, CSRF) by a worker and by a staff member, and none may
answer 5xx or show a traceback or settings. A last test sends raw bytes to the real uvicorn server,
where the path reaches Django percent-decoded by the server (ASGI) instead of the test client.
"""
from __future__ import annotations

import socket
from urllib.parse import urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.test import Client as DjangoClient

from games.codraw import clipart as ca
from crowd.models import Participant
from live.models import Batch, Match, Seat
from live.services import SeatSpec, match_apply_action, match_create

from tests.support.factories import batch as make_batch
from tests.support.factories import colors_match

#: text that only Django's debug pages, a traceback or a settings dump would show
LEAKS = ("Traceback", 'File "', "DJANGO_SETTINGS_MODULE", "SECRET_KEY", "INSTALLED_APPS", "Exception Value",
         "Request Method:", "Using the URLconf", "Django Version", "psycopg", "site-packages")

ISSUE_EXAMPLES = [
    "/b/{slug}/?worker=a%00b",
    "/b/{slug}/?PROLIFIC_PID=p%00",
    "/b/{slug}/?workerId=W9&assignmentId=A9&hitId=%00",
    "/p/%00/",
    "/p/%00/status",
    "/m/{match}/?seat=%00",
    "/m/{match}/?seat={seat}%00",
    "/m/{match}/img/%00.png?seat=%00",
]

#: malformed values for a path segment or a query value (already percent-encoded as sent)
BAD = ["%00", "a%00b", "%01", "%1f", "%7f", "%09", "%0a", "%0d%0a", "%ff", "%c3%28", "%ed%a0%80", "%fe%ff",
       "%", "%zz", "%2", "x" * 3000, "..", "%2e%2e", "%2f", "%5c", "%27%22%3Cscript%3E", "%e2%80%ae", "%ef%bf%bd",
       "%f0%9f%98%80", "null", "-1", "0", "9" * 40, "%20", "+", "%2B", "a=b", "&", "%26%00"]


@pytest.fixture(autouse=True)
def no_rate_limits(settings):
    """The fuzz sends thousands of requests from one address: HTTP rate limits (live/ratelimit.py)
    would answer most of them 429 before a view sees them. Rate 0 means no limit."""
    for name in ("GT_RL_ENTRY_PER_MIN", "GT_RL_STEP_PER_MIN", "GT_RL_POLL_PER_MIN", "GT_RL_PARTICIPANT_POLL_PER_MIN"):
        setattr(settings, name, 0)


_addresses = iter(range(1, 250))


def Client(**kwargs) -> DjangoClient:  # noqa: N802
    """A test client from an address of its own (TEST-NET-1), so nothing here counts against the
    rate limits of 127.0.0.1, the address other tests' clients and the live server see."""
    return DjangoClient(REMOTE_ADDR=f"192.0.2.{next(_addresses)}", **kwargs)


def is_styled(body: str) -> bool:
    return 'class="brand">GroundTalk' in body and "/static/gt/style.css" in body


def leaks(body: str) -> list[str]:
    return [word for word in LEAKS if word in body]


@pytest.fixture
def world(db):
    batch = make_batch(slug="hostile", game_id="colors_v1")
    consent = Participant.objects.create(batch=batch, platform="lab", worker_id="consenting")
    match, seats = colors_match()
    gw = match_create(game_id="guesswhich_v1", seed=3, config={"rounds": 2},
                      seats={"questioner": SeatSpec("human"), "answerer": SeatSpec("human")})
    gw_seat = Seat.objects.get(match=gw, role="questioner")
    cd = match_create(game_id="codraw_v1", seed=5, config={"time_limit_s": 1200},
                      seats={"teller": SeatSpec("human"), "drawer": SeatSpec("human")})
    for i, (role, action) in enumerate([("teller", {"type": "chat", "text": "a girl"}),
                                        ("drawer", {"type": "place", "idx": ca.JENNY, "x": 250, "y": 250}),
                                        ("drawer", {"type": "chat", "text": "ok"})]):
        match_apply_action(match_id=cd.id, role=role, action=action, client_action_id=f"h{i}")
    return {"slug": batch.slug, "token": consent.token, "pk": str(consent.pk), "match": str(match.id),
            "seat": seats["listener"].token, "gw": str(gw.id), "gw_seat": gw_seat.token,
            "image": gw.state["pool_ids"][0], "cd": str(cd.id)}


def test_the_issue_examples_are_refused_with_a_styled_400_and_write_nothing(world):
    client = Client(raise_request_exception=False)
    before = (Participant.objects.count(), Match.objects.count())
    for template in ISSUE_EXAMPLES:
        url = template.format(**world)
        for method in ("get", "post", "head"):
            r = getattr(client, method)(url)
            body = r.content.decode("utf-8", "replace")
            assert 400 <= r.status_code < 500, (method, url, r.status_code)
            if method != "head":
                assert r.status_code == 400 and is_styled(body) and not leaks(body), (method, url, body[:300])
    assert (Participant.objects.count(), Match.objects.count()) == before
    assert not Participant.objects.filter(worker_id__contains="p").exclude(worker_id="consenting").exists()


def test_nul_in_a_form_field_or_cookie_is_refused(world):
    client = Client(raise_request_exception=False)
    p_url = f"/p/{world['token']}/"
    for data in ({"step": "consent\x00", "agree": "yes"}, {"step": "consent", "agree": "yes\x00"},
                 {"step\x00": "consent"}, {"seat": "\x00"}, {"step": "\x1b[2J"}):
        r = client.post(p_url, data)
        assert r.status_code == 400 and is_styled(r.content.decode()), data
        r = client.post(f"/m/{world['match']}/partner-gone", data)
        assert r.status_code == 400, data
    r = client.post(p_url, {"step": "consent", "agree": "yes"}, content_type="multipart/form-data; boundary=x")
    assert r.status_code == 400   # a body that is not the multipart it says it is
    r = client.post(p_url, "step=consent&agree=%ff", content_type="application/x-www-form-urlencoded")
    assert r.status_code == 400
    assert Participant.objects.get(token=world["token"]).state == Participant.State.CONSENT   # nothing written
    owner = client.cookies["sessionid"].value   # the browser the participant is bound to (crowd/identity.py)
    client.cookies["sessionid"] = "abc\x00defghijk"
    r = client.get("/research/")
    assert r.status_code == 400 and is_styled(r.content.decode())
    # text typed into a form may hold line breaks and tabs
    ok = Client(raise_request_exception=False)
    ok.cookies["sessionid"] = owner
    assert ok.post(p_url, {"step": "consent", "agree": "yes", "note": "line one\r\nline\ttwo"}).status_code == 302


def test_wrong_methods_and_missing_csrf_get_styled_pages(world):
    client = Client(raise_request_exception=False)
    for url in (f"/b/{world['slug']}/?worker=x", f"/p/{world['token']}/status", f"/m/{world['match']}/",
                "/", "/codraw/art-config.js"):
        r = client.post(url)
        assert r.status_code == 405 and "GET" in r["Allow"] and is_styled(r.content.decode()), url
    r = client.get(f"/m/{world['match']}/partner-gone")
    assert r.status_code == 405 and r["Allow"] == "POST" and is_styled(r.content.decode())
    r = client.put(f"/p/{world['token']}/")
    assert r.status_code == 405 and is_styled(r.content.decode())
    # the crowd pages' POSTs are checked by origin, not by CSRF cookie (groundtalk_web/crowd_pages.py)
    strict = Client(enforce_csrf_checks=True, raise_request_exception=False)
    for url, data in ((f"/p/{world['token']}/", {"step": "consent", "agree": "yes"}),
                      (f"/m/{world['match']}/partner-gone", {"seat": world["seat"]})):
        r = strict.post(url, data, HTTP_SEC_FETCH_SITE="cross-site", HTTP_ORIGIN="https://evil.example")
        body = r.content.decode()
        assert r.status_code == 403 and is_styled(body) and not leaks(body), url
    assert Participant.objects.get(token=world["token"]).state == Participant.State.CONSENT
    r = strict.post("/admin/login/", {"username": "a", "password": "b"})   # every other POST: Django's CSRF check
    body = r.content.decode()
    assert r.status_code == 403 and is_styled(body) and "expired" in body and not leaks(body)


def test_missing_and_wrong_parameters_are_4xx(world):
    client = Client(raise_request_exception=False)
    cases = {
        f"/b/{world['slug']}/": 400, "/b/no-such-batch/?worker=x": 404,
        f"/m/{world['match']}/": 404, f"/m/{world['match']}/?seat=": 404,
        f"/m/{world['gw']}/?seat={world['seat']}": 404,
        "/m/not-a-uuid/": 404, "/p/x/": 404, "/p/" + "x" * 500 + "/": 404, "/p/" + "x" * 500 + "/status": 404,
        f"/m/{world['gw']}/img/{world['image']}.png": 404, "/nothing/here": 404,
    }
    for url, status in cases.items():
        r = client.get(url)
        assert r.status_code == status, (url, r.status_code)
        if r["Content-Type"].startswith("text/html"):
            assert is_styled(r.content.decode()), url
    r = client.post(f"/p/{world['token']}/", {"step": "dance"})
    assert r.status_code == 400 and is_styled(r.content.decode())


#: every URL pattern of groundtalk_web/urls.py with valid values, and the query parameters it reads
PATTERNS = {
    "/": ["x"],
    "/b/{slug}/?worker=fuzz": ["worker", "workerId", "assignmentId", "hitId", "turkSubmitTo", "PROLIFIC_PID",
                               "STUDY_ID", "SESSION_ID", "lab"],
    "/b/{slug}/demo/": ["x"],
    "/p/{token}/": ["step"],
    "/p/{token}/status": ["x"],
    "/p/{token}/device/": ["x"],
    "/continue/": ["ticket", "code"],
    "/research/batches/{slug}/lab-links/": ["count", "names", "prefix"],
    "/research/batches/{slug}/launch/": ["platform", "live", "confirm", "reward_cents", "assignments"],
    "/research/batches/{slug}/launch/{pk}/": ["action", "n"],
    "/research/batches/{slug}/review/": ["action", "ids", "reason", "kind"],
    "/research/batches/{slug}/review.csv": ["x"],
    "/m/{match}/?seat={seat}": ["seat"],
    "/m/{match}/partner-gone": ["seat"],
    "/m/{match}/turn?seat={seat}": ["seat"],
    "/m/{match}/end-stalled": ["seat"],
    "/m/{gw}/img/{image}.png?seat={gw_seat}&size=thumb": ["seat", "size"],
    "/schemas/{game}.json": ["x"],
    "/research/": ["next"],
    "/research/batches/{slug}/?format=json": ["format"],
    "/research/matches/{match}/": ["x"],
    "/research/matches/{gw}/img/{image}.png?size=thumb": ["size"],
    "/research/matches/{cd}/replay/1.svg?scale=1": ["scale"],
    "/research/compare/?game=guesswhich_v1&role=answerer&a=human&b=alice_exact&compare=1":
        ["game", "batch", "role", "play", "a", "b", "compare", "format"],
    "/research/export/?format=jsonl&batch=all&status=finished&since=2026-11-01&count=1":
        ["format", "batch", "status", "since", "until", "pseudonymise", "count", "preview"],
    "/codraw/art-config.js": ["x"],
    "/codraw/art/{art}": ["x"],
    "/research/matches/{cd}/codraw/target.svg?scale=1": ["scale"],
    "/research/matches/{cd}/codraw/round/{round}.svg?before=1": ["before", "scale"],
    "/research/matches/{cd}/codraw/final.svg": ["scale"],
    "/admin/": ["x"],
    "/admin/live/batch/?q=x": ["q", "o", "p", "status"],
    "/admin/live/match/{match}/change/": ["x"],
    "/admin/crowd/participant/{pk}/change/": ["_changelist_filters"],
    "/static/gt/{static}": ["x"],
}


def _values(world: dict) -> dict:
    return {**world, "art": "s_0s.png", "round": "0", "static": "style.css", "game": "colors_v1"}


def test_the_fuzz_covers_every_url_pattern(world):
    from django.urls import resolve

    from groundtalk_web.urls import urlpatterns

    named = {p.name for p in urlpatterns if getattr(p, "name", None)}
    covered = {resolve(t.format(**_values(world)).partition("?")[0]).url_name for t in PATTERNS
               if not t.startswith(("/admin/", "/static/"))}
    assert named <= covered, f"add {sorted(named - covered)} to PATTERNS"


def _variants(world: dict) -> list[str]:
    values = _values(world)
    out = []
    for template, query_names in PATTERNS.items():
        out.append(template.format(**values))
        path_t, _, query_t = template.partition("?")
        query = query_t.format(**values)
        for name in [n for n in values if "{" + n + "}" in path_t]:     # each path placeholder, made bad
            for bad in BAD:
                out.append(path_t.format(**{**values, name: bad}) + ("?" + query if query else ""))
        path = path_t.format(**values)
        for bad in BAD:                        # each query parameter made bad; bad names; a bare bad query
            for qname in query_names:
                pairs = [p for p in query.split("&") if p and not p.startswith(qname + "=")]
                out.append(path + "?" + "&".join(pairs + [f"{qname}={bad}"]))
            out.append(path + "?" + bad + "=1")
            out.append(path + "?" + bad)
        out.append(path + "?" + "&".join(f"{n}=a&{n}=b" for n in query_names))   # repeated parameters
    return out


def _fuzz(client: Client, urls: list[str], methods=("get",)) -> list[str]:
    failures = []
    for url in urls:
        for method in methods:
            kwargs = {"data": {"step": "consent", "seat": "x", "agree": "no"}} if method == "post" else {}
            r = getattr(client, method)(url, **kwargs)
            body = r.content.decode("utf-8", "replace") if not getattr(r, "streaming", False) else ""
            bad = leaks(body)
            if r.status_code >= 500 or bad:
                failures.append(f"{method.upper()} {url[:120]} -> {r.status_code} {bad}")
    return failures


def test_fuzz_every_url_pattern_as_a_worker(world):
    urls = _variants(world)
    assert len(urls) > 2500
    failures = _fuzz(Client(raise_request_exception=False), urls)
    failures += _fuzz(Client(raise_request_exception=False), urls[::7], methods=("post", "head", "options", "delete"))
    assert not failures, f"{len(failures)} failures, e.g. {failures[:10]}"


def test_fuzz_every_url_pattern_as_staff(world):
    staff = get_user_model().objects.create_user("fuzz-staff", password="x", is_staff=True, is_superuser=True)
    client = Client(raise_request_exception=False)
    client.force_login(staff)
    urls = [u for u in _variants(world) if u.startswith(("/research", "/admin", "/codraw"))]
    failures = _fuzz(client, urls[::2])
    failures += _fuzz(client, urls[1::9], methods=("post",))
    assert not failures, f"{len(failures)} failures, e.g. {failures[:10]}"
    assert Batch.objects.filter(slug="hostile").exists()


def test_the_error_pages_do_not_fail_in_turn(monkeypatch):
    """If even the styled page cannot be rendered, a fixed page is sent: the 500 handler needs no
    template, request, session or database to answer."""
    from django.template import loader

    from groundtalk_web import errors

    def broken(*args, **kwargs):
        raise RuntimeError("template engine down")

    monkeypatch.setattr(loader, "render_to_string", broken)
    for status, handler in ((500, lambda: errors.server_error(None)), (404, lambda: errors.page_not_found(None)),
                            (400, lambda: errors.bad_request(None)), (403, lambda: errors.permission_denied(None))):
        r = handler()
        body = r.content.decode()
        assert r.status_code == status and "<h1>" in body and not leaks(body) and "template engine" not in body


def _raw_request(base_url: str, target: bytes, method: bytes = b"GET", body: bytes = b"",
                 headers: bytes = b"") -> tuple[int, str]:
    host, port = urlsplit(base_url).hostname, urlsplit(base_url).port
    form = b"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: %d\r\n" % len(body) if body else b""
    request = (method + b" " + target + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" + headers + form
               + b"\r\n" + body)
    with socket.create_connection((host, port), timeout=20) as s:
        s.sendall(request)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), rest.decode("utf-8", "replace")


@pytest.mark.django_db(transaction=True)
def test_the_real_server_refuses_hostile_bytes(live_server_url):
    batch = make_batch(slug="hostile-live")
    match, seats = colors_match()
    before = Participant.objects.count()
    targets = [b"/b/hostile-live/?worker=a%00b", b"/b/hostile-live/?PROLIFIC_PID=p%00", b"/p/%00/",
               b"/p/%00/status", b"/m/%s/?seat=%%00" % str(match.id).encode(), b"/p/%ff/", b"/p/%c3%28/status",
               b"/b/hostile-live/?worker=%ff", b"/b/hostile-live/?worker=%zz", b"/p/%e2%82/", b"/p/a%0ab/",
               b"/m/%s/img/%%00.png?seat=%%00" % str(match.id).encode(), b"/static/gt/%00style.css"]
    for target in targets:
        status, body = _raw_request(live_server_url, target)
        assert status == 400 and is_styled(body) and not leaks(body), (target, status, body[:300])
    # bytes no browser sends unencoded: uvicorn itself refuses them before Django sees the request
    for target in (b"/b/hostile-live/?worker=\xff", b"/p/\xc3\xa9/", b"/p/a\x00b/"):
        status, body = _raw_request(live_server_url, target)
        assert 400 <= status < 500 and not leaks(body), (target, status, body[:300])
    status, body = _raw_request(live_server_url, b"/m/%s/partner-gone" % str(match.id).encode(), b"POST",
                                b"seat=%00")
    assert 400 <= status < 500 and not leaks(body)
    status, body = _raw_request(live_server_url, b"/research/", headers=b"Cookie: sessionid=\"\\000abcdefghij\"\r\n")
    assert 400 <= status < 500 and not leaks(body), (status, body[:300])
    assert Participant.objects.count() == before and batch.participants.count() == 0
    status, body = _raw_request(live_server_url, b"/static/gt/style.css")   # static files still served
    assert status == 200 and ".card" in body
    # UTF-8 is decoded, and an id that is not one (crowd/platform_ids.py) gets the styled page
    status, body = _raw_request(live_server_url, b"/b/hostile-live/?PROLIFIC_PID=ok%C3%A9")
    assert status in (400, 429) and not leaks(body)   # 429: other tests' entries from 127.0.0.1 used up its limit
