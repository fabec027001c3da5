"""Cooperative fine-tune of the neural ALICE and the neural QBot
(``manage.py train_agent guesswhich_coop --from models/guesswhich/guesswhich_neural_alice.pt``).

In the spirit of the GuessWhich paper's ALICE_RL (Chattopadhyay et al. 2017, ``seeds/001_*``; the
RL fine-tune of Das et al. 2017b): both bots start from the supervised checkpoint
(:mod:`games.guesswhich.neural.train`) and play GuessWhich dialogs with each other over generated
pools, and both are trained on the game's goal, finding the secret image:

* the QBot (:class:`games.guesswhich.neural.qbot.NeuralQBot`'s model: a neural ALICE network read as
  ``P(answer | image, question, dialog)``) asks the question of largest expected information among
  the CLEVR-Dialog templates, exactly as it does when served, and keeps its belief over the pool;
* ALICE answers the secret image by *sampling* from its answer distribution; its reward for the
  answer of round t is the gain in the QBot's log-belief of the secret, ``log b_t(secret) -
  log b_{t-1}(secret)`` (Das et al.'s per-round reward, with the belief in place of the image-feature
  regression), so the return of that answer is ``log b_R(secret) - log b_{t-1}(secret)``;
  REINFORCE with the batch mean return of the round as the baseline;
* the QBot's answer model is trained to put the secret first given the answers ALICE actually gave:
  cross-entropy of the secret under the final belief (differentiable in the QBot's weights);
* both keep a supervised anchor (``anchor`` times the cross-entropy on the generated CLEVR-Dialog
  rounds of :mod:`games.guesswhich.neural.data`), so the answers stay English answers of the
  training vocabulary grounded in the scene rather than a private code (the drift the paper warns
  of; the held-out agreement with the grounded ALICE is measured every epoch to show it).

The fine-tune's games use content seeds disjoint from the evaluation's (:data:`GAME_OFFSET`).
Per epoch the held-out figures come from greedy play (ALICE's top answer) on ``val_games`` fixed
games: the secret's mean rank under the QBot's final belief, and ALICE's agreement with the grounded
ALICE. Two checkpoints of the neural ALICE format come out (both ``guesswhich_neural_alice``
checkpoints: the ALICE for ``NeuralAliceAgent``, the QBot's answer model for ``NeuralQBot``), their
metadata naming the supervised checkpoint they started from (its sha256).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch import nn
from tqdm import tqdm

from clevr.alice import CANT_TELL
from games.guesswhich import content as gw_content
from games.guesswhich.neural import data as neural_data
from games.guesswhich.neural.model import encode_batch, load_checkpoint, pool_log_probs, pool_tensors, save_checkpoint
from games.guesswhich.neural.qbot import best_index, candidates_for, information_gain
from games.guesswhich.neural.train import accuracy
from agents.training import Panel, plot_history as plot_history_png

KIND = "guesswhich_coop"
# content seeds of the fine-tune's games: far from the evaluation's (guesswhich_neural_eval --seed 5000)
GAME_OFFSET = {"train": 40_000_000, "val": 50_000_000}


@dataclass
class Game:
    secret: int
    pool: list[dict]
    caption: str


def make_games(n: int, seed: int, split: str, pool_size: int, progress: bool = False) -> list[Game]:
    """``n`` games of the split: generated pools (medium difficulty, about 0.5 s each) and secrets."""
    out = []
    for k in tqdm(range(n), desc=f"{split} games", unit="game", disable=not progress, leave=False):
        content = gw_content.generate(GAME_OFFSET[split] + seed * 100_000 + k,
                                      {"pool_size": pool_size, "difficulty": "medium"})
        ids = [p["id"] for p in content["pool"]]
        out.append(Game(ids.index(content["secret_id"]), [p["scene"] for p in content["pool"]], content["caption"]))
    return out


def secret_rank(belief: torch.Tensor, secret: torch.Tensor) -> torch.Tensor:
    """(B,) the secret's place when the pool is sorted by belief, ties sharing their mean place
    (so a flat belief gives the chance rank (n+1)/2)."""
    at = belief.gather(1, secret.unsqueeze(1))
    above = (belief > at + 1e-6).sum(dim=1).float()
    ties = ((belief - at).abs() <= 1e-6).sum(dim=1).float() - 1
    return 1 + above + ties / 2


def rollout(alice: nn.Module, qbot: nn.Module, vocab, answer_words: list[str], games: list[Game], *, rounds: int,
            candidates: int, device, sample: bool, generator: torch.Generator | None = None,
            qbot_seed: int = 0) -> dict:
    """Play ``rounds`` of every game of ``games`` at once (all pools the same size).

    Returns ``answers`` (B, R) answer indices, ``log_pi`` (B, R) ALICE's log-probabilities of them
    (with gradient when ``sample``), ``secret_logb`` (B, R+1) the QBot's normalised log-belief of
    the secret before the first and after each round, ``ranks`` (B,) the secret's final rank,
    ``dialogs`` (per game its (question, answer text) pairs), ``secret`` (B,) and ``pools`` (the
    pools' :func:`pool_tensors`)."""
    n_games, pool = len(games), len(games[0].pool)
    secret = torch.tensor([g.secret for g in games], device=device)
    belief = torch.zeros((n_games, pool), device=device)
    dialogs: list[list[tuple[str, str]]] = [[] for _ in games]
    pools = pool_tensors([g.pool for g in games], device)
    answers, log_pi = [], []
    secret_logb = [torch.log_softmax(belief, dim=1).gather(1, secret.unsqueeze(1)).squeeze(1)]
    for _ in range(rounds):
        # the QBot's questions: largest expected information under its belief (as NeuralQBot.act)
        cand_lists = [candidates_for([{"question": q} for q, _ in d], g.caption, seed=qbot_seed, limit=candidates)
                      for d, g in zip(dialogs, games)]
        rows = [{"caption": g.caption, "history": list(d), "question": q}
                for g, d, cands in zip(games, dialogs, cand_lists) for q in cands]
        owner = [b for b, cands in enumerate(cand_lists) for _ in cands]
        with torch.no_grad():
            lp = pool_log_probs(qbot, vocab, rows, owner, pools, device)         # (rows, pool, answers)
        questions, at = [], 0
        for b, cands in enumerate(cand_lists):
            k = len(cands)
            questions.append(cands[best_index(information_gain(belief[b], lp[at:at + k]))])
            at += k
        # ALICE answers the secret image
        a_items = [{"scene": g.pool[g.secret], "caption": g.caption, "history": list(d), "question": q}
                   for g, d, q in zip(games, dialogs, questions)]
        with torch.set_grad_enabled(sample and torch.is_grad_enabled()):
            logits = alice(*encode_batch(vocab, a_items, device))
            if sample:
                picked = torch.multinomial(logits.detach().exp(), 1, generator=generator).squeeze(1)
            else:
                picked = logits.argmax(dim=-1)
            log_pi.append(logits.gather(1, picked.unsqueeze(1)).squeeze(1))
        answers.append(picked)
        # the QBot reads the answer: its belief over the pool
        b_rows = [{"caption": g.caption, "history": list(d), "question": q}
                  for g, d, q in zip(games, dialogs, questions)]
        with torch.no_grad():
            lb = pool_log_probs(qbot, vocab, b_rows, list(range(n_games)), pools, device)   # (B, pool, answers)
        belief = belief + lb.gather(2, picked.view(n_games, 1, 1).expand(n_games, pool, 1)).squeeze(2)
        secret_logb.append(torch.log_softmax(belief, dim=1).gather(1, secret.unsqueeze(1)).squeeze(1))
        for d, q, a in zip(dialogs, questions, picked.tolist()):
            d.append((q, answer_words[a]))
    return {"answers": torch.stack(answers, dim=1), "log_pi": torch.stack(log_pi, dim=1),
            "secret_logb": torch.stack(secret_logb, dim=1), "ranks": secret_rank(belief, secret),
            "dialogs": dialogs, "secret": secret, "pools": pools}


def qbot_belief_loss(qbot: nn.Module, vocab, games: list[Game], played: dict, device) -> torch.Tensor:
    """Cross-entropy of the secret under the QBot's final belief given the dialogs ``played``
    (:func:`rollout` of ``games``: questions and ALICE's answers fixed), differentiable in the QBot's
    weights."""
    n_games, pool = len(games), len(games[0].pool)
    rounds = played["answers"].shape[1]
    rows = [{"caption": g.caption, "history": d[:t], "question": d[t][0]}
            for g, d in zip(games, played["dialogs"]) for t in range(rounds)]
    owner = [b for b in range(n_games) for _ in range(rounds)]
    lp = pool_log_probs(qbot, vocab, rows, owner, played["pools"], device).view(n_games, rounds, pool, -1)
    chosen = played["answers"].view(n_games, rounds, 1, 1).expand(n_games, rounds, pool, 1)
    belief = lp.gather(3, chosen).squeeze(3).sum(dim=1)                        # (B, pool)
    return nn.functional.cross_entropy(belief, played["secret"])


def reinforce_loss(played: dict) -> tuple[torch.Tensor, float]:
    """ALICE's policy-gradient loss: each answer's return is the gain in the QBot's log-belief of
    the secret from before it to the end of the dialog, minus the batch mean for that round."""
    logb = played["secret_logb"].detach()
    returns = logb[:, -1:] - logb[:, :-1]                                      # (B, R)
    advantage = returns - returns.mean(dim=0, keepdim=True)
    return -(advantage * played["log_pi"]).mean(), float(returns[:, 0].mean())


class _Anchor:
    """The supervised anchor: mini-batches of generated CLEVR-Dialog rounds and their labels."""

    def __init__(self, vocab, answers: list[str], *, dialogs: int, seed: int, device):
        self.items = neural_data.make_dialogs(dialogs, seed, "train")
        index = {a: i for i, a in enumerate(answers)}
        self.labels = [index.get(it["answer"], index[CANT_TELL]) for it in self.items]
        self.vocab, self.device = vocab, device
        self.gen = torch.Generator().manual_seed(seed)

    def loss(self, model: nn.Module, size: int) -> torch.Tensor:
        idx = torch.randint(len(self.items), (size,), generator=self.gen).tolist()
        logp = model(*encode_batch(self.vocab, [self.items[i] for i in idx], self.device))
        return nn.functional.nll_loss(logp, torch.tensor([self.labels[i] for i in idx], device=self.device))


@dataclass
class Result:
    alice: nn.Module
    qbot: nn.Module
    vocab: object
    answers: list[str]
    base_meta: dict
    history: list[dict] = field(default_factory=list)
    args: dict = field(default_factory=dict)
    kind: str = KIND

    def save(self, path, qbot_path=None) -> tuple[str, str]:
        """The ALICE at ``path``, the QBot's answer model at ``qbot_path`` (default: ``path`` with
        ``alice`` replaced by ``qbot`` in its name, else ``<stem>_qbot.pt``); returns the ALICE's
        (file sha256, weights sha256)."""
        path = Path(path)
        qbot_path = Path(qbot_path) if qbot_path else self.qbot_path(path)
        base = self.base_meta.get("training") or {}

        def save(role: str, model: nn.Module, where: Path) -> tuple[str, str]:
            return save_checkpoint(where, model=model, vocab=self.vocab, answers=self.answers,
                                   extra={"training": {**base, "cooperative": {**self.args, "role": role}},
                                          "history": self.history, "data_generator": neural_data.GENERATOR_VERSION})

        save("qbot", self.qbot, qbot_path)
        return save("alice", self.alice, path)

    @staticmethod
    def qbot_path(path) -> Path:
        path = Path(path)
        name = path.name.replace("alice", "qbot") if "alice" in path.name else f"{path.stem}_qbot{path.suffix}"
        return path.with_name(name)


def train(*, base: str, epochs: int, games: int, seed: int, device: str = "cpu", batch_size: int = 32,
          lr: float = 3e-4, pool_size: int = 10, rounds: int = 9, candidates: int = 8, anchor: float = 1.0,
          anchor_dialogs: int = 300, val_games: int = 64, progress: bool = True) -> Result:
    """Fine-tune both bots from the supervised checkpoint ``base`` for ``epochs`` epochs over
    ``games`` generated games (new dialogs every epoch: ALICE samples its answers; ``batch_size``
    games per update)."""
    torch.manual_seed(seed)
    loaded = load_checkpoint(base, device)
    vocab, answers = loaded.vocab, loaded.answers
    alice, qbot = loaded.model, copy.deepcopy(loaded.model)
    opt_alice = torch.optim.Adam(alice.parameters(), lr=lr)
    opt_qbot = torch.optim.Adam(qbot.parameters(), lr=lr)
    anchor_data = _Anchor(vocab, answers, dialogs=anchor_dialogs, seed=seed, device=device)
    train_set = make_games(games, seed, "train", pool_size, progress=progress)
    val_set = make_games(val_games, seed, "val", pool_size, progress=progress)
    held_rounds = neural_data.make_dialogs(max(10, val_games // 2), seed, "val")
    sample_gen = torch.Generator().manual_seed(seed)
    result = Result(alice, qbot, vocab, answers, loaded.meta, args={
        "kind": KIND, "base": Path(base).name, "base_sha256": loaded.sha256, "epochs": epochs, "games": games,
        "seed": seed, "batch_size": batch_size, "lr": lr, "pool_size": pool_size, "rounds": rounds,
        "candidates": candidates, "anchor": anchor, "anchor_dialogs": anchor_dialogs, "val_games": val_games,
        "torch": torch.__version__})

    def evaluate() -> dict:
        alice.eval()
        qbot.eval()
        with torch.no_grad():
            played = rollout(alice, qbot, vocab, answers, val_set, rounds=rounds, candidates=candidates,
                             device=device, sample=False)
        return {"val_mean_rank": float(played["ranks"].mean()),
                "val_secret_logb": float(played["secret_logb"][:, -1].mean()),
                "alice_agreement": accuracy(alice, vocab, answers, held_rounds, device)}

    start = evaluate()
    result.args.update({"start_val_mean_rank": start["val_mean_rank"], "start_alice_agreement":
                        start["alice_agreement"], "chance_rank": (pool_size + 1) / 2})
    result.history.append({"epoch": 0, "loss": float("nan"), "return": float("nan"), **start})
    n_batches = (games + batch_size - 1) // batch_size
    order_gen = torch.Generator().manual_seed(seed)
    for epoch in range(1, epochs + 1):
        order = torch.randperm(games, generator=order_gen).tolist()
        losses, returns = [], []
        bar = tqdm(range(n_batches), desc=f"{KIND} epoch {epoch}/{epochs}", unit="batch", disable=not progress,
                   leave=False)
        for b in bar:
            batch = [train_set[i] for i in order[b * batch_size:(b + 1) * batch_size]]
            alice.train()
            qbot.train()
            played = rollout(alice, qbot, vocab, answers, batch, rounds=rounds, candidates=candidates,
                             device=device, sample=True, generator=sample_gen)
            pg, mean_return = reinforce_loss(played)
            loss_alice = pg + anchor * anchor_data.loss(alice, batch_size)
            loss_qbot = (qbot_belief_loss(qbot, vocab, batch, played, device)
                         + anchor * anchor_data.loss(qbot, batch_size))
            for model, opt, loss in ((alice, opt_alice, loss_alice), (qbot, opt_qbot, loss_qbot)):
                opt.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(model.parameters(), 5.0)
                opt.step()
            losses.append(loss_alice.item() + loss_qbot.item())
            returns.append(mean_return)
            bar.set_postfix(ret=f"{np.mean(returns[-10:]):.2f}")
        row = {"epoch": epoch, "loss": float(np.mean(losses)), "return": float(np.mean(returns)), **evaluate()}
        result.history.append(row)
        if progress:
            tqdm.write(f"epoch {epoch}: " + ", ".join(f"{k}={v:.3f}" for k, v in row.items() if k != "epoch"))
    alice.eval()
    qbot.eval()
    return result


def plot_history(result: Result, path) -> None:
    """The fine-tune's curves: the losses, the return of ALICE's sampled answers on the training
    games, the held-out mean rank (with chance) and ALICE's agreement with the grounded ALICE (the
    drift the anchor holds back)."""
    args = result.args
    plot_history_png(result.history, path, title=KIND, width=14.0, panels=[
        Panel("return (nats; training games)", {"return": "gain in the QBot's log-belief of the secret"},
              ylim=None),
        Panel("mean rank of the secret (held-out games)", {"val_mean_rank": "greedy self-play"},
              {"chance": args["chance_rank"]}, ylim=(1, args["chance_rank"] + 0.5)),
        Panel("agrees with grounded ALICE", {"alice_agreement": "fine-tuned ALICE (held-out rounds)"},
              {"supervised start": args["start_alice_agreement"]})])
