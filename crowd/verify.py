"""Is this worker who the link says? Asked of the platform itself (issue 21, item 1).

* MTurk: GetAssignment on the link's ``assignmentId``. MTurk's API (2017-01-17) documents that
  "GetAssignment retrieves an assignment with an AssignmentStatus value of Submitted, Approved, or
  Rejected" (docs.amazonaws.cn/goto/WebAPI/mturk-requester-2017-01-17/GetAssignment; the
  Assignment structure has only those three statuses), and only the requester's own. So:

  - a submitted (approved, rejected) assignment: the Assignment, which must be of the link's
    ``hitId`` and name the link's ``workerId`` -> ``verified``;
  - an assignment a worker has accepted and not yet submitted (every worker at entry): HTTP 400
    RequestError "This operation can be called with a status of: Submitted,Approved,Rejected (...)"
    (TurkErrorCode AWS.MechanicalTurk.InvalidAssignmentState; the older API said
    "Reviewable,Approved,Rejected", as reported in TurkServer/turkserver-meteor#56; the JSON shape is
    the one logged in NRGI/resourcecontracts.org#1384) -> ``pending``: MTurk confirms the assignment
    exists and is in progress; it cannot say whose it is or of which HIT until it is submitted.
    A pending participant enters and is paired like a verified one (an assignment id is held by
    one participant per batch: crowd/lobby.py), and is asked about again before any pay;
  - an id MTurk does not have (made up, or another requester's): RequestError "Assignment <id>
    does not exist. (...)" (AWS.MechanicalTurk.AssignmentDoesNotExist, as in cloudyr/MTurkR#18)
    -> refused (``NotVerified``);
  - any other RequestError, or MTurk not answering -> ``unverified``: never refused on a message
    we do not recognise.

  The HIT must not be one launched for another batch, and at entry, where HITs were launched
  from here for this batch, one of them (not the lab's other HIT of the same account). The
  sandbox or the live endpoint is ``mturk_endpoint``'s, the one answer that verification, pay and
  the review page share: the HIT's ``Launch`` row, else the ``turkSubmitTo`` recorded at entry.
* Prolific: the link's ``SESSION_ID`` is the submission id; Retrieve-a-submission must answer a
  submission of the link's ``STUDY_ID`` for the link's ``PROLIFIC_PID``, and a newcomer's must be
  ``ACTIVE`` (not returned, timed out or already submitted). As with HITs, the study must be one
  launched for this batch where it has any.
* Lab links (signed by the server) and demo names are ``trusted``.

When the platform answers "no" the entry is refused (``NotVerified``: a clear page, nothing is
created). When it cannot be asked (down, throttling, a timeout, no credentials or token on this
server) the person is let in as ``unverified``: paired per ``Batch.unverified_pairing`` and asked
about again before any pay (``recheck``; crowd/payments.py), as a ``pending`` one is. A positive
answer (``verified``) is cached (the process cache, ``CACHE_S``) so a reload does not ask again.
"""
from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from botocore.exceptions import BotoCoreError, ClientError
from django.core.cache import cache
from django.utils import timezone

from crowd import mturk, prolific
from crowd.entry import EntryRefused
from crowd.models import Launch, Participant

VERIFIED, UNVERIFIED, TRUSTED = "verified", "unverified", "trusted"
PENDING = "pending"     # MTurk: the assignment exists and is not submitted yet (worker and HIT not confirmed)
REFUSED = "refused"     # unverified at entry, and the platform said no when asked again
CACHE_S = 600
RECHECK_S = 30          # an unverified participant is asked about at most this often (lobby, pay)
PROLIFIC_TIMEOUT_S = 6.0


class NotVerified(EntryRefused):
    """The platform says the link's worker, assignment (or submission) and HIT (or study) do not go together."""


@dataclass(frozen=True)
class Check:
    status: str          # verified | pending | unverified | trusted
    note: str = ""       # why unverified (shown to staff), or what the platform said
    active: bool = True  # Prolific: the submission is ACTIVE (a newcomer's must be)


def _not_ours(batch, platform: str, *, entry: bool, **ids) -> str:
    """Why the link's HIT or study is not this batch's ('' when it may be): launched for another
    batch only, or (at entry) the batch has HITs (studies) launched from here and this is none of
    them (the lab's other HIT of the same account: its assignment would pass GetAssignment, and be
    paid here, past this HIT's qualifications). A batch with none launched from here (a HIT made
    by hand) cannot tell, and takes any that is not another batch's; a participant let in so is
    not refused at pay because a HIT was launched from here since (``entry`` False)."""
    [field] = ids
    launched = Launch.objects.filter(platform=platform).exclude(**{field: ""})
    if launched.filter(batch=batch, **ids).exists():
        return ""
    if launched.filter(**ids).exclude(batch=batch).exists():
        return "another study's"
    if entry and launched.filter(batch=batch).exists():
        return "not one of this study's"
    return ""


# turkSubmitTo's host on live MTurk (www.mturk.com today; its worker site's host, should it send that)
LIVE_SUBMIT_HOSTS = ("www.mturk.com", "mturk.com", "worker.mturk.com")


@dataclass(frozen=True)
class Endpoint:
    """Which MTurk endpoint a HIT's assignments are on: ``live`` or the sandbox; ``launched``: a
    launch row of the batch says so, else the ``turkSubmitTo`` recorded at entry (a HIT made by hand)."""
    live: bool
    launched: bool

    @property
    def name(self) -> str:
        return "live" if self.live else "sandbox"


def launched_hits(batch) -> dict[str, bool]:
    """hit id -> live, for the HITs launched from here for ``batch`` (one query, for a page of rows)."""
    return dict(Launch.objects.filter(batch=batch, platform="mturk").exclude(hit_id="")
                .values_list("hit_id", "live"))


def mturk_endpoint(batch, hit_id: str, submit_to: str, *, launches: dict | None = None) -> Endpoint:
    """THE one answer to "sandbox or live?" for a HIT of ``batch`` (verification at entry and before
    pay, approve/reject/bonus, the review page's reconciliation): the launch row when the HIT was
    launched from here for this batch, else the ``turkSubmitTo`` recorded at entry
    (``Participant.submit_to``): live when its host is MTurk's live one (``www.mturk.com``, as MTurk
    sends it), the sandbox for anything else (``workersandbox.mturk.com``, none, a made-up host):
    nothing is live unless something says so. The link's value is the worker's to choose, but
    GetAssignment is asked on the endpoint it names, and an assignment exists on one endpoint
    only: a sandbox assignment claimed as live is "does not exist" there, and the other way round.
    The recorded value changes only with a new check (crowd/lobby.py), so entry and pay agree."""
    launches = launched_hits(batch) if launches is None else launches
    if hit_id and hit_id in launches:
        return Endpoint(live=bool(launches[hit_id]), launched=True)
    try:
        host = (urlsplit(submit_to or "").hostname or "").lower()
    except ValueError:   # not a URL (an odd [ ]): not MTurk's
        host = ""
    return Endpoint(live=host in LIVE_SUBMIT_HOSTS, launched=False)


def participant_endpoint(p, *, launches: dict | None = None) -> Endpoint | None:
    """The MTurk endpoint of a participant's assignment (None for any other platform)."""
    if p.platform != "mturk":
        return None
    return mturk_endpoint(p.batch, p.hit_id, p.submit_to, launches=launches)


MTURK_REFUSED = ("MTurk does not confirm this assignment for this study ({why}). Please open the study from the HIT "
           "you accepted on MTurk; if you did, return the HIT and contact the researcher.")


MTURK_PENDING = "MTurk confirms the assignment exists; HIT and worker are confirmed once it is submitted"


def check_mturk(batch, *, worker_id: str, assignment_id: str, hit_id: str, submit_to: str = "",
                entry: bool = True) -> Check:
    if not (assignment_id and hit_id):
        raise NotVerified(MTURK_REFUSED.format(why="the link has no assignment or HIT id"))
    not_ours = _not_ours(batch, "mturk", entry=entry, hit_id=hit_id)
    if not_ours:
        raise NotVerified(MTURK_REFUSED.format(why=f"the HIT is {not_ours}"))
    key = f"gt:verify:mturk:{batch.pk}:{hit_id}:{assignment_id}:{worker_id}"
    if cache.get(key):
        return Check(VERIFIED, "cached")
    try:
        answer = mturk.get_assignment(mturk.client(live=mturk_endpoint(batch, hit_id, submit_to).live, quick=True),
                                      assignment_id)
    except ClientError as exc:
        code, message = mturk.error_code(exc), mturk.error_message(exc)
        if code in mturk.UNAVAILABLE:
            return Check(UNVERIFIED, f"MTurk did not answer: {code}")
        if mturk.assignment_in_progress(exc):
            return Check(PENDING, MTURK_PENDING)
        if mturk.assignment_unknown(exc):
            raise NotVerified(MTURK_REFUSED.format(why="MTurk does not know it")) from None
        return Check(UNVERIFIED, f"MTurk answered {code}: {message}")
    except BotoCoreError as exc:   # no connection, a timeout, no credentials on this server
        return Check(UNVERIFIED, f"MTurk could not be asked: {type(exc).__name__}")
    a = answer.get("Assignment") or {}
    if a.get("HITId") != hit_id:
        raise NotVerified(MTURK_REFUSED.format(why="it belongs to another HIT"))
    if a.get("WorkerId") != worker_id:
        raise NotVerified(MTURK_REFUSED.format(why="it belongs to another worker"))
    cache.set(key, True, CACHE_S)
    return Check(VERIFIED, a.get("AssignmentStatus") or "accepted")


PROLIFIC_REFUSED = ("Prolific does not confirm this session for this study ({why}). Please open the study from "
                    "Prolific itself; if you did, return it on Prolific and contact the researcher.")


def check_prolific(batch, *, worker_id: str, study_id: str, session_id: str, entry: bool = True) -> Check:
    if not (study_id and session_id):
        raise NotVerified(PROLIFIC_REFUSED.format(why="the link has no STUDY_ID or SESSION_ID"))
    not_ours = _not_ours(batch, "prolific", entry=entry, study_id=study_id)
    if not_ours:
        raise NotVerified(PROLIFIC_REFUSED.format(why=f"the Prolific study is {not_ours}"))
    key = f"gt:verify:prolific:{batch.pk}:{study_id}:{session_id}:{worker_id}"
    if cache.get(key):
        return Check(VERIFIED, "cached")
    try:
        sub = prolific.Client(timeout=PROLIFIC_TIMEOUT_S).submission(session_id)
    except prolific.MissingToken:
        return Check(UNVERIFIED, "Prolific could not be asked: PROLIFIC_API_TOKEN is not set")
    except prolific.ProlificUnknown as exc:
        return Check(UNVERIFIED, f"Prolific did not answer: {str(exc)[:200]}")
    except prolific.ProlificError as exc:
        if exc.status in (400, 404):
            raise NotVerified(PROLIFIC_REFUSED.format(why="Prolific does not know it")) from None
        return Check(UNVERIFIED, f"Prolific answered {exc.status}")
    if (sub.get("study_id") or "").lower() != study_id:
        raise NotVerified(PROLIFIC_REFUSED.format(why="it belongs to another study"))
    if (sub.get("participant") or sub.get("participant_id") or "").lower() != worker_id:
        raise NotVerified(PROLIFIC_REFUSED.format(why="it belongs to another participant"))
    status = sub.get("status") or ""
    if status == "ACTIVE":
        cache.set(key, True, CACHE_S)
    return Check(VERIFIED, status, active=status == "ACTIVE")


def check_entry(batch, params) -> Check:
    """What the platform says about an entry link (``NotVerified`` when it says no)."""
    if params.platform == "mturk":
        return check_mturk(batch, worker_id=params.worker_id, assignment_id=params.assignment_id,
                           hit_id=params.hit_id, submit_to=params.submit_to)
    if params.platform == "prolific":
        return check_prolific(batch, worker_id=params.worker_id, study_id=params.study_id,
                              session_id=params.session_id)
    return Check(TRUSTED)


def record(participant, check: Check) -> list[str]:
    """Set the participant's verification fields from ``check``; returns the fields to save."""
    now = timezone.now()
    participant.verification = check.status
    participant.verify_tried_at = now
    participant.verify_note = check.note[:300]
    fields = ["verification", "verify_tried_at", "verify_note"]
    if check.status == VERIFIED:
        participant.verified_at = now
        fields.append("verified_at")
    return fields


def settle_pending(participant, assignment: dict) -> None:
    """A pending participant's assignment as MTurk lists it once submitted (ListAssignmentsForHIT,
    crowd/reconcile.py): verified when it names the participant's worker and HIT, refused (with
    why, for the lab) when not. Saved."""
    if participant.verification != PENDING or assignment.get("AssignmentId") != participant.assignment_id:
        return
    if assignment.get("HITId") != participant.hit_id:
        why = "it belongs to another HIT"
    elif assignment.get("WorkerId") != participant.worker_id:
        why = "it belongs to another worker"
    else:
        fields = record(participant, Check(VERIFIED, assignment.get("AssignmentStatus") or "Submitted"))
        Participant.objects.filter(pk=participant.pk).update(**{f: getattr(participant, f) for f in fields})
        return
    participant.verification, participant.verify_note = REFUSED, MTURK_REFUSED.format(why=why)[:300]
    Participant.objects.filter(pk=participant.pk).update(verification=REFUSED, verify_tried_at=timezone.now(),
                                                         verify_note=participant.verify_note)


def recheck(participant, *, force: bool = False) -> Check | None:
    """Ask the platform again about an unverified or pending participant (at most every
    ``RECHECK_S`` unless ``force``); saves and returns what it said, None when not asked.
    ``NotVerified`` propagates (the platform says the participant is not who they said)."""
    if participant.verification not in (UNVERIFIED, PENDING):
        return None
    tried = participant.verify_tried_at
    if not force and tried and (timezone.now() - tried).total_seconds() < RECHECK_S:
        return None
    batch = participant.batch
    try:
        if participant.platform == "mturk":
            check = check_mturk(batch, worker_id=participant.worker_id, assignment_id=participant.assignment_id,
                                hit_id=participant.hit_id, submit_to=participant.submit_to, entry=False)
        else:
            check = check_prolific(batch, worker_id=participant.worker_id, study_id=participant.study_id,
                                   session_id=participant.session_id, entry=False)
    except NotVerified as exc:
        participant.verification, participant.verify_note = REFUSED, str(exc)[:300]
        Participant.objects.filter(pk=participant.pk).update(verification=REFUSED, verify_tried_at=timezone.now(),
                                                             verify_note=participant.verify_note)
        raise
    fields = record(participant, check)
    Participant.objects.filter(pk=participant.pk).update(**{f: getattr(participant, f) for f in fields})
    return check
