"""Protocol-level players for the fault tests: a colors seat that plays like a browser tab does
(static/gt/client.js): join with the last seq it applied, apply events in seq order and ask to
resume on a gap, keep every action pending until it is answered, re-send pending actions with the
same id after a reconnect or a retryable error, and reconnect (to either server, as a load balancer
would) whenever the socket closes. Everything it saw is recorded for the accounting."""
from __future__ import annotations

import asyncio
import json
import random
from collections import Counter

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus


class SeatBot:
    def __init__(self, ports: list[int], match_id: str, token: str, role: str, start_port: int = 0,
                 pace_s: float = 0.25):
        self.ports, self.match_id, self.token, self.role = ports, match_id, token, role
        self.port_index = start_port
        self.pace_s = pace_s
        self.last_seq: int | None = 0      # 0: every event from the first (None would get a snapshot)
        self.events: dict[int, tuple[str, str]] = {}     # seq -> (type, actor), as applied
        self.view: dict = {}
        self.status = "active"
        self.pending: dict[str, dict] = {}                # id -> action, until answered
        self.sends: Counter = Counter()                   # id -> times sent
        self.final: dict[str, str] = {}                   # id -> "ack" or the refusal's code
        self.conflicts: list[tuple] = []                  # an id answered two different ways
        self.retryable: Counter = Counter()
        self.errors: Counter = Counter()                  # errors without an id
        self.resets = 0
        self.gaps = 0
        self.connects = 0
        self.ws = None
        self.joined = asyncio.Event()
        self.n = 0

    # ------------------------------------------------------------------------------- the socket
    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            port = self.ports[self.port_index % len(self.ports)]
            try:
                async with connect(f"ws://127.0.0.1:{port}/ws/match/{self.match_id}/", origin="http://127.0.0.1",
                                   open_timeout=10, close_timeout=2, max_queue=None, proxy=None) as ws:
                    self.ws = ws
                    self.connects += 1
                    await ws.send(json.dumps({"type": "join", "token": self.token, "last_seq": self.last_seq}))
                    async for raw in ws:
                        await self.receive(json.loads(raw))
            except (OSError, ConnectionClosed, InvalidHandshake, InvalidStatus, asyncio.TimeoutError):
                pass
            self.ws = None
            self.joined.clear()
            if not stop.is_set():
                self.port_index += 1            # the other server, as a load balancer would
                await asyncio.sleep(0.2 + random.random() * 0.3)

    async def send(self, data: dict) -> None:
        ws = self.ws
        if ws is not None and self.joined.is_set():
            try:
                await ws.send(json.dumps(data))
            except ConnectionClosed:
                pass

    async def receive(self, msg: dict) -> None:
        kind = msg.get("type")
        if kind == "joined":
            if msg.get("reset"):
                self.resets += 1
            self.apply(msg.get("events") or [])
            self.last_seq = msg["seq"]
            self.view, self.status = msg.get("view") or {}, msg.get("status")
            self.joined.set()
            for action_id, action in list(self.pending.items()):   # re-send what is unanswered
                await self.send_action(action_id, action)
        elif kind == "events":
            fresh = [e for e in msg["events"] if self.last_seq is None or e["seq"] > self.last_seq]
            if not fresh:
                return
            if self.last_seq is not None and fresh[0]["seq"] != self.last_seq + 1:
                self.gaps += 1
                await self.send({"type": "resume", "last_seq": self.last_seq})
                return
            self.apply(fresh)
            self.last_seq = msg["seq"]
            if msg.get("view") is not None:
                self.view = msg["view"]
            self.status = msg.get("status", self.status)
        elif kind == "ack":
            self.answer(msg["id"], "ack")
            seq = msg.get("seq") or 0
            if self.last_seq is not None and seq > self.last_seq:   # as the browser client does
                asyncio.get_running_loop().call_later(1.5, lambda: asyncio.ensure_future(self.expect(seq)))
        elif kind == "error":
            action_id = msg.get("id")
            if action_id is None:
                self.errors[msg.get("code")] += 1
            elif msg.get("retryable"):
                self.retryable[msg.get("code")] += 1
                if action_id in self.pending:
                    asyncio.get_running_loop().call_later(
                        0.3, lambda: asyncio.ensure_future(self.send_action(action_id, self.pending.get(action_id))))
            else:
                self.answer(action_id, msg.get("code"))

    async def expect(self, seq: int) -> None:
        if self.last_seq is not None and self.last_seq < seq:
            self.gaps += 1
            await self.send({"type": "resume", "last_seq": self.last_seq})

    def apply(self, events: list[dict]) -> None:
        for event in events:
            if self.last_seq is None or event["seq"] > self.last_seq:
                self.events[event["seq"]] = (event["type"], event["actor"])
                self.last_seq = event["seq"]

    def answer(self, action_id: str, outcome: str) -> None:
        previous = self.final.get(action_id)
        if previous is not None and previous != outcome:
            self.conflicts.append((action_id, previous, outcome))
        self.final.setdefault(action_id, outcome)
        self.pending.pop(action_id, None)

    async def send_action(self, action_id: str, action: dict | None) -> None:
        if action is None or action_id not in self.pending:
            return
        self.sends[action_id] += 1
        await self.send({"type": "action", "id": action_id, "action": action})

    # ------------------------------------------------------------------------------ the player
    def next_action(self) -> dict | None:
        view = self.view
        if not view or view.get("over") or self.status != "active":
            return None
        round_no = view.get("round")
        if self.role == "speaker":
            if not any(m.get("role") == "speaker" for m in view.get("messages", [])):
                return {"type": "chat", "text": f"the one on the left, round {round_no}", "round": round_no}
            return None
        if view.get("can_click"):
            return {"type": "click", "position": random.randrange(3), "round": round_no}
        if random.random() < 0.2:
            return {"type": "chat", "text": "which one?", "round": round_no}
        return None

    async def play(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            await asyncio.sleep(self.pace_s * (0.5 + random.random()))
            if self.pending or not self.joined.is_set():
                continue
            action = self.next_action()
            if action is None:
                continue
            self.n += 1
            action_id = f"{self.role[0]}{self.n}-{random.getrandbits(32):08x}"
            self.pending[action_id] = action
            await self.send_action(action_id, action)


async def play_matches(bots: list[SeatBot], seconds: float, during=None) -> None:
    """Run ``bots`` for ``seconds``; ``during`` (a coroutine function) runs meanwhile (the fault)."""
    stop = asyncio.Event()
    tasks = [asyncio.create_task(b.run(stop)) for b in bots] + [asyncio.create_task(b.play(stop)) for b in bots]
    try:
        if during is not None:
            await during()
        await asyncio.sleep(seconds)
    finally:
        stop.set()
        await drain(bots)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def drain(bots: list[SeatBot], timeout: float = 60) -> None:
    """Keep sockets open until every pending action is answered (or ``timeout``)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    keep = asyncio.Event()
    runners = [asyncio.create_task(b.run(keep)) for b in bots if b.ws is None]
    while loop.time() < deadline and any(b.pending for b in bots):
        await asyncio.sleep(0.2)
    await asyncio.sleep(1.0)   # the last events in flight
    keep.set()
    for task in runners:
        task.cancel()
    await asyncio.gather(*runners, return_exceptions=True)
