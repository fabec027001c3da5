"""The cooperative fine-tune of the neural ALICE and the neural QBot (games/guesswhich/neural/coop.py):
the pool scoring it uses is the network's own forward pass, its policy gradient pushes ALICE
towards the answers that helped the QBot, the QBot's loss trains, and a short fine-tune from a
small supervised checkpoint gives two checkpoints that the served families load and that play
GuessWhich by the rules; ``train_agent guesswhich_coop`` and ``guesswhich_neural_eval`` with them."""
from __future__ import annotations

import io
import json

import pytest
import torch
from django.core.management import call_command
from django.core.management.base import CommandError

from clevr.alice import make_alice
from games.guesswhich import content as gw_content
from games.guesswhich.neural import coop as neural_coop
from games.guesswhich.neural import eval as neural_eval
from games.guesswhich.neural.model import encode_batch, load_checkpoint, pool_log_probs, pool_tensors
from games.guesswhich.neural.agents import NeuralAliceAgent
from games.guesswhich.neural.qbot import NeuralQBot


@pytest.fixture
def base(small_alice):
    """A small supervised ALICE: the session's (tests/tiny_models.py)."""
    return small_alice[1]


@pytest.fixture(scope="module")
def few_games():
    return neural_coop.make_games(6, 0, "train", pool_size=5)


def test_pool_scoring_is_the_forward_pass_per_image(base, few_games):
    loaded = load_checkpoint(base)
    rows = [{"caption": g.caption, "history": [("How many things are there?", "3")] if k % 2 else [],
             "question": q} for k, g in enumerate(few_games) for q in ("Is there a red cube?", "What is its color?")]
    owner = [k for k in range(len(few_games)) for _ in range(2)]
    fast = pool_log_probs(loaded.model, loaded.vocab, rows, owner, pool_tensors([g.pool for g in few_games], "cpu"),
                          "cpu")
    items = [{**row, "scene": scene} for row, k in zip(rows, owner) for scene in few_games[k].pool]
    slow = loaded.model(*encode_batch(loaded.vocab, items, "cpu")).view(len(rows), 5, -1)
    assert fast.shape == slow.shape and torch.allclose(fast, slow, atol=1e-5)


def test_the_policy_gradient_favours_the_answers_that_raised_the_secrets_belief():
    """Two games: answer 0 raised the QBot's log-belief of the secret by 1, answer 2 left it as it
    was. One step on the REINFORCE loss makes answer 0 likelier and answer 2 less likely."""
    logits = torch.zeros(3, requires_grad=True)
    picked = torch.tensor([0, 2])
    log_pi = torch.log_softmax(logits, dim=0)[picked].view(2, 1)
    played = {"log_pi": log_pi, "secret_logb": torch.tensor([[-2.0, -1.0], [-2.0, -2.0]])}
    loss, mean_return = neural_coop.reinforce_loss(played)
    assert mean_return == pytest.approx(0.5)
    loss.backward()
    with torch.no_grad():
        after = torch.softmax(logits - 0.5 * logits.grad, dim=0)
    assert after[0] > 1 / 3 > after[2]


def test_the_qbots_loss_trains_on_the_answers_it_was_given(base, few_games):
    loaded = load_checkpoint(base)
    alice = loaded.model
    qbot = load_checkpoint(base).model
    with torch.no_grad():
        played = neural_coop.rollout(alice, qbot, loaded.vocab, loaded.answers, few_games, rounds=3, candidates=4,
                                     device="cpu", sample=False)
    assert played["answers"].shape == (6, 3) and all(len(d) == 3 for d in played["dialogs"])
    assert all(1 <= r <= 5 for r in played["ranks"].tolist())
    opt = torch.optim.Adam(qbot.parameters(), lr=1e-2)
    losses = []
    for _ in range(30):
        loss = neural_coop.qbot_belief_loss(qbot, loaded.vocab, few_games, played, "cpu")
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0], losses


def test_a_short_fine_tune_gives_two_checkpoints_that_play_by_the_rules(base, tmp_path):
    result = neural_coop.train(base=str(base), epochs=2, games=8, seed=1, batch_size=4, pool_size=5, rounds=3,
                               candidates=4, anchor_dialogs=20, val_games=6, progress=False)
    assert [row["epoch"] for row in result.history] == [0, 1, 2]
    assert all(1 <= row["val_mean_rank"] <= 5 for row in result.history)
    start = load_checkpoint(base).model.state_dict()
    for model in (result.alice, result.qbot):
        assert any(not torch.equal(start[k], v) for k, v in model.state_dict().items())
    assert any(not torch.equal(a, b) for a, b in zip(result.alice.state_dict().values(),
                                                      result.qbot.state_dict().values()))
    path = tmp_path / "guesswhich_coop_alice.pt"
    result.save(path)
    qbot_path = tmp_path / "guesswhich_coop_qbot.pt"
    assert neural_coop.Result.qbot_path(path) == qbot_path and qbot_path.is_file()
    alice, qbot = NeuralAliceAgent.load(str(path)), NeuralQBot.load(str(qbot_path))
    meta = alice.meta["training"]["cooperative"]
    assert meta["base_sha256"] == load_checkpoint(base).sha256 and meta["role"] == "alice"
    assert load_checkpoint(qbot_path).meta["training"]["cooperative"]["role"] == "qbot"
    content = gw_content.generate(9100, {"pool_size": 6, "difficulty": "medium"})
    outcome = neural_eval.play(content, 9100, alice, 3, questioner=qbot)     # a refused action would raise
    assert outcome["found"] and 1 <= outcome["rank"] <= 6
    outcome = neural_eval.play(content, 9100, make_alice("alice_exact"), 3, questioner=qbot)
    assert outcome["found"]


def test_train_agent_and_the_evaluation_with_the_fine_tune(base, tmp_path):
    out = io.StringIO()
    coop = tmp_path / "guesswhich_coop_alice.pt"
    call_command("train_agent", "guesswhich_coop", "--from", str(base), "--games", "4", "--epochs", "1",
                 "--batch-size", "4", "--pool-size", "4", "--rounds", "2", "--threads", "1", "--out", str(coop),
                 "--verbosity", "0", stdout=out)
    text = out.getvalue()
    assert coop.is_file() and coop.with_suffix(".png").is_file() and (tmp_path / "guesswhich_coop_qbot.pt").is_file()
    assert "val_mean_rank=" in text and "alice_agreement=" in text and "guesswhich_coop_qbot.pt" in text
    out = io.StringIO()
    report = tmp_path / "report.json"
    call_command("guesswhich_neural_eval", "--alice", str(base), "--coop-alice", str(coop), "--coop-qbot",
                 str(tmp_path / "guesswhich_coop_qbot.pt"), "--dialogs", "2", "--games", "2", "--pool-size", "4",
                 "--rounds", "2", "--plot", str(tmp_path / "eval.png"), "--coop-plot", str(tmp_path / "coop.png"),
                 "--json", str(report), "--verbosity", "0", stdout=out)
    table = out.getvalue()
    assert "Cooperative fine-tune" in table and "neural QBot (cooperative) + neural ALICE (cooperative)" in table
    data = json.loads(report.read_text())["cooperative"]
    assert len(data["pairs"]) == 5 and all(len(row["ranks"]) == 2 for row in data["pairs"].values())
    assert data["pairs"]["rule QBot + neural ALICE (cooperative)"]["vs"]["name"] == "rule QBot + neural ALICE (supervised)"
    assert (tmp_path / "coop.png").stat().st_size > 1000


def test_the_fine_tune_refuses_what_it_cannot_use(base, tmp_path):
    with pytest.raises(CommandError, match="No supervised checkpoint"):
        call_command("train_agent", "guesswhich_coop", "--from", str(tmp_path / "missing.pt"))
    with pytest.raises(CommandError, match="--games >= 2"):
        call_command("train_agent", "guesswhich_coop", "--from", str(base), "--games", "1")
    with pytest.raises(CommandError, match="--anchor >= 0"):
        call_command("train_agent", "guesswhich_coop", "--from", str(base), "--anchor", "-1")
    with pytest.raises(CommandError, match="--batch-size >= 1"):
        call_command("train_agent", "guesswhich_coop", "--from", str(base), "--batch-size", "0")
    with pytest.raises(CommandError, match="--lr > 0"):
        call_command("train_agent", "guesswhich_neural_alice", "--lr", "0", "--out", str(tmp_path / "x.pt"))
    foreign = tmp_path / "foreign.pt"
    torch.save({"format": "something else"}, foreign)
    with pytest.raises(CommandError, match="--from: .* is not a groundtalk.guesswhich_neural checkpoint"):
        call_command("train_agent", "guesswhich_coop", "--from", str(foreign))
    with pytest.raises(CommandError, match="--coop-qbot"):
        call_command("guesswhich_neural_eval", "--alice", str(base), "--coop-alice", str(base))
    with pytest.raises(CommandError, match="not a cooperative fine-tune"):
        call_command("guesswhich_neural_eval", "--alice", str(base), "--coop-alice", str(base), "--coop-qbot",
                     str(base), "--dialogs", "1", "--games", "1", "--pool-size", "3", "--rounds", "1",
                     "--plot", "", "--verbosity", "0", stdout=io.StringIO())
