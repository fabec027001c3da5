"""Shared CoDraw test material: strings from the released data format and a match-record builder."""
from __future__ import annotations

import copy
import json

import pytest

from games.base import SYSTEM
from games.codraw import rules
from games.codraw.scenes import parse_scene

# The example entry of the CoDraw dataset README (facebookresearch/CoDraw, "JSON Example").
README_ABS_T = ("7,s_3s.png,0,3,0,469,31,2,0,p_7s.png,1,7,1,178,89,2,1,hb0_10s.png,2,10,2,100,250,1,0,"
                "hb1_4s.png,3,4,3,391,248,1,1,a_4s.png,4,4,4,205,98,1,0,c_7s.png,5,7,5,87,181,1,0,"
                "t_4s.png,6,4,7,279,115,1,1")
README_ABS_B = (
    "28,s_3s.png,0,3,0,-10000,-10000,0,1,s_6s.png,1,6,0,-10000,-10000,0,0,s_1s.png,2,1,0,-10000,-10000,0,1,"
    "p_9s.png,3,9,1,445,150,1,1,p_8s.png,4,8,1,31,80,0,0,p_0s.png,5,0,1,-10000,-10000,0,1,"
    "p_1s.png,6,1,1,-10000,-10000,0,1,hb0_6s.png,7,6,2,-10000,-10000,0,1,hb0_5s.png,8,5,2,-10000,-10000,0,1,"
    "hb0_10s.png,9,10,2,-10000,-10000,0,0,hb0_33s.png,10,33,2,-10000,-10000,0,0,"
    "hb0_28s.png,11,28,2,-10000,-10000,0,0,hb1_29s.png,12,29,3,-10000,-10000,0,1,"
    "hb1_18s.png,13,18,3,-10000,-10000,0,0,hb1_11s.png,14,11,3,-10000,-10000,0,1,"
    "hb1_8s.png,15,8,3,-10000,-10000,0,0,hb1_21s.png,16,21,3,-10000,-10000,0,0,"
    "a_2s.png,17,2,4,-10000,-10000,0,1,a_3s.png,18,3,4,-10000,-10000,0,1,c_1s.png,19,1,5,-10000,-10000,0,1,"
    "c_8s.png,20,8,5,-10000,-10000,0,0,c_0s.png,21,0,5,-10000,-10000,0,0,e_6s.png,22,6,6,-10000,-10000,0,1,"
    "e_2s.png,23,2,6,-10000,-10000,0,0,t_4s.png,24,4,7,-10000,-10000,0,0,t_5s.png,25,5,7,-10000,-10000,0,1,"
    "t_10s.png,26,10,7,-10000,-10000,0,1,t_7s.png,27,7,7,-10000,-10000,0,1,")
README_ABS_D = (
    "28,s_3s.png,0,3,0,-10000,-10000,0,1,s_6s.png,1,6,0,-10000,-10000,0,0,s_1s.png,2,1,0,-10000,-10000,0,1,"
    "p_9s.png,3,9,1,445,150,1,1,p_8s.png,4,8,1,31,80,0,0,p_0s.png,5,0,1,-10000,-10000,0,1,"
    "p_1s.png,6,1,1,-10000,-10000,0,1,hb0_6s.png,7,6,2,-10000,-10000,0,1,hb0_5s.png,8,5,2,-10000,-10000,0,1,"
    "hb0_10s.png,9,10,2,387,287,0,1,hb0_33s.png,10,33,2,-10000,-10000,0,0,"
    "hb0_28s.png,11,28,2,-10000,-10000,0,0,hb1_29s.png,12,29,3,-10000,-10000,0,1,"
    "hb1_18s.png,13,18,3,128,269,0,0,hb1_11s.png,14,11,3,-10000,-10000,0,1,"
    "hb1_8s.png,15,8,3,-10000,-10000,0,0,hb1_21s.png,16,21,3,-10000,-10000,0,0,"
    "a_2s.png,17,2,4,-10000,-10000,0,1,a_3s.png,18,3,4,-10000,-10000,0,1,c_1s.png,19,1,5,-10000,-10000,0,1,"
    "c_8s.png,20,8,5,-10000,-10000,0,0,c_0s.png,21,0,5,-10000,-10000,0,0,e_6s.png,22,6,6,-10000,-10000,0,1,"
    "e_2s.png,23,2,6,-10000,-10000,0,0,t_4s.png,24,4,7,248,273,0,0,t_5s.png,25,5,7,-10000,-10000,0,1,"
    "t_10s.png,26,10,7,-10000,-10000,0,1,t_7s.png,27,7,7,-10000,-10000,0,1,")
README_MSG_T = ("to the left is a worried woman running and to the right is an angry boy kicking a soccer "
                "ball at her.")

T0 = 1_700_000_000_000


def unplace_all(text: str) -> str:
    """The same canvas string with every piece taken off the canvas (x = y = -10000)."""
    fields = text.split(",")
    for i in range(int(fields[0])):
        fields[1 + 8 * i + 4] = "-10000"
        fields[1 + 8 * i + 5] = "-10000"
    return ",".join(fields)


class Match:
    """Drives rules the way the platform does and builds the match record exports read."""

    def __init__(self, content: dict, seed: int = 7, config: dict | None = None, match_id: str = "m1"):
        self.content = content
        self.seed = seed
        self.config = config or {}
        self.match_id = match_id
        self.state = rules.initial_state(content, seed, self.config)
        self.t = T0
        self.events: list[dict] = []
        for event in rules.start_events(self.state):
            self._log(event, SYSTEM, None)

    def _log(self, event, actor, action) -> None:
        data = json.loads(json.dumps(event.to_json()))      # every payload survives JSON
        self.events.append({"seq": len(self.events) + 1, "type": data["type"], "actor": actor,
                            "payload": data["payload"], "private": data.get("private"),
                            "action": action, "t": self.t, "_event": event})

    def do(self, role: str, action: dict, *, dt: int = 1000):
        self.t += dt
        stamped = {**action, "at": self.t}
        before = copy.deepcopy(self.state)
        state, events = rules.apply(self.state, role, stamped)
        assert self.state == before, "apply() mutated the state it was given"
        assert events, "an accepted action must produce an event"
        for i, event in enumerate(events):
            self._log(event, role, stamped if i == 0 else None)
        self.state = json.loads(json.dumps(state))
        assert self.state == state
        return events

    def record(self) -> dict:
        return {"match_id": self.match_id, "game_id": rules.GAME_ID, "batch": None, "seed": self.seed,
                "content": self.content, "config": self.config, "created_at": "2024-01-01T00:00:00Z",
                "finished_at": None, "status": "finished" if rules.is_over(self.state) else "active",
                "seats": {"teller": {"kind": "agent", "worker": None, "agent": "script"},
                          "drawer": {"kind": "agent", "worker": None, "agent": "script"}},
                "events": [{k: v for k, v in e.items() if k != "_event"} for e in self.events],
                "outcome": rules.outcome(self.state)}


def replay(record: dict) -> dict:
    state = rules.initial_state(record["content"], record["seed"], record["config"])
    for event in sorted(record["events"], key=lambda e: e["seq"]):
        if event["action"] is not None:
            state, _ = rules.apply(state, event["actor"], event["action"])
    return state


def play_dialog(content: dict, *, match_id: str = "m1", seed: int = 7, replay: bool = True) -> Match:
    """Replay a content item's recorded dialog (script Teller, script Drawer), then end; with
    ``replay`` the match has config ``replay_dialog`` (recorded start canvas, messages as they
    are, recorded round numbers)."""
    match = Match(content, seed=seed, match_id=match_id, config={"replay_dialog": True} if replay else {})
    for round_ in content["dialog"]:
        if round_.get("peeked") and not match.state["peek"]["used"]:
            match.do("teller", {"type": "peek"})
            match.do("teller", {"type": "close_peek"})
        match.do("teller", {"type": "chat", "text": round_["msg_t"]})
        goal = parse_scene(round_["abs_d"])
        for action in rules.canvas_actions(rules.canvas_scene(match.state), goal):
            match.do("drawer", action)
        match.do("drawer", {"type": "chat", "text": round_["msg_d"]})
    match.do("teller", {"type": "end"})
    return match


@pytest.fixture
def readme() -> dict:
    """The README strings: abs_t, abs_b, abs_d, msg_t."""
    return {"abs_t": README_ABS_T, "abs_b": README_ABS_B, "abs_d": README_ABS_D, "msg_t": README_MSG_T}


@pytest.fixture
def kit():
    """The helpers: Match (record builder), replay(record), play_dialog(content), unplace_all(text)."""
    import types
    return types.SimpleNamespace(Match=Match, replay=replay, play_dialog=play_dialog,
                                 unplace_all=unplace_all, T0=T0)


@pytest.fixture
def readme_content() -> dict:
    """A content item made of the README scene, with the README Drawer's palette."""
    palette = sorted({p.idx for p in parse_scene(README_ABS_B).pieces} | parse_scene(README_ABS_T).idxs)
    return {"kind": "codraw_scene", "version": 1, "abs_t": README_ABS_T, "palette": palette,
            "image_id": 1, "key": "train_00001", "dialog": [],
            "provenance": {"source": "test", "file": "README.md", "key": "train_00001"}}
