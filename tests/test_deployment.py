"""The compose file describes the full stack, is valid for docker-compose, and is safe for a study
(issue 11, item 4): it needs both keys, loads no demo batches, creates no admin/admin, serves
HTTPS settings behind a proxy on this machine's loopback; the image leaves local data out."""
from __future__ import annotations

import ipaddress
import os
import secrets
import shutil
import subprocess

import pytest
import yaml

from .conftest import ROOT

KEYS = {"SECRET_KEY": secrets.token_urlsafe(50), "GT_PSEUDONYM_KEY": secrets.token_urlsafe(50)}


def compose_config(**env) -> subprocess.CompletedProcess:
    exe = shutil.which("docker-compose")
    if exe is None:
        pytest.fail("docker-compose is not installed (test.sh installs Debian's docker-compose package)")
    base = {k: v for k, v in os.environ.items()
            if k not in {*KEYS, "GT_HTTPS", "GT_WEB_BIND", "FORWARDED_ALLOW_IPS", "GT_NET_SUBNET", "GT_NET_GATEWAY"}}
    return subprocess.run([exe, "-f", str(ROOT / "docker-compose.yml"), "config"], capture_output=True, text=True,
                          cwd=ROOT, env={**base, **env})


def test_docker_compose_config_is_valid_and_complete():
    out = compose_config(**KEYS)
    assert out.returncode == 0, out.stderr
    config = yaml.safe_load(out.stdout)
    services = config["services"]
    assert {"web", "model-worker", "postgres", "redis"} <= set(services)
    for name in ("web", "model-worker"):
        env = services[name]["environment"]
        assert env["DATABASE_URL"].startswith("postgres://") and env["REDIS_URL"].startswith("redis://")
        assert env["SECRET_KEY"] == KEYS["SECRET_KEY"] and env["GT_PSEUDONYM_KEY"] == KEYS["GT_PSEUDONYM_KEY"]
    assert "agent_worker" in str(services["model-worker"]["command"])


def test_compose_refuses_to_run_without_both_keys():
    for missing in KEYS:
        out = compose_config(**{k: v for k, v in KEYS.items() if k != missing})
        assert out.returncode != 0 and f"set {missing} to a" in out.stderr, (missing, out.stderr)


def test_compose_serves_a_study_not_a_demo():
    services = yaml.safe_load(compose_config(**KEYS).stdout)["services"]
    for name, service in services.items():
        command = str(service.get("command", ""))
        for word in ("gt_demo", "createsuperuser", "admin/admin", "--admin", "DEBUG"):
            assert word not in command, (name, word)
        assert service.get("environment", {}).get("DEBUG", "0") in ("0", "", None), name
    web = services["web"]
    assert web["environment"]["GT_HTTPS"] == "1"
    published = web["ports"]   # docker-compose 1.x writes "host_ip:port:container_port"
    assert published and all(str(p).startswith("127.0.0.1:") for p in published), published


def test_compose_trusts_only_the_proxys_address_for_x_forwarded_for():
    """Issue 21, item 6: never "*" (the client would choose its own address); the default is the
    gateway of the compose network, the address a proxy on this machine connects from."""
    config = yaml.safe_load(compose_config(**KEYS).stdout)
    [net] = config["networks"]["default"]["ipam"]["config"]
    for name in ("web", "model-worker"):
        trusted = config["services"][name]["environment"]["FORWARDED_ALLOW_IPS"]
        assert "*" not in trusted and trusted == net["gateway"], (name, trusted)
    assert ipaddress.ip_address(net["gateway"]) in ipaddress.ip_network(net["subnet"])


def test_the_image_leaves_local_data_out():
    ignored = (ROOT / ".dockerignore").read_text().split()
    for path in (".venv", "db.sqlite3*", "var", ".env", ".git", "node_modules"):
        assert path in ignored, path
