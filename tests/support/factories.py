"""Small builders for platform tests."""
from __future__ import annotations

import itertools

from crowd.models import Participant
from live.models import Batch, Seat
from live.services import SeatSpec, match_create

_n = itertools.count()


def batch(**kw) -> Batch:
    i = next(_n)
    defaults = dict(slug=f"b{i}", title=f"batch {i}", game_id="colors_v1", pairing=Batch.Pairing.HUMAN_HUMAN,
                    config={"rounds": 3}, max_wait_s=60)
    defaults.update(kw)
    return Batch.objects.create(**defaults)


def participant(b: Batch, worker: str | None = None, state=Participant.State.WAITING) -> Participant:
    from django.utils import timezone

    return Participant.objects.create(batch=b, platform="lab", worker_id=worker or f"w{next(_n)}", state=state,
                                      waiting_since=timezone.now())


def lab_query(b: Batch, name: str) -> str:
    """The query string of ``name``'s signed lab link for batch ``b`` (crowd/entry.py)."""
    from urllib.parse import urlencode

    from crowd.entry import lab_token

    return urlencode({"lab": lab_token(b, name)})


def lab_url(b: Batch, name: str) -> str:
    """The path of ``name``'s lab link (for a test client or a browser: prefix the server)."""
    return f"/b/{b.slug}/?{lab_query(b, name)}"


def enter(b: Batch, name: str, session: dict | None = None) -> Participant:
    """A participant entered through ``b``'s lab link, bound to ``session`` (a fresh one unless given)."""
    from crowd.entry import lab_token
    from crowd import lobby
    return lobby.participant_enter(batch=b, params=lobby.EntryParams("lab", "", lab_token=lab_token(b, name)),
                                   session={} if session is None else session)


def colors_match(rounds: int = 3, seed: int = 7, agents: dict | None = None, wake_agents: bool = True):
    """A colors match; human seats unless ``agents`` names agents per role. Returns (match, {role: seat})."""
    agents = agents or {}
    seats = {role: SeatSpec(Seat.Kind.AGENT, agent_name=agents[role]) if role in agents
             else SeatSpec(Seat.Kind.HUMAN) for role in ("speaker", "listener")}
    match = match_create(game_id="colors_v1", seats=seats, seed=seed, config={"rounds": rounds},
                         wake_agents=wake_agents)
    return match, {s.role: s for s in Seat.objects.filter(match=match)}


def listener_target(match) -> int:
    """Where the current round's target sits in the listener's order (test-side knowledge)."""
    state = match.state
    return state["rounds"][state["round"]]["positions"]["listener"][0]


def run_in_threads(n: int, work) -> None:
    """Call ``work(i)`` for i in 0..n-1 from n threads (each its own PostgreSQL connection), all
    released at once; re-raises the first error of any thread."""
    import threading

    from django.db import close_old_connections, connection

    barrier = threading.Barrier(n)
    errors = []

    def worker(i: int) -> None:
        try:
            barrier.wait()
            work(i)
        except Exception as exc:  # reported below
            errors.append(exc)
        finally:
            close_old_connections()
            connection.close()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def http_client():
    """An httpx client that, like a browser on 127.0.0.1, sends its Secure cookies over plain HTTP
    (the crowd pages set them Secure on a loopback host; the test servers speak plain HTTP)."""
    import httpx

    client = httpx.Client(timeout=15)

    def keep(response):
        for cookie in client.cookies.jar:
            cookie.secure = False
    client.event_hooks["response"] = [keep]
    return client
