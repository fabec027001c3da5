"""Money guards (issue 21, item 4) against real PostgreSQL and the MTurk recording server:

* approve and reject of the same worker sent at once: exactly one reaches MTurk, the other is
  refused in plain words (the participant's row lock; constraint payaction_one_review);
* approving a worker whose outcome pays nothing is a second step on the review page;
* a bonus rule's bounds, refused with the field's name;
* a batch's bonus budget: a run pays up to it and says whom it left unpaid; two runs at once
  together stay within it (the rule's row lock)."""
from __future__ import annotations

import threading

import pytest
from django.contrib.messages import get_messages
from django.db import IntegrityError, connection, transaction

from crowd import payments
from crowd.models import BonusRule, PayAction
from tests.support import crowd_helpers as h
from tests.support.staff_users import staff_user

pytestmark = pytest.mark.django_db


def at_once(*calls):
    """Run the calls in threads released together (one PostgreSQL connection each); returns each
    call's result or the exception it raised, in order."""
    out = [None] * len(calls)
    start = threading.Barrier(len(calls))

    def run(i, call):
        try:
            start.wait()
            out[i] = call()
        except Exception as exc:   # the answer this caller got
            out[i] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


# ---------------------------------------------------------------------------- one decision
@pytest.mark.django_db(transaction=True)
def test_approve_and_reject_at_once_reach_mturk_once(rec):
    """Ten workers, each approved and rejected by two requests released together: for each, one
    call reached MTurk and the other request was refused, saying which decision stands."""
    b = h.batch()
    workers = [h.participant(b, f"W{i}", outcome={"correct": 1}) for i in range(10)]
    for p in workers:
        answers = at_once(lambda p=p: payments.act(p, PayAction.Kind.APPROVE),
                          lambda p=p: payments.act(p, PayAction.Kind.REJECT, reason="You did not play."))
        reached = [op for op, params in rec.calls if params.get("AssignmentId") == p.assignment_id]
        assert len(reached) == 1 and reached[0] in ("ApproveAssignment", "RejectAssignment"), (p.worker_id, reached)
        refused = [a for a in answers if isinstance(a, payments.PayRefused)]
        sent = [a for a in answers if isinstance(a, PayAction)]
        assert len(refused) == 1 and len(sent) == 1, answers
        decided = {"ApproveAssignment": "approved", "RejectAssignment": "rejected"}[reached[0]]
        assert f"{p.worker_id} was already {decided}" in str(refused[0]) or \
            f"{p.worker_id} is being {decided}" in str(refused[0]), str(refused[0])
        assert sent[0].status == "sent"
        assert PayAction.objects.filter(participant=p).exclude(status="failed").count() == 1


def test_the_database_refuses_a_second_decision():
    b = h.batch()
    p = h.participant(b, "W1", outcome={"correct": 1})
    PayAction.objects.create(participant=p, kind="approve", key="k1", status="pending")
    with pytest.raises(IntegrityError), transaction.atomic():
        PayAction.objects.create(participant=p, kind="reject", key="k2", status="pending")
    PayAction.objects.filter(key="k1").update(status="failed")   # MTurk refused the approval: rejecting is open
    PayAction.objects.create(participant=p, kind="reject", key="k2", status="pending")


def test_after_a_failed_approval_the_reject_is_sent(rec):
    b = h.batch()
    p = h.participant(b, "W1", outcome={"correct": 1})
    rec.fail["ApproveAssignment"] = ("RequestError", "This operation can be called with a status of: Submitted")
    assert payments.act(p, PayAction.Kind.APPROVE).status == "failed"
    assert payments.act(p, PayAction.Kind.REJECT, reason="You did not play.").status == "sent"
    with pytest.raises(payments.PayRefused, match="W1 was already rejected: the approve was not sent"):
        payments.act(p, PayAction.Kind.APPROVE, retry=True)
    # (after the refused approval MTurk was asked whether it was approved after all: GetAssignment)
    assert [op for op in rec.ops() if op != "GetAssignment"] == ["ApproveAssignment", "RejectAssignment"]


def test_the_review_page_says_why_the_second_decision_was_not_sent(client, rec):
    b = h.batch()
    p = h.participant(b, "W1", outcome={"correct": 1})
    client.force_login(staff_user("payer1", roles=("payer",)))
    url = f"/research/batches/{b.slug}/review/"
    client.post(url, {"action": "approve", "p": [p.pk]})
    r = client.post(url, {"action": "reject", "p": [p.pk], "reason": "You did not play."})
    assert r.status_code == 302
    said = [m.message for m in get_messages(r.wsgi_request)]
    assert "W1 was already approved: the reject was not sent." in said, said
    assert rec.ops().count("ApproveAssignment") == 1 and "RejectAssignment" not in rec.ops()


# ---------------------------------------------------------------------------- unpaid outcomes
def with_fields(p, **fields):
    type(p).objects.filter(pk=p.pk).update(**fields)
    p.refresh_from_db()
    return p


def test_approving_an_unpaid_outcome_asks_first(client, rec):
    b = h.batch()
    paid = h.participant(b, "WPAID", outcome={"correct": 2})
    left = with_fields(h.participant(b, "WLEFT"), exit_reason="returned_early", outcome="returned_early", pay="none",
                       pay_cents=0)
    client.force_login(staff_user("payer2", roles=("payer",)))
    url = f"/research/batches/{b.slug}/review/"
    r = client.post(url, {"action": "approve", "p": [paid.pk, left.pk], "reason": "Thanks"})
    page = r.content.decode()
    assert r.status_code == 200 and 'id="confirm-unpaid"' in page
    assert "WLEFT</strong> ended with “returned_early”" in page and "WPAID" not in page
    assert "pays each the full reward" in page and 'name="confirm_unpaid" value="1"' in page
    assert not PayAction.objects.exists() and rec.ops() == []
    r = client.post(url, {"action": "approve", "p": [paid.pk, left.pk], "reason": "Thanks", "confirm_unpaid": "1"})
    assert r.status_code == 302
    assert sorted(p["AssignmentId"] for op, p in rec.calls if op == "ApproveAssignment") == \
        sorted([paid.assignment_id, left.assignment_id])


def test_the_service_refuses_an_unconfirmed_unpaid_approval(rec):
    b = h.batch()
    running = with_fields(h.participant(b, "WRUN"), outcome="", pay="", exit_reason="", state="playing")
    with pytest.raises(payments.PayRefused, match="WRUN's outcome \\(none yet\\) pays nothing here"):
        payments.act(running, PayAction.Kind.APPROVE)
    assert payments.act(running, PayAction.Kind.APPROVE, unpaid_ok=True).status == "sent"


# ---------------------------------------------------------------------------- the rule's bounds
RULE = {"form": "rule", "rule-kind": "colors_accuracy", "rule-cents_per_unit": "10", "rule-cap_cents": "100",
        "rule-budget_cents": "1000"}


@pytest.mark.parametrize("field, value, said", [
    ("cents_per_unit", "-5", "Cents per unit cannot be negative."),
    ("cents_per_unit", "2500", "Cents per unit is at most 500 ($5.00 a unit); is it dollars typed as cents?"),
    ("cents_per_unit", "0", "Cents per unit must be above 0 for a bonus"),
    ("cents_per_unit", "150", "Cents per unit (150) is above the cap (100 cents)"),
    ("cap_cents", "50000", "The cap is at most 10000 cents ($100.00) per worker."),
    ("cap_cents", "0", "The cap must be above 0 cents for a bonus"),
    ("cap_cents", "-1", "Ensure this value is greater than or equal to 0."),
    ("budget_cents", "", "Set the batch&#x27;s bonus budget (cents)"),
    ("budget_cents", "50", "The budget (50 cents) is below the cap of one worker (100 cents)"),
    ("budget_cents", "5000000", "The budget is at most 1000000 cents ($10,000.00) per batch."),
])
def test_a_nonsense_rule_is_refused_naming_the_field(client, field, value, said):
    b = h.batch()
    client.force_login(staff_user("payer3", roles=("payer",)))
    r = client.post(f"/research/batches/{b.slug}/review/", {**RULE, f"rule-{field}": value})
    page = r.content.decode()
    assert r.status_code == 400 and said in page, page[page.find("banner error"):][:600]
    assert f"<li>{field}" in page or f'id="id_rule-{field}"' in page
    assert not BonusRule.objects.filter(batch=b).exists()
    r = client.post(f"/research/batches/{b.slug}/review/", RULE)
    assert r.status_code == 302 and BonusRule.objects.get(batch=b).budget_cents == 1000


def test_no_bonus_needs_no_budget_and_the_admin_checks_the_same_bounds(client, admin_client):
    b = h.batch()
    client.force_login(staff_user("payer4", roles=("payer",)))
    r = client.post(f"/research/batches/{b.slug}/review/", {"form": "rule", "rule-kind": "none",
                                                            "rule-cents_per_unit": "0", "rule-cap_cents": "0"})
    assert r.status_code == 302
    rule = BonusRule.objects.get(batch=b)
    r = admin_client.post(f"/admin/crowd/bonusrule/{rule.pk}/change/",
                          {"batch": b.pk, "kind": "colors_accuracy", "cents_per_unit": "10", "cap_cents": "20000",
                           "budget_cents": ""})
    page = r.content.decode()
    assert r.status_code == 200 and "The cap is at most 10000 cents" in page
    rule.refresh_from_db()
    assert rule.kind == "none"


# ---------------------------------------------------------------------------- the budget
def test_a_bonus_run_pays_up_to_the_budget_and_says_who_is_left(client, rec):
    b = h.batch()
    h.rule(b, cents="10", cap=100, budget=100)
    ps = [h.participant(b, f"B{i}", outcome={"correct": 4}) for i in range(4)]   # 40 cents each
    client.force_login(staff_user("payer5", roles=("payer",)))
    url = f"/research/batches/{b.slug}/review/"
    r = client.post(url, {"action": "bonus", "p": [p.pk for p in ps]})
    said = [m.message for m in get_messages(r.wsgi_request)]
    assert "bonus: 2 sent, 0 already done, 0 failed." in said, said
    assert any(m.startswith("Bonus budget reached: 2 workers left unpaid (80 cents: B2, B3). Their bonuses would "
                            "take the batch past its budget of 100 cents.") for m in said), said
    assert [p["WorkerId"] for p in rec.paid] == ["B0", "B1"]
    page = client.get(url).content.decode()
    assert 'id="budget-left">20<' in page
    BonusRule.objects.filter(batch=b).update(budget_cents=200)
    out = payments.act_many(ps, PayAction.Kind.BONUS)
    assert (out["sent"], out["skipped"], out["over_budget"]) == (2, 2, [])
    assert len(rec.paid) == 4


def test_no_budget_no_bonus(rec):
    b = h.batch()
    BonusRule.objects.create(batch=b, kind="colors_accuracy", cents_per_unit=10, cap_cents=100)   # made before 0003
    p = h.participant(b, "W1", outcome={"correct": 3})
    with pytest.raises(payments.PayRefused, match="set this batch's bonus budget"):
        payments.act(p, PayAction.Kind.BONUS)
    assert rec.paid == [] and not PayAction.objects.exists()


def test_a_failed_bonus_sent_again_counts_against_the_budget_again(rec):
    b = h.batch()
    h.rule(b, cents="10", cap=100, budget=60)
    p1, p2 = (h.participant(b, f"F{i}", outcome={"correct": 4}) for i in range(2))
    rec.fail["SendBonus"] = ("RequestError", "This Requester has insufficient funds in their account.")
    assert payments.act(p1, PayAction.Kind.BONUS).status == "failed"   # not paid: not counted
    assert payments.act(p2, PayAction.Kind.BONUS).status == "sent"     # 40 of 60
    with pytest.raises(payments.OverBudget) as refused:
        payments.act(p1, PayAction.Kind.BONUS, retry=True)
    assert refused.value.cents == 40 and refused.value.committed == 40
    assert len(rec.paid) == 1


@pytest.mark.django_db(transaction=True)
def test_two_bonus_runs_at_once_stay_within_the_budget(rec):
    """Two researchers pay two halves of a batch at the same moment; each half alone fits the budget,
    both together do not: the rule's row lock makes the second wait, and together they pay the
    budget's worth and no more. Five rounds, a new batch each."""
    for round_no in range(5):
        b = h.batch()
        h.rule(b, cents="10", cap=100, budget=100)
        ps = [h.participant(b, f"R{round_no}W{i}", outcome={"correct": 4}) for i in range(4)]   # 40 cents each
        first, second = at_once(lambda: payments.act_many(ps[:2], PayAction.Kind.BONUS),
                                lambda: payments.act_many(ps[2:], PayAction.Kind.BONUS))
        assert first["sent"] + second["sent"] == 2, (first, second)
        assert len(first["over_budget"]) + len(second["over_budget"]) == 2
        paid = [x for x in rec.paid if x["WorkerId"].startswith(f"R{round_no}W")]
        assert sum(int(round(float(x["BonusAmount"]) * 100)) for x in paid) == 80
        assert payments.bonus_committed(b.id) == 80
