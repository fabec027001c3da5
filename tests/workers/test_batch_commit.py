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


def _batch_statements(queries) -> list[str]:
    """The statements of ``match_store.write_actions_if_current`` (one CTE pair per action)."""
    return [q["sql"] for q in queries if q["sql"].startswith("WITH u0 AS (UPDATE games_match")]


def test_a_batchs_answers_are_one_read_and_one_write_statement(batch):
    from django.test.utils import CaptureQueriesContext

    worker, matches = batch
    with CaptureQueriesContext(connection) as queries:
        worker._run_batch()
    writes = _batch_statements(queries.captured_queries)
    assert len(writes) == 1 and writes[0].count("UPDATE games_match") == 3   # three answers, one statement
    assert sum("INSERT INTO games_matchevent" in q["sql"] for q in queries.captured_queries) == 1
    reads = [q["sql"] for q in queries.captured_queries if q["sql"].startswith("SELECT") and "games_match m" in q["sql"]]
    assert len(reads) == 1                                                     # and one read
    assert not any("FOR UPDATE" in q["sql"] for q in queries.captured_queries)  # no locked way
    assert clicks(matches) == 3


def test_a_stale_answer_in_a_batch_does_not_hold_back_the_others(batch, monkeypatch):
    """Another process writes one match between the batch's read and its write (this process's
    snapshot of it is then out of date): that answer's condition fails, the locked way finds it
    stale, and the other two are written by the batch's statement."""
    from django.test.utils import CaptureQueriesContext

    from live.match_store import state_cache

    worker, matches = batch
    turns = list(worker.pending)
    moved = matches[1].id
    real = worker.family.instance.act_batch

    def act_batch(views):
        old = state_cache.entry(moved)   # the snapshot the batch read
        match_apply_action(match_id=moved, role="speaker", action={"type": "chat", "text": "no, the other"},
                           client_action_id="s-again")
        state_cache.put(moved, *old)     # as if that chat had been written by another process
        return real(views)

    monkeypatch.setattr(worker.family.instance, "act_batch", act_batch)
    results = []
    monkeypatch.setattr(worker, "_timing", lambda line: results.append(line))
    with CaptureQueriesContext(connection) as queries:
        worker._run_batch()
    by_match = {line["match"]: line["result"] for line in results if line.get("event") == "turn"}
    assert by_match == {str(matches[0].id): "acted", str(moved): "stale", str(matches[2].id): "acted"}
    assert [MatchEvent.objects.filter(match=m, type="color_clicked").count() for m in matches] == [1, 0, 1]
    writes = _batch_statements(queries.captured_queries)
    assert len(writes) == 1 and writes[0].count("UPDATE games_match") == 3          # all three tried at once
    assert sum("FOR UPDATE" in q["sql"] for q in queries.captured_queries) == 1    # the stale one, alone
    assert len(turns) == 3


def test_redelivered_turns_are_no_ops(batch):
    worker, matches = batch
    turns = list(worker.pending)
    worker._run_batch()
    seqs = {m.id: m.seq for m in type(matches[0]).objects.filter(pk__in=[m.pk for m in matches])}
    worker.pending = [Turn(None, t.match_id, t.role, t.seq, time.time(), time.monotonic()) for t in turns]
    worker._run_batch()
    assert clicks(matches) == 3
    assert {m.id: m.seq for m in type(matches[0]).objects.filter(pk__in=[m.pk for m in matches])} == seqs


def test_a_repeated_action_id_in_a_batch_is_answered_as_a_duplicate(batch):
    """``match_apply_actions`` keeps the client-action-id idempotency of the single path: the same
    requests sent again (no expected seq) are answered with their first outcome, nothing applied
    twice, and an unknown match is refused without holding back the others."""
    from games.base import IllegalAction
    from live.services import ActionRequest, ActionResult, match_apply_actions

    _worker, matches = batch
    requests = [ActionRequest(match_id=m.id, role="listener", action={"type": "click", "position": 0, "round": 1},
                              client_action_id=f"again:{i}") for i, m in enumerate(matches)]
    first = match_apply_actions(requests)
    assert all(isinstance(r, ActionResult) and not r.duplicate for r in first), first
    unknown = ActionRequest(match_id="00000000-0000-0000-0000-000000000000", role="listener",
                            action={"type": "click", "position": 0, "round": 1}, client_action_id="x")
    second = match_apply_actions(requests + [unknown])
    assert [(r.duplicate, r.first_seq, r.last_seq) for r in second[:3]] == [(True, r.first_seq, r.last_seq)
                                                                            for r in first]
    assert isinstance(second[3], IllegalAction) and second[3].code == "unknown_match"
    assert clicks(matches) == 3


def test_a_batch_whose_statement_fails_is_submitted_turn_by_turn(batch, monkeypatch, caplog):
    from django.db import OperationalError

    from live import match_store

    worker, matches = batch

    def fails(writes):
        raise OperationalError("deadlock detected")

    monkeypatch.setattr(match_store, "write_actions_if_current", fails)
    worker._run_batch()
    assert "submitting its 3 turns one by one" in caplog.text
    for match in matches:
        assert MatchEvent.objects.filter(match=match, type="color_clicked").count() == 1


def test_one_statement_writes_one_action_per_match(batch):
    from live import match_store

    with pytest.raises(ValueError, match="one action per match"):
        match = batch[1][0]
        match_store.write_actions_if_current([(match, [], 1, "listener", ""), (match, [], 1, "listener", "")])
