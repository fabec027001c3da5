"""A protocol-level person for the stalling tests (issue 20, item 3): enters a batch through its
lab link over HTTP (httpx, cookies as a browser on 127.0.0.1 keeps them), and plays its seat over
the real websocket (``websockets``' threaded client, so it runs beside Playwright's sync API).
Every wait is for a frame or a state, with a deadline; no fixed sleeps."""
from __future__ import annotations

import json
import queue
import threading
import time
from collections import deque

import httpx
from websockets.sync.client import connect

from crowd.models import Participant
from live.models import Batch

from tests.support.factories import http_client, lab_query

WAIT_S = 30.0


class Person:
    """One worker driven by the protocol: its HTTP session, then its seat's socket."""

    def __init__(self, base: str, batch: Batch, name: str):
        self.base, self.http = base, http_client()
        page = self.http.get(f"{base}/b/{batch.slug}/?{lab_query(batch, name)}", follow_redirects=True)
        assert page.status_code == 200, page.text
        self.url = str(page.url).split("?")[0]
        self.post({"step": "consent", "agree": "yes"})
        self.participant = Participant.objects.get(token=self.url.rstrip("/").rsplit("/", 1)[-1])
        self.ws = None
        self.frames: queue.Queue = queue.Queue()
        self.unread: deque = deque()   # frames read while waiting for an action's ack, in order
        self.n = 0

    def post(self, data: dict, url: str | None = None) -> httpx.Response:
        url = url or self.url
        return self.http.post(url, data={**data, "csrfmiddlewaretoken": self.http.cookies.get("csrftoken", "")},
                              headers={"Referer": url, "Origin": self.base})

    def ready(self) -> None:
        assert self.post({"step": "ready"}).status_code == 302

    def play_url(self) -> str:
        """The game page's address, from the participant page (the lobby's redirect)."""
        r = self.http.get(self.url)
        assert r.status_code == 302 and "/m/" in r.headers["location"], (r.status_code, r.text[:300])
        return r.headers["location"]

    def join(self) -> dict:
        """Open the seat's socket and join; returns the joined frame."""
        play = self.play_url()
        self.match_id, self.token = play.split("/m/")[1].split("/")[0], play.split("seat=")[1]
        cookie = "; ".join(f"{c.name}={c.value}" for c in self.http.cookies.jar)
        self.ws = connect(f"ws://{self.base.split('://')[1]}/ws/match/{self.match_id}/", open_timeout=15,
                          additional_headers={"Cookie": cookie, "Origin": self.base})
        threading.Thread(target=self._read, daemon=True).start()
        self.ws.send(json.dumps({"type": "join", "token": self.token, "last_seq": None}))
        return self.wait_for(lambda f: f.get("type") == "joined")

    def _read(self) -> None:
        try:
            while True:
                self.frames.put(json.loads(self.ws.recv()))
        except Exception:   # closed
            pass

    def _next(self, left: float) -> dict | None:
        """The next frame: first those :meth:`act` set aside, then the socket's."""
        if self.unread:
            return self.unread.popleft()
        try:
            return self.frames.get(timeout=max(left, 0))
        except queue.Empty:
            return None

    def wait_for(self, predicate, timeout: float = WAIT_S) -> dict:
        """The first frame from now on that ``predicate`` accepts; the frames before it are passed."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0 and not self.unread:
                raise AssertionError(f"no such frame within {timeout} s")
            frame = self._next(left)
            if frame is not None and predicate(frame):
                return frame

    def wait_event(self, kind: str, timeout: float = WAIT_S) -> dict:
        """The next event of type ``kind`` (in a joined or events frame)."""
        found = self.wait_for(lambda f: any(e["type"] == kind for e in f.get("events") or []), timeout)
        return next(e for e in found["events"] if e["type"] == kind)

    def act(self, action: dict) -> dict:
        """Send ``action`` and wait for its ack (an error fails the test)."""
        self.n += 1
        action_id = f"a{self.n}"
        self.ws.send(json.dumps({"type": "action", "id": action_id, "action": action}))
        # Frames that come before the ack (the partner's events, the watchdog's turn_timed_out)
        # are kept for the next wait_for: a later wait for them must not miss one that came while
        # this ack was awaited (on a loaded machine the ack is slow and that window is wide).
        before = []
        deadline = time.monotonic() + WAIT_S
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no ack of {action_id} within {WAIT_S} s")
                try:
                    frame = self.frames.get(timeout=left)
                except queue.Empty:
                    continue
                if frame.get("id") == action_id and frame.get("type") in ("ack", "error"):
                    break
                before.append(frame)
        finally:
            self.unread.extend(before)
        assert frame["type"] == "ack", frame
        return frame

    def end_stalled(self) -> httpx.Response:
        return self.post({"seat": self.token}, url=f"{self.base}/m/{self.match_id}/end-stalled")

    def partner_gone(self) -> httpx.Response:
        return self.post({"seat": self.token}, url=f"{self.base}/m/{self.match_id}/partner-gone")

    def close(self) -> None:
        if self.ws is not None:
            self.ws.close()
            self.ws = None

    def done_page(self) -> str:
        r = self.http.get(self.url)
        assert r.status_code == 200, r.status_code
        return r.text
