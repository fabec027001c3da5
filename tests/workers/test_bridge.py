"""The HTTP bridge (agents/bridge.py) against a real local HTTP server (http.server in a thread):
the request carries exactly the seat's view, the answer is played through the match service and
the seat records the endpoint's version; a timeout, an error status, a body that is not JSON and an
action the game's schema refuses each let the fallback act at once, and the person is told."""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from agents.services import agent_take_turn
from live.models import MatchEvent, Seat
from games.registry import get_game
from live.services import match_apply_action

from tests.support.factories import colors_match


class Endpoint:
    """A researcher's endpoint: ``behaviour`` picks the answer; ``requests`` keeps what came in."""

    def __init__(self):
        self.behaviour = "click"
        self.requests: list[dict] = []
        self.release = threading.Event()
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                endpoint.requests.append({"body": body, "auth": self.headers.get("Authorization")})
                view = body["view"]
                if endpoint.behaviour == "slow":
                    endpoint.release.wait(10)   # longer than the agent's timeout
                    answer = {"action": None}
                elif endpoint.behaviour == "error":
                    self.send_response(500)
                    self.end_headers()
                    return
                elif endpoint.behaviour == "not_json":
                    answer = "<html>oops</html>"
                elif endpoint.behaviour == "illegal":
                    answer = {"action": {"type": "click", "position": 7, "round": view["round"]}}
                elif endpoint.behaviour == "idle":
                    answer = {"action": None}
                else:
                    # the color the speaker's words point at is not this endpoint's concern: the last one
                    answer = {"action": {"type": "click", "position": 2, "round": view["round"]}}
                data = (answer if isinstance(answer, str) else json.dumps(answer)).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass   # the bridge gave up already

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/act?key=k1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def endpoint():
    e = Endpoint()
    yield e
    e.close()


def bridge_file(url: str, timeout_s: float = 1.0) -> str:
    return f"""
    [[agent]]
    name = "remote_listener"
    kind = "http"
    game_id = "colors_v1"
    role = "listener"
    url = "{url}"
    headers = {{ Authorization = "Bearer t0ken" }}
    timeout_s = {timeout_s}
    fallback = "colors_literal_listener"
    version = "remote-7"
    """


def spoken_match():
    match, seats = colors_match(rounds=3, agents={"listener": "remote_listener"})
    result = match_apply_action(match_id=match.id, role="speaker", action={"type": "chat", "text": "the blue one"},
                                client_action_id="s1")
    match.refresh_from_db()
    assert match.seq == result.last_seq
    return match, seats


@pytest.mark.django_db
def test_the_endpoint_plays_the_seat(models_file, endpoint):
    models_file(bridge_file(endpoint.url))
    match, seats = spoken_match()
    view = get_game("colors_v1").rules.view_for(match.state, "listener")
    assert agent_take_turn(match_id=match.id, role="listener", expected_seq=match.seq) == "acted"
    (request,) = endpoint.requests
    assert request["auth"] == "Bearer t0ken"
    assert request["body"] == {"protocol": "groundtalk-agent/1", "agent": "remote_listener", "game_id": "colors_v1",
                               "role": "listener", "version": "remote-7", "view": json.loads(json.dumps(view))}
    click = MatchEvent.objects.get(match=match, type="color_clicked")
    assert click.actor == "listener" and click.action["position"] == 2
    assert not MatchEvent.objects.filter(match=match, type="agent_timed_out").exists()
    seat = Seat.objects.get(pk=seats["listener"].pk)
    assert seat.agent_model == {"kind": "http", "version": "remote-7", "endpoint": endpoint.url.split("?")[0]}


@pytest.mark.django_db
def test_nothing_to_do_yet_is_null(models_file, endpoint):
    models_file(bridge_file(endpoint.url))
    endpoint.behaviour = "idle"
    match, _ = spoken_match()
    assert agent_take_turn(match_id=match.id, role="listener", expected_seq=match.seq) == "idle"
    assert not MatchEvent.objects.filter(match=match, seq__gt=match.seq).exists()


@pytest.mark.django_db
@pytest.mark.parametrize("behaviour, reason, told", [
    ("slow", "error", "had a problem"),
    ("error", "error", "had a problem"),
    ("not_json", "error", "had a problem"),
    ("illegal", "illegal", "could not be used"),
])
def test_a_failing_endpoint_lets_the_fallback_act_at_once(models_file, endpoint, behaviour, reason, told):
    models_file(bridge_file(endpoint.url, timeout_s=0.5))
    endpoint.behaviour = behaviour
    match, _ = spoken_match()
    started = time.monotonic()
    assert agent_take_turn(match_id=match.id, role="listener", expected_seq=match.seq) == "fallback"
    if behaviour == "slow":
        assert time.monotonic() - started < 5   # the bridge gave up; it did not wait for the endpoint
    notice, click = MatchEvent.objects.filter(match=match, seq__gt=match.seq).order_by("seq")[:2]
    assert notice.type == "agent_timed_out" and notice.actor == "system"
    assert notice.payload["reason"] == reason and notice.payload["fallback"] == "colors_literal_listener"
    assert told in notice.payload["message"] and "simple backup answered" in notice.payload["message"]
    assert click.type == "color_clicked" and click.actor == "listener"
    # the endpoint's own late answer (or a repeated turn) is stale now
    assert agent_take_turn(match_id=match.id, role="listener", expected_seq=match.seq) == "stale"
