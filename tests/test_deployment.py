"""The compose file describes the full stack and is valid for docker-compose."""
from __future__ import annotations

import shutil
import subprocess

import pytest
import yaml

from .conftest import ROOT


def test_docker_compose_config_is_valid_and_complete():
    exe = shutil.which("docker-compose")
    if exe is None:
        pytest.fail("docker-compose is not installed (test.sh installs Debian's docker-compose package)")
    out = subprocess.run([exe, "-f", str(ROOT / "docker-compose.yml"), "config"], capture_output=True, text=True,
                         cwd=ROOT)
    assert out.returncode == 0, out.stderr
    config = yaml.safe_load(out.stdout)
    services = config["services"]
    assert {"web", "model-worker", "postgres", "redis"} <= set(services)
    for name in ("web", "model-worker"):
        env = services[name]["environment"]
        assert env["DATABASE_URL"].startswith("postgres://") and env["REDIS_URL"].startswith("redis://")
    assert "agent_worker" in str(services["model-worker"]["command"])
