"""MTurk through botocore's Stubber: every call with the parameters MTurk documents, its errors,
and nothing paid twice (issue 12, items 1, 2, 4)."""
from __future__ import annotations

import csv
import io

import pytest
from botocore.stub import ANY

from crowd import mturk, payments
from crowd.models import BonusRule, Launch, PayAction
from tests.support import crowd_helpers as h

pytestmark = pytest.mark.django_db


def spec(**kw):
    d = dict(title="Describe a color", description="A two-player game", keywords="game,dialog", reward_cents=150,
             assignments=10, duration_s=1800, lifetime_s=86400, auto_approval_delay_s=259200,
             url="https://gt.example.org/b/crowd0/", locales=("US", "GB"), min_approval_rate=98,
             min_approved_hits=500, block_qualification_id="3BLOCKQUAL", exclude_qualification_ids=("3STUDYX",))
    d.update(kw)
    return mturk.HitSpec(**d)


def test_launch_creates_hit_type_then_hit_with_external_question():
    b = h.batch()
    mt, stub = h.stubbed_mturk()
    s = spec()
    stub.add_response("create_hit_type", {"HITTypeId": "HT1"}, {
        "AutoApprovalDelayInSeconds": 259200, "AssignmentDurationInSeconds": 1800, "Reward": "1.50",
        "Title": "Describe a color", "Keywords": "game,dialog", "Description": "A two-player game",
        "QualificationRequirements": [
            {"QualificationTypeId": "00000000000000000071", "Comparator": "In",
             "LocaleValues": [{"Country": "US"}, {"Country": "GB"}], "ActionsGuarded": "DiscoverPreviewAndAccept"},
            {"QualificationTypeId": "000000000000000000L0", "Comparator": "GreaterThanOrEqualTo",
             "IntegerValues": [98], "ActionsGuarded": "DiscoverPreviewAndAccept"},
            {"QualificationTypeId": "00000000000000000040", "Comparator": "GreaterThanOrEqualTo",
             "IntegerValues": [500], "ActionsGuarded": "DiscoverPreviewAndAccept"},
            {"QualificationTypeId": "3BLOCKQUAL", "Comparator": "DoesNotExist",
             "ActionsGuarded": "DiscoverPreviewAndAccept"},
            {"QualificationTypeId": "3STUDYX", "Comparator": "DoesNotExist",
             "ActionsGuarded": "DiscoverPreviewAndAccept"}]})
    question = ('<ExternalQuestion xmlns="http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/'
                '2006-07-14/ExternalQuestion.xsd"><ExternalURL>https://gt.example.org/b/crowd0/</ExternalURL>'
                '<FrameHeight>0</FrameHeight></ExternalQuestion>')
    stub.add_response("create_hit_with_hit_type",
                      {"HIT": {"HITId": "HIT1", "HITTypeId": "HT1", "HITGroupId": "G1", "HITStatus": "Assignable"}},
                      {"HITTypeId": "HT1", "MaxAssignments": 10, "LifetimeInSeconds": 86400, "Question": question,
                       "RequesterAnnotation": b.slug})
    with stub:
        launch = payments.launch_mturk(b, s, live=False, client=mt)
    stub.assert_no_pending_responses()
    launch.refresh_from_db()
    assert (launch.status, launch.hit_id, launch.hit_type_id, launch.live) == ("sent", "HIT1", "HT1", False)
    assert launch.answer["HITStatus"] == "Assignable"
    assert launch.params["hit_type"]["Reward"] == "1.50"


def test_launch_error_is_recorded_and_no_hit_is_created():
    b = h.batch()
    mt, stub = h.stubbed_mturk()
    stub.add_client_error("create_hit_type", service_error_code="RequestError",
                          service_message="This Requester has insufficient funds in their account.")
    with stub:
        launch = payments.launch_mturk(b, spec(), live=False, client=mt)
    stub.assert_no_pending_responses()
    assert launch.status == "failed" and "insufficient funds" in launch.error and not launch.hit_id
    assert Launch.objects.get().pk == launch.pk


def test_url_is_escaped_in_the_xml():
    assert "<ExternalURL>https://x/b/s/?a=1&amp;b=2</ExternalURL>" in mturk.external_question("https://x/b/s/?a=1&b=2")


def test_add_assignments_and_expire():
    mt, stub = h.stubbed_mturk()
    stub.add_response("create_additional_assignments_for_hit", {},
                      {"HITId": "HIT1", "NumberOfAdditionalAssignments": 5, "UniqueRequestToken": "tok-1"})
    stub.add_response("update_expiration_for_hit", {}, {"HITId": "HIT1", "ExpireAt": ANY})
    with stub:
        mturk.add_assignments(mt, "HIT1", 5, "tok-1")
        mturk.expire(mt, "HIT1")
    stub.assert_no_pending_responses()


def test_block_qualification_and_soft_block():
    mt, stub = h.stubbed_mturk()
    stub.add_response("create_qualification_type", {"QualificationType": {"QualificationTypeId": "3BLK"}},
                      {"Name": "GroundTalk block", "Description": ANY, "QualificationTypeStatus": "Active"})
    stub.add_response("associate_qualification_with_worker", {},
                      {"QualificationTypeId": "3BLK", "WorkerId": "W1", "IntegerValue": 1, "SendNotification": False})
    with stub:
        q = mturk.ensure_block_qualification(mt, "GroundTalk block")
        mturk.soft_block(mt, worker_id="W1", qualification_id=q)
    stub.assert_no_pending_responses()


def _clients(mt):
    return {("mturk", False): mt}


def test_bonus_is_computed_on_the_server_and_paid_once():
    b = h.batch()
    h.rule(b, cents="12.5", cap=1000)
    p = h.participant(b, "W1", outcome={"correct": 7, "played": 10})
    mt, stub = h.stubbed_mturk()
    key = f"gt-{b.id}-{p.id}-bonus"
    stub.add_response("send_bonus", {}, {"WorkerId": "W1", "BonusAmount": "0.87", "AssignmentId": p.assignment_id,
                                         "Reason": ANY, "UniqueRequestToken": key})
    with stub:
        row = payments.act(p, PayAction.Kind.BONUS, clients=_clients(mt))
        # the double click: the row is there and sent, nothing else goes out (the stub has no response left)
        assert payments.act(p, PayAction.Kind.BONUS, clients=_clients(mt)) is None
        assert payments.act(p, PayAction.Kind.BONUS, clients=_clients(mt), retry=True) is None
    stub.assert_no_pending_responses()
    row.refresh_from_db()
    assert (row.status, row.amount_cents, row.key, row.attempts) == ("sent", 87, key, 1)
    p.refresh_from_db()
    assert p.bonus_cents == 87


def test_bonus_cap_and_rules():
    b = h.batch()
    r = h.rule(b, cents="10", cap=50)
    ms = [type("M", (), {"status": "finished", "outcome": {"correct": 9}})()]
    assert payments.bonus_cents(r, ms) == 50
    r.kind = "codraw_similarity"
    ms = [type("M", (), {"status": "finished", "outcome": {"score": 3.27}})()]
    r.cents_per_unit, r.cap_cents = 10, 100
    assert payments.bonus_cents(r, ms) == 32
    r.kind = "guesswhich"
    r.cents_per_unit = "0.5"
    ms = [type("M", (), {"status": "finished", "outcome": {"bonus": 190}})(),
          type("M", (), {"status": "active", "outcome": {"bonus": 200}})()]
    assert payments.bonus_cents(r, ms) == 95   # an unfinished match earns nothing
    r.kind = BonusRule.NONE
    assert payments.bonus_cents(r, ms) == 0


def test_throttled_then_retried_with_the_same_token():
    b = h.batch()
    h.rule(b)
    p = h.participant(b, "W2", outcome={"correct": 3})
    mt, stub = h.stubbed_mturk()
    key = f"gt-{b.id}-{p.id}-bonus"
    expected = {"WorkerId": "W2", "BonusAmount": "0.30", "AssignmentId": p.assignment_id, "Reason": ANY,
                "UniqueRequestToken": key}
    stub.add_client_error("send_bonus", service_error_code="ThrottlingException", service_message="Rate exceeded",
                          expected_params=expected)
    stub.add_response("send_bonus", {}, expected)
    with stub:
        row = payments.act(p, PayAction.Kind.BONUS, clients=_clients(mt))
        assert row.status == "failed" and "ThrottlingException" in row.error
        # the rule changes meanwhile: the retry still pays what the first attempt said (same key, same amount)
        b.bonus_rule.cents_per_unit = 50
        b.bonus_rule.save()
        row = payments.act(p, PayAction.Kind.BONUS, clients=_clients(mt), retry=True)
    stub.assert_no_pending_responses()
    assert (row.status, row.attempts, row.amount_cents) == ("sent", 2, 30)
    assert PayAction.objects.filter(participant=p).count() == 1


def test_insufficient_funds_is_reported_and_can_be_retried():
    b = h.batch()
    h.rule(b)
    p = h.participant(b, "W3", outcome={"correct": 2})
    mt, stub = h.stubbed_mturk()
    stub.add_client_error("send_bonus", service_error_code="RequestError",
                          service_message="This Requester has insufficient funds in their account to complete "
                                          "this transaction.")
    with stub:
        row = payments.act(p, PayAction.Kind.BONUS, clients=_clients(mt))
    assert row.status == "failed" and "insufficient funds" in row.error
    assert row.answer["Code"] == "RequestError"
    p.refresh_from_db()
    assert p.bonus_cents == 0


def test_approve_an_assignment_already_approved_counts_as_approved():
    b = h.batch()
    p = h.participant(b, "W4", outcome={"correct": 1})
    mt, stub = h.stubbed_mturk()
    msg = "This operation can be called with a status of: Submitted"
    # refused, and the assignment is still Submitted: a failure, reported
    stub.add_client_error("approve_assignment", service_error_code="RequestError", service_message=msg,
                          expected_params={"AssignmentId": p.assignment_id})
    stub.add_response("get_assignment", {"Assignment": {"AssignmentId": p.assignment_id, "AssignmentStatus": "Rejected"}},
                      {"AssignmentId": p.assignment_id})
    # retried: refused again, and MTurk says it is Approved (auto-approval came first): approved
    stub.add_client_error("approve_assignment", service_error_code="RequestError", service_message=msg,
                          expected_params={"AssignmentId": p.assignment_id})
    stub.add_response("get_assignment", {"Assignment": {"AssignmentId": p.assignment_id, "AssignmentStatus": "Approved"}},
                      {"AssignmentId": p.assignment_id})
    with stub:
        row = payments.act(p, PayAction.Kind.APPROVE, clients=_clients(mt))
        assert row.status == "failed" and msg in row.error
        row = payments.act(p, PayAction.Kind.APPROVE, clients=_clients(mt), retry=True)
        assert payments.act(p, PayAction.Kind.APPROVE, clients=_clients(mt), retry=True) is None
    stub.assert_no_pending_responses()
    assert row.status == "sent" and row.answer["already"] == "Approved"


def test_reject_needs_a_reason_and_not_after_approval():
    b = h.batch()
    p = h.participant(b, "W5", outcome={"correct": 1})
    mt, stub = h.stubbed_mturk()
    with pytest.raises(payments.PayRefused):
        payments.act(p, PayAction.Kind.REJECT, clients=_clients(mt), reason="  ")
    stub.add_response("reject_assignment", {}, {"AssignmentId": p.assignment_id,
                                                "RequesterFeedback": "You did not play."})
    with stub:
        row = payments.act(p, PayAction.Kind.REJECT, clients=_clients(mt), reason="You did not play.")
    assert row.status == "sent"
    with pytest.raises(payments.PayRefused, match="already rejected"):
        payments.act(p, PayAction.Kind.APPROVE, clients=_clients(mt))


def test_no_bonus_no_call_and_lab_workers_refused():
    b = h.batch()
    h.rule(b)
    p = h.participant(b, "W6", outcome={"correct": 0})
    lab = h.participant(b, "L1", platform="lab")
    mt, stub = h.stubbed_mturk()
    with stub:
        with pytest.raises(payments.PayRefused, match="no bonus"):
            payments.act(p, PayAction.Kind.BONUS, clients=_clients(mt))
        with pytest.raises(payments.PayRefused):
            payments.act(lab, PayAction.Kind.APPROVE, clients=_clients(mt))
    assert not PayAction.objects.exists()


def test_lost_answer_stays_pending_and_a_plain_click_does_not_resend():
    from botocore.exceptions import EndpointConnectionError

    b = h.batch()
    h.rule(b)
    p = h.participant(b, "W7", outcome={"correct": 4})

    class Lost:
        calls = 0

        def send_bonus(self, **kw):
            Lost.calls += 1
            raise EndpointConnectionError(endpoint_url="https://mturk")

    row = payments.act(p, PayAction.Kind.BONUS, clients={("mturk", False): Lost()})
    assert row.status == "pending" and "no answer" in row.error
    assert payments.act(p, PayAction.Kind.BONUS, clients={("mturk", False): Lost()}) is None
    assert Lost.calls == 1
    # an explicit retry sends the same token again: MTurk pays a token once
    mt, stub = h.stubbed_mturk()
    stub.add_response("send_bonus", {}, {"WorkerId": "W7", "BonusAmount": "0.40", "AssignmentId": p.assignment_id,
                                         "Reason": ANY, "UniqueRequestToken": row.key})
    with stub:
        row = payments.act(p, PayAction.Kind.BONUS, clients=_clients(mt), retry=True)
    assert row.status == "sent"


def test_bulk_approve_goes_on_after_a_failure():
    b = h.batch()
    ps = [h.participant(b, f"B{i}", outcome={"correct": 1}) for i in range(3)]
    mt, stub = h.stubbed_mturk()
    stub.add_response("approve_assignment", {}, {"AssignmentId": ps[0].assignment_id})
    stub.add_client_error("approve_assignment", service_error_code="ServiceUnavailable",
                          expected_params={"AssignmentId": ps[1].assignment_id})
    stub.add_response("approve_assignment", {}, {"AssignmentId": ps[2].assignment_id})
    with stub:
        out = payments.act_many(ps, PayAction.Kind.APPROVE, clients=_clients(mt))
    stub.assert_no_pending_responses()
    assert out == {"sent": 2, "skipped": 0, "failed": 1, "refused": [], "over_budget": []}


def test_reconciliation_csv():
    b = h.batch()
    h.rule(b)
    p = h.participant(b, "W8", outcome={"correct": 5})
    mt, stub = h.stubbed_mturk()
    stub.add_response("send_bonus", {}, None)
    with stub:
        payments.act(p, PayAction.Kind.BONUS, clients=_clients(mt))
    text = payments.reconciliation_csv(b)
    head, cells = csv.reader(io.StringIO(text))
    assert head[:3] == ["platform", "worker_id", "assignment_or_submission"]
    assert cells[:3] == ["mturk", "W8", p.assignment_id] and "50" in cells and "sent" in cells


def test_a_row_left_pending_by_a_crash_is_retried_only_after_the_in_flight_window():
    import datetime as dt

    b = h.batch()
    h.rule(b)
    p = h.participant(b, "W10", outcome={"correct": 2})
    key = f"gt-{b.id}-{p.id}-bonus"
    PayAction.objects.create(participant=p, kind="bonus", amount_cents=20, key=key, attempts=1)  # died mid-call
    mt, stub = h.stubbed_mturk()
    with stub:
        assert payments.act(p, PayAction.Kind.BONUS, clients=_clients(mt), retry=True) is None
    PayAction.objects.filter(key=key).update(updated_at=dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc))
    stub.add_response("send_bonus", {}, {"WorkerId": "W10", "BonusAmount": "0.20", "AssignmentId": p.assignment_id,
                                         "Reason": ANY, "UniqueRequestToken": key})
    with stub:
        row = payments.act(p, PayAction.Kind.BONUS, clients=_clients(mt), retry=True)
    stub.assert_no_pending_responses()
    assert (row.status, row.attempts) == ("sent", 2)


def test_soft_block_uses_the_qualification_given():
    b = h.batch()
    p = h.participant(b, "W11", outcome={"correct": 1})
    mt, stub = h.stubbed_mturk()
    with pytest.raises(payments.PayRefused, match="block qualification"):
        payments.act(p, PayAction.Kind.BLOCK, clients=_clients(mt))
    stub.add_response("associate_qualification_with_worker", {},
                      {"QualificationTypeId": "3BLK", "WorkerId": "W11", "IntegerValue": 1, "SendNotification": False})
    with stub:
        row = payments.act(p, PayAction.Kind.BLOCK, clients=_clients(mt), block_qualification_id="3BLK")
        assert payments.act(p, PayAction.Kind.BLOCK, clients=_clients(mt), block_qualification_id="3BLK") is None
    stub.assert_no_pending_responses()
    assert row.status == "sent" and not PayAction.objects.filter(kind="bonus").exists()


def test_only_the_batchs_matches_count_for_the_bonus():
    from django.utils import timezone

    from live.models import Match, Seat

    b = h.batch()
    r = h.rule(b)
    p = h.participant(b, "W12", outcome={"correct": 2})
    practice = Match.objects.create(batch=None, game_id=b.game_id, seed=1, content={}, state={},
                                    status=Match.Status.FINISHED, outcome={"correct": 5}, finished_at=timezone.now())
    Seat.objects.create(match=practice, role="listener", kind=Seat.Kind.HUMAN, participant=p)
    assert payments.bonus_cents(r, payments.participant_matches(p)) == 20
