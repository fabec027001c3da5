"""A local HTTP server speaking MTurk's JSON protocol for the calls GroundTalk makes (tests only):
records each operation and its parameters, answers in the documented response shapes, and can be
told to answer one operation with an error. A server process reaches it through GT_MTURK_ENDPOINT.

It also keeps HITs and their assignments as MTurk does (issue 21): ``accept(worker, hit)`` is a
worker accepting a HIT (an assignment id of MTurk's 30 capitals and digits), ``submit`` submits it.
GetAssignment answers as MTurk's API 2017-01-17 documents it ("retrieves an assignment with an
AssignmentStatus value of Submitted, Approved, or Rejected"): a submitted one -> {"Assignment",
"HIT"}; one accepted and not yet submitted -> HTTP 400 RequestError "This operation can be called
with a status of: Submitted,Approved,Rejected (...)" (TurkErrorCode
AWS.MechanicalTurk.InvalidAssignmentState, the shape MTurk gives for an assignment in the wrong
state); any other id -> RequestError "Assignment ... does not exist." (AssignmentDoesNotExist, as
for another requester's assignment). ListAssignmentsForHIT pages only Submitted, Approved and
Rejected ones, by status (MaxResults, NextToken). ``down = True`` answers every call 503 ServiceUnavailable, as a
platform that is down."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PREFIX = "MTurkRequesterServiceV20170117."
# The Assignment structure's AssignmentStatus: an accepted, unsubmitted assignment has none of these.
ASSIGNMENT_STATUSES = ("Submitted", "Approved", "Rejected")


class MTurkRecorder:
    def __init__(self):
        self.calls: list[tuple[str, dict]] = []
        self.fail: dict[str, tuple[str, str]] = {}   # operation -> (error code, message), answered once
        self.tokens: set[str] = set()
        self.paid: list[dict] = []
        self.lose_answer: set[str] = set()   # operations carried out whose answer is then dropped
        self.down = False                    # every call answered 503 ServiceUnavailable
        self.hits: dict[str, dict] = {}      # HITId -> HIT
        self.assignments: dict[str, dict] = {}   # AssignmentId -> Assignment
        self._lock = threading.Lock()
        rec = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                op = (self.headers.get("X-Amz-Target") or "").removeprefix(PREFIX)
                n = int(self.headers.get("Content-Length") or 0)
                params = json.loads(self.rfile.read(n) or b"{}")
                with rec._lock:
                    rec.calls.append((op, params))
                    failing = rec.fail.pop(op, None)
                    if rec.down:
                        status, out = 503, {"__type": "ServiceUnavailableException",
                                            "Message": "Service is unavailable. Please try again later."}
                    elif failing:
                        status, out = 400, {"__type": failing[0], "Message": failing[1]}
                    else:
                        status, out = rec.answer(op, params)
                    lost = op in rec.lose_answer
                    rec.lose_answer.discard(op)
                if lost:   # done, but the connection drops before the answer: the client sees no answer
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                data = json.dumps(out).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/x-amz-json-1.1")
                self.send_header("x-amzn-RequestId", "req-1")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def ops(self) -> list[str]:
        return [op for op, _ in self.calls]

    # ------------------------------------------------------------------ HITs and assignments
    def hit(self, hit_id: str = "", annotation: str = "") -> str:
        """A HIT of this requester (as CreateHITWithHITType would make it)."""
        with self._lock:
            hit_id = hit_id or f"3HIT{len(self.hits) + 1:026d}"
            self.hits[hit_id] = {"HITId": hit_id, "HITTypeId": "3HTYPE0000000000000000000000001",
                                 "HITGroupId": "3HGROUP000000000000000000000001", "CreationTime": 1700000000,
                                 "Title": "GroundTalk", "HITStatus": "Assignable", "MaxAssignments": 9,
                                 "RequesterAnnotation": annotation,
                                 "NumberOfAssignmentsPending": 0, "NumberOfAssignmentsAvailable": 9,
                                 "NumberOfAssignmentsCompleted": 0}
            return hit_id

    def accept(self, worker_id: str, hit_id: str) -> str:
        """The worker accepts the HIT: a new assignment (MTurk's ids are 30 capitals and digits)."""
        with self._lock:
            n = len(self.assignments) + 1
            aid = f"3ASG{n:026d}"
            self.assignments[aid] = {"AssignmentId": aid, "WorkerId": worker_id, "HITId": hit_id,
                                     "AcceptTime": 1700000000 + n, "Deadline": 1700003600 + n}
            return aid

    def submit(self, assignment_id: str) -> None:
        with self._lock:
            a = self.assignments[assignment_id]
            a.update(AssignmentStatus="Submitted", SubmitTime=1700000500, AutoApprovalTime=1700259700,
                     Answer='<?xml version="1.0" encoding="UTF-8"?><QuestionFormAnswers xmlns="http://mechanical'
                            'turk.amazonaws.com/AWSMechanicalTurkDataSchemas/2005-10-01/QuestionFormAnswers.xsd">'
                            '</QuestionFormAnswers>')

    def _get_assignment(self, p: dict) -> tuple[int, dict]:
        a = self.assignments.get(p.get("AssignmentId", ""))
        if a is None:
            return 400, {"__type": "RequestError", "TurkErrorCode": "AWS.MechanicalTurk.AssignmentDoesNotExist",
                         "Message": f"Assignment {p.get('AssignmentId')} does not exist. (1700000000000)"}
        if a.get("AssignmentStatus") not in ASSIGNMENT_STATUSES:   # accepted, not yet submitted
            return 400, {"__type": "RequestError", "TurkErrorCode": "AWS.MechanicalTurk.InvalidAssignmentState",
                         "Message": "This operation can be called with a status of: Submitted,Approved,Rejected "
                                    "(1700000000000)"}
        hit = self.hits.get(a["HITId"]) or {"HITId": a["HITId"]}
        return 200, {"Assignment": dict(a), "HIT": dict(hit)}

    def _list_assignments(self, p: dict) -> tuple[int, dict]:
        if p.get("HITId") not in self.hits:
            return 400, {"__type": "RequestError", "TurkErrorCode": "AWS.MechanicalTurk.HITDoesNotExist",
                         "Message": f"Hit {p.get('HITId')} does not exist. (1700000000000)"}
        statuses = set(p.get("AssignmentStatuses") or ASSIGNMENT_STATUSES) & set(ASSIGNMENT_STATUSES)
        rows = [dict(a) for a in self.assignments.values()
                if a["HITId"] == p["HITId"] and a.get("AssignmentStatus") in statuses]
        start = int(p.get("NextToken") or 0)
        size = int(p.get("MaxResults") or 10)
        page = rows[start:start + size]
        out = {"NumResults": len(page), "Assignments": page}
        if start + size < len(rows):
            out["NextToken"] = str(start + size)
        return 200, out

    def answer(self, op: str, p: dict) -> tuple[int, dict]:
        if op == "GetAssignment":
            return self._get_assignment(p)
        if op == "ListAssignmentsForHIT":
            return self._list_assignments(p)
        if op == "SendBonus" and p.get("UniqueRequestToken") in self.tokens:
            # MTurk refuses a token it has seen in the last 24 hours: the second request pays nothing
            return 400, {"__type": "RequestError", "Message": "The UniqueRequestToken was used before."}
        if op == "SendBonus":
            self.tokens.add(p.get("UniqueRequestToken"))
            self.paid.append({"WorkerId": p["WorkerId"], "BonusAmount": p["BonusAmount"],
                              "AssignmentId": p["AssignmentId"], "Reason": p["Reason"], "GrantTime": 1700000000})
        if op == "ListBonusPayments":
            rows = [b for b in self.paid if b["AssignmentId"] == p.get("AssignmentId")]
            return 200, {"NumResults": len(rows), "BonusPayments": rows}
        return 200, self._ok(op, p)

    def _ok(self, op: str, p: dict) -> dict:
        n = len(self.calls)
        if op == "CreateHITType":
            return {"HITTypeId": f"HT{n}"}
        if op == "CreateHITWithHITType":
            hit = {"HITId": f"HIT{n}", "HITTypeId": p["HITTypeId"], "HITGroupId": f"G{n}",
                   "HITStatus": "Assignable", "MaxAssignments": p["MaxAssignments"],
                   "RequesterAnnotation": p.get("RequesterAnnotation", "")}
            self.hits[hit["HITId"]] = hit   # its assignments can be listed (accept, submit)
            return {"HIT": hit}
        if op == "CreateQualificationType":
            return {"QualificationType": {"QualificationTypeId": f"3Q{n}", "Name": p["Name"],
                                          "QualificationTypeStatus": "Active"}}
        return {}

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *a):
        self.server.shutdown()
        self.server.server_close()
