"""Builders for the launch/review/pay tests: a batch, participants with ended matches, clients."""
from __future__ import annotations

import itertools

import boto3
from botocore.stub import Stubber
from django.utils import timezone

from crowd.models import BonusRule, Participant
from live.models import Batch, Match, MatchEvent, Seat

_n = itertools.count()


def batch(game_id="colors_v1", **kw) -> Batch:
    i = next(_n)
    return Batch.objects.create(slug=f"crowd{i}", title=f"crowd batch {i}", game_id=game_id,
                                config={"rounds": 3}, pay_cents=150, **kw)


def rule(b: Batch, kind="colors_accuracy", cents="10", cap=100, budget=10_000) -> BonusRule:
    return BonusRule.objects.create(batch=b, kind=kind, cents_per_unit=cents, cap_cents=cap, budget_cents=budget)


def participant(b: Batch, worker: str, *, platform="mturk", outcome: dict | None = None,
                status=Match.Status.FINISHED, **kw) -> Participant:
    n = next(_n)
    ids = ({"assignment_id": f"ASG{n}", "hit_id": "HIT1"} if platform == "mturk"
           else {"session_id": f"sub{n}", "study_id": "study1"})
    ids.update(kw)
    p = Participant.objects.create(batch=b, platform=platform, worker_id=worker, state=Participant.State.DONE,
                                   exit_reason="completed", outcome="completed", pay="full", pay_cents=b.pay_cents,
                                   games_played=1 if outcome is not None else 0, finished_at=timezone.now(), **ids)
    Participant.objects.filter(pk=p.pk).update(created_at=timezone.now() - timezone.timedelta(minutes=7))
    if outcome is not None:
        m = Match.objects.create(batch=b, game_id=b.game_id, seed=n, content={}, state={}, status=status,
                                 outcome=outcome, finished_at=timezone.now())
        Seat.objects.create(match=m, role="listener", kind=Seat.Kind.HUMAN, participant=p)
        MatchEvent.objects.create(match=m, seq=1, type="message_sent", actor="speaker", t=0,
                                  payload={"role": "speaker", "text": f"the bright one, {worker}"})
    return p


def stubbed_mturk():
    """A real boto3 MTurk client (sandbox endpoint, dummy credentials) under botocore's Stubber."""
    mt = boto3.client("mturk", region_name="us-east-1", aws_access_key_id="AKIDTEST", aws_secret_access_key="x",
                      endpoint_url="https://mturk-requester-sandbox.us-east-1.amazonaws.com")
    return mt, Stubber(mt)
