"""Match records of visual-dialog and GuessWhich games, built by playing the rules (no database),
and a reader that behaves as VisDial's reference reader does."""
from __future__ import annotations

import copy

import pytest

from tests.clevr.conftest import build, content4, scene5  # noqa: F401 (fixtures)


def play_record(rules, content, seed, config, script, game_id, match_id):
    """Play ``script`` (a list of (role, action)) with the rules; a platform-style match record."""
    state = rules.initial_state(content, seed, config)
    events = [{"seq": 1, "type": e.type, "payload": e.payload, "private": e.private, "action": None,
               "actor": "system", "t": 0} for e in rules.start_events(state)]
    for t, (role, action) in enumerate(script, start=1):
        action = {**action, "at": 10 * t}
        state, evs = rules.apply(state, role, action)
        for k, e in enumerate(evs):
            events.append({"seq": len(events) + 1, "type": e.type, "payload": e.payload,
                           "private": e.private, "action": action if k == 0 else None,
                           "actor": role, "t": 10 * t})
    return {"match_id": match_id, "game_id": game_id, "batch": None, "seed": seed, "content": content,
            "config": config, "created_at": "2026-01-01T00:00:00", "finished_at": "2026-01-01T00:10:00",
            "status": "finished", "seats": {}, "events": events, "outcome": rules.outcome(state)}


class ReferenceVisDialReader:
    """What ``VisDialJsonReader`` of VisDial's challenge starter code does with a file, without its
    tokenizer: questions and answers get an empty string appended (index -1); captions, dialogs and
    round counts are dicts keyed by ``image_id`` (a later dialog with the same id replaces an
    earlier one); each dialog is padded to 10 rounds with ``{"question": -1, "answer": -1}`` and
    missing ``answer`` / ``answer_options`` are filled with -1."""

    def __init__(self, data: dict):
        data = copy.deepcopy(data)
        self.split = data["split"]
        self.questions = data["data"]["questions"] + [""]
        self.answers = data["data"]["answers"] + [""]
        self.captions, self.dialogs, self.num_rounds = {}, {}, {}
        for entry in data["data"]["dialogs"]:
            image_id = entry["image_id"]
            self.captions[image_id] = entry["caption"]
            self.num_rounds[image_id] = len(entry["dialog"])
            while len(entry["dialog"]) < 10:
                entry["dialog"].append({"question": -1, "answer": -1})
            for turn in entry["dialog"]:
                turn.setdefault("answer", -1)
                turn.setdefault("answer_options", [-1] * 100)
            self.dialogs[image_id] = entry["dialog"]

    def __len__(self):
        return len(self.dialogs)

    def __getitem__(self, image_id):
        dialog = copy.deepcopy(self.dialogs[image_id])
        for turn in dialog:
            turn["question"] = self.questions[turn["question"]]
            turn["answer"] = self.answers[turn["answer"]]
            turn["answer_options"] = [self.answers[a] for a in turn["answer_options"]]
        return {"image_id": image_id, "caption": self.captions[image_id], "dialog": dialog,
                "num_rounds": self.num_rounds[image_id]}


@pytest.fixture
def reference_reader():
    return ReferenceVisDialReader
