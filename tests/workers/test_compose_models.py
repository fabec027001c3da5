"""The compose file's torch model worker: the image with the models extra (torch), a model_worker
for one family, the checkpoints mounted read-only; the web image is built without torch."""
from __future__ import annotations

import yaml

from tests.conftest import ROOT
from tests.test_deployment import KEYS, compose_config


def test_the_torch_worker_service():
    out = compose_config(**KEYS, GT_MODEL_FAMILY="colors_l0")
    assert out.returncode == 0, out.stderr
    services = yaml.safe_load(out.stdout)["services"]
    worker = services["torch-worker"]
    assert worker["build"]["args"]["GT_EXTRAS"] == "[models]"
    assert worker["command"] == "python manage.py model_worker --family colors_l0"
    assert any(str(v).endswith("/models:/app/models:ro") for v in worker["volumes"])
    assert worker["environment"]["REDIS_URL"] == services["web"]["environment"]["REDIS_URL"]
    assert "args" not in (services["web"].get("build") or {})   # the web image: no extras, no torch
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert 'ARG GT_EXTRAS=""' in dockerfile and 'pip install --no-cache-dir -e ".${GT_EXTRAS}"' in dockerfile


def test_the_cpu_families_model_workers_start_by_default():
    """`docker-compose up` starts the model workers of the shipped models file's CPU families (one
    process, manage.py model_workers), from the torch image, with the checkpoints read-only."""
    out = compose_config(**KEYS)
    assert out.returncode == 0, out.stderr
    services = yaml.safe_load(out.stdout)["services"]
    workers = services["model-workers"]   # no profile: listed by a plain `config`, started by `up`
    assert workers["command"] == "python manage.py model_workers --device cpu --no-supervise"
    assert workers["build"]["args"]["GT_EXTRAS"] == "[models]" and workers["image"] == "groundtalk-models:latest"
    assert any(str(v).endswith("/models:/app/models:ro") for v in workers["volumes"])
    assert workers["environment"]["GT_AGENT_MODE"] == "celery"
    assert workers["environment"]["REDIS_URL"] == services["web"]["environment"]["REDIS_URL"]
