"""A local HTTP server that records Prolific API requests and answers in Prolific's documented
shapes (tests only; the client reaches it through GT_PROLIFIC_API)."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Recorder:
    def __init__(self):
        self.requests: list[dict] = []
        self.fail: dict[str, tuple[int, dict]] = {}   # path -> (status, body) answered once
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

    def route(self, method: str, path: str, body):
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
        if method == "GET" and path.endswith("/submissions/"):
            return 200, {"results": [{"id": "sub1", "participant_id": "P1", "status": "AWAITING REVIEW"}]}
        return 404, {"error": {"status": 404, "detail": "Not found."}}

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *a):
        self.server.shutdown()
        self.server.server_close()
