"""Prolific through a local recording server answering in the API's documented shapes (issue 12)."""
from __future__ import annotations

import pytest

from crowd import payments, prolific
from crowd.models import PayAction
from tests.support import crowd_helpers as h
from tests.support.prolific_server import Recorder

pytestmark = pytest.mark.django_db


@pytest.fixture
def rec(monkeypatch):
    with Recorder() as r:
        monkeypatch.setenv("GT_PROLIFIC_API", r.base)
        monkeypatch.setenv("PROLIFIC_API_TOKEN", "tok-abc")
        yield r


def study_spec(**kw):
    d = dict(name="Describe a color", internal_name="crowd0", description="A two-player game",
             entry_url="https://gt.example.org/b/crowd0/", places=20, reward_cents=150, minutes=12,
             completion_codes={"completed": "C1", "no_partner": "C2", "returned_early": "C3"},
             paid_outcomes=frozenset({"completed", "no_partner"}), allow_list=(), block_list=("5f1",))
    d.update(kw)
    return prolific.StudySpec(**d)


def test_launch_creates_the_study_and_publishes(rec):
    b = h.batch()
    launch = payments.launch_prolific(b, study_spec(), publish=True)
    assert launch.status == "sent" and launch.study_id == "60f6acb180a2b1d7c5a3e1f0"
    create, publish = rec.requests
    assert create["auth"] == "Token tok-abc" and create["path"] == "studies/"
    body = create["body"]
    assert body["external_study_url"] == ("https://gt.example.org/b/crowd0/?PROLIFIC_PID={{%PROLIFIC_PID%}}"
                                          "&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}")
    assert body["prolific_id_option"] == "url_parameters"
    assert body["total_available_places"] == 20 and body["reward"] == 150 and body["estimated_completion_time"] == 12
    assert {"code": "C1", "code_type": "COMPLETED", "actions": [{"action": "AUTOMATICALLY_APPROVE"}]} \
        in body["completion_codes"]
    assert {"code": "C3", "code_type": "RETURNED_EARLY", "actions": [{"action": "MANUALLY_REVIEW"}]} \
        in body["completion_codes"]
    assert body["filters"] == [{"filter_id": "participant_blocklist", "selected_values": ["5f1"]}]
    assert publish == {"method": "POST", "path": "studies/60f6acb180a2b1d7c5a3e1f0/transition/",
                       "body": {"action": "PUBLISH"}, "auth": "Token tok-abc"}


def test_launch_draft_does_not_publish(rec):
    launch = payments.launch_prolific(h.batch(), study_spec(), publish=False)
    assert launch.status == "sent" and [r["path"] for r in rec.requests] == ["studies/"]


def test_a_4xx_is_recorded_with_prolifics_answer(rec):
    rec.fail["studies/"] = (400, {"error": {"status": 400, "title": "Invalid request",
                                            "detail": {"reward": ["Reward is below the minimum."]}}})
    launch = payments.launch_prolific(h.batch(), study_spec(reward_cents=1), publish=True)
    assert launch.status == "failed" and "400" in launch.error and not launch.study_id
    assert launch.answer["error"]["detail"]["reward"] == ["Reward is below the minimum."]
    assert len(rec.requests) == 1   # nothing published


def test_missing_token_sends_nothing(rec, monkeypatch):
    monkeypatch.delenv("PROLIFIC_API_TOKEN")
    with pytest.raises(prolific.MissingToken):
        prolific.Client()
    assert rec.requests == []


def test_bonus_set_up_then_paid_once(rec):
    b = h.batch()
    h.rule(b, cents="25", cap=500)
    p = h.participant(b, "5f0aa", platform="prolific", outcome={"correct": 9})
    row = payments.act(p, PayAction.Kind.BONUS)
    assert row.status == "sent" and row.amount_cents == 225
    setup, pay = rec.requests
    assert setup["path"] == "submissions/bonus-payments/"
    assert setup["body"] == {"study_id": "study1", "csv_bonuses": "5f0aa,2.25"}
    assert pay["path"] == f"bulk-bonus-payments/{row.answer['setup']['id']}/pay/"
    assert payments.act(p, PayAction.Kind.BONUS) is None
    assert payments.act(p, PayAction.Kind.BONUS, retry=True) is None
    assert len(rec.requests) == 2


def test_bonus_pay_refused_then_retried_reuses_the_set_up(rec):
    b = h.batch()
    h.rule(b, cents="10", cap=500)
    p = h.participant(b, "5f0bb", platform="prolific", outcome={"correct": 3})
    rec.fail["bulk-bonus-payments/bulk1/pay/"] = (400, {"error": {"status": 400, "detail": "Insufficient balance."}})
    row = payments.act(p, PayAction.Kind.BONUS)
    assert row.status == "failed" and "Insufficient balance" in row.error
    row = payments.act(p, PayAction.Kind.BONUS, retry=True)
    assert row.status == "sent"
    paths = [r["path"] for r in rec.requests]
    assert paths == ["submissions/bonus-payments/", "bulk-bonus-payments/bulk1/pay/", "bulk-bonus-payments/bulk1/pay/"]


def test_lost_pay_answer_refuses_a_retry(rec, monkeypatch):
    b = h.batch()
    h.rule(b, cents="10", cap=500)
    p = h.participant(b, "5f0cc", platform="prolific", outcome={"correct": 3})
    real = prolific.Client.pay_bonuses

    def lost(self, bulk_id):
        real(self, bulk_id)
        raise prolific.ProlificUnknown("read timeout")

    monkeypatch.setattr(prolific.Client, "pay_bonuses", lost)
    row = payments.act(p, PayAction.Kind.BONUS)
    assert row.status == "pending"
    with pytest.raises(payments.PayRefused, match="not idempotent"):
        payments.act(p, PayAction.Kind.BONUS, retry=True)
    assert [r["path"] for r in rec.requests].count("bulk-bonus-payments/bulk1/pay/") == 1


def test_approve_and_reject_submissions(rec):
    b = h.batch()
    p1 = h.participant(b, "5f1", platform="prolific", outcome={"correct": 1})
    p2 = h.participant(b, "5f2", platform="prolific", outcome={"correct": 1})
    assert payments.act(p1, PayAction.Kind.APPROVE).answer["status"] == "APPROVED"
    assert payments.act(p2, PayAction.Kind.REJECT, reason="No game was played.").answer["status"] == "REJECTED"
    assert rec.requests[0]["body"] == {"action": "APPROVE"} and rec.requests[0]["path"] == f"submissions/{p1.session_id}/transition/"
    assert rec.requests[1]["body"] == {"action": "REJECT", "message": "No game was played.",
                                       "rejection_category": "OTHER"}
    with pytest.raises(payments.PayRefused):
        payments.act(p1, PayAction.Kind.BLOCK)
