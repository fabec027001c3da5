"""The staff launch and review pages through Django's test client, with a stubbed MTurk client
(crowd.mturk.client patched to return a Stubber-wrapped boto3 client) and the Prolific recorder."""
from __future__ import annotations

import pytest
from botocore.stub import ANY

from crowd import mturk
from crowd.models import BonusRule, Launch, PayAction
from tests.support import crowd_helpers as h
from tests.support.prolific_server import Recorder
from tests.support.staff_users import staff_user

pytestmark = pytest.mark.django_db

P1, P2 = "60f6acb180a2b1d7c5a3e1f1", "60f6acb180a2b1d7c5a3e1f2"   # Prolific participant ids


@pytest.fixture
def staff(client):
    user = staff_user("res", "pw")
    client.force_login(user)
    return client


@pytest.fixture
def stub(monkeypatch):
    mt, st = h.stubbed_mturk()
    monkeypatch.setattr(mturk, "client", lambda live=False: mt)
    with st:
        yield st
    st.assert_no_pending_responses()


def form(**kw):
    d = dict(platform="mturk", target="sandbox", title="Colors", description="Play a game", keywords="game",
             reward_cents="150", places="4", minutes="10", duration_minutes="60", lifetime_hours="24",
             auto_approve_hours="72", locales="US", min_approval_rate="98", min_approved_hits="100",
             block_qualification_id="3BLK", exclude_qualifications="", allow_list="", block_list="")
    d.update(kw)
    return d


def test_pages_are_staff_only(client):
    b = h.batch()
    for url in (f"/research/batches/{b.slug}/launch/", f"/research/batches/{b.slug}/review/",
                f"/research/batches/{b.slug}/review.csv"):
        assert client.get(url).status_code == 302
    assert client.post(f"/research/batches/{b.slug}/launch/", form()).status_code == 302
    assert not Launch.objects.exists()


def test_launch_sandbox_hit(staff, stub):
    b = h.batch(entry_kinds=["mturk"])
    stub.add_response("create_hit_type", {"HITTypeId": "HT9"}, None)
    stub.add_response("create_hit_with_hit_type", {"HIT": {"HITId": "HIT9", "HITTypeId": "HT9"}},
                      {"HITTypeId": "HT9", "MaxAssignments": 4, "LifetimeInSeconds": 86400, "Question": ANY,
                       "RequesterAnnotation": b.slug})
    r = staff.post(f"/research/batches/{b.slug}/launch/", form(), follow=True)
    assert r.status_code == 200 and b"HIT9" in r.content
    launch = Launch.objects.get()
    assert (launch.live, launch.hit_id, launch.by.username) == (False, "HIT9", "res")
    assert f"http://testserver/b/{b.slug}/" in launch.params["hit"]["Question"]


def test_live_needs_the_box_and_https(staff, stub):
    b = h.batch(entry_kinds=["mturk"])
    r = staff.post(f"/research/batches/{b.slug}/launch/", form(target="live"))
    assert r.status_code == 400 and b"Tick this box" in r.content and b"https" in r.content
    r = staff.post(f"/research/batches/{b.slug}/launch/", form(locales="USA"))
    assert r.status_code == 400 and b"Two-letter" in r.content
    r = staff.post(f"/research/batches/{b.slug}/launch/", form(platform="prolific"))
    assert r.status_code == 400 and b"does not accept prolific" in r.content
    assert not Launch.objects.exists()


def test_add_assignments_and_expire(staff, stub):
    b = h.batch(entry_kinds=["mturk"])
    launch = Launch.objects.create(batch=b, platform="mturk", hit_id="HIT1", status="sent")
    stub.add_response("create_additional_assignments_for_hit", {},
                      {"HITId": "HIT1", "NumberOfAdditionalAssignments": 3, "UniqueRequestToken": ANY})
    stub.add_response("update_expiration_for_hit", {}, {"HITId": "HIT1", "ExpireAt": ANY})
    url = f"/research/batches/{b.slug}/launch/{launch.pk}/"
    assert b"Give a number" in staff.post(url, {"action": "add", "n": "x"}, follow=True).content
    staff.post(url, {"action": "add", "n": "3"})
    staff.post(url, {"action": "expire"})
    launch.refresh_from_db()
    assert launch.status == "expired" and launch.params["added"] == 3


def test_prolific_launch_and_pause(staff, monkeypatch):
    b = h.batch(entry_kinds=["prolific"], prolific_codes={"completed": "C1", "returned_early": "C9"})
    with Recorder() as rec:
        monkeypatch.setenv("GT_PROLIFIC_API", rec.base)
        monkeypatch.setenv("PROLIFIC_API_TOKEN", "t")
        staff.post(f"/research/batches/{b.slug}/launch/", form(platform="prolific", block_list=f"{P1} {P2}"))
        launch = Launch.objects.get()
        staff.post(f"/research/batches/{b.slug}/launch/{launch.pk}/", {"action": "PAUSE"})
    assert [r["path"] for r in rec.requests] == ["studies/", f"studies/{launch.study_id}/transition/"]
    body = rec.requests[0]["body"]
    assert body["filters"] == [{"filter_id": "participant_blocklist", "selected_values": [P1, P2]}]
    codes = {c["code"]: c["actions"][0]["action"] for c in body["completion_codes"]}
    assert codes == {"C1": "AUTOMATICALLY_APPROVE", "C9": "MANUALLY_REVIEW"}
    launch.refresh_from_db()
    assert launch.status == "paused" and launch.live is False


def test_prolific_allow_and_block_lists_hold_ids_in_their_one_form(staff, monkeypatch):
    """A pasted list is put in the form entry compares (lower case, each once); a pasted id with an
    invisible character, a dot or of the wrong length is named and nothing is launched (issue 21,
    item 2: one canonical form everywhere)."""
    b = h.batch(entry_kinds=["prolific"], prolific_codes={"completed": "C1"})
    with Recorder() as rec:
        monkeypatch.setenv("GT_PROLIFIC_API", rec.base)
        monkeypatch.setenv("PROLIFIC_API_TOKEN", "t")
        url = f"/research/batches/{b.slug}/launch/"
        for bad in (P1 + "\u200b", P1 + ".", P1[:-1]):
            r = staff.post(url, form(platform="prolific", block_list=f"{P2}, {bad}"))
            assert r.status_code == 400 and "Not Prolific participant ids" in r.content.decode()
            r = staff.post(url, form(platform="prolific", allow_list=bad))
            assert r.status_code == 400 and "Not Prolific participant ids" in r.content.decode()
        assert rec.requests == [] and not Launch.objects.exists()
        staff.post(url, form(platform="prolific", allow_list=f" {P1.upper()}\n{P1}", block_list=f"{P2.upper()},{P2}"))
    assert Launch.objects.get().status == "sent"
    assert rec.requests[0]["body"]["filters"] == [
        {"filter_id": "participant_allowlist", "selected_values": [P1]},
        {"filter_id": "participant_blocklist", "selected_values": [P2]}]


def test_review_rule_preview_pay_once_and_csv(staff, stub):
    b = h.batch()
    p1 = h.participant(b, "W1", outcome={"correct": 3, "played": 3})
    p2 = h.participant(b, "W2", outcome={"correct": 1, "played": 3})
    url = f"/research/batches/{b.slug}/review/"
    staff.post(url, {"form": "rule", "rule-kind": "colors_accuracy", "rule-cents_per_unit": "20", "rule-cap_cents": "50",
                     "rule-budget_cents": "500"})
    assert BonusRule.objects.get(batch=b).cap_cents == 50
    page = staff.get(url).content.decode()
    assert 'id="unpaid-total">70<' in page and "3/3 correct" in page
    stub.add_response("send_bonus", {}, {"WorkerId": "W1", "BonusAmount": "0.50", "AssignmentId": p1.assignment_id,
                                         "Reason": ANY, "UniqueRequestToken": f"gt-{b.id}-{p1.id}-bonus"})
    stub.add_response("send_bonus", {}, {"WorkerId": "W2", "BonusAmount": "0.20", "AssignmentId": p2.assignment_id,
                                         "Reason": ANY, "UniqueRequestToken": f"gt-{b.id}-{p2.id}-bonus"})
    r = staff.post(url, {"action": "bonus", "p": [p1.pk, p2.pk]}, follow=True)
    assert b"bonus: 2 sent" in r.content, [m.message for m in r.context["messages"]]
    r = staff.post(url, {"action": "bonus", "p": [p1.pk, p2.pk]}, follow=True)   # the double click
    assert b"bonus: 0 sent, 2 already done" in r.content
    assert 'id="unpaid-total">0<' in r.content.decode()
    csv = staff.get(f"/research/batches/{b.slug}/review.csv").content.decode()
    assert "W1" in csv and f"gt-{b.id}-{p1.id}-bonus" in csv
    assert PayAction.objects.filter(kind="bonus", status="sent").count() == 2


def test_review_reject_needs_a_reason(staff, stub):
    b = h.batch()
    p = h.participant(b, "W1", outcome={"correct": 0})
    r = staff.post(f"/research/batches/{b.slug}/review/", {"action": "reject", "p": [p.pk], "reason": " "}, follow=True)
    assert b"needs a reason" in r.content and not PayAction.objects.exists()
    r = staff.post(f"/research/batches/{b.slug}/review/", {"action": "approve"}, follow=True)
    assert b"Select at least one" in r.content


def test_prolific_block_list_starts_with_the_excluded_studies_workers(staff):
    from crowd.models import Study

    old, b = h.batch(), h.batch(entry_kinds=["prolific"])
    h.participant(old, "5fPAST", platform="prolific")
    h.participant(old, "AMTURK", platform="mturk")
    study = Study.objects.create(name="pilot")
    study.batches.add(old)
    b.excluded_studies.add(study)
    page = staff.get(f"/research/batches/{b.slug}/launch/").content.decode()
    assert "5fPAST</textarea>" in page and "AMTURK" not in page
