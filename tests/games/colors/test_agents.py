"""Baseline agents: lexicon parsing, literal and pragmatic listening, speaker, specs, summary."""
from __future__ import annotations

import pytest

from games.colors import agents, rules
from games.colors.agents import (AGENTS, LexiconSpeaker, LiteralListener, PragmaticListener,
                                 RandomListener, summarize)

RGB = [[0, 100, 50], [120, 100, 50], [240, 100, 50]]          # red, green, blue
BLUES = [[210, 60, 30], [210, 60, 70], [0, 80, 50]]           # dark blue, light blue, red


def listener_view(colors, *texts, speaker=True):
    role = "speaker" if speaker else "listener"
    return {"game_id": "colors_v1", "role": "listener", "round": 4, "rounds": 50,
            "colors": [{"hsl": c} for c in colors], "can_click": True, "over": False,
            "messages": [{"role": role, "text": t, "at": i} for i, t in enumerate(texts)]}


def clicked(agent, colors, *texts):
    action = agent.act(listener_view(colors, *texts))
    assert action["type"] == "click" and action["round"] == 4
    return action["position"]


@pytest.mark.parametrize("text, position", [
    ("red", 0), ("the green one", 1), ("BLUE!", 2), ("purpel", 2), ("grass green", 1),
    ("not the red one, the blue one", 2), ("not red, blue", 2), ("no, the green", 1),
])
def test_literal_listener_reads_color_words(text, position):
    assert clicked(LiteralListener(), RGB, text) == position


@pytest.mark.parametrize("text, position", [
    ("light blue", 1), ("dark blue", 0), ("the darker one", 0), ("the lighter blue", 1),
    ("brightest", 2),
])
def test_literal_listener_reads_modifiers(text, position):
    assert clicked(LiteralListener(), BLUES, text) == position


def test_longest_match_wins():
    terms = agents.parse("robin's egg blue please")
    lexicon = agents.lexicon()
    index = lexicon.index[("robin", "s", "egg", "blue")]
    assert len(terms) == 1 and (terms[0].lab == lexicon.lab[index]).all()


def test_listener_ignores_the_listeners_own_messages_and_still_clicks_without_color_words():
    view = listener_view(RGB, "is it the red one?", speaker=False)
    view["messages"].append({"role": "speaker", "text": "hmm, the one I mean", "at": 9})
    for agent in (LiteralListener(), PragmaticListener(), RandomListener()):
        action = agent.act(view)
        assert action["type"] == "click" and action["position"] in (0, 1, 2)
    assert LiteralListener().probabilities(view) is None


def test_listeners_wait_until_they_may_click():
    view = {**listener_view(RGB, "red"), "can_click": False}
    assert all(agent.act(view) is None for agent in (LiteralListener(), PragmaticListener(), RandomListener()))


def test_pragmatic_listener_draws_the_scalar_inference():
    # "purple" fits the bluish purple slightly better, but a speaker meaning it would have said
    # "blue"; the violet has no better name, so the RSA listener reads "purple" as the violet.
    context = [[250, 50, 50], [273, 92, 50], [290, 84, 50]]
    assert clicked(LiteralListener(), context, "purple") == 0
    assert clicked(PragmaticListener(), context, "purple") == 1
    probs = PragmaticListener().probabilities(listener_view(context, "purple"))
    assert probs.sum() == pytest.approx(1.0) and probs[1] > 0.5


def test_lexicon_speaker_names_the_target_once_per_round():
    view = {"role": "speaker", "round": 2, "over": False, "messages": [],
            "colors": [{"hsl": c, "target": i == 2} for i, c in enumerate(RGB)]}
    action = LexiconSpeaker().act(view)
    assert action == {"type": "chat", "text": "blue", "round": 2}
    assert not agents.CRUDE.intersection(agents.tokenize(action["text"]))
    spoken = {**view, "messages": [{"role": "speaker", "text": "blue", "at": 1}]}
    assert LexiconSpeaker().act(spoken) is None
    assert LexiconSpeaker().act({**view, "over": True, "colors": []}) is None


def accuracy(play_colors, listener, seeds=(1, 2, 3), rounds=30):
    outcomes = [play_colors(seed, rounds, LexiconSpeaker(), listener)["state"] for seed in seeds]
    return [rules.outcome(state) for state in outcomes]


def test_lexicon_speaker_and_literal_listener_play_well_above_chance(play_colors):
    outcomes = accuracy(play_colors, LiteralListener())
    far = [o["by_condition"]["far"] for o in outcomes]
    assert sum(c["correct"] for c in far) / sum(c["played"] for c in far) > 0.8
    assert sum(o["correct"] for o in outcomes) / sum(o["played"] for o in outcomes) > 0.8


def test_pragmatic_listener_plays_well_and_random_listener_near_chance(play_colors):
    pragmatic = accuracy(play_colors, PragmaticListener())
    assert sum(o["correct"] for o in pragmatic) / sum(o["played"] for o in pragmatic) > 0.8
    chance = accuracy(play_colors, RandomListener(seed=7), seeds=(1, 2, 3, 4, 5))
    rate = sum(o["correct"] for o in chance) / sum(o["played"] for o in chance)
    assert 0.2 < rate < 0.47


def test_agent_specs():
    specs = {spec.name: spec for spec in AGENTS}
    assert set(specs) == {"colors_lexicon_speaker", "colors_literal_listener",
                          "colors_pragmatic_listener", "colors_random_listener"}
    for spec in AGENTS:
        assert spec.game_id == rules.GAME_ID and spec.role in rules.ROLES and spec.description
        assert hasattr(spec.build(), "act")
    assert specs["colors_lexicon_speaker"].role == "speaker"


def test_summarize_reports_accuracy_per_condition_with_counts():
    outcome = {"played": 4, "correct": 3, "gricean_true_score": None,
               "by_condition": {"far": {"played": 2, "correct": 2}, "split": {"played": 1, "correct": 1},
                                "close": {"played": 1, "correct": 0}}}
    text = summarize([outcome, outcome])
    assert "2 matches" in text
    assert "overall   75.0%  (6/8)" in text
    assert "far      100.0%  (4/4)" in text
    assert "close      0.0%  (0/2)" in text
