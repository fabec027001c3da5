"""Training of the neural CoDraw Drawer (``manage.py train_agent codraw_neural_drawer`` calls :func:`train`).

Loss per round: with ``Config.multilabel`` (fresh models since issue 25 item 4; the paper's
design), binary cross-entropy per clip art (summed over the 58; a clip art asked for weighted
``POS_WEIGHT``; the choice's bias starts at the prior, model.py) against the set of clip arts the
round added or moved (all of them: a message naming two pieces has both as targets, a message
naming nothing has none); else (older checkpoints, fine-tuned as they are) cross-entropy of the
choose logits (a softmax over the 58) against them (spread evenly when a round changes several).
Plus, for those clip arts only, L1 on
x/y (canvas fractions, x5), cross-entropy on depth and flip, and on subtype for Mike and Jenny.
The canvas input is the canvas before the message. After training, a multilabel model's
``threshold`` (``Config.threshold``: the probability at which a clip art is asked for) is the
one of ``THRESHOLDS`` under which the most held-out rounds get exactly their set of clip arts
(generated validation scenes, or people's held-out dialogs with ``val_data``); it is stored in
the checkpoint's config and the last epoch's metrics are those under it (``threshold``).

With the abstain class (softmax ``Config.abstain``, data since GENERATOR_VERSION 2) a round whose message
asks for nothing (``abstain``: no change) has the choice's target on ``ABSTAIN`` and no other loss.

Held-out metrics per epoch (``val``: scenes of the ``val`` seed range, worded like training; or with
``val_data``, people's held-out dialogs): ``val_clipart_accuracy``, the share of rounds whose
choice is right (multilabel: exactly the set of clip arts the round added or moved, none for a
round that changed nothing; softmax: the top choice is one of them, ``ABSTAIN`` for a round that
changed nothing), the same per condition (``val_<condition>_accuracy``: data.CONDITIONS for generated data,
corpus.CONDITIONS for people's), ``val_false_abstain`` (drawable rounds it abstained on), and for
the rounds whose clip art is right: ``val_position_error_px`` (mean distance of its place),
``val_depth_accuracy``, ``val_flip_accuracy``.

People's data (``data``, ``val_data``: games/codraw/neural/corpus.py examples): trained on beside
``examples`` generated dialogs (0: people's only), the vocabulary built from both; ``base`` (a
loaded checkpoint of this kind, ``--from``) is fine-tuned: its vocabulary and sizes are kept.
``data_meta`` (the file's sha256, format, split) goes into the checkpoint (``data``), where the
agent family reads it (``data_sha256``, reported in every seat the model plays).
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
from games.codraw.neural.model import ABSTAIN, Config, build_model, canvas_features, pad_batch, save_checkpoint
from games.codraw.neural.vocab import Vocabulary

KIND = "codraw_neural_drawer"
XY_WEIGHT = 5.0
POS_WEIGHT = 3.0               # multilabel: a missed clip art costs this many false ones (most of the 58 are not asked for)
THRESHOLDS = tuple(round(0.05 * k, 2) for k in range(2, 19))      # 0.10 .. 0.90, a multilabel model's candidates


@dataclass
class Result:
    kind: str
    model: nn.Module
    vocab: Vocabulary
    history: list[dict] = field(default_factory=list)
    args: dict = field(default_factory=dict)
    data: dict | None = None          # people's data trained on (corpus file, sha256, split), None: generated only

    def save(self, path) -> tuple[str, str]:
        extra = {"training": self.args, "history": self.history, "data_generator": neural_data.GENERATOR_VERSION}
        if self.data:
            extra["data"] = self.data
        return save_checkpoint(path, kind=self.kind, model=self.model, vocab=self.vocab, extra=extra)


def batch_tensors(examples: list[dict], vocab: Vocabulary, device):
    canvases = []
    for e in examples:
        canvases.append(canvas_features(e["canvas"]))
    ids, values, lengths = pad_batch([vocab.encode(e["text"]) for e in examples], device)
    return ids, values, lengths, torch.tensor(canvases, dtype=torch.float32, device=device)


def loss_of(out: dict, examples: list[dict], device, multilabel: bool = False) -> torch.Tensor:
    n_choices = out["choose"].shape[-1]
    chosen = torch.zeros(len(examples), n_choices, device=device)
    rows, idxs, xy, depth, flip, sub_rows, subtype = [], [], [], [], [], [], []
    for i, e in enumerate(examples):
        if not e["changes"] and not multilabel:
            chosen[i, ABSTAIN] = 1.0          # only examples of an abstaining model have no changes
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
    if multilabel:
        loss = nn.functional.binary_cross_entropy_with_logits(out["choose"], chosen, reduction="sum",
                                                          pos_weight=torch.tensor(POS_WEIGHT, device=device)) / len(examples)
    else:
        loss = nn.functional.cross_entropy(out["choose"], chosen / chosen.sum(dim=-1, keepdim=True))
    if not rows:
        return loss
    r, k = torch.tensor(rows, device=device), torch.tensor(idxs, device=device)
    loss = loss + XY_WEIGHT * nn.functional.l1_loss(out["xy"][r, k], torch.tensor(xy, device=device))
    loss = loss + nn.functional.cross_entropy(out["depth"][r, k], torch.tensor(depth, device=device))
    loss = loss + nn.functional.cross_entropy(out["flip"][r, k], torch.tensor(flip, device=device))
    if sub_rows:
        s = torch.tensor(sub_rows, device=device)
        loss = loss + nn.functional.cross_entropy(out["subtype"][r[s], k[s]], torch.tensor(subtype, device=device))
    return loss


def choices(out: dict, multilabel: bool, threshold: float) -> list[list[int]]:
    """Per row, the clip arts chosen (best first; ``[]``: abstain): multilabel, those whose sigmoid
    reaches ``threshold``; softmax, the top one (``[]`` when it is ``ABSTAIN``)."""
    if multilabel:
        probs = torch.sigmoid(out["choose"])
        return [[k for k in sorted(range(len(row)), key=lambda j: -row[j]) if row[k] >= threshold]
                for row in probs.tolist()]
    return [[] if k == ABSTAIN else [k] for k in out["choose"].argmax(dim=-1).tolist()]


def evaluate(model, vocab, examples: list[dict], device, conditions=neural_data.CONDITIONS,
             threshold: float | None = None) -> dict:
    """The held-out metrics of the module docstring over ``examples`` (``threshold``: a multilabel
    model's, default its config's)."""
    model.eval()
    multilabel = bool(getattr(model.cfg, "multilabel", False))
    threshold = model.cfg.threshold if threshold is None else threshold
    hits, dist, depth_ok, flip_ok, false_abstain, drawable = 0, [], [], [], 0, 0
    per: dict[str, list[int]] = {c: [] for c in conditions}
    with torch.no_grad():
        for start in range(0, len(examples), 256):
            chunk = examples[start:start + 256]
            out = model(*batch_tensors(chunk, vocab, device))
            for i, (e, chosen) in enumerate(zip(chunk, choices(out, multilabel, threshold))):
                truth = {c["idx"]: c for c in e["changes"]}
                if multilabel:
                    right = set(chosen) == set(truth)       # exactly its clip arts (none: it abstains)
                else:
                    right = chosen[0] in truth if chosen else not truth
                hits += right
                per.setdefault(e.get("condition", ""), []).append(int(right))
                if truth:
                    drawable += 1
                    false_abstain += not chosen
                for k in (chosen if right else []):   # right: every chosen clip art is one of the round's
                    x, y = out["xy"][i, k].tolist()
                    dist.append(float(np.hypot(x * ca.CANVAS_W - truth[k]["x"], y * ca.CANVAS_H - truth[k]["y"])))
                    depth_ok.append(int(out["depth"][i, k].argmax()) == truth[k]["depth"])
                    flip_ok.append(int(out["flip"][i, k].argmax()) == truth[k]["flip"])
    metrics = {"val_clipart_accuracy": hits / max(1, len(examples)),
               "val_position_error_px": float(np.mean(dist)) if dist else float("nan"),
               "val_depth_accuracy": float(np.mean(depth_ok)) if depth_ok else float("nan"),
               "val_flip_accuracy": float(np.mean(flip_ok)) if flip_ok else float("nan"),
               "val_false_abstain": false_abstain / max(1, drawable)}
    for condition, marks in per.items():
        if marks and condition:
            metrics[f"val_{condition}_accuracy"] = float(np.mean(marks))
    return metrics


def choose_threshold(model, vocab, examples: list[dict], device) -> float:
    """The threshold of ``THRESHOLDS`` under which the most of ``examples`` get exactly their set
    of clip arts (the middle one of a tie)."""
    model.eval()
    right = dict.fromkeys(THRESHOLDS, 0)
    with torch.no_grad():
        for start in range(0, len(examples), 256):
            chunk = examples[start:start + 256]
            out = model(*batch_tensors(chunk, vocab, device))
            for t in THRESHOLDS:
                right[t] += sum(set(c) == {x["idx"] for x in e["changes"]}
                                for e, c in zip(chunk, choices(out, True, t)))
    best = max(right.values())
    tied = [t for t in THRESHOLDS if right[t] == best]
    return tied[len(tied) // 2]


def train(kind: str = KIND, *, examples: int, epochs: int, seed: int, device: str = "cpu", batch_size: int = 64,
          lr: float = 3e-3, embed: int = 32, hidden: int = 64, val_examples: int = 40,
          progress: bool = True, data: list[dict] | None = None, val_data: list[dict] | None = None,
          base=None, data_meta: dict | None = None, abstain: bool = True, multilabel: bool = True) -> Result:
    """``examples``: generated training DIALOGS (each gives one example per round); ``data``,
    ``val_data``, ``base``, ``data_meta``: people's data and fine-tuning (module docstring);
    ``abstain``: a fresh model trains on messages that name nothing (softmax: with the abstain
    class); ``multilabel``: a fresh model's choice is a sigmoid per clip art (a base keeps its own)."""
    torch.manual_seed(seed)
    if base is not None:
        abstain = bool(base.model.cfg.abstain)
        multilabel = bool(getattr(base.model.cfg, "multilabel", False))
    train_set = neural_data.make_examples("train", examples, seed, nothing_share=neural_data.NOTHING_SHARE
                                          if abstain else 0.0) if examples else []
    train_set += list(data or [])
    if not abstain:
        train_set = [e for e in train_set if e["changes"]]
    if not train_set:
        raise ValueError("No training examples: give generated dialogs (examples > 0) or people's data.")
    if val_data is not None:
        val_set, conditions = list(val_data), corpus_conditions()
    else:
        val_set = neural_data.make_examples("val", val_examples, seed, nothing_share=neural_data.NOTHING_SHARE
                                            if abstain else 0.0)
        conditions = neural_data.CONDITIONS
    if not abstain:
        val_set = [e for e in val_set if e["changes"]]
    if base is not None:
        vocab, model = base.vocab, base.model.to(device)
        embed, hidden = model.cfg.embed, model.cfg.hidden
    else:
        vocab = Vocabulary.build([e["text"] for e in train_set])
        model = build_model(kind, Config(vocab_size=len(vocab), embed=embed, hidden=hidden, abstain=abstain,
                                         multilabel=multilabel)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    result = Result(kind, model, vocab, args={
        "kind": kind, "dialogs": examples, "train_rounds": len(train_set), "epochs": epochs, "seed": seed,
        "batch_size": batch_size, "lr": lr, "embed": embed, "hidden": hidden, "val_dialogs": val_examples,
        "abstain": abstain, "multilabel": multilabel, "people_rounds": len(data or []), "from": getattr(base, "sha256", None),
        "generator_version": neural_data.GENERATOR_VERSION,
        "seed_ranges": neural_data.SEED_RANGES, "torch": torch.__version__}, data=data_meta)

    def batch_loss(idx: list[int]) -> torch.Tensor:
        batch = [train_set[i] for i in idx]
        return loss_of(model(*batch_tensors(batch, vocab, device)), batch, device, multilabel)

    run_epochs(model=model, optimizer=optimizer, n_examples=len(train_set), batch_size=batch_size, epochs=epochs,
               seed=seed, loss_of=batch_loss, evaluate=lambda: evaluate(model, vocab, val_set, device, conditions),
               history=result.history, desc=kind, progress=progress)
    if multilabel and val_set:
        model.cfg.threshold = choose_threshold(model, vocab, val_set, device)
        result.history[-1].update(evaluate(model, vocab, val_set, device, conditions), threshold=model.cfg.threshold)
    return result


def corpus_conditions() -> tuple[str, ...]:
    from games.codraw.neural.corpus import CONDITIONS
    return CONDITIONS


def plot_history(result: Result, path) -> None:
    plot_history_png(result.history, path, title=result.kind, width=11, panels=[
        Panel("held-out: right clip art (abstain on nothing)",
              {"val_clipart_accuracy": "all", **{k: k[4:-9] for k in result.history[-1]
                                                 if k.endswith("_accuracy") and k not in (
                                                     "val_clipart_accuracy", "val_depth_accuracy",
                                                     "val_flip_accuracy")}}),
        Panel("held-out: position error (px)", {"val_position_error_px": ""}, ylim=None)])
