"""Rules of colors_v1: legal play, illegal moves, hidden information, replay, determinism."""
from __future__ import annotations

import json

import pytest

from games.base import Event, IllegalAction
from games.colors import rules
from games.colors.agents import LexiconSpeaker, LiteralListener, RandomListener


def snapshot(state: dict) -> str:
    return json.dumps(state, sort_keys=True)


class ScriptedSpeaker:
    def act(self, view):
        return {"type": "chat", "text": f"round {view['round']} color", "round": view["round"]}


class Alternating:
    """Clicks the target on odd rounds and a distractor on even rounds (it peeks at the content)."""

    def __init__(self, content):
        self.content = content

    def act(self, view):
        positions = self.content["rounds"][view["round"] - 1]["positions"]["listener"]
        color = 0 if view["round"] % 2 else 1
        return {"type": "click", "position": positions[color], "round": view["round"]}


def test_legal_play_to_the_end(new_colors_match):
    content, state, start = new_colors_match(3, 6)
    assert [event.type for event in start] == ["round_started"]
    assert rules.to_act(state) == ("speaker",)
    listener = Alternating(content)
    types = []
    for number in range(1, 7):
        view = rules.view_for(state, "listener")
        assert view["round"] == number and not view["can_click"]
        state, events = rules.apply(state, "speaker", {**ScriptedSpeaker().act(view), "at": 10 * number})
        assert rules.to_act(state) == ("listener",)
        state, events2 = rules.apply(state, "listener", {"type": "chat", "text": "ok?", "at": 10 * number + 1})
        assert rules.view_for(state, "listener")["can_click"]
        state, events3 = rules.apply(state, "listener",
                                     {**listener.act(rules.view_for(state, "listener")), "at": 10 * number + 5})
        types += [event.type for event in events + events2 + events3]
        record = events3[1].payload
        assert record["round"] == number and record["click_at"] == 10 * number + 5
        assert [m["text"] for m in record["messages"]] == [f"round {number} color", "ok?"]
        assert record["correct"] is (number % 2 == 1)
        assert record["score"] == {"correct": (number + 1) // 2, "played": number}
    assert types[-4:] == ["message_sent", "color_clicked", "round_ended", "game_ended"]
    assert types.count("round_started") == 5
    assert rules.is_over(state) and rules.to_act(state) == ()
    result = rules.outcome(state)
    assert (result["played"], result["correct"], result["accuracy"]) == (6, 3, 0.5)
    assert sum(c["played"] for c in result["by_condition"].values()) == 6
    assert result["mean_response_ms"] == 5.0 and result["mean_speaker_words"] == 3.0
    assert result["gricean_true_score"] == pytest.approx(0.5 / (0.005 * 3))
    final = rules.view_for(state, "speaker")
    assert final["over"] and final["colors"] == [] and final["score"] == {"correct": 3, "played": 6}


def test_speaker_can_send_several_messages_and_listener_can_chat_first(new_colors_match):
    _, state, _ = new_colors_match(1, 2)
    state, _ = rules.apply(state, "listener", {"type": "chat", "text": "hi", "at": 1})
    assert rules.to_act(state) == ("speaker",)
    state, _ = rules.apply(state, "speaker", {"type": "chat", "text": "blue", "round": 1, "at": 2})
    state, _ = rules.apply(state, "speaker", {"type": "chat", "text": "the dark one", "at": 3})
    assert [m["role"] for m in rules.view_for(state, "listener")["messages"]] == ["listener", "speaker", "speaker"]


def illegal_cases():
    long_text = "x" * (rules.MAX_MESSAGE_LEN + 1)
    return [
        ("fresh", "speaker", {"type": "click", "position": 0, "round": 1}, "wrong_role"),
        ("fresh", "system", {"type": "chat", "text": "hi"}, "wrong_role"),
        ("fresh", "listener", {"type": "click", "position": 0, "round": 1}, "speaker_first"),
        ("fresh", "speaker", {"type": "chat", "text": "   "}, "empty_message"),
        ("fresh", "speaker", {"type": "chat", "text": long_text}, "message_too_long"),
        ("fresh", "speaker", {"type": "chat", "text": 5}, "bad_field"),
        ("fresh", "speaker", {"type": "chat", "text": "hi", "round": 2}, "bad_round"),
        ("fresh", "speaker", {"type": "chat", "text": "hi", "round": 9}, "out_of_range"),
        ("fresh", "speaker", {"type": "wave"}, "unknown_action"),
        ("fresh", "speaker", ["chat"], "bad_action"),
        ("fresh", "speaker", {"type": "chat", "text": "hi", "at": None}, "bad_action"),
        ("spoke", "listener", {"type": "click", "position": 0}, "bad_field"),
        ("spoke", "listener", {"type": "click", "position": 3, "round": 2}, "out_of_range"),
        ("spoke", "listener", {"type": "click", "position": True, "round": 2}, "bad_field"),
        ("spoke", "listener", {"type": "click", "position": 0, "round": 1}, "round_over"),
        ("spoke", "speaker", {"type": "chat", "text": "late", "round": 1}, "round_over"),
        ("spoke", "speaker", {"type": "click", "position": 0, "round": 2}, "wrong_role"),
        ("over", "speaker", {"type": "chat", "text": "hi"}, "game_over"),
        ("over", "listener", {"type": "click", "position": 0, "round": 3}, "game_over"),
    ]


@pytest.mark.parametrize("where, role, action, code", illegal_cases())
def test_illegal_moves_get_their_code_and_change_nothing(new_colors_match, where, role, action, code):
    _, state, _ = new_colors_match(5, 3)
    if where in ("spoke", "over"):     # round 1 played; round 2 under way, the speaker has spoken
        state, _ = rules.apply(state, "speaker", {"type": "chat", "text": "red", "at": 1})
        state, _ = rules.apply(state, "listener", {"type": "click", "position": 0, "round": 1, "at": 2})
        state, _ = rules.apply(state, "speaker", {"type": "chat", "text": "red", "at": 3})
    if where == "over":
        state, _ = rules.apply(state, "listener", {"type": "click", "position": 0, "round": 2, "at": 4})
        state, _ = rules.apply(state, "speaker", {"type": "chat", "text": "red", "at": 5})
        state, _ = rules.apply(state, "listener", {"type": "click", "position": 0, "round": 3, "at": 6})
        assert rules.is_over(state)
    before = snapshot(state)
    stamped = {**action, "at": 100} if isinstance(action, dict) and "at" not in action else action
    with pytest.raises(IllegalAction) as raised:
        rules.apply(state, role, stamped)
    assert raised.value.code == code
    assert snapshot(state) == before


def test_apply_never_mutates_its_input(play_colors):
    played = play_colors(2, 4, LexiconSpeaker(), LiteralListener())
    state = rules.initial_state(played["content"], 2, {"rounds": 4})
    for role, action in played["actions"]:
        before = snapshot(state)
        new_state, _ = rules.apply(state, role, action)
        assert snapshot(state) == before
        state = new_state


def find_key(data, key):
    if isinstance(data, dict):
        return key in data or any(find_key(value, key) for value in data.values())
    if isinstance(data, list):
        return any(find_key(value, key) for value in data)
    return False


def swap_target(round_: dict) -> dict:
    """The same display for the listener, with the target and distr1 swapped."""
    colors = round_["colors"]
    return {**round_, "colors": [colors[1], colors[0], colors[2]],
            "positions": {role: [slots[1], slots[0], slots[2]] for role, slots in round_["positions"].items()}}


def test_listener_never_sees_the_target_before_the_round_ends(play_colors):
    played = play_colors(11, 12, LexiconSpeaker(), LiteralListener())
    live = rules.initial_state(played["content"], 11, {})
    for event in rules.start_events(live):
        assert not find_key(event.for_role("listener"), "target")
    for role, action in played["actions"]:
        view = rules.view_for(live, "listener")
        assert not find_key(view, "target")
        # the listener's view is the same whichever of the current colors is the target
        i = live["round"]
        twin = {**live, "rounds": [*live["rounds"][:i], swap_target(live["rounds"][i]), *live["rounds"][i + 1:]]}
        assert view == rules.view_for(twin, "listener")
        assert rules.view_for(live, "speaker") != rules.view_for(twin, "speaker")
        live, events = rules.apply(live, role, action)
        for event in events:
            if event.type in ("round_started", "message_sent"):
                assert not find_key(event.for_role("listener"), "target")
                assert not find_key(event.for_role(None), "target")
                assert not find_key(event.payload, "condition")


def test_replay_from_logged_actions_equals_live_state(play_colors):
    played = play_colors(4, 9, LexiconSpeaker(), RandomListener(seed=3))
    record = played["record"]
    state = rules.initial_state(record["content"], record["seed"], record["config"])
    replayed_events = []
    for event in record["events"]:
        if event["action"] is not None:
            state, events = rules.apply(state, event["actor"], event["action"])
            replayed_events += [e.to_json() for e in events]
    assert state == played["state"]
    logged = [{k: v for k, v in e.items() if k in ("type", "payload", "private") and v is not None}
              for e in record["events"] if e["actor"] != "system"]
    assert replayed_events == logged
    assert rules.outcome(state) == record["outcome"]


def test_two_games_from_the_same_seed_are_identical(play_colors):
    first = play_colors(8, 10, LexiconSpeaker(), RandomListener(seed=1))
    second = play_colors(8, 10, LexiconSpeaker(), RandomListener(seed=1))
    other = play_colors(9, 10, LexiconSpeaker(), RandomListener(seed=1))
    assert first["record"]["events"] == second["record"]["events"]
    assert first["state"] == second["state"]
    assert first["content"] != other["content"]


def test_events_survive_json(play_colors):
    played = play_colors(6, 3, LexiconSpeaker(), LiteralListener())
    for event in played["record"]["events"]:
        data = {"type": event["type"], "payload": event["payload"]}
        if event["private"]:
            data["private"] = event["private"]
        assert json.loads(json.dumps(data)) == data
        assert Event.from_json(json.loads(json.dumps(data))).to_json() == data
    assert json.loads(json.dumps(played["state"])) == played["state"]


def test_config_rounds_and_message_length(new_colors_match):
    content, _, _ = new_colors_match(1, 10)
    state = rules.initial_state(content, 1, {"rounds": 2, "max_message_len": 5})
    assert rules.view_for(state, "speaker")["rounds"] == 2
    with pytest.raises(IllegalAction) as raised:
        rules.apply(state, "speaker", {"type": "chat", "text": "purple", "at": 1})
    assert raised.value.code == "message_too_long"
    with pytest.raises(ValueError):
        rules.initial_state(content, 1, {"rounds": 11})


def test_last_round_is_reported_in_each_players_own_positions(new_colors_match):
    content, state, _ = new_colors_match(12, 2)
    round_ = content["rounds"][0]
    wrong = 2
    state, _ = rules.apply(state, "speaker", {"type": "chat", "text": "x", "at": 1})
    state, _ = rules.apply(state, "listener", {"type": "click", "position": round_["positions"]["listener"][wrong],
                                               "round": 1, "at": 2})
    for role in rules.ROLES:
        last = rules.view_for(state, role)["last_round"]
        assert {k: last[k] for k in ("round", "correct", "clicked_position", "target_position")} == {
            "round": 1, "correct": False,
            "clicked_position": round_["positions"][role][wrong],
            "target_position": round_["positions"][role][0]}


def own_order(round_: dict, role: str) -> list:
    out = [None] * 3
    for index, slot in enumerate(round_["positions"][role]):
        out[slot] = round_["colors"][index]
    return out


def test_the_click_tells_each_role_the_outcome_in_its_own_order(new_colors_match):
    """Issue 20, item 4: the speaker learns which colour the listener clicked and whether it was
    right; the listener learns whether it was right and which was the target, in the events of
    the click (``round_ended``'s ``as_seen``, per role), never before."""
    content, state, _ = new_colors_match(21, 3)
    picks = {1: 0, 2: 2, 3: 1}                  # content index the listener clicks: target, distr2, distr1
    for number in (1, 2, 3):
        round_ = content["rounds"][number - 1]
        state, spoken = rules.apply(state, "speaker", {"type": "chat", "text": f"r{number}", "round": number,
                                                       "at": 10 * number})
        state, asked = rules.apply(state, "listener", {"type": "chat", "text": "which?", "at": 10 * number + 1})
        for event in spoken + asked:             # nothing before the click says where the target is
            assert "as_seen" not in event.for_role("listener")
        position = round_["positions"]["listener"][picks[number]]
        state, events = rules.apply(state, "listener", {"type": "click", "position": position, "round": number,
                                                        "at": 10 * number + 5})
        ended = next(e for e in events if e.type == "round_ended")
        for role in rules.ROLES:
            seen = ended.for_role(role)["as_seen"]
            assert seen == {"round": number, "colors": own_order(round_, role),
                            "target_position": round_["positions"][role][0],
                            "clicked_position": round_["positions"][role][picks[number]],
                            "correct": picks[number] == 0,
                            "messages": [{"role": "speaker", "text": f"r{number}"},
                                         {"role": "listener", "text": "which?"}]}
            assert seen == rules.view_for(state, role)["last_round"]
        assert "as_seen" not in ended.for_role(None)            # an observer gets the public record only
        json.loads(json.dumps([e.to_json() for e in events]))    # the payloads survive JSON
        # the next round's start tells the listener nothing about its target
        started = [e for e in events if e.type == "round_started"]
        for event in started:
            assert not find_key(event.for_role("listener"), "target")
            assert "as_seen" not in event.for_role("listener")
    # the history: every round, as each role saw it, with its chat (a reload shows it all)
    for role in rules.ROLES:
        view = rules.view_for(state, role)
        assert view["over"] and [h["round"] for h in view["history"]] == [1, 2, 3]
        assert [h["correct"] for h in view["history"]] == [True, False, False]
        assert [[m["text"] for m in h["messages"]] for h in view["history"]] == [["r1", "which?"], ["r2", "which?"],
                                                                                ["r3", "which?"]]
        for h, round_ in zip(view["history"], content["rounds"]):
            assert h["colors"] == own_order(round_, role)
            assert h["colors"][h["target_position"]] == round_["colors"][0]


def test_history_holds_only_ended_rounds(new_colors_match):
    """While a round is open the history has only the rounds already clicked: the current round's
    colours, messages and target are not in it (its messages are the view's ``messages``)."""
    content, state, _ = new_colors_match(22, 2)
    state, _ = rules.apply(state, "speaker", {"type": "chat", "text": "dark", "at": 1})
    for role in rules.ROLES:
        assert rules.view_for(state, role)["history"] == [] and rules.view_for(state, role)["last_round"] is None
    state, _ = rules.apply(state, "listener", {"type": "click", "round": 1, "at": 2,
                                               "position": content["rounds"][0]["positions"]["listener"][0]})
    state, _ = rules.apply(state, "speaker", {"type": "chat", "text": "bright", "at": 3})
    view = rules.view_for(state, "listener")
    assert [h["round"] for h in view["history"]] == [1] and [m["text"] for m in view["messages"]] == ["bright"]
    assert view["history"] == [rules.as_seen(content["rounds"][0], state["history"][0], "listener")]
