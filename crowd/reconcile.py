"""The review page asks the platforms what was submitted (issue 21, item 3).

MTurk approves a submitted assignment by itself after the HIT's auto-approval delay, and Prolific
can approve by completion code: work the lab never saw would be paid unseen. So the review page
lists, besides the batch's participants, what the platforms hold that no finished participant
accounts for:

* MTurk: every ``Submitted`` assignment of each HIT launched for the batch (ListAssignmentsForHIT,
  all pages) whose assignment is not a finished participant's;
* Prolific: every submission of each study launched for the batch that is ``AWAITING REVIEW``
  (or still ``ACTIVE``) and is not a finished participant's.

A listed assignment names its worker and HIT: a participant whose assignment MTurk only
confirmed as in progress at entry (``pending``, crowd/verify.py) is settled from it here, verified
or refused, as GetAssignment would before pay (``verify.settle_pending``).

Each row says why: no participant has it, its participant has not finished (or finished with an id
the platform never confirmed, crowd/verify.py), or it is another assignment of a participant who
took part with a different one (crowd.identity; a worker takes
part once per batch). A platform that cannot be asked is named in ``errors`` so an empty list is
never mistaken for "nothing to see".
"""
from __future__ import annotations

from dataclasses import dataclass, field

from botocore.exceptions import BotoCoreError, ClientError

from crowd import mturk, prolific, verify
from crowd.models import Launch, Participant
from live.models import Batch

PROLIFIC_OPEN = ("AWAITING REVIEW", "ACTIVE")


@dataclass
class Unseen:
    platform: str
    worker_id: str
    pay_id: str           # the assignment or submission id
    where: str            # the HIT or study
    status: str           # the platform's status
    why: str
    participant: Participant | None = None


@dataclass
class Report:
    rows: list[Unseen] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    asked: list[str] = field(default_factory=list)   # the HITs and studies asked


def _index(batch: Batch) -> tuple[dict, dict]:
    """pay id -> participant, for the participants' current ids and for every other one they came with."""
    current, earlier = {}, {}
    for p in batch.participants.all():
        for pid in filter(None, (p.assignment_id, p.session_id)):
            current[pid] = p
        for seen in p.assignments or []:
            for pid in filter(None, (seen.get("assignment_id"), seen.get("session_id"))):
                earlier.setdefault(pid, p)
    return current, earlier


def _why(pay_id: str, current: dict, earlier: dict) -> tuple[str, Participant | None] | None:
    p = current.get(pay_id)
    if p is not None:
        if p.state == Participant.State.DONE and p.verification in (verify.UNVERIFIED, verify.PENDING, verify.REFUSED):
            return (f"finished, but the platform has not confirmed {p.worker_id}'s id ({p.verification}): approving "
                    "here asks it first; the platform's own auto-approval does not"), p
        if p.state == Participant.State.DONE:
            return None
        return f"its participant has not finished here ({p.state})", p
    p = earlier.get(pay_id)
    if p is not None:
        return f"another assignment of {p.worker_id}, who takes part with {p.assignment_id or p.session_id}", p
    return "no participant here has it (never entered, or entered with another id)", None


def unseen(batch: Batch, *, clients: dict | None = None) -> Report:
    clients = {} if clients is None else clients
    report = Report()
    current, earlier = _index(batch)
    launches = Launch.objects.filter(batch=batch).exclude(status="failed")
    for launch in launches.filter(platform="mturk").exclude(hit_id=""):
        report.asked.append(f"MTurk HIT {launch.hit_id}")
        try:
            key = ("mturk", launch.live)   # a launched HIT's endpoint is its launch row's (verify.mturk_endpoint)
            if key not in clients:
                clients[key] = mturk.client(live=launch.live)
            assignments = mturk.submitted_assignments(clients[key], launch.hit_id)
        except (ClientError, BotoCoreError) as exc:
            report.errors.append(f"MTurk could not list HIT {launch.hit_id}'s submitted assignments: "
                                 f"{mturk.error_code(exc)}: {mturk.error_message(exc)}")
            continue
        for a in assignments:
            p = current.get(a.get("AssignmentId", ""))
            if p is not None and p.platform == "mturk" and p.verification == verify.PENDING:
                verify.settle_pending(p, a)
            why = _why(a.get("AssignmentId", ""), current, earlier)
            if why:
                report.rows.append(Unseen("mturk", a.get("WorkerId", ""), a.get("AssignmentId", ""), launch.hit_id,
                                          a.get("AssignmentStatus", ""), *why))
    studies = launches.filter(platform="prolific").exclude(study_id="")
    if studies.exists():
        try:
            pc = clients.get("prolific") or prolific.Client()
            clients["prolific"] = pc
        except prolific.MissingToken:
            report.errors.append("Prolific could not be asked: PROLIFIC_API_TOKEN is not set on the server.")
            studies = studies.none()
    for launch in studies:
        report.asked.append(f"Prolific study {launch.study_id}")
        try:
            subs = clients["prolific"].submissions(launch.study_id)
        except (prolific.ProlificError, prolific.ProlificUnknown) as exc:
            report.errors.append(f"Prolific could not list study {launch.study_id}'s submissions: {exc}")
            continue
        for s in subs:
            if s.get("status") not in PROLIFIC_OPEN:
                continue
            why = _why(s.get("id", ""), current, earlier)
            if why:
                report.rows.append(Unseen("prolific", s.get("participant_id") or s.get("participant") or "",
                                          s.get("id", ""), launch.study_id, s.get("status", ""), *why))
    return report
