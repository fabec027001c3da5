"""The neural ALICE (games/guesswhich/neural*.py): generated dialogs, training beats the majority
answer on held-out scenes, checkpoint round trip, act_batch = single acts in one forward pass, a
real GuessWhich game through the rules (its models.toml example: tests/workers/test_config.py)."""
from __future__ import annotations

import copy

import pytest
import torch

from clevr.alice import make_alice
from clevr.qbot import QBot
from games.guesswhich import content as gw_content
from games.guesswhich import rules
from games.guesswhich.neural import data as neural_data
from games.guesswhich.neural import train as neural_train
from games.guesswhich.actions import SCHEMA
from games.guesswhich.neural.model import load_checkpoint
from games.guesswhich.neural.agents import NeuralAliceAgent


@pytest.fixture
def tiny(small_alice):
    """The session's small neural ALICE (tests/tiny_models.py): (result, path, hashes)."""
    return small_alice


def test_dialogs_are_seeded_and_labelled_by_the_grounded_alice():
    a, b = neural_data.make_dialogs(3, 1, "train"), neural_data.make_dialogs(3, 1, "train")
    assert [(x["question"], x["answer"]) for x in a] == [(x["question"], x["answer"]) for x in b]
    held = neural_data.make_dialogs(3, 1, "test")
    assert {repr(x["scene"]["objects"]) for x in a}.isdisjoint(repr(x["scene"]["objects"]) for x in held)
    alice = make_alice("alice_exact")
    for x in a[:10]:
        assert alice.respond(x["scene"], x["question"], x["history"], x["caption"]).text == x["answer"]
    assert len({x["question"] for x in a}) > 15


def test_training_on_a_tiny_set_beats_the_majority_answer_on_held_out_scenes(tiny):
    result, _, _ = tiny
    train_set = neural_data.make_dialogs(150, 5, "train")
    held = neural_data.make_dialogs(30, 7, "test")
    acc = neural_train.accuracy(result.model, result.vocab, result.answers, held, "cpu")
    majority = neural_train.majority_accuracy(train_set, held)
    assert acc > majority + 0.1, (acc, majority)


def test_checkpoint_round_trip(tiny, tmp_path):
    result, path, (sha, weights) = tiny
    loaded = load_checkpoint(path)
    assert loaded.sha256 == sha and loaded.weights_sha256 == weights
    assert loaded.answers == result.answers and loaded.vocab.words == result.vocab.words
    items = neural_data.make_dialogs(2, 9, "test")
    assert (neural_train.predict(loaded.model, loaded.vocab, loaded.answers, items, "cpu")
            == neural_train.predict(result.model, result.vocab, result.answers, items, "cpu"))
    again = tmp_path / "again.pt"
    assert result.save(again)[1] == weights          # same weights, same weights hash
    foreign = tmp_path / "foreign.pt"
    torch.save({"format": "something else"}, foreign)
    with pytest.raises(ValueError):
        load_checkpoint(foreign)


def _game_views(seed: int, rounds: int = 5):
    """Answerer views of a real game (QBot asking, the exact ALICE answering), and idle views."""
    content = gw_content.generate(seed, {"pool_size": 8, "difficulty": "medium"})
    state = rules.initial_state(content, seed, {"rounds": rounds})
    qbot, alice = QBot(), make_alice("alice_exact")
    answer_views, idle, t = [], [], 0
    while not rules.is_over(state):
        role = rules.to_act(state)[0]
        view = rules.view_for(state, role)
        if role == "answerer":
            answer_views.append(view)
        else:
            idle.append(rules.view_for(state, "answerer"))
        action = (qbot if role == "questioner" else alice).act(view)
        t += 1
        state, _ = rules.apply(state, role, {**action, "at": t})
    return answer_views, idle


def test_act_batch_of_n_equals_n_single_acts_in_one_forward_pass(tiny):
    agent = NeuralAliceAgent.load(str(tiny[1]), "cpu")
    views, idle = _game_views(31)
    mixed = [*views[:2], idle[0], *views[2:]]
    singles = [agent.act(copy.deepcopy(v)) for v in mixed]
    calls = []
    agent.module.register_forward_hook(lambda *_: calls.append(1))
    batch = agent.act_batch(mixed)
    assert len(calls) == 1 and batch == singles and batch[2] is None
    assert all(a is not None for k, a in enumerate(batch) if k != 2)


def test_the_neural_alice_answers_a_real_game_through_the_rules(tiny):
    agent = NeuralAliceAgent.load(str(tiny[1]), "cpu")
    agent.warmup()
    assert agent.version.startswith("guesswhich_neural_alice@") and len(agent.checkpoint_sha256) == 64
    with pytest.raises(TypeError):
        NeuralAliceAgent.load(str(tiny[1]), "cpu", speaker="x")
    content = gw_content.generate(44, {"pool_size": 8, "difficulty": "medium"})
    state = rules.initial_state(content, 44, {"rounds": 4})
    qbot, t, answers = QBot(), 0, 0
    while not rules.is_over(state):
        role = rules.to_act(state)[0]
        if role == "answerer":
            action = agent.act(rules.view_for(state, role))
            assert SCHEMA.validate(action)["text"] == action["text"]     # a legal answer action
            assert action["type"] == "answer" and 1 <= len(action["text"]) <= rules.C.ANSWER_MAX
            answers += 1
        else:
            action = qbot.act(rules.view_for(state, role))
            assert agent.act(rules.view_for(state, "answerer")) is None     # not its turn
        t += 1
        state, _ = rules.apply(state, role, {**action, "at": t})     # the rules accept every answer
    outcome = rules.outcome(state)
    assert answers == 4 and outcome["found"] and 1 <= outcome["rank"] <= 8


def test_the_neural_alice_answers_visual_dialog_chat_through_the_rules(tiny):
    from games.visdial import content as vd_content
    from games.visdial import rules as vd_rules
    from games.visdial.actions import SCHEMA as VD_SCHEMA

    agent = NeuralAliceAgent.load(str(tiny[1]), "cpu")
    state = vd_rules.initial_state(vd_content.generate(12), 12, {"rounds": 3})
    questions = ["How many cubes are there?", "What is its color?", "is there a small sphere"]
    t = 0
    while not vd_rules.is_over(state):
        role = vd_rules.to_act(state)[0]
        if role == "questioner":
            action = {"type": "ask", "text": questions[state["round"] - 1]}
            assert agent.act(vd_rules.view_for(state, "answerer")) is None
        else:
            action = agent.act(vd_rules.view_for(state, role))
            assert VD_SCHEMA.validate(action)["type"] == "answer"
        t += 1
        state, _ = vd_rules.apply(state, role, {**action, "at": t})
    assert vd_rules.outcome(state)["rounds_completed"] == 3
