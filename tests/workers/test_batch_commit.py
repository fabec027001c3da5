"""How the model worker writes a batch (agents/serving/worker.py, ``_submit_all``), in this process
on PostgreSQL with a real torch family: the batch's answers are one transaction (nothing of the
batch is visible, nor broadcast, before all of it is written), and a transaction that fails as a
whole at its commit (the database went away) is submitted again turn by turn, so every turn is
answered exactly once. The turns are given to the worker as its consumer would (their kombu
message aside: the worker takes messages without acknowledgements)."""
from __future__ import annotations

import time

import pytest
from django.db import connection

from agents.serving.family import load_family
from agents.serving.worker import ModelWorker, Turn
from live.models import MatchEvent
from live.services import match_apply_action

from tests.support.factories import colors_match
from tests.workers.conftest import torch_entry

pytestmark = [pytest.mark.django_db(transaction=True),
              pytest.mark.skipif(connection.vendor != "postgresql", reason="reads from a second connection")]


@pytest.fixture
def batch(models_file, tiny_checkpoint):
    """A worker of the tiny family, loaded here, and three matches whose model listener is due."""
    checkpoint, _ = tiny_checkpoint
    models_file(torch_entry(checkpoint))
    worker = ModelWorker("tiny", broker_url="memory://")
    worker.family = load_family(worker.configs[0])
    matches = [colors_match(rounds=2, seed=40 + i, agents={"listener": "tiny_listener"}, wake_agents=False)[0]
               for i in range(3)]
    from live.models import Match

    for match in matches:   # the seats as a worker serves them (not woken: this test is the worker)
        Match.objects.filter(pk=match.pk).update(agent_seats={"listener": "tiny_listener"})
    for i, match in enumerate(matches):
        done = match_apply_action(match_id=match.id, role="speaker", action={"type": "chat", "text": "dark red"},
                                  client_action_id=f"s{i}")
        worker.pending.append(Turn(None, str(match.id), "listener", done.last_seq, time.time(), time.monotonic()))
    return worker, matches


def clicks(matches) -> int:
    return MatchEvent.objects.filter(match__in=matches, type="color_clicked").count()


def test_a_batchs_answers_are_committed_together(batch, monkeypatch):
    worker, matches = batch
    turns = list(worker.pending)
    seen = []
    real_commit = connection.commit

    def commit():
        # from another connection's point of view, just before the batch commits: nothing yet
        from django.db import connections

        other = connections.create_connection("default")
        try:
            with other.cursor() as cur:
                cur.execute("SELECT count(*) FROM games_matchevent WHERE type = 'color_clicked'")
                seen.append(cur.fetchone()[0])
        finally:
            other.close()
        real_commit()

    monkeypatch.setattr(connection, "commit", commit)
    worker._run_batch()
    monkeypatch.undo()
    assert seen == [0]                 # one commit, and none of the three answers was visible before it
    assert clicks(matches) == 3 and len({t.timing["committed_at"] for t in turns}) == 1   # one commit time


def test_a_batch_whose_commit_fails_is_submitted_turn_by_turn(batch, monkeypatch, caplog):
    from django.db import OperationalError

    worker, matches = batch
    real_commit, failed = connection.commit, []

    def commit():
        if not failed:   # the first commit (the batch's) fails as a whole
            failed.append(True)
            connection.rollback()
            raise OperationalError("server closed the connection unexpectedly")
        real_commit()

    monkeypatch.setattr(connection, "commit", commit)
    worker._run_batch()
    monkeypatch.undo()
    assert failed and "submitting its 3 turns one by one" in caplog.text
    assert clicks(matches) == 3                                           # each answered, once
    for match in matches:
        assert MatchEvent.objects.filter(match=match, type="color_clicked").count() == 1
