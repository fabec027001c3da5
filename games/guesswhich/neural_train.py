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
from tqdm import tqdm

from games.clevr.alice import CANT_TELL
from games.colors.neural import Vocabulary
from games.guesswhich import neural_data
from games.guesswhich.neural import (Config, NeuralAlice, answer_vocabulary, encode_batch, history_text,
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
    order_gen = torch.Generator().manual_seed(seed)
    result = Result(model, vocab, answers, args={
        "kind": "guesswhich_neural_alice", "dialogs": dialogs, "examples": len(train_set), "epochs": epochs,
        "seed": seed, "batch_size": batch_size, "lr": lr, "embed": embed, "hidden": hidden,
        "val_dialogs": val_dialogs, "torch": torch.__version__,
        "majority_val_accuracy": majority_accuracy(train_set, val_set)})
    n_batches = (len(train_set) + batch_size - 1) // batch_size
    for epoch in range(1, epochs + 1):
        model.train()
        order = torch.randperm(len(train_set), generator=order_gen).tolist()
        losses = []
        bar = tqdm(range(n_batches), desc=f"guesswhich_neural_alice epoch {epoch}/{epochs}", unit="batch",
                   disable=not progress, leave=False)
        for b in bar:
            idx = order[b * batch_size:(b + 1) * batch_size]
            logp = model(*encode_batch(vocab, [train_set[i] for i in idx], device))
            loss = nn.functional.nll_loss(logp, torch.tensor([labels[i] for i in idx], device=device))
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            optimizer.step()
            losses.append(loss.item())
            bar.set_postfix(loss=f"{np.mean(losses[-50:]):.3f}")
        row = {"epoch": epoch, "loss": float(np.mean(losses)),
               "val_accuracy": accuracy(model, vocab, answers, val_set, device)}
        result.history.append(row)
        if progress:
            tqdm.write(f"epoch {epoch}: loss={row['loss']:.3f}, val_accuracy={row['val_accuracy']:.3f}")
    model.eval()
    return result


def plot_history(result: Result, path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    epochs = [row["epoch"] for row in result.history]
    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(8, 3.2))
    ax_loss.plot(epochs, [row["loss"] for row in result.history], marker="o")
    ax_loss.set_xlabel("epoch")
    ax_loss.set_ylabel("training loss")
    ax_loss.set_title(result.kind)
    ax_acc.plot(epochs, [row["val_accuracy"] for row in result.history], marker="o",
                label="agrees with grounded ALICE (held-out scenes)")
    ax_acc.axhline(result.args["majority_val_accuracy"], color="grey", linestyle="--", linewidth=1,
                   label="majority answer")
    ax_acc.set_ylim(0, 1.02)
    ax_acc.set_xlabel("epoch")
    ax_acc.set_ylabel("accuracy")
    ax_acc.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
