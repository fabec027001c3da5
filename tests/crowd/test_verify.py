"""Identities checked with the platforms (issue 21, items 1-3), each attack of the issue through
the real entry link, the real boto3 and httpx clients and the test suite's MTurk and Prolific
recording servers (GetAssignment, ListAssignmentsForHIT, Retrieve a submission, a study's
submissions, their errors, and a platform that is down)."""
from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.test import Client

from crowd import payments, reconcile, verify
from crowd.models import Launch, PayAction, Participant, Study
from crowd import lobby
from live.models import Batch, Seat
from tests.support.platform_ids import mturk_rec, mturk_worker, prolific_id, prolific_rec  # noqa: F401 (fixtures)
from tests.support.factories import batch as make_batch

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("agent_queues_served")]

SANDBOX = "https://workersandbox.mturk.com"


def mturk_url(b: Batch, worker: str, assignment: str, hit: str) -> str:
    return f"/b/{b.slug}/?workerId={worker}&assignmentId={assignment}&hitId={hit}&turkSubmitTo={SANDBOX}"


def prolific_url(b: Batch, pid: str, study: str, session: str) -> str:
    return f"/b/{b.slug}/?PROLIFIC_PID={pid}&STUDY_ID={study}&SESSION_ID={session}"


def launched(rec, b: Batch) -> str:
    """A HIT of ``b`` on the recorder, launched from here (its Launch row)."""
    hit = rec.hit(annotation=b.slug)
    Launch.objects.create(batch=b, platform="mturk", hit_id=hit, live=False, status="sent")
    return hit


def study_of(b: Batch) -> str:
    study = prolific_id()
    Launch.objects.create(batch=b, platform="prolific", study_id=study, status="sent")
    return study


def human_human(**kw) -> Batch:
    kw.setdefault("agents", {"speaker": "colors_lexicon_speaker", "listener": "colors_literal_listener"})
    return make_batch(pairing=Batch.Pairing.HUMAN_HUMAN, **kw)


def to_waiting(c: Client, url: str) -> Participant:
    """Enter, consent, get ready: the participant now waits for a partner."""
    r = c.get(url)
    assert r.status_code == 302, r.content.decode()[:400]
    c.post(r.url, {"step": "consent", "agree": "yes"})
    c.post(r.url, {"step": "ready"})
    p = Participant.objects.get(token=r.url.rstrip("/").split("/")[-1])
    assert p.state == Participant.State.WAITING
    return p


def refused(r, status: int = 403) -> str:
    body = r.content.decode()
    assert r.status_code == status, (r.status_code, body[:400])
    assert "Traceback" not in body and "/static/gt/style.css" in body
    return body


# ---------------------------------------------------------------------------------------- item 1
def test_real_workers_with_accepted_assignments_enter_pending_and_are_paired(mturk_rec):
    """At entry every real worker's assignment is accepted, not submitted: MTurk's GetAssignment
    answers RequestError "This operation can be called with a status of: ..." (it retrieves only
    Submitted, Approved or Rejected ones). That confirms the assignment exists: the worker enters
    as pending and is paired with another person like a verified one."""
    b = human_human(slug="pending-pair")
    hit = launched(mturk_rec, b)
    w1, w2 = mturk_worker(), mturk_worker()
    a1, a2 = mturk_rec.accept(w1, hit), mturk_rec.accept(w2, hit)
    p1 = to_waiting(Client(), mturk_url(b, w1, a1, hit))
    p2 = to_waiting(Client(), mturk_url(b, w2, a2, hit))
    for p, a in ((p1, a1), (p2, a2)):
        assert (p.assignment_id, p.verification, p.verified_at) == (a, verify.PENDING, None)
        assert "confirmed once it is submitted" in p.verify_note
    s = lobby.lobby_poll(participant_id=p2.pk)
    assert s.seat_token
    assert set(Seat.objects.filter(match_id=s.match_id).values_list("participant_id", flat=True)) == {p1.pk, p2.pk}
    assert [c["AssignmentId"] for op, c in mturk_rec.calls if op == "GetAssignment"] == [a1, a2]


def test_a_made_up_assignment_id_is_refused(mturk_rec):
    b = human_human(slug="made-up")
    hit = launched(mturk_rec, b)
    body = refused(Client().get(mturk_url(b, mturk_worker(), "3MADEUPASSIGNMENT000000000001", hit)))
    assert "MTurk does not confirm this assignment" in body and "MTurk does not know it" in body
    assert not b.participants.exists()


def test_a_made_up_worker_id_with_an_assignment_another_participant_holds_is_refused(mturk_rec):
    """The issue's attack, one person with two ids: their real worker id and assignment, then an
    invented worker id with the same (real, accepted) assignment. MTurk cannot say whose an
    accepted assignment is, but an assignment is used by one participant per batch."""
    b = human_human(slug="second-id")
    hit = launched(mturk_rec, b)
    real = mturk_worker()
    a = mturk_rec.accept(real, hit)
    c = Client()
    p = to_waiting(c, mturk_url(b, real, a, hit))
    body = refused(Client().get(mturk_url(b, mturk_worker(), a, hit)))
    assert "already in use in this study" in body and a in body
    assert list(b.participants.values_list("pk", flat=True)) == [p.pk]
    assert c.get(mturk_url(b, real, a, hit)).url == f"/p/{p.token}/"   # the holder's own link resumes


def test_a_made_up_worker_id_that_entered_first_is_caught_before_pay(mturk_rec):
    """An invented worker id entered first with a real worker's accepted assignment: it holds the
    assignment (the real worker, second, gets a clear page saying it is in use). Once the
    assignment is submitted MTurk names its worker: the invented id is not paid, and the lab sees why."""
    b = human_human(slug="first-fake", pay_cents=150)
    hit = launched(mturk_rec, b)
    real, fake = mturk_worker(), mturk_worker()
    a = mturk_rec.accept(real, hit)
    forged = to_waiting(Client(), mturk_url(b, fake, a, hit))
    assert forged.verification == verify.PENDING
    body = refused(Client().get(mturk_url(b, real, a, hit)))
    assert "already in use in this study" in body and "write to the researcher" in body
    Participant.objects.filter(pk=forged.pk).update(state="done", outcome="completed", pay="full", pay_cents=150,
                                                    exit_reason="completed")
    forged.refresh_from_db()
    with pytest.raises(payments.PayRefused, match="not submitted"):   # not yet submitted: nothing to confirm
        payments.act(forged, PayAction.Kind.APPROVE)
    mturk_rec.submit(a)   # MTurk now answers the Assignment: it is the real worker's
    with pytest.raises(payments.PayRefused, match="does not confirm"):
        payments.act(forged, PayAction.Kind.APPROVE)
    row = {u.pay_id: u for u in reconcile.unseen(b).rows}[a]   # the review page lists it, and why
    assert "not confirmed" in row.why and "refused" in row.why and row.worker_id == real
    forged.refresh_from_db()
    assert forged.verification == verify.REFUSED and "another worker" in forged.verify_note
    assert "ApproveAssignment" not in mturk_rec.ops()
    staff = User.objects.create_superuser("lab", "lab@example.org", None)   # force_login: no hash to make
    c = Client()
    c.force_login(staff)
    assert fake in c.get("/admin/crowd/participant/?verification=refused").content.decode()


def test_the_review_page_settles_pending_participants_from_mturks_listing(mturk_rec):
    """Once submitted, ListAssignmentsForHIT names each assignment's worker: the review page
    settles pending participants from it (a forged id is refused there, before anyone approves)."""
    b = human_human(slug="settle", pay_cents=150)
    hit = launched(mturk_rec, b)
    real, fake, other = mturk_worker(), mturk_worker(), mturk_worker()
    a, a2 = mturk_rec.accept(real, hit), mturk_rec.accept(other, hit)
    forged = to_waiting(Client(), mturk_url(b, fake, a, hit))
    honest = to_waiting(Client(), mturk_url(b, other, a2, hit))
    Participant.objects.filter(pk__in=[forged.pk, honest.pk]).update(
        state="done", outcome="completed", pay="full", pay_cents=150, exit_reason="completed")
    mturk_rec.submit(a), mturk_rec.submit(a2)
    rows = {u.pay_id: u for u in reconcile.unseen(b).rows}
    assert set(rows) == {a} and "refused" in rows[a].why
    forged.refresh_from_db(), honest.refresh_from_db()
    assert (forged.verification, honest.verification) == (verify.REFUSED, verify.VERIFIED)
    assert "another worker" in forged.verify_note
    with pytest.raises(payments.PayRefused, match="does not go with its assignment"):
        payments.act(forged, PayAction.Kind.APPROVE)
    assert payments.act(honest, PayAction.Kind.APPROVE).status == "sent"
    assert [c["AssignmentId"] for op, c in mturk_rec.calls if op == "ApproveAssignment"] == [a2]


def test_an_assignment_of_another_hit_or_batch(mturk_rec):
    """Another HIT's assignment with this batch's HIT id: refused once MTurk can say so (submitted),
    before that let in as pending and refused before pay; a HIT of another batch opens only that one."""
    b, other = human_human(slug="mine", pay_cents=150), human_human(slug="theirs")
    hit, foreign = launched(mturk_rec, b), launched(mturk_rec, other)
    w, w2 = mturk_worker(), mturk_worker()
    a_other = mturk_rec.accept(w, foreign)
    assert "another study" in refused(Client().get(mturk_url(b, w, a_other, foreign)))
    done_elsewhere = mturk_rec.accept(w2, foreign)
    mturk_rec.submit(done_elsewhere)
    assert "another HIT" in refused(Client().get(mturk_url(b, w2, done_elsewhere, hit)))
    assert not b.participants.exists()
    p = to_waiting(Client(), mturk_url(b, w, a_other, hit))   # in progress: MTurk cannot say of which HIT yet
    assert p.verification == verify.PENDING
    Participant.objects.filter(pk=p.pk).update(state="done", outcome="completed", pay="full", pay_cents=150)
    p.refresh_from_db()
    mturk_rec.submit(a_other)
    with pytest.raises(payments.PayRefused, match="does not confirm"):
        payments.act(p, PayAction.Kind.APPROVE)
    assert Participant.objects.get(pk=p.pk).verification == verify.REFUSED
    assert Client().get(mturk_url(other, w, a_other, foreign)).status_code == 302


def test_an_assignment_of_a_hit_not_launched_for_this_batch_is_refused(mturk_rec):
    """The lab's other HIT (same requester, not launched from here, e.g. an earlier survey): its
    assignment with its own HIT id in a link to this batch would pass GetAssignment (MTurk names
    that HIT and this worker) and be approved and bonused here, past this HIT's qualifications.
    A batch with HITs launched from here takes only those HITs."""
    b = human_human(slug="own-hits", pay_cents=150)
    hit, elsewhere = launched(mturk_rec, b), mturk_rec.hit()
    w = mturk_worker()
    in_progress = mturk_rec.accept(w, elsewhere)
    assert "not one of this study" in refused(Client().get(mturk_url(b, w, in_progress, elsewhere)))
    mturk_rec.submit(in_progress)
    assert "not one of this study" in refused(Client().get(mturk_url(b, w, in_progress, elsewhere)))
    assert not b.participants.exists() and "GetAssignment" not in mturk_rec.ops()
    mine = mturk_rec.accept(w, hit)
    assert to_waiting(Client(), mturk_url(b, w, mine, hit)).verification == verify.PENDING
    loose = human_human(slug="no-launch", pay_cents=150)   # a HIT made by hand: no launch row to compare with
    by_hand = mturk_rec.accept(w, elsewhere)
    p = to_waiting(Client(), mturk_url(loose, w, by_hand, elsewhere))
    launched(mturk_rec, loose)   # a HIT launched from here since: who came by the first is still paid
    Participant.objects.filter(pk=p.pk).update(state="done", outcome="completed", pay="full", pay_cents=150)
    p.refresh_from_db()
    mturk_rec.submit(by_hand)
    assert payments.act(p, PayAction.Kind.APPROVE).status == "sent"
    assert Participant.objects.get(pk=p.pk).verification == verify.VERIFIED


def test_a_submitted_assignment_names_its_worker_and_is_verified(mturk_rec):
    """After submission GetAssignment answers the Assignment: another worker id with it is
    refused, the worker it names is verified (and the answer cached: a second entry does not ask)."""
    b = human_human(slug="submitted")
    hit = launched(mturk_rec, b)
    real = mturk_worker()
    a = mturk_rec.accept(real, hit)
    mturk_rec.submit(a)
    assert "another worker" in refused(Client().get(mturk_url(b, mturk_worker(), a, hit)))
    c = Client()
    assert c.get(mturk_url(b, real, a, hit)).status_code == 302
    p = Participant.objects.get(batch=b)
    assert p.verification == verify.VERIFIED and p.verified_at
    assert verify.check_mturk(b, worker_id=real, assignment_id=a, hit_id=hit).note == "cached"
    assert [op for op, _ in mturk_rec.calls].count("GetAssignment") == 2


def test_mturk_is_asked_on_the_endpoint_the_hit_was_launched_on(mturk_rec, monkeypatch):
    """Sandbox and live alike: a HIT launched live is asked about on the live endpoint (its launch
    row says so, whatever the link's turkSubmitTo), a sandbox one on the sandbox; a HIT made by
    hand, where turkSubmitTo points. Both endpoints are the recorder here; the flag is recorded."""
    from crowd import mturk

    asked, real = [], mturk.client
    monkeypatch.setattr(mturk, "client", lambda *, live=False, quick=False: asked.append(live) or real(live=live,
                                                                                                      quick=quick))
    b = human_human(slug="endpoints")
    live_hit = mturk_rec.hit(annotation=b.slug)
    Launch.objects.create(batch=b, platform="mturk", hit_id=live_hit, live=True, status="sent")
    sandbox_hit = launched(mturk_rec, b)
    for hit, submit_to, expected in ((live_hit, SANDBOX, True), (sandbox_hit, "https://www.mturk.com", False)):
        a = mturk_rec.accept(mturk_worker(), hit)
        assert verify.check_mturk(b, worker_id=mturk_worker(), assignment_id=a, hit_id=hit,
                                  submit_to=submit_to).status == verify.PENDING
        assert asked.pop() is expected
    by_hand = human_human(slug="endpoints-by-hand")
    hit = mturk_rec.hit()
    for submit_to, expected in ((SANDBOX, False), ("https://www.mturk.com", True)):
        verify.check_mturk(by_hand, worker_id=mturk_worker(), assignment_id=mturk_rec.accept(mturk_worker(), hit),
                           hit_id=hit, submit_to=submit_to)
        assert asked.pop() is expected


@pytest.fixture
def two_endpoints(monkeypatch):
    """MTurk's live and sandbox endpoints as two recorders (each knows only its own HITs and
    assignments, as the two MTurks do), reached through crowd.mturk.client's own choice."""
    from crowd import mturk
    from tests.support.mturk_server import MTurkRecorder

    with MTurkRecorder() as live, MTurkRecorder() as sandbox:
        monkeypatch.delenv("GT_MTURK_ENDPOINT", raising=False)
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDTEST")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
        monkeypatch.setattr(mturk, "LIVE_ENDPOINT", live.url)
        monkeypatch.setattr(mturk, "SANDBOX_ENDPOINT", sandbox.url)
        cache.clear()
        yield live, sandbox
    cache.clear()


def test_a_hit_made_by_hand_is_verified_and_paid_on_the_endpoint_recorded_at_entry(two_endpoints):
    """A HIT made by hand (no launch row): the endpoint is the one turkSubmitTo named at entry, where
    MTurk confirmed the assignment, for the entry check, the check before pay and the approve alike
    (verify.mturk_endpoint); a later link cannot move it. The review page and its CSV say which
    endpoint each such assignment is on, so a sandbox assignment in a live study is seen."""
    live, sandbox = two_endpoints
    b = human_human(slug="by-hand-endpoints", pay_cents=150)
    live_hit, sandbox_hit = live.hit("3LIVEHIT0000000000000000000001"), sandbox.hit("3SANDHIT0000000000000000000001")
    w_live, w_sandbox, w_claims_live = mturk_worker(), mturk_worker(), mturk_worker()
    a_live = live.accept(w_live, live_hit)
    sandbox.accept(mturk_worker(), sandbox_hit)   # the two MTurks number assignments alike: skip live's id
    a_sandbox = sandbox.accept(w_sandbox, sandbox_hit)
    a_other = sandbox.accept(w_claims_live, sandbox_hit)

    def url(worker, assignment, hit, submit_to):
        return f"/b/{b.slug}/?workerId={worker}&assignmentId={assignment}&hitId={hit}&turkSubmitTo={submit_to}"

    c = Client()
    p_live = to_waiting(c, url(w_live, a_live, live_hit, "https://www.mturk.com"))
    p_sandbox = to_waiting(Client(), url(w_sandbox, a_sandbox, sandbox_hit, SANDBOX))
    assert p_live.verification == p_sandbox.verification == verify.PENDING
    assert [x["AssignmentId"] for op, x in live.calls if op == "GetAssignment"] == [a_live]
    assert [x["AssignmentId"] for op, x in sandbox.calls if op == "GetAssignment"] == [a_sandbox]
    # a sandbox assignment whose link claims live is asked about on live, which has no such assignment
    refused(Client().get(url(w_claims_live, a_other, sandbox_hit, "https://www.mturk.com")))
    # the same browser back with another turkSubmitTo: the endpoint MTurk confirmed stays
    assert c.get(url(w_live, a_live, live_hit, SANDBOX)).status_code == 302
    assert verify.participant_endpoint(Participant.objects.get(pk=p_live.pk)) == verify.Endpoint(live=True,
                                                                                                 launched=False)
    live.submit(a_live), sandbox.submit(a_sandbox)
    Participant.objects.filter(pk__in=[p_live.pk, p_sandbox.pk]).update(
        state="done", outcome="completed", pay="full", pay_cents=150, exit_reason="completed")
    for p in Participant.objects.filter(pk__in=[p_live.pk, p_sandbox.pk]):
        assert payments.act(p, PayAction.Kind.APPROVE).status == PayAction.Status.SENT
    assert [x["AssignmentId"] for op, x in live.calls if op == "ApproveAssignment"] == [a_live]
    assert [x["AssignmentId"] for op, x in sandbox.calls if op == "ApproveAssignment"] == [a_sandbox]
    assert set(Participant.objects.filter(batch=b).values_list("verification", flat=True)) == {verify.VERIFIED}

    staff = User.objects.create_superuser("endpoints", "endpoints@example.org", None)   # force_login: no hash
    staff_client = Client()
    staff_client.force_login(staff)
    page = staff_client.get(f"/research/batches/{b.slug}/review/").content.decode()
    assert f"MTurk live (HIT {live_hit}, not launched from here)" in page
    assert f"MTurk sandbox: a sandbox assignment, paid nothing (HIT {sandbox_hit}, not launched from here)" in page
    import csv
    import io
    rows = {r["worker_id"]: r["mturk_endpoint"] for r in csv.DictReader(io.StringIO(payments.reconciliation_csv(b)))}
    assert rows == {w_live: "live (turkSubmitTo)", w_sandbox: "sandbox (turkSubmitTo)"}


def test_a_launched_hit_is_paid_on_its_launch_rows_endpoint_whatever_the_link_said(two_endpoints):
    """The launch row decides for a HIT launched from here: a live HIT's worker whose link says
    the sandbox is asked about and approved on live; the review page adds no endpoint line."""
    live, _sandbox = two_endpoints
    b = human_human(slug="launched-endpoint", pay_cents=150)
    hit = live.hit("3LAUNCHEDLIVE00000000000000001", annotation=b.slug)
    Launch.objects.create(batch=b, platform="mturk", hit_id=hit, live=True, status="sent")
    w = mturk_worker()
    a = live.accept(w, hit)
    p = to_waiting(Client(), mturk_url(b, w, a, hit))   # turkSubmitTo: the sandbox
    live.submit(a)
    Participant.objects.filter(pk=p.pk).update(state="done", outcome="completed", pay="full", pay_cents=150)
    assert payments.act(Participant.objects.get(pk=p.pk), PayAction.Kind.APPROVE).status == PayAction.Status.SENT
    assert [op for op in live.ops() if op in ("GetAssignment", "ApproveAssignment")] == \
        ["GetAssignment", "GetAssignment", "ApproveAssignment"]
    assert not _sandbox.calls
    [row] = payments.review_rows(b)
    assert row.endpoint == verify.Endpoint(live=True, launched=True)
    assert payments.reconciliation_csv(b).splitlines()[1].endswith('"live"')


def test_an_unrecognised_mturk_error_lets_the_worker_in_unverified(mturk_rec):
    """Never refused on an error we do not recognise: unverified (paired per the batch's
    unverified_pairing), asked about again before pay."""
    b = human_human(slug="odd-error")
    hit = launched(mturk_rec, b)
    w = mturk_worker()
    a = mturk_rec.accept(w, hit)
    mturk_rec.fail["GetAssignment"] = ("RequestError", "Your request could not be handled right now. (1700000000000)")
    p = to_waiting(Client(), mturk_url(b, w, a, hit))
    assert p.verification == verify.UNVERIFIED and "could not be handled" in p.verify_note
    s = lobby.lobby_poll(participant_id=p.pk)   # the batch pairs unverified people with an agent
    assert [x.kind for x in Seat.objects.filter(match_id=s.match_id)].count(Seat.Kind.HUMAN) == 1


def test_a_known_workers_id_cannot_lock_them_out(mturk_rec):
    """The issue's lockout: entering first with a known worker's id made them "open in another
    browser". The attacker's own accepted assignment gets them in as pending; the worker, with
    their own assignment, takes the participant over, and is the one confirmed before pay."""
    b = human_human(slug="lockout", pay_cents=150)
    hit = launched(mturk_rec, b)
    victim, attacker_id = mturk_worker(), mturk_worker()
    attacker_assignment = mturk_rec.accept(attacker_id, hit)
    attacker = Client()
    r = attacker.get(mturk_url(b, victim, attacker_assignment, hit))
    assert r.status_code == 302 and Participant.objects.get(batch=b).verification == verify.PENDING
    a = mturk_rec.accept(victim, hit)
    worker = Client()
    r2 = worker.get(mturk_url(b, victim, a, hit))
    assert r2.status_code == 302 and r2.url == r.url
    assert worker.get(r2.url).status_code == 200
    assert 'id="other-browser"' in attacker.get(r.url).content.decode()
    p = Participant.objects.get(batch=b)
    assert p.assignment_id == a and [x["assignment_id"] for x in p.assignments] == [attacker_assignment]
    # the attacker's assignment is now only another one of the participant; theirs alone is paid
    Participant.objects.filter(pk=p.pk).update(state="done", outcome="completed", pay="full", pay_cents=150)
    p.refresh_from_db()
    mturk_rec.submit(a)
    assert payments.act(p, PayAction.Kind.APPROVE).status == "sent"
    assert [c["AssignmentId"] for op, c in mturk_rec.calls if op == "ApproveAssignment"] == [a]


def test_a_squatter_let_in_while_mturk_was_down_loses_the_id_to_the_verified_worker(mturk_rec):
    b = human_human(slug="squat")
    hit = launched(mturk_rec, b)
    victim = mturk_worker()
    mturk_rec.down = True
    squatter = Client()
    r = squatter.get(mturk_url(b, victim, "3INVENTED00000000000000000001", hit))
    assert r.status_code == 302
    assert Participant.objects.get(batch=b).verification == verify.UNVERIFIED
    mturk_rec.down = False
    a = mturk_rec.accept(victim, hit)
    worker = Client()
    r2 = worker.get(mturk_url(b, victim, a, hit))
    assert r2.status_code == 302 and r2.url == r.url
    p = Participant.objects.get(batch=b)
    assert (p.assignment_id, p.verification) == (a, verify.PENDING)
    assert worker.get(r2.url).status_code == 200
    assert 'id="other-browser"' in squatter.get(r.url).content.decode()   # the squatter lost it
    assert [x["assignment_id"] for x in p.assignments] == ["3INVENTED00000000000000000001"]


def test_mturk_down_lets_the_person_in_unverified_and_pairs_them_only_with_an_agent(mturk_rec):
    """The issue's self-pairing: one person's two ids in one batch. With MTurk down both are
    unverified: each plays an agent, never the other."""
    b = human_human(slug="down-agent")
    hit = launched(mturk_rec, b)
    mturk_rec.down = True
    w1, w2 = mturk_worker(), mturk_worker()
    p1 = to_waiting(Client(), mturk_url(b, w1, "3FIRST0000000000000000000001", hit))
    p2 = to_waiting(Client(), mturk_url(b, w2, "3SECOND000000000000000000001", hit))
    assert {p1.verification, p2.verification} == {verify.UNVERIFIED}
    assert "MTurk did not answer" in p1.verify_note
    for p in (p1, p2):
        s = lobby.lobby_poll(participant_id=p.pk)
        seats = Seat.objects.filter(match_id=s.match_id)
        assert s.seat_token and [x.kind for x in seats].count(Seat.Kind.HUMAN) == 1


def test_mturk_down_and_unverified_pairing_none_pairs_nobody_then_the_platform_confirms(mturk_rec):
    b = human_human(slug="down-none", unverified_pairing="none")
    hit = launched(mturk_rec, b)
    w1, w2 = mturk_worker(), mturk_worker()
    a1, a2 = mturk_rec.accept(w1, hit), mturk_rec.accept(w2, hit)
    mturk_rec.down = True
    p1 = to_waiting(Client(), mturk_url(b, w1, a1, hit))
    mturk_rec.down = False
    p2 = to_waiting(Client(), mturk_url(b, w2, a2, hit))
    assert (p1.verification, p2.verification) == (verify.UNVERIFIED, verify.PENDING)
    assert lobby.lobby_poll(participant_id=p2.pk).seat_token is None   # not with the unverified one
    assert lobby.lobby_poll(participant_id=p1.pk).seat_token is None   # nor with an agent
    Participant.objects.filter(pk=p1.pk).update(verify_tried_at=None)   # its next poll asks MTurk again
    s = lobby.lobby_poll(participant_id=p1.pk)
    p1.refresh_from_db()
    assert p1.verification == verify.PENDING and s.seat_token
    assert set(Seat.objects.filter(match_id=s.match_id).values_list("participant_id", flat=True)) == {p1.pk, p2.pk}


def test_an_unverified_worker_is_verified_again_before_any_pay(mturk_rec):
    b = human_human(slug="pay-check", pay_cents=150)
    hit = launched(mturk_rec, b)
    w, fake = mturk_worker(), mturk_worker()
    a = mturk_rec.accept(w, hit)
    mturk_rec.down = True
    real = to_waiting(Client(), mturk_url(b, w, a, hit))
    forged = to_waiting(Client(), mturk_url(b, fake, "3FORGED00000000000000000001", hit))
    Participant.objects.filter(pk__in=[real.pk, forged.pk]).update(
        state="done", outcome="completed", pay="full", pay_cents=150, exit_reason="completed")
    real.refresh_from_db(), forged.refresh_from_db()
    with pytest.raises(payments.PayRefused, match="could not be asked"):
        payments.act(real, PayAction.Kind.APPROVE)
    assert "ApproveAssignment" not in mturk_rec.ops() and not PayAction.objects.exists()
    mturk_rec.down = False
    mturk_rec.submit(a)
    # submitted on MTurk by an unconfirmed participant: the review page lists it (auto-approval would pay it)
    assert "not confirmed" in {u.pay_id: u for u in reconcile.unseen(b).rows}[a].why
    row = payments.act(real, PayAction.Kind.APPROVE)
    assert row.status == "sent" and Participant.objects.get(pk=real.pk).verification == verify.VERIFIED
    with pytest.raises(payments.PayRefused, match="does not confirm"):
        payments.act(forged, PayAction.Kind.APPROVE)
    assert Participant.objects.get(pk=forged.pk).verification == verify.REFUSED
    assert [c["AssignmentId"] for op, c in mturk_rec.calls if op == "ApproveAssignment"] == [a]


def test_no_credentials_on_the_server_is_unverified_not_a_crash(monkeypatch):
    monkeypatch.setenv("GT_MTURK_ENDPOINT", "http://127.0.0.1:9")   # nothing listens there
    monkeypatch.delenv("AWS_ACCESS_KEY_ID", raising=False)
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY", raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    b = human_human(slug="no-creds")
    assert Client().get(mturk_url(b, mturk_worker(), "3ANY0000000000000000000000001", "3HIT0000000000000000000000001")
                        ).status_code == 302
    assert Participant.objects.get(batch=b).verification == verify.UNVERIFIED


# ----------------------------------------------------------------------------------- Prolific
def test_prolific_session_must_be_an_active_submission_of_this_study_for_this_participant(prolific_rec):
    b = human_human(slug="pro-check")
    study, other_study = study_of(b), prolific_id()
    pid, other = prolific_id(), prolific_id()
    sess = prolific_rec.start(pid, study)
    foreign = prolific_rec.start(pid, other_study)
    assert "another participant" in refused(Client().get(prolific_url(b, other, study, sess)))
    assert "another study" in refused(Client().get(prolific_url(b, pid, study, foreign)))
    assert "does not know it" in refused(Client().get(prolific_url(b, pid, study, prolific_id())))
    returned = prolific_rec.start(other, study)
    prolific_rec.give_back(returned)
    assert "not active" in refused(Client().get(prolific_url(b, other, study, returned)))
    assert not b.participants.exists()
    assert Client().get(prolific_url(b, pid, study, sess)).status_code == 302
    assert Participant.objects.get(batch=b).verification == verify.VERIFIED
    assert f"submissions/{sess}/" in [r["path"] for r in prolific_rec.requests]


def test_a_submission_of_a_study_not_launched_for_this_batch_is_refused(prolific_rec):
    """The lab's other Prolific study (not launched from here): its active submission with its own
    STUDY_ID in a link to this batch is refused where the batch has studies launched from here."""
    b = human_human(slug="own-studies")
    study, elsewhere = study_of(b), prolific_id()
    pid = prolific_id()
    sess = prolific_rec.start(pid, elsewhere)
    assert "not one of this study" in refused(Client().get(prolific_url(b, pid, elsewhere, sess)))
    assert not b.participants.exists() and not any(r["path"].startswith("submissions/") for r in prolific_rec.requests)
    assert Client().get(prolific_url(b, pid, study, prolific_rec.start(pid, study))).status_code == 302


def test_prolific_down_is_unverified_and_checked_again_before_pay(prolific_rec):
    b = human_human(slug="pro-down")
    study = study_of(b)
    pid = prolific_id()
    sess = prolific_rec.start(pid, study)
    prolific_rec.down = True
    p = to_waiting(Client(), prolific_url(b, pid, study, sess))
    assert p.verification == verify.UNVERIFIED and "503" in p.verify_note
    Participant.objects.filter(pk=p.pk).update(state="done", outcome="completed", pay="full", pay_cents=150)
    p.refresh_from_db()
    with pytest.raises(payments.PayRefused, match="could not be asked"):
        payments.act(p, PayAction.Kind.APPROVE)
    prolific_rec.down = False
    prolific_rec.finish(sess)
    assert payments.act(p, PayAction.Kind.APPROVE).status == "sent"


# ---------------------------------------------------------------------------------------- item 2
@pytest.mark.parametrize("spelling, status", [
    ("lower", 403),          # the same id in lower case: the same worker, excluded
    ("dot", 400),            # not an MTurk id: refused with a clear page
    ("zero-width", 400),
    ("fullwidth", 400),
])
def test_another_spelling_of_an_excluded_mturk_worker(mturk_rec, spelling, status):
    first, later = human_human(slug=f"pilot-{spelling}"), human_human(slug=f"main-{spelling}")
    study = Study.objects.create(name=f"pilot {spelling}")
    study.batches.add(first)
    later.excluded_studies.add(study)
    hit1, hit2 = launched(mturk_rec, first), launched(mturk_rec, later)
    w = mturk_worker()
    assert Client().get(mturk_url(first, w, mturk_rec.accept(w, hit1), hit1)).status_code == 302
    a2 = mturk_rec.accept(w, hit2)
    typed = {"lower": w.lower(), "dot": w + ".", "zero-width": w[:3] + "\u200b" + w[3:],
             "fullwidth": "\uff21" + w[1:]}[spelling]
    body = refused(Client().get(mturk_url(later, typed, a2, hit2)), status)
    assert ("took part in an earlier, related study" in body) if status == 403 else ("not an MTurk worker id" in body
                                                                                    or "not part of any" in body)
    assert not later.participants.exists()


def test_another_spelling_of_an_excluded_prolific_participant(prolific_rec):
    first, later = human_human(slug="pro-pilot"), human_human(slug="pro-main")
    study = Study.objects.create(name="prolific pilot")
    study.batches.add(first)
    later.excluded_studies.add(study)
    s1, s2 = study_of(first), study_of(later)
    pid = prolific_id()
    assert Client().get(prolific_url(first, pid, s1, prolific_rec.start(pid, s1))).status_code == 302
    sess = prolific_rec.start(pid, s2)
    body = refused(Client().get(prolific_url(later, pid.upper(), s2.upper(), sess.upper())))
    assert "took part in an earlier, related study" in body
    assert "not part of any Prolific participant id" in refused(
        Client().get(prolific_url(later, pid + "\u200b", s2, sess)), 400)
    assert "not a Prolific participant id" in refused(Client().get(prolific_url(later, "P1", s2, sess)), 400)
    assert not later.participants.exists()


def test_ids_are_validated_and_canonical_at_entry():
    m = lobby.parse_entry({"workerId": " a1b2c3d4e5f6g7 ", "assignmentId": "3abc", "hitId": "3hit",
                           "turkSubmitTo": SANDBOX})
    assert (m.worker_id, m.assignment_id, m.hit_id) == ("A1B2C3D4E5F6G7", "3ABC", "3HIT")
    for bad in ({"workerId": "W1"}, {"workerId": "A1.B"}, {"workerId": "A1\u200bB"}, {"assignmentId": "3-A"},
                {"hitId": ""}, {"workerId": "A" + "1" * 64}):
        q = {"workerId": "A1B2", "assignmentId": "3A", "hitId": "3H", "turkSubmitTo": SANDBOX, **bad}
        with pytest.raises(lobby.EntryError):
            lobby.parse_entry(q)
    pid = "60F6ACB180A2B1D7C5A3E1F0"
    p = lobby.parse_entry({"PROLIFIC_PID": pid, "STUDY_ID": pid, "SESSION_ID": pid})
    assert p.worker_id == p.study_id == p.session_id == pid.lower()
    for bad in ({"PROLIFIC_PID": pid[:-1]}, {"STUDY_ID": "S"}, {"SESSION_ID": ""}, {"PROLIFIC_PID": pid + "g"}):
        with pytest.raises(lobby.EntryError):
            lobby.parse_entry({"PROLIFIC_PID": pid, "STUDY_ID": pid, "SESSION_ID": pid, **bad})
    with pytest.raises(lobby.EntryError):
        lobby.parse_entry({"worker": "demo name"})


@pytest.mark.django_db(transaction=True)
def test_two_entries_at_once_into_batches_that_exclude_each_other_let_in_at_most_one():
    """Real PostgreSQL, one connection per thread, all released at once, many rounds: the
    exclusion check and the participant it lets in are one step (an advisory lock per worker)."""
    from crowd.entry import lab_token
    from tests.support.factories import run_in_threads

    a, b = human_human(slug="ex-a"), human_human(slug="ex-b")
    sa, sb = Study.objects.create(name="study a"), Study.objects.create(name="study b")
    sa.batches.add(a)
    sb.batches.add(b)
    a.excluded_studies.add(sb)
    b.excluded_studies.add(sa)
    names = [f"racer{i}" for i in range(40)]
    for name in names:
        results = []

        def enter(i, name=name):
            batch = (a, b)[i % 2]
            try:
                params = lobby.EntryParams("lab", "", lab_token=lab_token(batch, name))
                lobby.participant_enter(batch=batch, params=params, session={})
                results.append("in")
            except lobby.crowd_studies.Excluded:
                results.append("excluded")

        run_in_threads(2, enter)   # one into each batch, at the same moment
        assert Participant.objects.filter(worker_id=name).count() == 1, name
        assert sorted(results) == ["excluded", "in"]


# ---------------------------------------------------------------------------------------- item 3
def test_a_finished_worker_with_a_second_assignment_is_told_they_took_part(mturk_rec):
    """The issue's attack: finished with assignment A, re-entered with B from the same browser, got
    a submit form for B and A vanished. Now B is refused, A stays the participant's, B is listed."""
    b = human_human(slug="second", max_wait_s=0)
    hit = launched(mturk_rec, b)
    w = mturk_worker()
    first = mturk_rec.accept(w, hit)
    c = Client()
    p = to_waiting(c, mturk_url(b, w, first, hit))
    Participant.objects.filter(pk=p.pk).update(state="done", exit_reason="completed", outcome="completed",
                                               pay="full", pay_cents=150)
    second = mturk_rec.accept(w, hit)
    body = refused(c.get(mturk_url(b, w, second, hit)))
    assert "already taken part" in body and "return it" in body and p.completion_code not in body
    assert "externalSubmit" not in body
    refused(Client().get(mturk_url(b, w, second, hit)))   # from another browser too
    p.refresh_from_db()
    assert p.assignment_id == first and [x["assignment_id"] for x in p.assignments] == [second]
    done = c.get(f"/p/{p.token}/").content.decode()
    assert first in done and second not in done


def test_the_review_page_lists_what_the_platforms_hold_that_no_finished_participant_accounts_for(
        mturk_rec, prolific_rec):
    b = human_human(slug="recon", max_wait_s=0)
    hit, study = launched(mturk_rec, b), study_of(b)
    w, stranger, waiting = mturk_worker(), mturk_worker(), mturk_worker()
    first = mturk_rec.accept(w, hit)
    p = to_waiting(Client(), mturk_url(b, w, first, hit))
    Participant.objects.filter(pk=p.pk).update(state="done", exit_reason="completed", outcome="completed")
    second = mturk_rec.accept(w, hit)
    refused(Client().get(mturk_url(b, w, second, hit)))
    unfinished = mturk_rec.accept(waiting, hit)
    to_waiting(Client(), mturk_url(b, waiting, unfinished, hit))
    never = mturk_rec.accept(stranger, hit)   # submitted on MTurk without ever entering here
    for a in (first, second, unfinished, never):
        mturk_rec.submit(a)
    pid, ghost = prolific_id(), prolific_id()
    awaiting = prolific_rec.start(ghost, study)
    prolific_rec.finish(awaiting)
    active = prolific_rec.start(pid, study)   # active, and entered: an unfinished participant
    to_waiting(Client(), prolific_url(b, pid, study, active))
    report = reconcile.unseen(b)
    rows = {u.pay_id: u for u in report.rows}
    assert not report.errors and first not in rows
    assert Participant.objects.get(pk=p.pk).verification == verify.VERIFIED   # settled from MTurk's listing
    assert "another assignment of" in rows[second].why
    assert "not finished" in rows[unfinished].why
    assert "no participant" in rows[never].why and rows[never].worker_id == stranger
    assert "no participant" in rows[awaiting].why and rows[awaiting].status == "AWAITING REVIEW"
    assert any(u.platform == "prolific" and "not finished" in u.why for u in report.rows)
    staff = User.objects.create_superuser("boss", "boss@example.org", None)   # force_login: no hash to make
    c = Client()
    c.force_login(staff)
    page = c.get(f"/research/batches/{b.slug}/review/").content.decode()
    for a in (first, second):
        assert a in page   # both assignments stay listed
    for a in (second, unfinished, never, awaiting):
        assert f'data-pay-id="{a}"' in page
    listed = [op for op, _ in mturk_rec.calls if op == "ListAssignmentsForHIT"]
    assert listed
    mturk_rec.down = True
    page = c.get(f"/research/batches/{b.slug}/review/").content.decode()
    assert f"MTurk could not list HIT {hit}" in page


def test_list_assignments_pages_through_every_submitted_one(mturk_rec):
    b = human_human(slug="pages")
    hit = launched(mturk_rec, b)
    ids = [mturk_rec.accept(mturk_worker(), hit) for _ in range(130)]
    for a in ids:
        mturk_rec.submit(a)
    mturk_rec.accept(mturk_worker(), hit)   # accepted, not submitted: MTurk does not list it
    report = reconcile.unseen(b)
    assert sorted(u.pay_id for u in report.rows) == sorted(ids)
    assert [op for op, _ in mturk_rec.calls].count("ListAssignmentsForHIT") == 2


# ------------------------------------------------------------------------------- pairing limits
def lab(b: Batch, name: str) -> str:
    from tests.support.factories import lab_url

    return lab_url(b, name)


def test_two_people_from_one_browser_are_never_paired():
    b = human_human(slug="one-browser")
    c = Client()
    p1, p2 = to_waiting(c, lab(b, "ann")), to_waiting(c, lab(b, "bob"))
    assert p1.browser and p1.browser == p2.browser
    assert lobby.lobby_poll(participant_id=p2.pk).seat_token is None
    p3 = to_waiting(Client(), lab(b, "cat"))
    s = lobby.lobby_poll(participant_id=p3.pk)
    assert s.seat_token


def test_two_people_from_one_address_are_paired_only_where_the_batch_allows_it():
    b = human_human(slug="one-address")
    p1 = to_waiting(Client(REMOTE_ADDR="203.0.113.7"), lab(b, "ann"))
    p2 = to_waiting(Client(REMOTE_ADDR="203.0.113.7"), lab(b, "bob"))
    assert p1.client_addr == p2.client_addr == "203.0.113.7"
    assert lobby.lobby_poll(participant_id=p2.pk).seat_token is None
    Batch.objects.filter(pk=b.pk).update(allow_shared_address=True)
    assert lobby.lobby_poll(participant_id=p2.pk).seat_token


def test_two_people_from_one_ipv6_block_are_not_paired():
    """IPv6: a home or a host is given a /64 (the rate limits count it as one client,
    live.ratelimit.client_address); a phone and a laptop there have two addresses of it, so one
    person could pair with themself. An IPv4-mapped address is its IPv4 address."""
    b = human_human(slug="one-block")
    p1 = to_waiting(Client(REMOTE_ADDR="2001:db8:1:2::10"), lab(b, "ann"))
    p2 = to_waiting(Client(REMOTE_ADDR="2001:db8:1:2:a:b:c:d"), lab(b, "bob"))
    assert p1.client_addr != p2.client_addr
    assert lobby.lobby_poll(participant_id=p2.pk).seat_token is None
    p3 = to_waiting(Client(REMOTE_ADDR="2001:db8:1:3::10"), lab(b, "cat"))   # another /64
    seat = lobby.lobby_poll(participant_id=p3.pk)
    assert {s.participant_id for s in Seat.objects.filter(match_id=seat.match_id)} == {p1.pk, p3.pk}
    b2 = human_human(slug="one-v4")
    to_waiting(Client(REMOTE_ADDR="::ffff:203.0.113.9"), lab(b2, "dan"))
    q2 = to_waiting(Client(REMOTE_ADDR="203.0.113.9"), lab(b2, "eve"))
    assert lobby.lobby_poll(participant_id=q2.pk).seat_token is None
    Batch.objects.filter(pk=b2.pk).update(allow_shared_address=True)
    assert lobby.lobby_poll(participant_id=q2.pk).seat_token


def test_the_admin_lists_and_filters_participants_by_verification(mturk_rec):
    b = human_human(slug="admin-list")
    hit = launched(mturk_rec, b)
    mturk_rec.down = True
    w = mturk_worker()
    assert Client().get(mturk_url(b, w, "3ANY0000000000000000000000002", hit)).status_code == 302
    staff = User.objects.create_superuser("root", "root@example.org", None)   # force_login: no hash to make
    c = Client()
    c.force_login(staff)
    page = c.get("/admin/crowd/participant/?verification=unverified")
    assert page.status_code == 200 and w in page.content.decode()
    assert w not in c.get("/admin/crowd/participant/?verification=verified").content.decode()
