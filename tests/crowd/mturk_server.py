"""A local HTTP server speaking MTurk's JSON protocol for the calls GroundTalk makes (tests only):
records each operation and its parameters, answers in the documented response shapes, and can be
told to answer one operation with an error. A server process reaches it through GT_MTURK_ENDPOINT."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PREFIX = "MTurkRequesterServiceV20170117."


class MTurkRecorder:
    def __init__(self):
        self.calls: list[tuple[str, dict]] = []
        self.fail: dict[str, tuple[str, str]] = {}   # operation -> (error code, message), answered once
        self.tokens: set[str] = set()
        self.paid: list[dict] = []
        self.lose_answer: set[str] = set()   # operations carried out whose answer is then dropped
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
                    if failing:
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

    def answer(self, op: str, p: dict) -> tuple[int, dict]:
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
            return {"HIT": {"HITId": f"HIT{n}", "HITTypeId": p["HITTypeId"], "HITGroupId": f"G{n}",
                            "HITStatus": "Assignable", "MaxAssignments": p["MaxAssignments"]}}
        if op == "GetAssignment":
            return {"Assignment": {"AssignmentId": p["AssignmentId"], "AssignmentStatus": "Submitted"}}
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
