"""Fault tests: a full stack of its own (tests/faults/stack.py), protocol-level players
(tests/faults/bots.py), and real faults: kill -9 of a web process, a Redis restart, a PostgreSQL
restart, a model worker killed and absent past the agents' timeout, 200 lobby arrivals at once
across two processes, thousands of hostile frames. Every test accounts for every action: each one
answered (ack or a final refusal; retryable errors are re-sent with the same id), acked = logged,
nothing logged twice, every seat holds every event of its match in order, no match stuck on an
agent, no HTTP 5xx. The figures are printed (``-s``) and summed up in docs/operations.md."""
from __future__ import annotations

import asyncio
import json
import random
import time
from collections import Counter

import httpx
import pytest
from websockets.asyncio.client import connect

from tests.faults.bots import SeatBot, drain, play_matches

pytestmark = pytest.mark.faults


def seat_bots(stack, matches: list[dict], pace_s: float = 0.25) -> list[SeatBot]:
    bots = []
    for i, m in enumerate(matches):
        for j, (role, token) in enumerate(sorted(m["tokens"].items())):
            bots.append(SeatBot(stack.ports, m["match_id"], token, role, start_port=i + j, pace_s=pace_s))
    return bots


def account(stack, bots: list[SeatBot], matches: list[dict]) -> dict:
    """Compare what every player saw and was told with the log in PostgreSQL."""
    log = stack.log_of([m["match_id"] for m in matches])
    figures, problems = Counter(), []
    for bot in bots:
        rows = log[bot.match_id]
        logged = Counter((actor, cid) for _, _, actor, cid in rows if cid)
        problems += [f"{bot.match_id}: {k} logged {v} times" for k, v in logged.items() if v > 1]
        mine = {cid for actor, cid in logged if actor == bot.role}
        acked = {i for i, outcome in bot.final.items() if outcome == "ack"}
        refused = {i for i, outcome in bot.final.items() if outcome != "ack"}
        figures["sent"] += len(bot.sends)
        figures["re-sent"] += sum(n - 1 for n in bot.sends.values())
        figures["acked"] += len(acked)
        figures["refused"] += len(refused)
        figures["retryable errors"] += sum(bot.retryable.values())
        figures["reconnects"] += bot.connects - 1
        figures["gaps resumed"] += bot.gaps
        problems += [f"{bot.role} {i}: acked, not logged" for i in acked - mine]
        problems += [f"{bot.role} {i}: logged, never sent" for i in mine - set(bot.sends)]
        problems += [f"{bot.role} {i}: refused, but logged" for i in refused & mine]
        problems += [f"{bot.role} {i}: never answered" for i in bot.pending]
        problems += [f"{bot.role}: answered two ways {c}" for c in bot.conflicts]
        problems += [f"{bot.role}: snapshot reset" for _ in range(bot.resets)]
        expected = {seq: (kind, actor) for seq, kind, actor, _ in rows}
        if bot.events != expected:
            missing = sorted(set(expected) - set(bot.events))
            wrong = [s for s in bot.events if expected.get(s) != bot.events[s]]
            problems.append(f"{bot.role} of {bot.match_id}: {len(missing)} events missing (first {missing[:3]}), "
                            f"{len(wrong)} differ")
        figures["events delivered"] += len(bot.events)
        figures["errors (no id)"] += sum(bot.errors.values())
    print(json.dumps(dict(figures)), *problems[:20], sep="\n")
    assert not problems, f"{len(problems)} accounting problems, first: {problems[:5]}"
    assert figures["acked"] > 0
    return figures


def stuck_matches(stack) -> list:
    return stack.pg.query(
        "SELECT id FROM games_match WHERE status = 'active' AND agent_due_since < now() - make_interval(secs => %s)",
        (stack.AGENT_TIMEOUT_S + 3,))


def test_kill_9_of_a_web_process(stack):
    matches = stack.create_matches(8)
    bots = seat_bots(stack, matches)

    async def fault():
        await asyncio.sleep(3)
        stack.web[0].kill9()
        await asyncio.sleep(3)
        stack.web[0].start()

    asyncio.run(play_matches(bots, 5, during=fault))
    figures = account(stack, bots, matches)
    assert figures["reconnects"] >= 8   # the seats on the killed process came back


def test_redis_restart(stack):
    humans = stack.create_matches(8)
    with_agents = stack.create_matches(4, agent_speaker="colors_lexicon_speaker")
    bots = seat_bots(stack, humans + with_agents)
    restarted = {}

    async def fault():
        await asyncio.sleep(3)
        stack.redis.stop()
        await asyncio.sleep(3)          # Redis away for 3 s; every queued message lost
        stack.redis.start()
        restarted["at"] = time.time()

    asyncio.run(play_matches(bots, 10, during=fault))
    account(stack, bots, humans + with_agents)
    assert stack.worker.alive, "the supervised model worker is gone"
    ids = [m["match_id"] for m in with_agents]
    after = stack.pg.query(
        "SELECT count(*) FROM games_matchevent WHERE match_id::text = ANY(%s) AND actor = 'speaker' "
        "AND to_timestamp(t / 1000.0) > to_timestamp(%s)", (ids, restarted["at"] + 1))[0][0]
    assert after > 0, "no agent acted after Redis came back"
    assert not stuck_matches(stack)


def test_postgres_restart(stack):
    matches = stack.create_matches(8)
    bots = seat_bots(stack, matches)
    statuses: Counter = Counter()

    async def poll(stop: asyncio.Event):
        """HTTP pages that read the database, all through the restart (each waits it out)."""
        async with httpx.AsyncClient(timeout=60) as client:
            n = 0
            while not stop.is_set():
                n += 1
                r = await client.get(f"http://127.0.0.1:{stack.ports[n % 2]}/p/nobody{n}/status")
                statuses[r.status_code] += 1
                await asyncio.sleep(0.1)

    async def fault():
        stop = asyncio.Event()
        poller = asyncio.create_task(poll(stop))
        await asyncio.sleep(3)
        await asyncio.to_thread(stack.pg.stop, "fast")
        await asyncio.sleep(2)
        await asyncio.to_thread(stack.pg.start)
        await asyncio.sleep(3)
        stop.set()
        await poller

    asyncio.run(play_matches(bots, 5, during=fault))
    print("HTTP during the restart:", dict(statuses))
    account(stack, bots, matches)
    assert statuses[404] > 0 and not [s for s in statuses if s >= 500]


def test_a_killed_celery_worker_is_started_again_by_its_supervisor(stack):
    import psutil

    supervisor = psutil.Process(stack.worker.proc.pid)
    first = wait_for_child(supervisor)
    first.kill()                       # kill -9 of the Celery process itself
    second = wait_for_child(supervisor, not_pid=first.pid)
    assert second.pid != first.pid and supervisor.is_running()
    matches = stack.create_matches(3, agent_speaker="colors_lexicon_speaker")
    bots = seat_bots(stack, matches)
    asyncio.run(play_matches(bots, 6))
    account(stack, bots, matches)
    ids = [m["match_id"] for m in matches]
    by_agent = stack.pg.query("SELECT count(*) FROM games_matchevent WHERE match_id::text = ANY(%s) "
                              "AND client_action_id LIKE 'agent:%%'", (ids,))[0][0]
    assert by_agent > 0, "the restarted worker took no agent turn"


def wait_for_child(parent, not_pid: int | None = None, timeout: float = 30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        children = [c for c in parent.children() if c.pid != not_pid and c.is_running()]
        if children:
            return children[0]
        time.sleep(0.2)
    raise TimeoutError("the supervisor started no Celery process")


def test_model_worker_killed_and_absent_past_the_timeout(stack):
    stack.worker.kill9()   # the supervisor and its Celery child: no worker at all
    try:
        matches = stack.create_matches(4, agent_speaker="colors_lexicon_speaker")
        bots = seat_bots(stack, matches)
        asyncio.run(play_matches(bots, 3 * stack.AGENT_TIMEOUT_S + 2))
        account(stack, bots, matches)
        ids = [m["match_id"] for m in matches]
        rows = stack.pg.query(
            "SELECT e.match_id::text, min(e.t) / 1000.0 - extract(epoch FROM min(m.created_at)) "
            "FROM games_matchevent e JOIN games_match m ON m.id = e.match_id WHERE e.match_id::text = ANY(%s) "
            "AND e.type = 'agent_timed_out' GROUP BY e.match_id", (ids,))
        missing = set(ids) - {r[0] for r in rows}
        assert not missing, f"no fallback in {missing}: {[stack.log_of([m])[m] for m in missing]}"
        waits = [float(w) for _, w in rows]
        print("first fallback after (s):", [round(w, 2) for w in waits])
        assert max(waits) < stack.AGENT_TIMEOUT_S + 1.5   # the timeout + the watchdog's period
        assert not stuck_matches(stack)
    finally:
        stack.worker.start()


def _keep_loopback_cookies(client: httpx.AsyncClient):
    """A response hook: send the Secure cookies back to the loopback servers over plain HTTP, as a
    browser does for 127.0.0.1 (a secure context). The crowd pages' session cookie is Secure
    there, and it is what binds each arrival to its participant (crowd/identity.py); httpx, like
    http.cookiejar, sends a Secure cookie only over HTTPS."""
    async def hook(response: httpx.Response) -> None:
        for cookie in client.cookies.jar:
            cookie.secure = False
    return hook


async def _arrive(client: httpx.AsyncClient, base: str, slug: str, lab: str, statuses: Counter) -> bool:
    """One arrival through its signed lab link (``lab``: the query string, crowd/entry.py); the
    client keeps its session cookie, so its pages and polls are its own (crowd/identity.py)."""
    async def call(method: str, url: str, **kw) -> httpx.Response:
        response = await client.request(method, url, **kw)
        statuses[response.status_code] += 1
        return response

    page = await call("GET", f"{base}/b/{slug}/?{lab}", follow_redirects=True)
    if page.status_code != 200:
        return False
    url = str(page.url)
    csrf = client.cookies.get("csrftoken", "")
    for step in ({"step": "consent", "agree": "yes"}, {"step": "ready"}):
        await call("POST", url, data={**step, "csrfmiddlewaretoken": csrf}, headers={"Referer": url},
                   follow_redirects=True)
    token = url.rstrip("/").rsplit("/", 1)[-1]
    gap = ""      # as the waiting page does: how long it waited since its previous answer (ms)
    deadline = time.monotonic() + 150
    while time.monotonic() < deadline:
        poll = await call("GET", f"{base}/p/{token}/status{gap}")
        if poll.status_code == 200 and poll.json().get("play_url"):
            return True
        answered = time.monotonic()
        # as static/gt/waiting.js polls: about once a second, and after a 429 as long as the server
        # asks (a bot polling faster met the per-participant poll limit, and one whose polls were
        # refused for GT_SEAT_GRACE_S after it was paired lost its match as a seat that never came)
        wait = random.uniform(0.8, 1.2)
        if poll.status_code == 429:
            wait = max(wait, float(poll.headers.get("Retry-After") or 1))
        await asyncio.sleep(wait)
        gap = f"?gap={round(1000 * (time.monotonic() - answered))}"
    return False


def test_mass_lobby_arrival_and_many_requests_keep_connections_bounded(stack):
    slug, labs = stack.manage("""
import json
from urllib.parse import urlencode
from crowd.entry import lab_token
from live.models import Batch
b = Batch.objects.create(slug="crowd", title="Crowd", game_id="colors_v1", max_wait_s=300, config={"rounds": 2})
print(json.dumps([b.slug, [urlencode({"lab": lab_token(b, f"w{i}")}) for i in range(200)]]))
""")
    statuses, peak = Counter(), []

    async def sample(stop: asyncio.Event):
        while not stop.is_set():
            peak.append(await asyncio.to_thread(stack.pg.connections))
            await asyncio.sleep(0.2)

    async def crowd():
        stop = asyncio.Event()
        sampler = asyncio.create_task(sample(stop))
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
        clients = [httpx.AsyncClient(timeout=60, limits=limits) for _ in range(200)]
        for c in clients:
            c.event_hooks["response"] = [_keep_loopback_cookies(c)]
        try:
            results = await asyncio.gather(*[
                _arrive(c, f"http://127.0.0.1:{stack.ports[i % 2]}", slug, labs[i], statuses)
                for i, c in enumerate(clients)])
            async with httpx.AsyncClient(timeout=30) as c:   # then many plain requests, one at a time
                for i in range(300):
                    r = await c.get(f"http://127.0.0.1:{stack.ports[0]}/p/unknown{i}/status")
                    statuses[r.status_code] += 1
        finally:
            for c in clients:
                await c.aclose()
            stop.set()
            await sampler
        return results

    results = asyncio.run(crowd())
    paired = stack.pg.query("SELECT count(*) FROM games_seat s JOIN games_match m ON m.id = s.match_id "
                            "JOIN games_batch b ON b.id = m.batch_id WHERE b.slug = %s", (slug,))[0][0]
    after = stack.pg.connections()
    print(f"arrivals paired: {sum(results)}/200, seats: {paired}, HTTP statuses: {dict(statuses)}, "
          f"PostgreSQL connections: peak {max(peak)}, after {after}")
    assert not [s for s in statuses if s >= 500]
    assert sum(results) == 200 and paired == 200
    # two server processes (8 HTTP threads + 8 database threads + 1 + 16 event-loop connections
    # each), the worker's threads and this test's own sampler
    bound = 2 * (8 + 8 + 1 + 16) + 6
    assert max(peak) <= bound and after <= bound


HOSTILE = [
    "not json", "[]", "{}", '{"type": 5}', '{"type": "nope"}', '{"type": "join"}',
    '{"type": "join", "token": "forged", "last_seq": 0}', '{"type": "join", "token": "\\u0000", "last_seq": -1}',
    '{"type": "resume", "last_seq": "x"}', '{"type": "action", "id": "", "action": {}}',
    '{"type": "action", "id": "x", "action": {"type": "chat", "text": "a\\u0000b"}}',
    '{"type": "action", "id": "y", "action": {"type": "click", "position": 99, "round": 1}}',
    '{"type": "action", "id": "z", "action": {"type": "chat", "text": "hi", "fallback": true, "agent": "x"}}',
    '{"type": "ping"}', "x" * 20000,
]


async def _hostile_socket(port: int, match_id: str, token: str | None, frames: int, answers: Counter) -> None:
    try:
        async with connect(f"ws://127.0.0.1:{port}/ws/match/{match_id}/", origin="http://127.0.0.1",
                           max_queue=None, proxy=None, max_size=2**20) as ws:
            if token:
                await ws.send(json.dumps({"type": "join", "token": token, "last_seq": None}))
            for _ in range(frames):
                await ws.send(random.choice(HOSTILE))
            try:
                while True:
                    msg = json.loads(await asyncio.wait_for(ws.recv(), 3))
                    answers[msg.get("code") or msg.get("type")] += 1
            except asyncio.TimeoutError:
                answers["(quiet)"] += 1
    except Exception as exc:   # the server closed a flooding socket
        answers[type(exc).__name__] += 1


def test_hostile_frames_change_nothing_and_players_go_on(stack):
    matches = stack.create_matches(4)
    target = stack.create_matches(1)[0]   # its seats are flooded by a hostile client holding its tokens
    bots = seat_bots(stack, matches)
    answers: Counter = Counter()

    async def fault():
        sockets = [_hostile_socket(stack.ports[i % 2], target["match_id"], target["tokens"]["listener"]
                                   if i % 3 == 0 else None, 250, answers) for i in range(12)]
        await asyncio.gather(*sockets)

    asyncio.run(play_matches(bots, 4, during=fault))
    print("answers to 3000 hostile frames:", dict(answers))
    account(stack, bots, matches)
    logged = stack.pg.query("SELECT count(*) FROM games_matchevent WHERE match_id::text = %s AND actor <> 'system'",
                            (target["match_id"],))[0][0]
    assert logged == 0, "a hostile frame changed the flooded match"
    assert answers["bad_json"] + answers["bad_message"] + answers["unknown_message"] > 0
    for proc in stack.web:
        assert proc.alive
    with httpx.Client(timeout=10) as c:
        for path in ["/b/crowd/?worker=a%00b", "/p/%00/", "/m/00000000-0000-0000-0000-000000000000/?seat=%00"]:
            assert c.get(f"http://127.0.0.1:{stack.ports[0]}{path}").status_code < 500
