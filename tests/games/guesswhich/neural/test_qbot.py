"""The neural QBot (games/guesswhich/neural/qbot.py): a questioner whose belief over the pool and
whose questions come from a learned answer model (the neural ALICE network, trained here on a
small generated set). It finds the secret better than chance with the grounded ALICE answering,
makes ONE forward call for a batch of views, and gives only actions the rules accept."""
from __future__ import annotations

import pytest
import torch

from clevr.alice import make_alice
from games.guesswhich import content as gw_content
from games.guesswhich import rules
from games.guesswhich.neural import eval as neural_eval
from games.guesswhich.neural import train as neural_train
from games.guesswhich.neural.qbot import NeuralQBot

POOL = 20
CHANCE_RANK = (POOL + 1) / 2   # the secret's expected place in a random order of the pool


@pytest.fixture(scope="module")
def qbot(tmp_path_factory):
    torch.set_num_threads(1)
    result = neural_train.train(dialogs=400, epochs=4, seed=11, val_dialogs=20, progress=False)
    path = tmp_path_factory.mktemp("gwq") / "alice.pt"
    result.save(path)
    return NeuralQBot.load(str(path))


def views_of_a_game(qbot, seed: int) -> tuple[list[dict], dict]:
    """The questioner's views of one game against the grounded ALICE, and its outcome."""
    alice = make_alice("alice_exact")
    state = rules.initial_state(gw_content.generate(seed, {"pool_size": POOL, "difficulty": "medium"}), seed,
                                {"rounds": 5})
    views, t = [], 0
    while not rules.is_over(state):
        role = rules.to_act(state)[0]
        view = rules.view_for(state, role)
        action = (qbot if role == "questioner" else alice).act(view)
        if role == "questioner":
            views.append(view)
        t += 1
        state, _ = rules.apply(state, role, {**action, "at": t})   # refused actions would raise here
    return views, rules.outcome(state)


def test_it_finds_the_secret_better_than_chance(qbot):
    ranks = [neural_eval.play(gw_content.generate(7000 + k, {"pool_size": POOL, "difficulty": "medium"}),
                              7000 + k, make_alice("alice_exact"), 5, questioner=qbot)["rank"] for k in range(8)]
    assert sum(ranks) / len(ranks) < CHANCE_RANK - 2, ranks


def test_a_batch_of_views_is_one_forward_call_with_the_answers_of_one_by_one(qbot, monkeypatch):
    views, outcome = views_of_a_game(qbot, 7100)
    assert outcome["found"] and {v["expects"] for v in views} >= {"question", "guess", "final_guess"}
    singles = [qbot.act(v) for v in views]
    calls = []
    forward = qbot.module.forward
    monkeypatch.setattr(qbot.module, "forward", lambda *a: calls.append(1) or forward(*a))
    batch = qbot.act_batch(views + [{**views[0], "your_turn": False}])
    assert len(calls) == 1 and batch[:-1] == singles and batch[-1] is None
    asked = [a["text"] for a, v in zip(singles, views) if v["expects"] == "question"]
    assert len(asked) == len(set(asked)) == 5                    # five different questions
    ruled = {v["expects"]: set(v.get("ruled_out") or []) for v in views}
    for action, view in zip(singles, views):
        if view["expects"] in ("guess", "final_guess"):
            assert action["image_id"] not in set(view.get("ruled_out") or []), (action, ruled)


def test_loading_refuses_unknown_options(tmp_path):
    with pytest.raises(TypeError, match="candidates and seed"):
        NeuralQBot.load(str(tmp_path / "none.pt"), "cpu", beam=3)
