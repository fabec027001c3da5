"""What a batch costs per arm and its budget (crowd/costs.py), and the entry link refusing new
people once the budget is spent (crowd/pages.py)."""
from __future__ import annotations

import pytest

from agents.models import AgentCall
from crowd import costs
from crowd.models import Participant, PayAction
from live.models import Match, Seat
from tests.support.factories import batch as make_batch, lab_url

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fees(monkeypatch):
    monkeypatch.setenv("GT_MTURK_FEE_PERCENT", "20")
    monkeypatch.setenv("GT_PROLIFIC_FEE_PERCENT", "50")


def person(b, platform, state=Participant.State.DONE, pay_cents=None, worker=None):
    n = Participant.objects.filter(batch=b).count()
    return Participant.objects.create(batch=b, platform=platform, worker_id=worker or f"{platform}{n}", state=state,
                                      pay_cents=pay_cents, assignment_id=f"a{n}", session_id=f"s{n}")


def match(b, arm, people, status=Match.Status.FINISHED, cost=None):
    m = Match.objects.create(batch=b, game_id=b.game_id, seed=1, content={}, state={}, status=status, arm=arm,
                             outcome={"played": 1, "correct": 1})
    for i, p in enumerate(people):
        Seat.objects.create(match=m, role=("speaker", "listener")[i], kind=Seat.Kind.HUMAN, participant=p)
    if len(people) < 2:
        Seat.objects.create(match=m, role="listener", kind=Seat.Kind.AGENT, agent_name="llm")
    if cost is not None:
        AgentCall.objects.create(match=m, role="listener", seq=1, agent="llm", attempt=1, prompt_sha256="x",
                                 adapter_version="1", request={}, cost_usd=cost)
    return m


def test_cost_per_arm_counts_pay_bonuses_fees_and_model_calls():
    b = make_batch(pay_cents=100, arms=[{"name": "a", "agents": {"listener": "llm"}}, {"name": "b", "agents": {}}])
    alice = person(b, "mturk", pay_cents=100)              # played arm a: $1 + 20 %
    bob = person(b, "prolific", pay_cents=50)              # played arm a and b (within): half each, + 50 %
    carol = person(b, "mturk", state=Participant.State.PLAYING)   # in progress: the base rate, + 20 %
    person(b, "mturk", state=Participant.State.WAITING)    # never seated: base rate, own row
    lab = person(b, "lab", pay_cents=100)                  # paid by no platform here
    PayAction.objects.create(participant=alice, kind=PayAction.Kind.BONUS, amount_cents=30, key="k1",
                             status=PayAction.Status.SENT)
    PayAction.objects.create(participant=bob, kind=PayAction.Kind.BONUS, amount_cents=40, key="k2",
                             status=PayAction.Status.FAILED)   # not paid
    match(b, "a", [alice], cost=0.25)
    match(b, "a", [bob], cost=0.5)
    match(b, "b", [bob, lab])
    match(b, "b", [carol], status=Match.Status.ACTIVE, cost=0.125)
    match(b, "", [lab], cost=1.0)                          # outside the randomisation (on_timeout's agent)

    c = costs.batch_costs(batch=b)
    rows = {r["arm"]: r for r in c["arms"]}
    assert list(rows) == ["a", "b", costs.OUTSIDE, costs.NOT_SEATED]
    a, bb = rows["a"], rows["b"]
    assert a["people"] == pytest.approx(1.5) and a["base"] == pytest.approx(1.00 + 0.25)
    assert a["bonus"] == pytest.approx(0.30) and a["fee"] == pytest.approx(0.2 * 1.30 + 0.5 * 0.25)
    assert a["model"] == pytest.approx(0.75) and a["completed"] == 2
    assert a["total"] == pytest.approx(1.25 + 0.30 + 0.385 + 0.75)
    assert a["per_completed"] == pytest.approx(a["total"] / 2)
    # bob's other half, carol at the base rate (active match: not completed, its call counted)
    assert bb["base"] == pytest.approx(0.25 + 1.00) and bb["fee"] == pytest.approx(0.125 + 0.20)
    assert bb["model"] == pytest.approx(0.125) and bb["completed"] == 1
    assert rows[costs.OUTSIDE]["crowd"] == 0 and rows[costs.OUTSIDE]["model"] == pytest.approx(1.0)
    assert rows[costs.NOT_SEATED]["crowd"] == pytest.approx(1.20) and rows[costs.NOT_SEATED]["completed"] == 0
    assert c["totals"]["total"] == pytest.approx(sum(r["total"] for r in c["arms"]))
    assert c["totals"]["completed"] == 4 and c["budget"] is None
    assert c["fees"] == {"mturk": 20.0, "prolific": 50.0}
    assert costs.committed_usd(b) == pytest.approx(c["totals"]["total"])


def test_a_batch_without_arms_is_one_arm():
    b = make_batch(pay_cents=200)
    match(b, "", [person(b, "mturk", pay_cents=200)], cost=0.5)
    (row,) = costs.batch_costs(batch=b)["arms"]
    assert (row["arm"], row["crowd"], row["model"], row["per_completed"]) == (costs.ONE_ARM, 2.4, 0.5, 2.9)


def test_budget_full_counts_the_next_entry():
    b = make_batch(pay_cents=100, entry_kinds=["mturk", "prolific", "lab"], budget_usd="3.00")
    person(b, "mturk", pay_cents=100)
    person(b, "mturk", state=Participant.State.WAITING)
    state = costs.budget_state(b)
    assert state["committed"] == pytest.approx(2.40) and state["next_entry"] == pytest.approx(1.50)
    assert state["full"] is True and state["left"] == pytest.approx(0.60)   # 2.40 + 1.50 > 3.00
    b.budget_usd = "3.90"
    assert costs.budget_state(b)["full"] is False
    b.entry_kinds = ["mturk"]
    assert costs.budget_state(b)["next_entry"] == pytest.approx(1.20)
    b.budget_usd = None
    assert costs.budget_state(b) is None and costs.budget_full(b) is False


def test_the_entry_link_refuses_new_people_when_the_budget_is_reached(client):
    b = make_batch(pay_cents=100, entry_kinds=["mturk", "lab"], budget_usd="2.00")
    first = client.get(lab_url(b, "P1"))
    assert first.status_code == 302                       # nothing committed yet: in
    person(b, "mturk", pay_cents=100)                     # $1.20 committed; one more at $1.20 passes $2
    refused = client.get(lab_url(b, "P2"))
    assert refused.status_code == 403
    text = refused.content.decode()
    assert "This study is full" in text and "Traceback" not in text
    assert not Participant.objects.filter(batch=b, worker_id="P2").exists()
    assert client.get(lab_url(b, "P1")).status_code == 302    # someone already in comes back in
    preview = client.get(f"/b/{b.slug}/?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=H1")
    assert preview.status_code == 403 and "This study is full" in preview.content.decode()
    b.budget_usd = "10.00"
    b.save(update_fields=["budget_usd"])
    assert client.get(lab_url(b, "P2")).status_code == 302
