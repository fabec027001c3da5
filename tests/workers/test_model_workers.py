"""``manage.py model_workers`` (agents/serving/group.py): several torch families' model workers in
one process, a thread each. A family that cannot load is named on stderr and the others are
served: their queues beat, the broken one's does not (its batches show as "cannot run"), and a
turn on a served family is played by the model with the checkpoint recorded on the seat."""
from __future__ import annotations

import subprocess
import sys

import pytest
from django.conf import settings

from agents import liveness
from agents.checkpoints import file_sha256
from live.models import MatchEvent, Seat
from live.services import match_apply_action
from tests.conftest import ROOT, child_env
from tests.support.factories import colors_match
from tests.workers.conftest import torch_entry
from tests.support.waiting import wait_until

pytestmark = pytest.mark.django_db(transaction=True)



def test_one_process_serves_the_families_that_load_and_names_the_one_that_cannot(models_file, tiny_checkpoint,
                                                                                   tmp_path):
    if settings.GT_AGENT_MODE != "celery":
        pytest.skip("needs REDIS_URL and DATABASE_URL (the full stack)")
    checkpoint, _ = tiny_checkpoint
    path = models_file(torch_entry(checkpoint, name="tiny_a", family_key="tiny_a")
                       + torch_entry(checkpoint, name="tiny_b", family_key="tiny_b")
                       + torch_entry(tmp_path / "missing.pt", name="tiny_broken", family_key="tiny_broken"))
    from groundtalk_web.celery import app

    with app.connection_for_write() as conn:   # no turn left over from an earlier run
        for key in ("tiny_a", "tiny_b"):
            conn.default_channel.queue_purge(f"model.{key}")
    log = tmp_path / "workers.log"
    proc = subprocess.Popen([sys.executable, "manage.py", "model_workers", "--no-supervise", "--device", "cpu"],
                            cwd=ROOT, env={**child_env(), "GT_MODELS_FILE": str(path)}, stdout=open(log, "w"),
                            stderr=subprocess.STDOUT)
    try:
        wait_until(lambda: proc.poll() is None and liveness.dead_queues(["model.tiny_a", "model.tiny_b"]) == [],
                   180, "both families served", every=0.3)
        text = log.read_text()
        assert "family tiny_broken cannot load" in text and "missing.pt cannot be read" in text, text
        assert "serving tiny_a, tiny_b" in text, text
        assert liveness.dead_queues(["model.tiny_broken"]) == ["model.tiny_broken"]

        match, seats = colors_match(rounds=3, agents={"listener": "tiny_b"})
        match_apply_action(match_id=match.id, role="speaker", action={"type": "chat", "text": "the dark red one"},
                           client_action_id="s1")
        wait_until(lambda: MatchEvent.objects.filter(match=match, type="color_clicked", actor="listener").exists(),
                   60, "clicked by the model", every=0.3)
        assert not MatchEvent.objects.filter(match=match, type="agent_timed_out").exists()
        seat = Seat.objects.get(pk=seats["listener"].pk)
        assert seat.agent_model["checkpoint_sha256"] == file_sha256(checkpoint)
        assert seat.agent_model["family_key"] == "tiny_b"
    finally:
        proc.terminate()
        proc.wait(30)
