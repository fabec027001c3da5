"""Rate limits behind a proxy (issue 21, item 6): the real uvicorn server believes X-Forwarded-For
only from the proxy's address (FORWARDED_ALLOW_IPS) and takes the address the proxy appended
(the rightmost one that is not a trusted proxy), so forged first addresses do not get a client
past the per-address limits; a server told to trust "*" refuses to start.

The test connects from 127.0.0.2 as "the proxy" and from 127.0.0.1 as a client that reached the
server directly. Entry links to a batch that does not exist answer 404 when allowed and 429 when
the entry limit (one address: a burst of BURST, then one a minute) refuses them."""
from __future__ import annotations

import os
import secrets
import subprocess
import sys
import uuid

import httpx
import pytest

from tests.conftest import ROOT, child_env, running_server

BURST = 72   # of 130 requests from one address, 58 are refused (the measurement)
N = 130
PROXY = "127.0.0.2"


@pytest.fixture
def server(transactional_db):
    env = {**child_env(), "FORWARDED_ALLOW_IPS": PROXY, "GT_RL_ENTRY_PER_MIN": "1",
           "GT_RL_ENTRY_BURST": str(BURST), "GT_RL_PREFIX": f"gt:rl:proxy-{uuid.uuid4().hex[:12]}:"}
    with running_server(env, "test-proxy-server.log") as url:
        yield url


def statuses(url: str, forwarded_for, *, source: str) -> list[int]:
    """N entry requests from ``source``, the i-th with the X-Forwarded-For ``forwarded_for(i)``."""
    with httpx.Client(transport=httpx.HTTPTransport(local_address=source), timeout=30) as client:
        return [client.get(f"{url}/b/no-such-batch/", headers={"X-Forwarded-For": forwarded_for(i)}).status_code
                for i in range(N)]


def refused(codes: list[int]) -> int:
    assert set(codes) <= {404, 429}, set(codes)
    return codes.count(429)


def test_forged_first_addresses_through_the_proxy_are_limited_like_one_address(server):
    # the proxy appends the address it saw (203.0.113.7) to whatever the client sent
    forged = refused(statuses(server, lambda i: f"198.51.{i // 250}.{i % 250 + 1}, 203.0.113.7", source=PROXY))
    fixed = refused(statuses(server, lambda i: "203.0.113.8", source=PROXY))
    assert fixed >= N - BURST - 1                 # 58 (57 if a minute passed between them)
    assert forged >= N - BURST - 1
    # a client that is not the proxy cannot choose its address at all: counted as itself
    direct = refused(statuses(server, lambda i: f"192.0.2.{i % 250 + 1}", source="127.0.0.1"))
    assert direct >= N - BURST - 1
    # different clients behind the proxy are counted apart: none of them is refused
    assert refused(statuses(server, lambda i: f"203.0.113.9, 100.64.{i // 250}.{i % 250 + 1}", source=PROXY)) == 0


def test_a_server_told_to_trust_every_address_refuses_to_start():
    base = {k: v for k, v in os.environ.items() if k != "FORWARDED_ALLOW_IPS"}
    env = {**base, "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/nothing", "REDIS_URL": "redis://127.0.0.1:6379/7",
           "SECRET_KEY": secrets.token_urlsafe(50), "GT_PSEUDONYM_KEY": secrets.token_urlsafe(50)}
    code = "from groundtalk_web import settings"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={**env, "FORWARDED_ALLOW_IPS": "*"},
                         capture_output=True, text=True)
    assert out.returncode != 0 and "FORWARDED_ALLOW_IPS=* lets every client choose" in out.stderr, out.stderr[-500:]
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={**env, "FORWARDED_ALLOW_IPS": "172.30.231.1"},
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-500:]
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         env={k: v for k, v in env.items() if k not in ("DATABASE_URL", "REDIS_URL")} |
                         {"FORWARDED_ALLOW_IPS": "*"})
    assert out.returncode == 0, out.stderr[-500:]   # the embedded demo (one machine) may
