"""Training of the neural ALICE (``manage.py train_agent guesswhich_neural_alice`` calls :func:`train`).

Supervised: cross-entropy of the exact grounded ALICE's answer (``neural_data``), over the answer
vocabulary of the training dialogs. Held-out metric per epoch: agreement with the grounded ALICE
on dialogs over scenes never seen in training (``val`` split). Seeded data, initialisation and
batch order: same arguments, same weights on one machine (CPU).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from agents.training import Panel, run_epochs
from agents.training import plot_history as plot
from clevr.alice import CANT_TELL
from games.colors.neural.model import Vocabulary
from games.guesswhich.neural import data as neural_data
from games.guesswhich.neural.model import (Config, NeuralAlice, answer_vocabulary, encode_batch, history_text,
                                     save_checkpoint)


@dataclass
class Result:
    model: NeuralAlice
    vocab: Vocabulary
    answers: list[str]
    history: list[dict] = field(default_factory=list)
    args: dict = field(default_factory=dict)
    kind: str = "guesswhich_neural_alice"

    def save(self, path) -> tuple[str, str]:
        return save_checkpoint(path, model=self.model, vocab=self.vocab, answers=self.answers,
                               extra={"training": self.args, "history": self.history,
                                      "data_generator": neural_data.GENERATOR_VERSION})


def predict(model: NeuralAlice, vocab: Vocabulary, answers: list[str], items: list[dict], device,
            batch_size: int = 256) -> list[str]:
    model.eval()
    out: list[str] = []
    with torch.no_grad():
        for start in range(0, len(items), batch_size):
            best = model(*encode_batch(vocab, items[start:start + batch_size], device)).argmax(dim=-1).tolist()
            out.extend(answers[i] for i in best)
    return out


def accuracy(model, vocab, answers, items, device) -> float:
    if not items:
        return float("nan")
    pred = predict(model, vocab, answers, items, device)
    return float(np.mean([p == it["answer"] for p, it in zip(pred, items)]))


def majority_accuracy(train_items: list[dict], items: list[dict]) -> float:
    """The baseline: always say the most frequent training answer."""
    top = Counter(it["answer"] for it in train_items).most_common(1)[0][0]
    return float(np.mean([it["answer"] == top for it in items]))


def train(*, dialogs: int, epochs: int, seed: int, device: str = "cpu", batch_size: int = 64,
          lr: float = 3e-3, embed: int = 32, hidden: int = 64, val_dialogs: int = 60,
          progress: bool = True) -> Result:
    torch.manual_seed(seed)
    train_set = neural_data.make_dialogs(dialogs, seed, "train")
    val_set = neural_data.make_dialogs(val_dialogs, seed, "val")
    vocab = Vocabulary.build([it["question"] for it in train_set]
                             + [history_text(it["caption"], it["history"]) for it in train_set[:2000]])
    answers = answer_vocabulary([it["answer"] for it in train_set])
    index = {a: i for i, a in enumerate(answers)}
    labels = [index.get(it["answer"], index[CANT_TELL]) for it in train_set]
    model = NeuralAlice(Config(vocab_size=len(vocab), n_answers=len(answers), embed=embed, hidden=hidden)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    result = Result(model, vocab, answers, args={
        "kind": "guesswhich_neural_alice", "dialogs": dialogs, "examples": len(train_set), "epochs": epochs,
        "seed": seed, "batch_size": batch_size, "lr": lr, "embed": embed, "hidden": hidden,
        "val_dialogs": val_dialogs, "torch": torch.__version__,
        "majority_val_accuracy": majority_accuracy(train_set, val_set)})

    def loss_of(idx: list[int]) -> torch.Tensor:
        logp = model(*encode_batch(vocab, [train_set[i] for i in idx], device))
        return nn.functional.nll_loss(logp, torch.tensor([labels[i] for i in idx], device=device))

    run_epochs(model=model, optimizer=optimizer, n_examples=len(train_set), batch_size=batch_size, epochs=epochs,
               seed=seed, loss_of=loss_of, history=result.history, desc="guesswhich_neural_alice", progress=progress,
               evaluate=lambda: {"val_accuracy": accuracy(model, vocab, answers, val_set, device)})
    return result


def plot_history(result: Result, path) -> None:
    """The loss and the held-out agreement with the grounded ALICE per epoch (agents/training.py)."""
    plot(result.history, path, title=result.kind, panels=[Panel(
        "accuracy", {"val_accuracy": "agrees with grounded ALICE (held-out scenes)"},
        {"majority answer": result.args["majority_val_accuracy"]})])
