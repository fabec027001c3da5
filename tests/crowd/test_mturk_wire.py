"""The real boto3 client over HTTP against the local MTurk-protocol recorder: what goes on the wire
(operation names, JSON parameters) and errors parsed as boto3 does for MTurk."""
from __future__ import annotations

import pytest

from crowd import mturk, payments
from crowd.models import PayAction
from tests.support import crowd_helpers as h
from tests.support.mturk_server import MTurkRecorder

pytestmark = pytest.mark.django_db


@pytest.fixture
def rec(monkeypatch):
    with MTurkRecorder() as r:
        monkeypatch.setenv("GT_MTURK_ENDPOINT", r.url)
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDTEST")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
        yield r


def test_launch_over_the_wire(rec):
    b = h.batch()
    spec = mturk.HitSpec(title="t", description="d", keywords="k", reward_cents=5, assignments=2, duration_s=600,
                         lifetime_s=3600, auto_approval_delay_s=0, url="https://x/b/s/", locales=("DE",))
    launch = payments.launch_mturk(b, spec, live=False)
    assert launch.status == "sent" and launch.hit_id == "HIT2"
    (op1, p1), (op2, p2) = rec.calls
    assert (op1, op2) == ("CreateHITType", "CreateHITWithHITType")
    assert p1["Reward"] == "0.05" and p1["QualificationRequirements"][0]["LocaleValues"] == [{"Country": "DE"}]
    assert p2["HITTypeId"] == "HT1" and "<ExternalURL>https://x/b/s/</ExternalURL>" in p2["Question"]


def test_insufficient_funds_over_the_wire_then_retry_pays_once(rec):
    b = h.batch()
    h.rule(b)
    p = h.participant(b, "W1", outcome={"correct": 2})
    rec.fail["SendBonus"] = ("RequestError", "This Requester has insufficient funds in their account.")
    row = payments.act(p, PayAction.Kind.BONUS)
    assert row.status == "failed" and row.error.startswith("RequestError: This Requester has insufficient funds")
    row = payments.act(p, PayAction.Kind.BONUS, retry=True)
    assert row.status == "sent"
    assert payments.act(p, PayAction.Kind.BONUS, retry=True) is None
    bonuses = [c for op, c in rec.calls if op == "SendBonus"]
    assert len(bonuses) == 2 and {c["UniqueRequestToken"] for c in bonuses} == {row.key}
    assert rec.tokens == {row.key}


def test_throttling_is_retried_by_the_client(rec):
    b = h.batch()
    p = h.participant(b, "W2", outcome={"correct": 2})
    rec.fail["ApproveAssignment"] = ("ThrottlingException", "Rate exceeded")
    row = payments.act(p, PayAction.Kind.APPROVE)
    assert row.status == "sent" and row.attempts == 1
    assert rec.ops() == ["ApproveAssignment", "ApproveAssignment"]


def test_a_token_seen_before_is_refused_by_mturk(rec):
    mt = mturk.client()
    mturk.send_bonus(mt, worker_id="W", assignment_id="A", cents=10, reason="r", token="tok")
    from botocore.exceptions import ClientError

    with pytest.raises(ClientError) as e:
        mturk.send_bonus(mt, worker_id="W", assignment_id="A", cents=10, reason="r", token="tok")
    assert mturk.error_code(e.value) == "RequestError"


def test_bonus_paid_but_answer_lost_then_retried_is_not_paid_twice(rec, monkeypatch):
    """The worst case: MTurk pays, the answer never arrives. The row stays pending; the explicit retry
    sends the same token, MTurk refuses it, and MTurk's list of bonuses shows it paid: sent, once."""
    from botocore.config import Config


    def no_retries(live=False):
        import boto3

        return boto3.client("mturk", region_name="us-east-1", endpoint_url=rec.url,
                            config=Config(retries={"mode": "standard", "total_max_attempts": 1}))

    monkeypatch.setattr(mturk, "client", no_retries)
    b = h.batch()
    h.rule(b)
    p = h.participant(b, "W3", outcome={"correct": 4})
    rec.lose_answer.add("SendBonus")
    row = payments.act(p, PayAction.Kind.BONUS)
    assert row.status == "pending" and "no answer" in row.error, (row.error, rec.ops())
    assert payments.act(p, PayAction.Kind.BONUS) is None          # a plain click sends nothing
    row = payments.act(p, PayAction.Kind.BONUS, retry=True)
    assert row.status == "sent" and row.answer["already"] == "paid"
    assert len(rec.paid) == 1 and rec.ops().count("SendBonus") == 2
    p.refresh_from_db()
    assert p.bonus_cents == 40


@pytest.mark.django_db(transaction=True)
def test_concurrent_clicks_pay_once(rec):
    """Eight requests at once for the same bonus (committed rows, one connection each): one payment."""
    import threading

    from django.db import connection

    b = h.batch()
    h.rule(b)
    p = h.participant(b, "W9", outcome={"correct": 3})
    results, start = [], threading.Barrier(8)

    def click():
        try:
            start.wait()
            results.append(payments.act(p, PayAction.Kind.BONUS, retry=True))
        finally:
            connection.close()

    threads = [threading.Thread(target=click) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert rec.ops().count("SendBonus") == 1 and len(rec.paid) == 1
    assert sum(1 for r in results if r is not None) == 1
    assert PayAction.objects.get(participant=p).status == "sent"
