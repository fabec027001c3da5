"""Shared helpers for the color game's pure tests: play matches through ``rules.apply`` directly."""
from __future__ import annotations

import pytest

from games.colors import content, rules

START_MS = 1_700_000_000_000


def new_match(seed: int, rounds: int, **config) -> tuple[dict, dict, list]:
    """content, initial state and start events, the way the platform creates a match."""
    config = {"rounds": rounds, **config}
    generated = content.generate(seed, config)
    state = rules.initial_state(generated, seed, config)
    return generated, state, rules.start_events(state)


def play(seed: int, rounds: int, speaker, listener, *, step_ms: int = 1500, **config) -> dict:
    """Play agents to the end; returns the final state and a match record as the platform builds it."""
    generated, state, start = new_match(seed, rounds, **config)
    events = [{"type": "match_started", "actor": "system", "payload": {}, "private": None,
               "action": None}]
    events += [{**event.to_json(), "actor": "system", "action": None} for event in start]
    actions = []
    now = START_MS
    while not rules.is_over(state):
        (role,) = rules.to_act(state)
        agent = speaker if role == "speaker" else listener
        action = agent.act(rules.view_for(state, role))
        assert action is not None, f"{role} made no move"
        now += step_ms
        stamped = {**action, "at": now}
        state, new_events = rules.apply(state, role, stamped)
        actions.append((role, stamped))
        for i, event in enumerate(new_events):
            events.append({"type": event.type, "actor": role, "payload": event.payload,
                           "private": event.private, "action": stamped if i == 0 else None})
    for seq, event in enumerate(events, start=1):
        event["seq"] = seq
        event["t"] = START_MS + seq
    record = {"match_id": f"m{seed}", "game_id": rules.GAME_ID, "batch": None, "seed": seed,
              "content": generated, "config": {"rounds": rounds, **config},
              "created_at": "2024-01-01T00:00:00Z", "finished_at": "2024-01-01T00:30:00Z",
              "status": "finished", "seats": {}, "events": events, "outcome": rules.outcome(state)}
    return {"state": state, "record": record, "actions": actions, "content": generated}


@pytest.fixture
def play_colors():
    return play


@pytest.fixture
def new_colors_match():
    return new_match
