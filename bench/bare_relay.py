"""The baseline for bench/relay.py: a bare websocket relay with no persistence and no rules.

    python bench/bare_relay.py --port 8201

It speaks the subset of GroundTalk's seat protocol that the bench bots use, with the same message
shapes, so the very same bot code drives both servers:

* ``/ws/match/<id>/`` then ``{"type": "join", "token": "speaker"|"listener"}`` pairs two clients by
  match id (the token is just the role here) and answers ``joined``;
* ``{"type": "action", "id", "action"}`` is answered with an ``ack`` to the sender and forwarded to
  the partner as ``{"type": "events", "seq", "status", "view", "events": [one event]}``;
* ``ping`` gets ``pong``.

The only bookkeeping is a per-match counter (seq), the round number and whether the speaker has
spoken this round (so the listener bot knows when it may click): nothing is validated, stored or
logged, and a message is forwarded only to the partner (GroundTalk also echoes the events to the
sender). Same websocket library family and defaults as uvicorn's ``--ws websockets`` (permessage-
deflate on), uvloop when installed.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import resource
import time

from websockets.asyncio.server import serve
from websockets.exceptions import ConnectionClosed


class Room:
    __slots__ = ("seats", "seq", "round", "spoke")

    def __init__(self) -> None:
        self.seats: dict = {}
        self.seq = 0
        self.round = 1
        self.spoke = False

    def view(self, role: str) -> dict:
        return {"round": self.round, "can_click": role == "listener" and self.spoke}


ROOMS: dict[str, Room] = {}


def dumps(data: dict) -> str:
    return json.dumps(data, separators=(",", ":"))


async def handler(ws) -> None:
    path = ws.request.path
    parts = [p for p in path.split("/") if p]
    if len(parts) != 3 or parts[:2] != ["ws", "match"]:
        await ws.close(1008, "bad path")
        return
    match_id = parts[2]
    room = ROOMS.setdefault(match_id, Room())
    role = None
    try:
        async for raw in ws:
            message = json.loads(raw)
            kind = message.get("type")
            if kind == "action" and role is not None:
                action = message.get("action") or {}
                room.seq += 1
                now = int(time.time() * 1000)
                if action.get("type") == "click":
                    event = {"seq": room.seq, "type": "color_clicked", "actor": role,
                             "payload": {"round": room.round, "role": role, "position": action.get("position"),
                                         "at": now}, "t": now}
                    room.round += 1
                    room.spoke = False
                else:
                    event = {"seq": room.seq, "type": "message_sent", "actor": role,
                             "payload": {"role": role, "text": action.get("text"), "at": now, "round": room.round},
                             "t": now}
                    room.spoke = room.spoke or role == "speaker"
                await ws.send(dumps({"type": "ack", "id": message.get("id"), "seq": room.seq, "duplicate": False}))
                for other_role, other in list(room.seats.items()):
                    if other_role != role:
                        try:
                            await other.send(dumps({"type": "events", "seq": room.seq, "status": "active",
                                                    "view": room.view(other_role), "events": [event]}))
                        except ConnectionClosed:
                            pass
            elif kind == "join":
                role = str(message.get("token"))
                room.seats[role] = ws
                await ws.send(dumps({"type": "joined", "role": role, "match_id": match_id, "game_id": "colors_v1",
                                     "seq": room.seq, "status": "active", "view": room.view(role), "events": [],
                                     "reset": True}))
            elif kind == "ping":
                await ws.send(dumps({"type": "pong", "seq": room.seq}))
            else:
                await ws.send(dumps({"type": "error", "code": "unknown_message", "message": str(kind)[:40]}))
    except ConnectionClosed:
        pass
    finally:
        if role is not None and room.seats.get(role) is ws:
            del room.seats[role]
            if not room.seats:
                ROOMS.pop(match_id, None)


async def main(host: str, port: int) -> None:
    # No permessage-deflate, as GroundTalk serves (run.sh, docker-compose.yml).
    async with serve(handler, host, port, backlog=4096, compression=None) as server:
        await server.serve_forever()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Bare websocket relay (benchmark baseline).")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8201)
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    try:
        import uvloop
        uvloop.run(main(args.host, args.port))
    except ImportError:
        asyncio.run(main(args.host, args.port))
