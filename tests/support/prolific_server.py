"""A local HTTP server that records Prolific API requests and answers in Prolific's documented
shapes (tests only; the client reaches it through GT_PROLIFIC_API).

It keeps submissions as Prolific does (issue 21): ``start(participant, study)`` is a participant
starting the study (an ACTIVE submission; Prolific's ids are 24 hexadecimal digits), ``finish``
moves it to AWAITING REVIEW, ``give_back`` to RETURNED. ``submissions/{id}/`` answers one (404
otherwise) and ``studies/{id}/submissions/`` lists them (``page_size`` per page, ``_links.next``).
``down = True`` answers every request 503, as a platform that is down."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Recorder:
    def __init__(self):
        self.requests: list[dict] = []
        self.fail: dict[str, tuple[int, dict]] = {}   # path -> (status, body) answered once
        self.down = False
        self.page_size = 100
        self.subs: dict[str, dict] = {}   # submission id -> submission
        self._lock = threading.Lock()
        rec = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def _answer(self, method):
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n) if n else b""
                body = json.loads(raw) if raw else None
                path = self.path.split("/api/v1/", 1)[-1]
                with rec._lock:
                    rec.requests.append({"method": method, "path": path, "body": body,
                                         "auth": self.headers.get("Authorization")})
                    failing = rec.fail.pop(path, None)
                    if rec.down:
                        failing = (503, {"error": {"status": 503, "title": "Service Unavailable",
                                                   "detail": "Please try again later."}})
                status, out = failing or rec.route(method, path, body)
                data = json.dumps(out).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self):
                self._answer("POST")

            def do_GET(self):
                self._answer("GET")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/api/v1/"

    def start(self, participant: str, study: str) -> str:
        with self._lock:
            sid = f"{0x5e55000000000000000000 + len(self.subs) + 1:024x}"
            self.subs[sid] = {"id": sid, "study_id": study, "participant": participant, "status": "ACTIVE",
                              "started_at": "2026-11-26T14:00:00.000000Z", "completed_at": None,
                              "entered_code": None, "parent_study_id": None, "bonus_payments": [],
                              "return_requested": None}
            return sid

    def finish(self, sid: str, code: str = "C1A2B3C4") -> None:
        self.subs[sid].update(status="AWAITING REVIEW", completed_at="2026-11-26T14:10:00.000000Z",
                              entered_code=code)

    def give_back(self, sid: str) -> None:
        self.subs[sid].update(status="RETURNED")

    def _study_submissions(self, study: str, query: str):
        from urllib.parse import parse_qs

        rows = [{"id": s["id"], "participant_id": s["participant"], "status": s["status"],
                 "started_at": s["started_at"], "completed_at": s["completed_at"], "study_code": s["entered_code"]}
                for s in self.subs.values() if s["study_id"] == study]
        page = int((parse_qs(query).get("page") or ["1"])[0])
        start = (page - 1) * self.page_size
        nxt = (f"{self.base}studies/{study}/submissions/?page={page + 1}"
               if start + self.page_size < len(rows) else None)
        return 200, {"results": rows[start:start + self.page_size],
                     "_links": {"self": {"href": f"{self.base}studies/{study}/submissions/?page={page}"},
                                "next": {"href": nxt}, "previous": {"href": None}},
                     "meta": {"count": len(rows)}}

    def route(self, method: str, path: str, body):
        path, _, query = path.partition("?")
        if method == "GET" and path.startswith("submissions/") and path.count("/") == 2:
            sub = self.subs.get(path.split("/")[1])
            return (200, dict(sub)) if sub else (404, {"error": {"status": 404, "title": "Not found",
                                                                  "detail": "Not found."}})
        if method == "GET" and path.startswith("studies/") and path.endswith("/submissions/"):
            return self._study_submissions(path.split("/")[1], query)
        if method == "POST" and path == "studies/":
            return 201, {"id": "60f6acb180a2b1d7c5a3e1f0", "status": "UNPUBLISHED", **(body or {})}
        if method == "POST" and path.startswith("studies/") and path.endswith("/transition/"):
            study = path.split("/")[1]
            return 200, {"id": study, "status": {"PUBLISH": "ACTIVE", "PAUSE": "PAUSED", "START": "ACTIVE",
                                                   "STOP": "COMPLETED"}[body["action"]]}
        if method == "POST" and path.startswith("submissions/") and path.endswith("/transition/"):
            sub = path.split("/")[1]
            return 200, {"id": sub, "status": {"APPROVE": "APPROVED", "REJECT": "REJECTED"}[body["action"]]}
        if method == "POST" and path == "submissions/bonus-payments/":
            lines = [ln.split(",") for ln in body["csv_bonuses"].splitlines()]
            amount = sum(round(float(a) * 100) for _, a in lines)
            return 201, {"id": f"bulk{len(self.requests)}", "study": body["study_id"], "amount": amount,
                         "fees": round(amount / 3), "vat": 0, "total_amount": amount + round(amount / 3)}
        if method == "POST" and path.startswith("bulk-bonus-payments/") and path.endswith("/pay/"):
            return 202, {}
        return 404, {"error": {"status": 404, "detail": "Not found."}}

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *a):
        self.server.shutdown()
        self.server.server_close()
