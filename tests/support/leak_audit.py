"""The leak audit: every frame and page a seat gets, checked against what its role must not know.

One audited match (:func:`audit_match`): a batch, two participants and a match made through the
match service; every seat a real browser-like client of the real server (uvicorn, the
``live_server_url`` fixture): an HTTP session that opens the participant page, polls the status,
opens the game page and fetches the images its view names, and a websocket that joins with the
session's cookie. The audited role plays the game's own random legal moves
(``games/<game>/hidden.random_action``) with illegal actions, bad frames, a resume from an old
``last_seq`` (events replayed from the log: a gap fill), a reconnect with an old ``last_seq`` and
one with none (a snapshot) mixed in; the other seat is played by the game's registered agent. Both
sockets record every frame (joined, events, acks, errors, presence, pong). After the match the log
is replayed to the state after every seq, and every frame is checked against
``hidden_from(state, role)`` (games/hidden.py): an event against the state of its own seq, the
rest of a frame against the state of the frame's seq (frames without a seq: the last one the seat
saw). The pages are checked at the start (the first state) and after the end (the last).
"""
from __future__ import annotations

import asyncio
import json
import random
from collections import Counter
from dataclasses import dataclass, field

import httpx
from websockets.asyncio.client import connect

from agents.registry import all_agents
from games.hidden import Hidden, leaks, text_leaks
from crowd.models import Participant
from live.models import Batch, Match, MatchEvent, Seat
from games.registry import GAMES
from live.services import SeatSpec, match_create

STEP_CAP = 400             # moves of both seats before the audit stops a match that does not end
FRAME_WAIT_S = 30.0        # generous: a loaded machine is slow, never wrong
POOL_SIZE = 6              # a GuessWhich pool: each image is rendered (and prewarmed at two sizes) on the server
RESUME_AFTER_S = 1.5       # as the browser client does when an acknowledged seq has not arrived


def agents_for(game_id: str) -> dict[str, str]:
    """The partner agent per role: a CPU agent, rule-based ones first (they start at once)."""
    chosen = {}
    for name, spec in sorted(all_agents().items(), key=lambda item: ("rule" not in item[0], item[0])):
        if spec.game_id == game_id and spec.device == "cpu":
            chosen.setdefault(spec.role, name)
    return chosen


def small_config(game_id: str) -> dict:
    """The game's default configuration, shortened: at most 3 rounds and a GuessWhich pool of
    POOL_SIZE images."""
    config = dict(GAMES[game_id].default_config)
    if "rounds" in config:
        config["rounds"] = min(config["rounds"], 3)
    if "pool_size" in config:
        config["pool_size"] = min(config["pool_size"], POOL_SIZE)
    return config


@dataclass
class SeatLog:
    role: str
    frames: list[dict] = field(default_factory=list)     # (frame, last seq seen before it)
    seen_before: list[int] = field(default_factory=list)
    pages: list[tuple[str, str, int, str]] = field(default_factory=list)   # (when, url, status, text)
    image_headers: dict[str, dict] = field(default_factory=dict)
    end_pages: int = 0
    last_seq: int = 0
    view: dict = field(default_factory=dict)
    status: str = "active"

    def kinds(self) -> Counter:
        return Counter(f.get("type") for f in self.frames)


@dataclass
class AuditResult:
    game_id: str
    random_role: str
    seats: dict[str, SeatLog]
    leaks: list[str]
    states_checked: int
    finished: bool


# ------------------------------------------------------------------------------------------- setup
def make_match(game_id: str, seed: int) -> tuple[Match, dict[str, Seat]]:
    spec = GAMES[game_id]
    batch = Batch.objects.create(slug=f"leak-{game_id.split('_')[0]}-{seed}-{random.getrandbits(24):06x}",
                                 title="leak audit", game_id=game_id, pairing=Batch.Pairing.HUMAN_HUMAN,
                                 config=small_config(game_id), max_wait_s=60)
    seats = {}
    for role in spec.roles:
        p = Participant.objects.create(batch=batch, platform="lab", worker_id=f"audit-{role}-{batch.slug}",
                                       state=Participant.State.PLAYING)
        seats[role] = SeatSpec(kind=Seat.Kind.HUMAN, participant=p)
    match = match_create(game_id=game_id, seats=seats, batch=batch, seed=seed, config=small_config(game_id))
    return match, {s.role: s for s in Seat.objects.filter(match=match).select_related("participant")}


def cookie_header(client: httpx.Client) -> str:
    """The session cookie as a browser sends it. The crowd pages set it ``Secure`` (MTurk's frame
    needs ``SameSite=None``), which httpx keeps off plain http: the test server is http."""
    return "; ".join(f"{c.name}={c.value}" for c in client.cookies.jar)


def get(client: httpx.Client, url: str) -> httpx.Response:
    """GET, following redirects, with the session cookie on every hop."""
    for _ in range(5):
        response = client.get(url, headers={"Cookie": cookie_header(client)})
        if not response.is_redirect:
            return response
        url = str(response.url.join(response.headers["location"]))
    return response


def http_pages(base: str, client: httpx.Client, match: Match, seat: Seat, log: SeatLog, when: str) -> None:
    """The pages a seat's browser reaches: participant page, status poll, game page, its turn
    clock (static/gt/stall.js polls it), images."""
    token = seat.participant.token
    urls = [f"/p/{token}/", f"/p/{token}/status", f"/m/{match.id}/?seat={seat.token}",
            f"/m/{match.id}/turn?seat={seat.token}"]
    for url in urls:
        response = get(client, base + url)
        log.pages.append((when, url, response.status_code, response.text))
        if when == "end" and response.status_code == 200 and url.startswith("/p/"):
            log.end_pages += 1      # the done page (or the questionnaire a batch asks first)
    if when != "start":
        return
    view = log.view
    ids = [item["id"] for item in view.get("pool") or []]
    if isinstance(view.get("image"), dict):
        ids.append(view["image"]["id"])
    if match.game_id == "visdial_v1" and seat.role == "questioner":
        ids.append(str(match.state["image_id"]))     # it asks for the image it must not see: a 404
    sizes = {"questioner": ("thumb", "full"), "answerer": ("large",)}.get(seat.role, ())
    secret = match.state.get("secret_id")
    for image_id in ids:
        # every image at the first size; the larger one (slow to render) for the secret and one other
        wanted = sizes if image_id in (secret, ids[0], ids[-1]) else sizes[:1]
        for size in wanted or ("thumb",):
            response = get(client, f"{base}/m/{match.id}/img/{image_id}.png?seat={seat.token}&size={size}")
            headers = {k.lower(): v for k, v in response.headers.items()}
            log.image_headers[f"{image_id}:{size}"] = {"status": response.status_code, **headers}
            log.pages.append((when, f"img {image_id} {size}", response.status_code,
                              json.dumps(headers) + (response.text if response.status_code != 200 else "")))


# ------------------------------------------------------------------------------------ the sockets
class Client:
    """One seat's socket: records every frame, keeps its view, answers one action at a time."""

    def __init__(self, base: str, match: Match, seat: Seat, cookie: str, log: SeatLog):
        self.url = base.replace("http", "ws", 1) + f"/ws/match/{match.id}/"
        self.origin = base
        self.token, self.cookie, self.log = seat.token, cookie, log
        self.ws = None
        self.frames: asyncio.Queue = asyncio.Queue()
        self.reader = None
        self.n = 0

    async def open(self, last_seq) -> dict:
        self.ws = await connect(self.url, origin=self.origin, additional_headers={"Cookie": self.cookie},
                                open_timeout=10, max_queue=None, proxy=None)
        self.reader = asyncio.create_task(self._read(self.ws))
        await self.ws.send(json.dumps({"type": "join", "token": self.token, "last_seq": last_seq}))
        return await self.wait_for(lambda f: f.get("type") == "joined")

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
            await asyncio.gather(self.reader, return_exceptions=True)
            self.ws = None

    async def _read(self, ws) -> None:
        async for raw in ws:
            frame = json.loads(raw)
            self.log.frames.append(frame)
            self.log.seen_before.append(self.log.last_seq)
            if frame.get("type") in ("joined", "events"):
                self.log.last_seq = max(self.log.last_seq, frame["seq"])
                if frame.get("view") is not None:
                    self.log.view = frame["view"]
                self.log.status = frame.get("status", self.log.status)
            await self.frames.put(frame)

    async def wait_for(self, predicate, timeout: float = FRAME_WAIT_S) -> dict:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            frame = await asyncio.wait_for(self.frames.get(), max(0.01, deadline - loop.time()))
            if predicate(frame):
                return frame

    async def send(self, data) -> None:
        await self.ws.send(data if isinstance(data, str) else json.dumps(data))

    async def act(self, action: dict) -> dict:
        """Send ``action`` and wait for its answer (ack or error)."""
        self.n += 1
        action_id = f"{self.log.role[0]}{self.n}"
        await self.send({"type": "action", "id": action_id, "action": action})
        answer = await self.wait_for(lambda f: f.get("id") == action_id and f.get("type") in ("ack", "error"))
        if answer.get("type") == "error" and answer.get("code") == "rate_limited":
            await asyncio.sleep(0.5)
        return answer

    async def settle(self, quiet_s: float = 0.15) -> None:
        """Wait until no frame has come for ``quiet_s`` (what a trick caused has arrived)."""
        while True:
            try:
                await asyncio.wait_for(self.frames.get(), quiet_s)
            except asyncio.TimeoutError:
                return


async def caught_up(clients, seq: int, timeout: float = FRAME_WAIT_S) -> None:
    """Wait until every socket has seen ``seq`` (an acknowledged action's events reached both)."""
    loop = asyncio.get_running_loop()
    start = loop.time()
    asked = start
    while any(c.log.last_seq < seq for c in clients):
        now = loop.time()
        if now - start > timeout:
            raise AssertionError(f"seq {seq} did not reach every seat in {timeout} s")
        if now - asked > RESUME_AFTER_S:   # a dropped broadcast: read it from the log
            asked = now
            for c in clients:
                if c.log.last_seq < seq:
                    await c.send({"type": "resume", "last_seq": c.log.last_seq})
        await asyncio.sleep(0.01)


ILLEGAL = ({"type": "no_such_move"}, {"type": "chat"}, {"type": "chat", "text": "x" * 5000},
           {"type": "guess", "image_id": "img99"}, {"type": "click", "position": 7, "round": 1},
           {"type": "place", "idx": 999, "x": 1, "y": 1}, {"type": "answer", "text": ""}, {"type": "end"})


async def play(base: str, match: Match, seats: dict[str, Seat], cookies: dict[str, str],
               logs: dict[str, SeatLog], random_role: str, seed: int) -> None:
    spec = GAMES[match.game_id]
    rng = random.Random(seed)
    agents = {role: all_agents()[name].build() for role, name in agents_for(match.game_id).items()
              if role != random_role}
    clients = {role: Client(base, match, seats[role], cookies[role], logs[role]) for role in spec.roles}
    for client in clients.values():
        await client.open(0)
    me = clients[random_role]
    tricks = iter(["bad_frames", "resume_old", "reconnect_old", "reconnect_none"])
    steps = 0
    try:
        while steps < STEP_CAP and all(log.status == "active" for log in logs.values()):
            steps += 1
            moved = False
            for role in spec.roles:
                client = clients[role]
                view = client.log.view
                action = (spec.hidden.random_action(view, rng) if role == random_role
                          else agents[role].act(view))
                if action is None:
                    continue
                moved = True
                if role == random_role and rng.random() < 0.15:     # an illegal action first
                    await client.act(rng.choice(ILLEGAL))
                answer = await client.act(action)
                if answer["type"] == "ack":
                    await caught_up(clients.values(), answer["seq"])
            await _trick(me, next(tricks, None), rng)   # one per step while they last
            if not moved:
                await asyncio.sleep(0.05)
        for client in clients.values():
            await client.send({"type": "ping"})
            await client.settle(0.3)
    finally:
        for client in clients.values():
            await client.close()


async def _trick(client: Client, trick: str | None, rng: random.Random) -> None:
    old = max(0, client.log.last_seq - rng.randint(2, 6))
    if trick == "bad_frames":
        await client.send("{not json")
        await client.send({"type": "what"})
        await client.send({"type": "resume", "last_seq": -3})
        await client.send({"type": "join", "token": client.token, "last_seq": 0})   # already joined
    elif trick == "resume_old":
        await client.send({"type": "resume", "last_seq": old})
    elif trick == "reconnect_old":
        await client.close()
        await client.open(old)
    elif trick == "reconnect_none":
        await client.close()
        await client.open(None)
    if trick:
        await client.settle()


# ------------------------------------------------------------------------------------- the check
def states_by_seq(match: Match) -> dict[int, dict]:
    """The state after every seq of the match's log (content + seed + logged actions)."""
    rules = GAMES[match.game_id].rules
    state = rules.initial_state(match.content, match.seed, match.config)
    out = {}
    for row in MatchEvent.objects.filter(match=match).order_by("seq").only("seq", "actor", "action"):
        if row.action is not None:
            state, _ = rules.apply(state, row.actor, row.action)
        out[row.seq] = state
    return out


def check(match: Match, logs: dict[str, SeatLog]) -> tuple[list[str], int]:
    spec = GAMES[match.game_id]
    states = states_by_seq(match)
    first, last = states[min(states)], states[max(states)]
    found: list[str] = []
    checked = set()

    def hidden(seq: int, role: str) -> list[Hidden]:
        seq = min(max(seq, min(states)), max(states))
        checked.add((role, seq))
        return spec.hidden.hidden_from(states[seq], role)

    for role, log in logs.items():
        for frame, before in zip(log.frames, log.seen_before):
            seq = frame.get("seq") if frame.get("type") in ("joined", "events") else before
            rest = {k: v for k, v in frame.items() if k != "events"}
            for leak in leaks(rest, hidden(seq or 0, role), f"{frame.get('type')}@{seq}"):
                found.append(f"{role}: {leak}")
            for event in frame.get("events") or ():
                for leak in leaks(event, hidden(event["seq"], role), f"{frame.get('type')}.event@{event['seq']}"):
                    found.append(f"{role}: {leak}")
        for when, url, status, text in log.pages:
            assert status < 500, f"{role} {url}: HTTP {status}"
            assert status != 403, f"{role} {url}: the seat's own browser was refused"
            state = first if when == "start" else last
            for leak in text_leaks(text, spec.hidden.hidden_from(state, role)):
                found.append(f"{role}: page {url} ({when}): {leak}")
        found += _image_differences(log)
    return found, len(checked)


def _image_differences(log: SeatLog) -> list[str]:
    """Every image a seat may fetch answers with the same status and header names and the same
    caching headers, so no response tells the secret image from the others."""
    if not log.image_headers:
        return []
    same = ("status", "content-type", "cache-control", "x-content-type-options")
    shapes = {key: (tuple(sorted(h)), tuple(h.get(k) for k in same)) for key, h in log.image_headers.items()}
    by_size: dict[str, set] = {}
    for key, shape in shapes.items():
        by_size.setdefault(key.rsplit(":", 1)[1], set()).add(shape)
    return [f"{log.role}: images of size {size} answer differently: {sorted(s)}"
            for size, s in by_size.items() if len(s) > 1]


def audit_match(base: str, game_id: str, random_role: str, seed: int) -> AuditResult:
    """Play one match (``random_role`` random, the other seat its agent) and check every frame."""
    match, seats = make_match(game_id, seed)
    logs = {role: SeatLog(role) for role in seats}
    spec = GAMES[game_id]
    http = {role: httpx.Client(timeout=30) for role in seats}
    try:
        for role, seat in seats.items():
            logs[role].view = spec.rules.view_for(match.state, role)   # what the page's socket brings first
            http_pages(base, http[role], match, seat, logs[role], "start")
        cookies = {role: cookie_header(http[role]) for role in seats}
        asyncio.run(play(base, match, seats, cookies, logs, random_role, seed))
        match.refresh_from_db()
        for role, seat in seats.items():
            http_pages(base, http[role], match, seat, logs[role], "end")
    finally:
        for client in http.values():
            client.close()
    match.refresh_from_db()
    found, checked = check(match, logs)
    return AuditResult(game_id, random_role, logs, found, checked, match.status != Match.Status.ACTIVE)
