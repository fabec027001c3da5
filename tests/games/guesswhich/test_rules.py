"""GuessWhich rules: legal play, every illegal move, no leaks, replay, bonus."""
from __future__ import annotations

import copy
import json

import pytest

from games.base import SYSTEM, IllegalAction
from games.guesswhich import rules

RATINGS = {k: 4 for k in rules.C.RATING_KEYS}


class Match:
    """Drives rules like the platform: stamps "at", keeps the action log and events."""

    def __init__(self, content, rounds=9, seed=5):
        self.content, self.seed, self.config = content, seed, {"rounds": rounds}
        self.state = rules.initial_state(content, seed, self.config)
        self.log = []
        self.events = rules.start_events(self.state)
        self.t = 1000

    def do(self, role, action):
        self.t += 7
        stamped = {**action, "at": self.t}
        before = copy.deepcopy(self.state)
        new, events = rules.apply(self.state, role, stamped)
        assert self.state == before  # apply never mutates its input
        self.state = new
        self.log.append((role, stamped))
        self.events += events
        return events

    def refuse(self, role, action, code):
        before = copy.deepcopy(self.state)
        with pytest.raises(IllegalAction) as info:
            rules.apply(self.state, role, {**action, "at": self.t + 1} if isinstance(action, dict) else action)
        assert info.value.code == code, info.value
        assert self.state == before

    def replay(self):
        s = rules.initial_state(self.content, self.seed, self.config)
        for role, action in self.log:
            s, _ = rules.apply(s, role, action)
        return s


def play_dialog(m, guesses):
    for k, g in enumerate(guesses, start=1):
        m.do("questioner", {"type": "ask", "text": f"question {k}?"})
        m.do("answerer", {"type": "answer", "text": f"answer {k}"})
        m.do("questioner", {"type": "guess", "image_id": g})


def test_legal_play_to_the_end_and_bonus(content4):
    secret = content4["secret_id"]
    others = [i["id"] for i in content4["pool"] if i["id"] != secret]
    m = Match(content4, rounds=3)
    assert rules.to_act(m.state) == ("questioner",)
    play_dialog(m, [others[0], secret, secret])  # two rounds right
    assert m.state["phase"] == "final"
    assert rules.view_for(m.state, "questioner")["expects"] == "final_guess"
    ev = m.do("questioner", {"type": "guess", "image_id": others[1]})
    assert [e.type for e in ev] == ["image_clicked"] and ev[0].payload["correct"] is False
    m.do("questioner", {"type": "guess", "image_id": others[2]})
    ev = m.do("questioner", {"type": "guess", "image_id": secret})
    assert [e.type for e in ev] == ["image_clicked", "secret_found"]
    assert rules.to_act(m.state) == ("questioner",) and not rules.is_over(m.state)
    m.do("questioner", {"type": "feedback", "ratings": RATINGS, "comment": "  Helpful answers. "})
    assert rules.is_over(m.state) and rules.to_act(m.state) == ()
    out = rules.outcome(m.state)
    assert out["rank"] == 3 and out["reciprocal_rank"] == pytest.approx(1 / 3)
    assert out["bonus"] == 200 - 10 * 2 + 10 * 2 == 200
    assert out["round_guess_correct"] == [False, True, True]
    assert out["coarse_ranks"] == [content4["coarse_rank"][others[0]], 1, 1]
    assert out["final_clicks"] == [others[1], others[2], secret]
    assert out["feedback"]["comment"] == "Helpful answers."
    assert m.replay() == m.state
    for e in m.events:  # events survive JSON
        assert json.loads(json.dumps(e.to_json())) == e.to_json()


@pytest.mark.parametrize("wrong_clicks,right_rounds", [(0, 0), (3, 0), (0, 9), (2, 5)])
def test_bonus_arithmetic(content4, wrong_clicks, right_rounds):
    secret = content4["secret_id"]
    others = [i["id"] for i in content4["pool"] if i["id"] != secret]
    guesses = [secret] * right_rounds + [others[0]] * (9 - right_rounds)
    m = Match(content4)
    play_dialog(m, guesses)
    for k in range(wrong_clicks):
        m.do("questioner", {"type": "guess", "image_id": others[k]})
    m.do("questioner", {"type": "guess", "image_id": secret})
    expected = 200 - 10 * wrong_clicks + 10 * right_rounds
    assert rules.outcome(m.state)["bonus"] == expected
    assert rules.view_for(m.state, "questioner")["bonus"]["total"] == expected
    assert rules.outcome(m.state)["rank"] == wrong_clicks + 1


def test_every_illegal_move_has_its_code_and_changes_nothing(content4):
    secret = content4["secret_id"]
    other = next(i["id"] for i in content4["pool"] if i["id"] != secret)
    m = Match(content4, rounds=2)
    ask = {"type": "ask", "text": "is there a red cube?"}
    m.refuse("questioner", "not a dict", "bad_action")
    m.refuse("questioner", {"text": "x"}, "bad_action")
    m.refuse("questioner", {"type": "dance"}, "unknown_action")
    with pytest.raises(IllegalAction) as info:  # no server timestamp
        rules.apply(m.state, "questioner", {"type": "ask", "text": "hi"})
    assert info.value.code == "bad_action"
    m.refuse("referee", ask, "unknown_role")
    m.refuse(SYSTEM, ask, "wrong_role")
    m.refuse("answerer", ask, "wrong_role")
    m.refuse("questioner", {"type": "ask", "text": "   "}, "empty_message")
    m.refuse("questioner", {"type": "ask", "text": "x" * 201}, "message_too_long")
    m.refuse("questioner", {"type": "ask", "text": 42}, "bad_field")
    m.refuse("questioner", {**ask, "bonus": 1000}, "forged_field")
    m.refuse("questioner", {"type": "guess", "image_id": other}, "guess_before_answer")
    m.refuse("answerer", {"type": "answer", "text": "yes"}, "no_question")
    m.refuse("questioner", {"type": "feedback", "ratings": RATINGS}, "not_finished")
    m.do("questioner", ask)
    m.refuse("questioner", ask, "answer_pending")
    m.refuse("questioner", {"type": "guess", "image_id": other}, "guess_before_answer")
    m.refuse("questioner", {"type": "answer", "text": "yes"}, "wrong_role")
    m.refuse("answerer", {"type": "answer", "text": ""}, "empty_message")
    m.refuse("answerer", {"type": "answer", "text": "y" * 201}, "message_too_long")
    m.refuse("answerer", {"type": "answer", "text": "yes", "score": 3}, "forged_field")
    m.do("answerer", {"type": "answer", "text": "yes"})
    m.refuse("questioner", ask, "guess_required")
    m.refuse("questioner", {"type": "guess", "image_id": "img99"}, "not_in_pool")
    m.refuse("questioner", {"type": "guess"}, "bad_field")
    m.refuse("answerer", {"type": "guess", "image_id": other}, "wrong_role")
    m.refuse("questioner", {"type": "guess", "image_id": other, "correct": True}, "forged_field")
    m.do("questioner", {"type": "guess", "image_id": other})
    play_dialog(m, [other])
    m.refuse("questioner", ask, "dialog_over")
    m.do("questioner", {"type": "guess", "image_id": other})
    m.refuse("questioner", {"type": "guess", "image_id": other}, "ruled_out")
    m.refuse("questioner", {"type": "skip_feedback"}, "not_finished")
    m.do("questioner", {"type": "guess", "image_id": secret})
    m.refuse("questioner", {"type": "guess", "image_id": secret}, "already_found")
    m.refuse("questioner", {"type": "feedback", "ratings": {**RATINGS, "accuracy": 6}}, "out_of_range")
    m.refuse("questioner", {"type": "feedback", "ratings": {**RATINGS, "accuracy": True}}, "bad_field")
    m.refuse("questioner", {"type": "feedback", "ratings": {**RATINGS, "speed": 3}}, "bad_field")
    m.refuse("questioner", {"type": "feedback", "ratings": {"accuracy": 3}}, "bad_field")
    m.refuse("questioner", {"type": "feedback", "ratings": RATINGS, "comment": "c" * 1001}, "message_too_long")
    m.refuse("answerer", {"type": "feedback", "ratings": RATINGS}, "wrong_role")
    m.do(SYSTEM, {"type": "skip_feedback"})  # a timeout: the server skips the feedback
    assert rules.is_over(m.state)
    m.refuse("questioner", {"type": "feedback", "ratings": RATINGS}, "game_over")
    m.refuse("questioner", ask, "game_over")
    assert m.replay() == m.state


def _questioner_trace(content, moves):
    """Everything the questioner's seat receives over a game: views and projected events."""
    m = Match(content, rounds=2)
    trace = [rules.view_for(m.state, "questioner")] + [e.for_role("questioner") for e in m.events]
    for role, action in moves:
        for e in m.do(role, action):
            trace.append(e.for_role("questioner"))
        trace.append(rules.view_for(m.state, "questioner"))
    return trace, m


def test_no_leak_of_the_secret_to_the_questioner(content4):
    """Two games that differ only in which pool image is secret look the same to the questioner
    until it clicks the secret (same views, same events, byte for byte)."""
    ids = [i["id"] for i in content4["pool"]]
    a, b = ids[0], ids[1]
    other = ids[2]
    moves = [("questioner", {"type": "ask", "text": "how many cubes?"}),
             ("answerer", {"type": "answer", "text": "2"}),
             ("questioner", {"type": "guess", "image_id": a}),
             ("questioner", {"type": "ask", "text": "is it red?"}),
             ("answerer", {"type": "answer", "text": "no"}),
             ("questioner", {"type": "guess", "image_id": b}),
             ("questioner", {"type": "guess", "image_id": other})]  # a wrong final click
    trace_a, m_a = _questioner_trace({**content4, "secret_id": a}, moves)
    trace_b, m_b = _questioner_trace({**content4, "secret_id": b}, moves)
    assert json.dumps(trace_a, sort_keys=True) == json.dumps(trace_b, sort_keys=True)
    view = rules.view_for(m_a.state, "questioner")
    assert "secret_id" not in view and "image" not in view
    assert view["bonus"]["total"] is None and view["bonus"]["right_round_guesses"] is None
    assert view["ruled_out"] == [other] and view["bonus"]["wrong_clicks"] == 1
    # the answerer sees the secret, never the pool
    answerer = rules.view_for(m_a.state, "answerer")
    assert answerer["image"]["id"] == a and "pool" not in answerer
    # once found, the questioner is told
    m_a.do("questioner", {"type": "guess", "image_id": a})
    done = rules.view_for(m_a.state, "questioner")
    assert done["secret_id"] == a and done["rank"] == 2
    assert done["bonus"]["total"] == 200 - 10 + 10 and done["bonus"]["right_round_guesses"] == 1


def test_views_are_json_safe_and_agents_see_the_pool(content4):
    m = Match(content4)
    for role in rules.ROLES:
        v = rules.view_for(m.state, role)
        assert json.loads(json.dumps(v)) == v
    q = rules.view_for(m.state, "questioner")
    assert [p["id"] for p in q["pool"]] == [p["id"] for p in content4["pool"]]
    assert q["caption"] == content4["caption"] and q["expects"] == "question"
    assert rules.view_for(m.state, "answerer")["expects"] is None


def test_generated_content_has_a_clean_pool():
    from games.guesswhich import content

    c = content.generate(3, {"pool_size": 20, "difficulty": "hard"})
    assert len(c["pool"]) == 20 and c["secret_id"] in {p["id"] for p in c["pool"]}
    assert c["coarse_rank"][c["secret_id"]] == 1
    for item in c["pool"]:
        assert set(item["scene"]) == {"image_index", "image_filename", "objects", "relationships", "directions"}
        assert item["scene"]["image_filename"] == f"{item['id']}.png"
    from clevr.captions import caption_holds

    secret_scene = next(p["scene"] for p in c["pool"] if p["id"] == c["secret_id"])
    assert caption_holds(c["caption"], secret_scene)
    assert content.generate(3, {"pool_size": 20, "difficulty": "hard"}) == c
