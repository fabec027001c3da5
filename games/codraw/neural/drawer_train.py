"""Training of the neural CoDraw Drawer (``manage.py train_agent codraw_neural_drawer`` calls :func:`train`).

Loss per round: cross-entropy of the choose logits (a softmax over the 58 clip arts) against the
clip arts the round added or moved (spread evenly when a round changes several), plus, for those clip arts only, L1 on
x/y (canvas fractions, x5), cross-entropy on depth and flip, and on subtype for Mike and Jenny.
The canvas input is the canvas before the message.

Held-out metric per epoch (``val``, scenes of the ``val`` seed range, paraphrased like training):
the share of rounds whose first chosen clip art is right, and the mean distance in px of its place.
Seeded: data, initialisation and batch order.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from agents.training import Panel, run_epochs
from agents.training import plot_history as plot_history_png

from games.codraw import clipart as ca
from games.codraw.neural import data as neural_data
from games.codraw.neural.model import Config, build_model, canvas_features, pad_batch, save_checkpoint
from games.codraw.neural.vocab import Vocabulary

KIND = "codraw_neural_drawer"
XY_WEIGHT = 5.0


@dataclass
class Result:
    kind: str
    model: nn.Module
    vocab: Vocabulary
    history: list[dict] = field(default_factory=list)
    args: dict = field(default_factory=dict)

    def save(self, path) -> tuple[str, str]:
        return save_checkpoint(path, kind=self.kind, model=self.model, vocab=self.vocab,
                               extra={"training": self.args, "history": self.history,
                                      "data_generator": neural_data.GENERATOR_VERSION})


def batch_tensors(examples: list[dict], vocab: Vocabulary, device):
    canvases = []
    for e in examples:
        canvases.append(canvas_features(e["canvas"]))
    ids, values, lengths = pad_batch([vocab.encode(e["text"]) for e in examples], device)
    return ids, values, lengths, torch.tensor(canvases, dtype=torch.float32, device=device)


def loss_of(out: dict, examples: list[dict], device) -> torch.Tensor:
    chosen = torch.zeros(len(examples), ca.N_CLIPARTS, device=device)
    rows, idxs, xy, depth, flip, sub_rows, subtype = [], [], [], [], [], [], []
    for i, e in enumerate(examples):
        for c in e["changes"]:
            chosen[i, c["idx"]] = 1.0
            rows.append(i)
            idxs.append(c["idx"])
            xy.append([c["x"] / ca.CANVAS_W, c["y"] / ca.CANVAS_H])
            depth.append(c["depth"])
            flip.append(c["flip"])
            if c["idx"] in ca.HUMAN_IDXS:
                sub_rows.append(len(rows) - 1)
                subtype.append(c["subtype"])
    loss = nn.functional.cross_entropy(out["choose"], chosen / chosen.sum(dim=-1, keepdim=True))
    r, k = torch.tensor(rows, device=device), torch.tensor(idxs, device=device)
    loss = loss + XY_WEIGHT * nn.functional.l1_loss(out["xy"][r, k], torch.tensor(xy, device=device))
    loss = loss + nn.functional.cross_entropy(out["depth"][r, k], torch.tensor(depth, device=device))
    loss = loss + nn.functional.cross_entropy(out["flip"][r, k], torch.tensor(flip, device=device))
    if sub_rows:
        s = torch.tensor(sub_rows, device=device)
        loss = loss + nn.functional.cross_entropy(out["subtype"][r[s], k[s]], torch.tensor(subtype, device=device))
    return loss


def evaluate(model, vocab, examples: list[dict], device) -> dict:
    model.eval()
    hits, dist = 0, []
    with torch.no_grad():
        for start in range(0, len(examples), 256):
            chunk = examples[start:start + 256]
            out = model(*batch_tensors(chunk, vocab, device))
            best = out["choose"].argmax(dim=-1).tolist()
            for i, (e, k) in enumerate(zip(chunk, best)):
                truth = {c["idx"]: c for c in e["changes"]}
                if k in truth:
                    hits += 1
                    x, y = out["xy"][i, k].tolist()
                    dist.append(float(np.hypot(x * ca.CANVAS_W - truth[k]["x"], y * ca.CANVAS_H - truth[k]["y"])))
    return {"val_clipart_accuracy": hits / max(1, len(examples)),
            "val_position_error_px": float(np.mean(dist)) if dist else float("nan")}


def train(kind: str = KIND, *, examples: int, epochs: int, seed: int, device: str = "cpu", batch_size: int = 64,
          lr: float = 3e-3, embed: int = 32, hidden: int = 64, val_examples: int = 40,
          progress: bool = True) -> Result:
    """``examples``: generated training DIALOGS (each gives one example per round)."""
    torch.manual_seed(seed)
    train_set = neural_data.make_examples("train", examples, seed)
    val_set = neural_data.make_examples("val", val_examples, seed)
    vocab = Vocabulary.build([e["text"] for e in train_set])
    model = build_model(kind, Config(vocab_size=len(vocab), embed=embed, hidden=hidden)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    result = Result(kind, model, vocab, args={
        "kind": kind, "dialogs": examples, "train_rounds": len(train_set), "epochs": epochs, "seed": seed,
        "batch_size": batch_size, "lr": lr, "embed": embed, "hidden": hidden, "val_dialogs": val_examples,
        "seed_ranges": neural_data.SEED_RANGES, "torch": torch.__version__})

    def batch_loss(idx: list[int]) -> torch.Tensor:
        batch = [train_set[i] for i in idx]
        return loss_of(model(*batch_tensors(batch, vocab, device)), batch, device)

    run_epochs(model=model, optimizer=optimizer, n_examples=len(train_set), batch_size=batch_size, epochs=epochs,
               seed=seed, loss_of=batch_loss, evaluate=lambda: evaluate(model, vocab, val_set, device),
               history=result.history, desc=kind, progress=progress)
    return result


def plot_history(result: Result, path) -> None:
    plot_history_png(result.history, path, title=result.kind, width=11, panels=[
        Panel("held-out: right clip art", {"val_clipart_accuracy": ""}),
        Panel("held-out: position error (px)", {"val_position_error_px": ""}, ylim=None)])
