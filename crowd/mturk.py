"""Amazon Mechanical Turk through boto3 (issue 12): a thin client, sandbox unless told otherwise.

Credentials come from boto3's own chain (``AWS_ACCESS_KEY_ID`` / ``AWS_SECRET_ACCESS_KEY``, a
profile in ``AWS_PROFILE``, an instance role); nothing here stores them. ``GT_MTURK_ENDPOINT``
overrides the endpoint (a local server in a test); otherwise the sandbox's or the live one, which a
caller must ask for with ``live=True``.
"""
from __future__ import annotations

from dataclasses import dataclass
from xml.sax.saxutils import escape
import datetime as dt

from groundtalk_web import env

SANDBOX_ENDPOINT = "https://mturk-requester-sandbox.us-east-1.amazonaws.com"
LIVE_ENDPOINT = "https://mturk-requester.us-east-1.amazonaws.com"
SANDBOX_WORKER_SUBMIT = "https://workersandbox.mturk.com/mturk/externalSubmit"
LIVE_WORKER_SUBMIT = "https://www.mturk.com/mturk/externalSubmit"

# MTurk's system qualification types.
QUAL_LOCALE = "00000000000000000071"
QUAL_APPROVAL_RATE = "000000000000000000L0"
QUAL_APPROVED_HITS = "00000000000000000040"

# Errors worth trying again (the call did not happen); anything else is reported as it came.
RETRYABLE = ("ThrottlingException", "ServiceUnavailable", "ServiceUnavailableException")


# Errors that mean MTurk could not be asked (as opposed to MTurk answering "no").
UNAVAILABLE = RETRYABLE + ("ServiceFault",)


def client(*, live: bool = False, quick: bool = False):
    """``quick``: for a call a waiting person depends on (the entry check): short timeouts, one retry."""
    import boto3   # here: boto3 takes over a second to load; only MTurk calls need it
    from botocore.config import Config

    endpoint = env.load().GT_MTURK_ENDPOINT or (LIVE_ENDPOINT if live else SANDBOX_ENDPOINT)
    # botocore retries throttling itself (standard mode, 3 attempts) before an error reaches us.
    config = (Config(retries={"mode": "standard", "total_max_attempts": 2}, connect_timeout=3, read_timeout=5)
              if quick else Config(retries={"mode": "standard", "total_max_attempts": 3}))
    return boto3.client("mturk", region_name="us-east-1", endpoint_url=endpoint, config=config)


def external_question(url: str, frame_height: int = 0) -> str:
    """MTurk's ExternalQuestion XML (frame height 0: the worker's window)."""
    return ('<ExternalQuestion xmlns="http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/'
            '2006-07-14/ExternalQuestion.xsd">'
            f"<ExternalURL>{escape(url)}</ExternalURL><FrameHeight>{int(frame_height)}</FrameHeight>"
            "</ExternalQuestion>")


def dollars(cents: int) -> str:
    """MTurk's amounts are strings of dollars: 125 -> "1.25"."""
    return f"{int(cents) // 100}.{int(cents) % 100:02d}"


@dataclass(frozen=True)
class HitSpec:
    title: str
    description: str
    keywords: str
    reward_cents: int
    assignments: int
    duration_s: int
    lifetime_s: int
    auto_approval_delay_s: int
    url: str
    frame_height: int = 0
    locales: tuple[str, ...] = ()          # ISO country codes, e.g. ("US", "GB")
    min_approval_rate: int | None = None   # percent
    min_approved_hits: int | None = None
    block_qualification_id: str = ""      # the project's block qualification: workers holding it are kept out
    exclude_qualification_ids: tuple[str, ...] = ()  # "has not taken part in studies X, Y"

    def qualifications(self) -> list[dict]:
        q: list[dict] = []
        if self.locales:
            q.append({"QualificationTypeId": QUAL_LOCALE, "Comparator": "In",
                      "LocaleValues": [{"Country": c} for c in self.locales],
                      "ActionsGuarded": "DiscoverPreviewAndAccept"})
        if self.min_approval_rate is not None:
            q.append({"QualificationTypeId": QUAL_APPROVAL_RATE, "Comparator": "GreaterThanOrEqualTo",
                      "IntegerValues": [int(self.min_approval_rate)], "ActionsGuarded": "DiscoverPreviewAndAccept"})
        if self.min_approved_hits is not None:
            q.append({"QualificationTypeId": QUAL_APPROVED_HITS, "Comparator": "GreaterThanOrEqualTo",
                      "IntegerValues": [int(self.min_approved_hits)], "ActionsGuarded": "DiscoverPreviewAndAccept"})
        for qid in filter(None, (self.block_qualification_id, *self.exclude_qualification_ids)):
            q.append({"QualificationTypeId": qid, "Comparator": "DoesNotExist",
                      "ActionsGuarded": "DiscoverPreviewAndAccept"})
        return q

    def hit_type_params(self) -> dict:
        return {"AutoApprovalDelayInSeconds": int(self.auto_approval_delay_s),
                "AssignmentDurationInSeconds": int(self.duration_s),
                "Reward": dollars(self.reward_cents), "Title": self.title, "Keywords": self.keywords,
                "Description": self.description, "QualificationRequirements": self.qualifications()}

    def hit_params(self, hit_type_id: str, annotation: str) -> dict:
        return {"HITTypeId": hit_type_id, "MaxAssignments": int(self.assignments),
                "LifetimeInSeconds": int(self.lifetime_s),
                "Question": external_question(self.url, self.frame_height),
                "RequesterAnnotation": annotation[:255]}


def create_hit(mt, spec: HitSpec, *, annotation: str) -> dict:
    """Create the HIT type, then the HIT; returns {hit_type_id, hit_id, answer}."""
    ht = mt.create_hit_type(**spec.hit_type_params())
    hit = mt.create_hit_with_hit_type(**spec.hit_params(ht["HITTypeId"], annotation))["HIT"]
    return {"hit_type_id": ht["HITTypeId"], "hit_id": hit["HITId"],
            "answer": {"HITId": hit["HITId"], "HITTypeId": hit.get("HITTypeId", ht["HITTypeId"]),
                       "HITGroupId": hit.get("HITGroupId", ""), "HITStatus": hit.get("HITStatus", "")}}


def add_assignments(mt, hit_id: str, n: int, token: str) -> dict:
    return mt.create_additional_assignments_for_hit(HITId=hit_id, NumberOfAdditionalAssignments=int(n),
                                                    UniqueRequestToken=token[:64])


def expire(mt, hit_id: str) -> dict:
    """Expire now (MTurk has no pause: a HIT is stopped by moving its expiration to the past)."""
    return mt.update_expiration_for_hit(HITId=hit_id, ExpireAt=dt.datetime(2015, 1, 1, tzinfo=dt.timezone.utc))


def approve(mt, assignment_id: str, feedback: str = "") -> dict:
    kw = {"AssignmentId": assignment_id}
    if feedback:
        kw["RequesterFeedback"] = feedback[:1024]
    return mt.approve_assignment(**kw)


def reject(mt, assignment_id: str, reason: str) -> dict:
    return mt.reject_assignment(AssignmentId=assignment_id, RequesterFeedback=reason[:1024])


def send_bonus(mt, *, worker_id: str, assignment_id: str, cents: int, reason: str, token: str) -> dict:
    """MTurk keeps ``UniqueRequestToken`` for 24 hours: the same token is never paid twice."""
    return mt.send_bonus(WorkerId=worker_id, BonusAmount=dollars(cents), AssignmentId=assignment_id,
                         Reason=reason[:1024], UniqueRequestToken=token[:64])


def ensure_block_qualification(mt, name: str) -> str:
    """The project's soft-block qualification: created once (a worker holding it cannot see our HITs)."""
    answer = mt.create_qualification_type(
        Name=name, Description="Workers asked not to take part in further GroundTalk studies.",
        QualificationTypeStatus="Active")
    return answer["QualificationType"]["QualificationTypeId"]


def soft_block(mt, *, worker_id: str, qualification_id: str) -> dict:
    return mt.associate_qualification_with_worker(QualificationTypeId=qualification_id, WorkerId=worker_id,
                                                  IntegerValue=1, SendNotification=False)


def error_code(exc: Exception) -> str:
    resp = getattr(exc, "response", None) or {}
    return str((resp.get("Error") or {}).get("Code") or type(exc).__name__)


def error_message(exc: Exception) -> str:
    resp = getattr(exc, "response", None) or {}
    return str((resp.get("Error") or {}).get("Message") or exc)


def get_assignment(mt, assignment_id: str) -> dict:
    """GetAssignment: {"Assignment": {...}, "HIT": {...}}, only for this requester's Submitted,
    Approved or Rejected assignments (an accepted one is ``assignment_in_progress``, an unknown
    one ``assignment_unknown``; crowd/verify.py)."""
    return mt.get_assignment(AssignmentId=assignment_id)


def _turk_code(exc: Exception) -> str:
    """MTurk's TurkErrorCode of a RequestError (botocore puts the modeled error's fields at the top)."""
    resp = getattr(exc, "response", None) or {}
    return str(resp.get("TurkErrorCode") or (resp.get("Error") or {}).get("TurkErrorCode") or "")


def assignment_in_progress(exc: Exception) -> bool:
    """GetAssignment's RequestError for an assignment accepted and not yet submitted: "This operation
    can be called with a status of: Submitted,Approved,Rejected" (InvalidAssignmentState)."""
    return error_code(exc) == "RequestError" and (
        _turk_code(exc).endswith("InvalidAssignmentState")
        or "can be called with a status of" in error_message(exc))


def assignment_unknown(exc: Exception) -> bool:
    """GetAssignment's RequestError for an id MTurk does not have (or another requester's):
    "Assignment <id> does not exist." (AssignmentDoesNotExist)."""
    return error_code(exc) == "RequestError" and (
        _turk_code(exc).endswith("AssignmentDoesNotExist")
        or ("Assignment " in error_message(exc) and "does not exist" in error_message(exc)))


def submitted_assignments(mt, hit_id: str) -> list[dict]:
    """Every Submitted assignment of the HIT (ListAssignmentsForHIT, all pages)."""
    out, token = [], None
    while True:
        kw = {"HITId": hit_id, "MaxResults": 100, "AssignmentStatuses": ["Submitted"]}
        if token:
            kw["NextToken"] = token
        page = mt.list_assignments_for_hit(**kw)
        out.extend(page.get("Assignments") or [])
        token = page.get("NextToken")
        if not token or not page.get("Assignments"):
            return out
