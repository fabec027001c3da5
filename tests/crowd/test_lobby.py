"""The lobby against PostgreSQL: entry links, consent, pairing under concurrency (threads and
separate processes), games per worker, the wait limit and its two outcomes."""
from __future__ import annotations

import subprocess
import sys
import threading
from collections import Counter
from datetime import timedelta

import pytest
from django.db import close_old_connections, connection
from django.test import Client
from django.utils import timezone

from crowd import lobby
from crowd.models import Participant
from live.models import Batch, Match, Seat
from live.services import match_apply_action

from tests.conftest import ROOT, child_env
from tests.support.factories import batch as make_batch
from tests.support.factories import enter, participant

pytestmark = pytest.mark.django_db


def test_parse_entry_for_each_platform():
    m = lobby.parse_entry({"workerId": "A1", "assignmentId": "X", "hitId": "H", "turkSubmitTo": "https://www.mturk.com"})
    assert (m.platform, m.worker_id, m.assignment_id, m.hit_id) == ("mturk", "A1", "X", "H")
    assert lobby.parse_entry({"assignmentId": lobby.PREVIEW_ASSIGNMENT}).is_preview
    pid, study, session = "60f6acb180a2b1d7c5a3e1f0", "60f6acb180a2b1d7c5a3e1f1", "60f6acb180a2b1d7c5a3e1f2"
    p = lobby.parse_entry({"PROLIFIC_PID": pid, "STUDY_ID": study, "SESSION_ID": session})
    assert (p.platform, p.worker_id, p.study_id, p.session_id) == ("prolific", pid, study, session)
    assert lobby.parse_entry({"lab": "signed"}).lab_token == "signed"   # whose it is: participant_enter
    assert lobby.parse_entry({"worker": "lab7"}).platform == "demo"
    for bad in ({}, {"assignmentId": "X"}, {"PROLIFIC_PID": ""}, {"worker": "x" * 500}, {"lab": ""},
                {"workerId": "A", "assignmentId": "X", "turkSubmitTo": "javascript:alert(1)"}):
        with pytest.raises(lobby.EntryError):
            lobby.parse_entry(bad)


def test_entry_consent_instructions_waiting_pages():
    b = make_batch(slug="flow")
    c = Client()
    r = c.get("/b/flow/?workerId=AW1&assignmentId=A1&hitId=H1&turkSubmitTo=https://workersandbox.mturk.com")
    assert r.status_code == 302
    p = Participant.objects.get(worker_id="AW1")
    assert p.platform == "mturk" and p.assignment_id == "A1"
    assert "Consent" in c.get(r.url).content.decode()
    c.post(r.url, {"step": "consent", "agree": "yes"})
    assert "How to play" in c.get(r.url).content.decode()
    c.post(r.url, {"step": "ready"})
    assert "Finding you a partner" in c.get(r.url).content.decode()
    c.post(r.url, {"step": "leave"})
    done = c.get(r.url).content.decode()
    p.refresh_from_db()
    # leaving the waiting room at once earns nothing by default: no code, no submit form (issue 11)
    assert p.state == "done" and p.exit_reason == "left_waiting" and (p.outcome, p.pay) == ("returned_early", "none")
    assert p.completion_code not in done and "externalSubmit" not in done and "return the HIT" in done
    # re-entering with the same worker resumes the same participant
    c.get("/b/flow/?workerId=AW1&assignmentId=A1&hitId=H1")
    assert Participant.objects.filter(worker_id="AW1").count() == 1
    assert c.get("/b/flow/?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE").status_code == 200
    assert c.get("/b/flow/").status_code == 400
    assert b.participants.count() == 1


def test_decline_consent():
    b = make_batch()
    p = enter(b, "x")
    lobby.participant_consent(participant_id=p.pk, agree=False)
    p.refresh_from_db()
    assert p.state == "declined"
    assert lobby.lobby_poll(participant_id=p.pk).match_id is None


def test_human_agent_batch_pairs_at_once_with_named_agent():
    b = make_batch(pairing=Batch.Pairing.HUMAN_AGENT, human_roles=["listener"],
                   agents={"speaker": "colors_lexicon_speaker"})
    p = participant(b)
    status = lobby.lobby_poll(participant_id=p.pk)
    seat = Seat.objects.get(token=status.seat_token)
    assert seat.role == "listener" and seat.participant == p
    agent = Seat.objects.get(match=seat.match, role="speaker")
    assert agent.kind == "agent" and agent.agent_name == "colors_lexicon_speaker"
    assert Match.objects.get(pk=seat.match_id).agent_seats == {"speaker": "colors_lexicon_speaker"}


def test_wait_limit_leave_or_agent():
    leave = make_batch(max_wait_s=5, on_timeout=Batch.OnTimeout.LEAVE)
    p = participant(leave)
    Participant.objects.filter(pk=p.pk).update(waiting_since=timezone.now() - timedelta(seconds=6))
    s = lobby.lobby_poll(participant_id=p.pk)
    assert s.state == "done" and Participant.objects.get(pk=p.pk).exit_reason == "no_partner"
    agent = make_batch(max_wait_s=5, on_timeout=Batch.OnTimeout.AGENT,
                       agents={"speaker": "colors_lexicon_speaker", "listener": "colors_literal_listener"})
    q = participant(agent)
    assert lobby.lobby_poll(participant_id=q.pk).match_id is None  # still within the wait
    Participant.objects.filter(pk=q.pk).update(waiting_since=timezone.now() - timedelta(seconds=6))
    s = lobby.lobby_poll(participant_id=q.pk)
    seat = Seat.objects.get(token=s.seat_token)
    other = Seat.objects.exclude(pk=seat.pk).get(match=seat.match)
    assert other.kind == "agent"


def test_games_per_worker_then_done():
    b = make_batch(games_per_worker=2, config={"rounds": 1})
    p1, p2 = participant(b), participant(b)
    for game in range(2):
        s = lobby.lobby_poll(participant_id=p1.pk)
        assert s.match_id, f"game {game + 1} was not paired"
        match = Match.objects.get(pk=s.match_id)
        match_apply_action(match_id=match.id, role="speaker", action={"type": "chat", "text": "hi"})
        match_apply_action(match_id=match.id, role="listener", action={"type": "click", "position": 0, "round": 1})
    for p in (p1, p2):
        p.refresh_from_db()
        assert (p.state, p.games_played) == ("done", 2)
        assert lobby.lobby_poll(participant_id=p.pk).match_id is None


def check_pairing(b: Batch, n: int) -> None:
    matches = list(Match.objects.filter(batch=b))
    seats = list(Seat.objects.filter(match__batch=b).select_related("participant"))
    per_participant = Counter(s.participant_id for s in seats)
    assert all(v == 1 for v in per_participant.values()), "a worker got two seats"
    for m in matches:
        workers = [s.participant.worker_id for s in seats if s.match_id == m.id]
        assert len(workers) == 2 and workers[0] != workers[1]
    assert len(matches) == n // 2 and len(per_participant) == n
    assert set(Participant.objects.filter(batch=b).values_list("state", flat=True)) == {"playing"}


@pytest.mark.django_db(transaction=True)
def test_many_arrivals_at_once_threads():
    b = make_batch(slug="crowd")
    people = [participant(b, f"w{i}") for i in range(40)]
    barrier = threading.Barrier(len(people))
    errors = []

    def arrive(p):
        try:
            barrier.wait()
            for _ in range(30):  # the waiting page polls until it is paired
                if lobby.lobby_poll(participant_id=p.pk).match_id:
                    break
        except Exception as exc:  # pragma: no cover
            errors.append(exc)
        finally:
            close_old_connections()
            connection.close()

    threads = [threading.Thread(target=arrive, args=(p,)) for p in people]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    check_pairing(b, 40)


POLLER = """
import django, os, sys
django.setup()
from crowd import lobby
ids = [int(x) for x in sys.argv[1].split(",")]
pending = set(ids)
for _ in range(200):
    for pid in list(pending):
        if lobby.lobby_poll(participant_id=pid).match_id:
            pending.discard(pid)
    if not pending:
        break
print(len(pending))
"""


@pytest.mark.django_db(transaction=True)
def test_many_arrivals_at_once_across_processes():
    """Four separate server processes run the pairing for interleaved arrivals."""
    b = make_batch(slug="procs")
    people = [participant(b, f"p{i}") for i in range(32)]
    env = {**child_env(), "DJANGO_SETTINGS_MODULE": "groundtalk_web.settings"}
    procs = [subprocess.Popen([sys.executable, "-c", POLLER, ",".join(str(p.pk) for p in people[k::4])],
                              cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True) for k in range(4)]
    outs = [p.communicate(timeout=120)[0].strip() for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    check_pairing(b, 32)


def test_partner_gone_ends_match_only_after_the_grace_period():
    from live.services import seat_presence

    b = make_batch(slug="gone", games_per_worker=3)
    p1, p2 = participant(b, "stay"), participant(b, "leave")
    status = lobby.lobby_poll(participant_id=p1.pk)
    mine = Seat.objects.get(token=status.seat_token)
    other = Seat.objects.exclude(pk=mine.pk).get(match=mine.match)
    seat_presence(seat_id=other.pk, connected=True)
    seat_presence(seat_id=other.pk, connected=False)
    assert lobby.match_partner_gone(seat=mine, gone_after_s=60) is False  # only just left
    Seat.objects.filter(pk=other.pk).update(left_at=timezone.now() - timedelta(seconds=61))
    assert lobby.match_partner_gone(seat=Seat.objects.get(pk=mine.pk), gone_after_s=60) is True
    match = Match.objects.get(pk=mine.match_id)
    assert match.status == "aborted" and match.events.last().type == "match_aborted"
    p1.refresh_from_db()
    assert p1.games_played == 1 and p1.state == "waiting"   # the one who stayed plays on
    p2.refresh_from_db()   # the one who left ends their part: returned early, not counted, no pay by default
    assert (p2.games_played, p2.state, p2.exit_reason, p2.outcome, p2.pay) == (0, "done", "left_match",
                                                                               "returned_early", "none")
