"""HTTP rate limits per client address and per participant (live/ratelimit.py, crowd/pages.py).

Entry links, the participant page's steps and the waiting-room poll (which may take the batch
row lock) answer 429 with Retry-After when one address or one participant floods them, before
touching the database; a normal paced poll is never refused; other addresses are unaffected.
"""
from __future__ import annotations

import time
import uuid
from unittest import mock

import pytest
from django.conf import settings as django_settings
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from crowd import lobby
from live import ratelimit
from crowd.models import Participant
from live.ratelimit import Limiter

from tests.support.factories import batch as make_batch
from tests.support.factories import lab_url, participant

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fresh_limiter():
    """The configured backend (Redis under test.sh) with keys of this test only."""
    prefix = f"gt:rl:test-{uuid.uuid4().hex[:12]}:"
    limiter = Limiter(backend=django_settings.GT_RL_BACKEND, prefix=prefix, redis_url=django_settings.REDIS_URL,
                      pool_size=2, timeout_s=django_settings.GT_RL_REDIS_TIMEOUT_MS / 1000)
    ratelimit.set_limiter(limiter)
    yield limiter
    ratelimit.set_limiter(None)
    if limiter.redis is not None:
        import redis

        client = redis.Redis.from_url(django_settings.REDIS_URL)
        keys = list(client.scan_iter(match=prefix + "*", count=1000))
        if keys:
            client.delete(*keys)
        client.close()
        limiter.redis.close()


def client_from(address: str) -> Client:
    return Client(REMOTE_ADDR=address)


def assert_429(response, *, as_json: bool) -> int:
    assert response.status_code == 429
    wait = int(response["Retry-After"])
    assert wait >= 1
    if as_json:
        assert response.json() == {"error": "rate_limited", "retry_after_s": wait}
    else:
        body = response.content.decode()
        assert "One moment, please" in body and 'http-equiv="refresh"' in body
    return wait


def test_an_entry_flood_from_one_address_gets_429_and_other_addresses_do_not(settings):
    settings.GT_RL_ENTRY_PER_MIN, settings.GT_RL_ENTRY_BURST = 60, 5
    b = make_batch(slug="rl-entry")
    flood = client_from("203.0.113.7")
    for i in range(5):
        assert flood.get(lab_url(b, f"w{i}")).status_code == 302
    with CaptureQueriesContext(connection) as queries:
        refused = flood.get(lab_url(b, "w99"))
    assert_429(refused, as_json=False)
    assert len(queries) == 0                                    # refused before any database work
    assert not Participant.objects.filter(worker_id="w99").exists()
    assert lab_url(b, "w99") in refused.content.decode()   # the page retries the same link
    assert client_from("198.51.100.4").get(lab_url(b, "other")).status_code == 302


def test_participant_steps_are_limited_per_address(settings):
    settings.GT_RL_STEP_PER_MIN, settings.GT_RL_STEP_BURST = 60, 3
    b = make_batch(slug="rl-steps")
    p = participant(b, state=Participant.State.CONSENT)
    c = client_from("203.0.113.8")
    for _ in range(3):
        assert c.post(f"/p/{p.token}/", {"step": "consent", "agree": "yes"}).status_code == 302
    refused = c.post(f"/p/{p.token}/", {"step": "ready"})
    assert_429(refused, as_json=False)
    assert "press the button again" in refused.content.decode()
    p.refresh_from_db()
    assert p.state == Participant.State.INSTRUCTIONS             # the refused step changed nothing
    assert c.get(f"/p/{p.token}/").status_code == 200            # reading the page is not a step


def test_a_poll_flood_gets_429_json_without_taking_the_lobby_lock(settings):
    b = make_batch(slug="rl-poll")
    p = participant(b)
    c = client_from("203.0.113.9")
    calls = []
    real = lobby.lobby_poll
    with mock.patch.object(lobby, "lobby_poll", side_effect=lambda **kw: calls.append(kw) or real(**kw)):
        codes = [c.get(f"/p/{p.token}/status").status_code for _ in range(40)]
    burst = django_settings.GT_RL_PARTICIPANT_POLL_BURST
    assert codes[:burst] == [200] * burst and 429 in codes
    assert len(calls) == codes.count(200)                        # refused polls never reach lobby_poll
    with CaptureQueriesContext(connection) as queries:
        refused = c.get(f"/p/{p.token}/status")
    assert_429(refused, as_json=True)
    assert len(queries) == 0
    # the waiting page itself polls too, so it shares the participant's allowance
    assert_429(c.get(f"/p/{p.token}/"), as_json=False)
    # another participant behind the same address is not held up by this one
    q = participant(b)
    assert c.get(f"/p/{q.token}/status").status_code == 200


def test_polls_are_limited_per_address_across_participants(settings):
    settings.GT_RL_POLL_PER_MIN, settings.GT_RL_POLL_BURST = 60, 4
    b = make_batch(slug="rl-poll-addr")
    people = [participant(b) for _ in range(6)]
    c = client_from("2001:db8:1:2::10")
    codes = [c.get(f"/p/{p.token}/status").status_code for p in people]
    assert codes == [200] * 4 + [429] * 2
    # the same /64 is the same client; another /64 is not
    # (the same browser, c's session cookie, from other addresses: a phone changing networks)
    same_net, other_net = client_from("2001:db8:1:2::99"), client_from("2001:db8:1:3::10")
    same_net.cookies = other_net.cookies = c.cookies
    assert same_net.get(f"/p/{people[0].token}/status").status_code == 429
    assert other_net.get(f"/p/{people[0].token}/status").status_code == 200


def test_a_normal_paced_poll_is_never_limited():
    """Faster than the waiting page (one poll every 0.8 to 1.2 s), with its page load first."""
    b = make_batch(slug="rl-paced")
    p = participant(b)
    c = client_from("203.0.113.10")
    assert c.get(f"/p/{p.token}/").status_code == 200
    for _ in range(12):
        r = c.get(f"/p/{p.token}/status")
        assert r.status_code == 200, r.content
        assert r.json()["state"] == "waiting"
        time.sleep(0.5)


def test_a_classroom_behind_one_address_is_not_limited_by_default():
    """60 workers on one NAT address open the link at once, then wait and poll together."""
    b = make_batch(slug="rl-class")
    c = client_from("203.0.113.11")
    tokens = []
    for i in range(60):
        r = c.get(lab_url(b, f"student{i}"))
        assert r.status_code == 302, i
        tokens.append(r.url.strip("/").split("/")[-1])
    for round_ in range(3):
        assert all(c.get(f"/p/{t}/status").status_code == 200 for t in tokens), round_


def test_client_address():
    def addr(value):
        class R:
            META = {"REMOTE_ADDR": value} if value is not None else {}
        return ratelimit.client_address(R)

    assert addr("203.0.113.5") == "203.0.113.5"
    assert addr("2001:db8:1:2:aaaa::1") == "2001:db8:1:2::/64"
    assert addr("::ffff:203.0.113.5") == "203.0.113.5"
    assert addr("") == addr(None) == addr("unix:/tmp/sock") == ""   # unknown: no per-address limit


def test_requests_without_an_address_are_only_limited_per_participant(settings):
    settings.GT_RL_ENTRY_PER_MIN, settings.GT_RL_ENTRY_BURST = 60, 1
    b = make_batch(slug="rl-noaddr")
    c = client_from("")
    assert all(c.get(lab_url(b, f"n{i}")).status_code == 302 for i in range(5))


def test_http_fails_open_when_redis_is_unreachable(settings):
    from tests.live.test_ratelimit import free_port

    ratelimit.set_limiter(Limiter(backend="redis", prefix="gt:rl:test-down:",
                                  redis_url=f"redis://127.0.0.1:{free_port()}/0", timeout_s=0.1))
    b = make_batch(slug="rl-down")
    p = participant(b)
    c = client_from("203.0.113.12")
    start = time.monotonic()
    assert c.get(lab_url(b, "x")).status_code == 302
    assert c.get(f"/p/{p.token}/status").status_code == 200
    assert time.monotonic() - start < 2
