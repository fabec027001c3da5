"""Visual-dialog rules, agents and the VisDial / GuessWhich export shapes."""
from __future__ import annotations

import copy
import io
import json

import pytest

from games.base import IllegalAction
from clevr.alice import Alice
from clevr.qbot import QBot
from games.registry import GAMES
from games.guesswhich import rules as gw_rules
from games.visdial import content as vd_content
from games.visdial import exports as vd_exports
from games.visdial import rules as vd_rules


def record_of(rules, content, seed, config, drive, game_id):
    """Play with ``drive(state, role) -> action`` and build a platform-style match record."""
    state = rules.initial_state(content, seed, config)
    events = [{"seq": 1, "type": e.type, "payload": e.payload, "private": e.private, "action": None,
               "actor": "system", "t": 0} for e in rules.start_events(state)]
    t = 10
    while not rules.is_over(state):
        role = rules.to_act(state)[0]
        t += 10
        action = {**drive(state, role), "at": t}
        state, evs = rules.apply(state, role, action)
        for k, e in enumerate(evs):
            events.append({"seq": len(events) + 1, "type": e.type, "payload": e.payload, "private": e.private,
                           "action": action if k == 0 else None, "actor": role, "t": t})
    return {"match_id": f"m{seed}", "game_id": game_id, "batch": None, "seed": seed, "content": content,
            "config": config, "created_at": "2026-01-01T00:00:00", "finished_at": "2026-01-01T00:10:00",
            "status": "finished", "seats": {}, "events": events, "outcome": rules.outcome(state)}, state


def bots(qbot, alice):
    def drive(state, role, rules):
        return (qbot if role == "questioner" else alice).act(rules.view_for(state, role))
    return drive


def test_visdial_alternates_and_hides_the_image():
    content = vd_content.generate(4)
    state = vd_rules.initial_state(content, 4, {"rounds": 10})
    q = vd_rules.view_for(state, "questioner")
    assert "image" not in q and "scene" not in json.dumps(q) and q["caption"] == content["caption"]
    assert vd_rules.view_for(state, "answerer")["image"]["scene"] == content["scene"]

    def refuse(role, action, code):
        before = copy.deepcopy(state)
        with pytest.raises(IllegalAction) as info:
            vd_rules.apply(state, role, {**action, "at": 5})
        assert info.value.code == code
        assert state == before

    refuse("answerer", {"type": "answer", "text": "yes"}, "no_question")
    refuse("answerer", {"type": "ask", "text": "hi?"}, "wrong_role")
    refuse("questioner", {"type": "ask", "text": ""}, "empty_message")
    refuse("questioner", {"type": "ask", "text": "q" * 201}, "message_too_long")
    refuse("system", {"type": "ask", "text": "hi?"}, "wrong_role")
    state, _ = vd_rules.apply(state, "questioner", {"type": "ask", "text": "how many cubes?", "at": 6})
    refuse("questioner", {"type": "ask", "text": "and spheres?"}, "answer_pending")
    for k in range(10):
        if k:
            state, _ = vd_rules.apply(state, "questioner", {"type": "ask", "text": f"q{k}?", "at": 10 + k})
        state, evs = vd_rules.apply(state, "answerer", {"type": "answer", "text": f"a{k}", "at": 20 + k})
    assert vd_rules.is_over(state) and evs[-1].type == "dialog_completed"
    refuse("questioner", {"type": "ask", "text": "more?"}, "game_over")
    assert vd_rules.outcome(state)["rounds_completed"] == 10


def test_visdial_export_shape():
    records = []
    for seed in range(3):
        content = vd_content.generate(seed)
        rec, _ = record_of(vd_rules, content, seed, {"rounds": 10},
                           lambda s, r: bots(QBot(name="visdial_qbot"), Alice())(s, r, vd_rules), "visdial_v1")
        records.append(rec)
    out = io.StringIO()
    assert GAMES["visdial_v1"].export_writers()["visdial"](iter(records), out) == 3
    data = json.loads(out.getvalue())
    assert data["version"] == "1.0" and set(data["data"]) == {"questions", "answers", "dialogs"}
    questions, answers = data["data"]["questions"], data["data"]["answers"]
    assert len(data["data"]["dialogs"]) == 3
    for rec, dialog in zip(records, data["data"]["dialogs"]):
        assert dialog["image_id"] == vd_exports.dialog_image_id(rec["match_id"])
        assert dialog["caption"] == vd_exports.norm_caption(rec["content"]["caption"])
        assert len(dialog["dialog"]) == 10
        logged = [e["payload"]["text"] for e in rec["events"] if e["type"] == "question_asked"]
        for turn, q in zip(dialog["dialog"], logged):
            assert questions[turn["question"]] == q.lower().rstrip("?")
            opts = turn["answer_options"]
            assert len(opts) == 100 and len(set(opts)) == 100
            assert all(isinstance(i, int) and 0 <= i < len(answers) for i in opts)
            assert opts[turn["gt_index"]] == turn["answer"]
    # seeded: the same records give the same export
    assert vd_exports.to_visdial(records) == vd_exports.to_visdial(records)
    # an incomplete dialog is left out
    cut = {**records[0], "events": [e for e in records[0]["events"] if e["seq"] < 8]}
    assert vd_exports.to_visdial([cut])["data"]["dialogs"] == []


def test_guesswhich_export_shape(build):
    content = build.content(4, seed=2)
    secret = content["secret_id"]
    other = next(p["id"] for p in content["pool"] if p["id"] != secret)
    script = iter([("questioner", {"type": "ask", "text": "How many cubes?"}),
                   ("answerer", {"type": "answer", "text": "2"}),
                   ("questioner", {"type": "guess", "image_id": secret}),
                   ("questioner", {"type": "ask", "text": "Is it red?"}),
                   ("answerer", {"type": "answer", "text": "no"}),
                   ("questioner", {"type": "guess", "image_id": other}),
                   ("questioner", {"type": "guess", "image_id": other}),
                   ("questioner", {"type": "guess", "image_id": secret}),
                   ("questioner", {"type": "feedback", "ratings": {k: 5 for k in gw_rules.C.RATING_KEYS},
                                   "comment": "good"})])

    def drive(state, role):
        r, action = next(script)
        assert r == role
        return action

    rec, state = record_of(gw_rules, content, 2, {"rounds": 2}, drive, "guesswhich_v1")
    out = io.StringIO()
    assert GAMES["guesswhich_v1"].export_writers()["guesswhich"](iter([rec]), out) == 1
    row = json.loads(out.getvalue())
    assert row["secret_id"] == secret and row["caption"] == content["caption"]
    assert [r["question"] for r in row["rounds"]] == ["How many cubes?", "Is it red?"]
    assert row["rounds"][1]["history"] == [{"question": "How many cubes?", "answer": "2"}]
    assert [r["picked_image"] for r in row["rounds"]] == [secret, other]
    assert row["final_image_list"] == [other, secret] and row["rank"] == 2
    assert row["score"] == 200 - 10 + 10 == gw_rules.outcome(state)["bonus"]
    assert row["feedback"] == {"ratings": {k: 5 for k in gw_rules.C.RATING_KEYS}, "comment": "good"}
    assert row["secret_image"]["image_filename"] == content["sources"][secret]["image_filename"]
    vd = io.StringIO()
    GAMES["guesswhich_v1"].export_writers()["guesswhich-visdial"](iter([rec]), vd)
    dialogs = json.loads(vd.getvalue())["data"]["dialogs"]
    assert len(dialogs) == 1 and len(dialogs[0]["dialog"]) == 2
