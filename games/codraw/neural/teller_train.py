"""Training of the neural CoDraw Teller (``manage.py train_agent codraw_neural_teller`` calls :func:`train`).

Data: :func:`neural_data.teller_examples` over generated dialogs of one training half
(``neural_data.HALVES``; the Teller's default is ``b``, the committed Drawer's ``a``: crosstalk).
Loss per Teller turn (the paper's scene2seq with its auxiliary loss, supervised only):

* cross-entropy of the choice (the next piece the rule Teller described, or stop);
* binary cross-entropy of ``described`` against the pieces the earlier messages were about;
* per-word cross-entropy of the message given the true piece (teacher forcing; stop turns have
  no message).

Held-out metrics per epoch (``val`` seed range, paraphrased like training): the share of turns
whose choice is right (``val_choice_accuracy``), the per-word accuracy of teacher-forced decoding
(``val_token_accuracy``) beside what always saying the most frequent training word gets
(``majority_token_accuracy``), and the share of pieces whose described / not yet described
the tracker gets right (``val_described_accuracy``). Seeded: data, initialisation and batch order.
"""
from __future__ import annotations

from collections import Counter

import torch
from torch import nn

from agents.training import Panel, run_epochs
from agents.training import plot_history as plot_history_png

from games.codraw.neural import data as neural_data
from games.codraw.neural.model import Config
from games.codraw.neural.model import build_model
from games.codraw.neural.teller_model import (BOS_ID, EOS_ID, encode_words, history_tensors, scene_tensors,
                                        teller_vocabulary, words)
from games.codraw.neural.drawer_train import Result

KIND = "codraw_neural_teller"
DESCRIBED_WEIGHT = 1.0


def batch_tensors(examples: list[dict], vocab, device) -> dict:
    """The model's inputs and targets for a list of :func:`neural_data.teller_examples`."""
    feats, arts, subtypes, mask = scene_tensors([e["target"] for e in examples], device)
    hist_ids, hist_len = history_tensors([[encode_words(vocab, m) for m in e["history"]] for e in examples], device)
    n = arts.shape[1]
    choice = torch.tensor([n if e["choice"] is None else e["choice"] for e in examples], dtype=torch.long,
                          device=device)
    described = torch.zeros(len(examples), n, device=device)
    for b, e in enumerate(examples):
        described[b, e["described"]] = 1.0
    seqs = [[BOS_ID, *encode_words(vocab, e["text"]), EOS_ID] if e["choice"] is not None else [BOS_ID]
            for e in examples]
    tokens = torch.zeros(len(examples), max(len(s) for s in seqs) if seqs else 1, dtype=torch.long)
    for b, seq in enumerate(seqs):
        tokens[b, :len(seq)] = torch.tensor(seq, dtype=torch.long)
    if tokens.shape[1] < 2:
        tokens = torch.cat([tokens, torch.zeros(len(examples), 1, dtype=torch.long)], dim=1)
    return {"inputs": (feats, arts, subtypes, mask, hist_ids, hist_len), "choice": choice,
            "described": described, "mask": mask, "tokens": tokens.to(device)}


def loss_of(model, batch: dict) -> torch.Tensor:
    out = model(*batch["inputs"], choice=batch["choice"].clamp(max=batch["mask"].shape[1] - 1),
                tokens=batch["tokens"])
    loss = nn.functional.cross_entropy(out["choose"], batch["choice"])
    mask = batch["mask"]
    loss = loss + DESCRIBED_WEIGHT * nn.functional.binary_cross_entropy_with_logits(
        out["described"][mask], batch["described"][mask])
    target = batch["tokens"][:, 1:]
    if bool((target != 0).any()):
        loss = loss + nn.functional.cross_entropy(out["words"].reshape(-1, out["words"].shape[-1]),
                                                  target.reshape(-1), ignore_index=0)
    return loss


def evaluate(model, vocab, examples: list[dict], device, majority: int | None = None) -> dict:
    model.eval()
    chosen = right_words = all_words = majority_hits = described_right = pieces = 0
    with torch.no_grad():
        for start in range(0, len(examples), 256):
            batch = batch_tensors(examples[start:start + 256], vocab, device)
            out = model(*batch["inputs"], choice=batch["choice"].clamp(max=batch["mask"].shape[1] - 1),
                        tokens=batch["tokens"])
            chosen += int((out["choose"].argmax(-1) == batch["choice"]).sum())
            mask = batch["mask"]
            described_right += int((((out["described"] > 0).float() == batch["described"]) & mask).sum())
            pieces += int(mask.sum())
            target = batch["tokens"][:, 1:]
            real = target != 0
            right_words += int(((out["words"].argmax(-1) == target) & real).sum())
            all_words += int(real.sum())
            if majority is not None:
                majority_hits += int(((target == majority) & real).sum())
    row = {"val_choice_accuracy": chosen / max(1, len(examples)),
           "val_described_accuracy": described_right / max(1, pieces),
           "val_token_accuracy": right_words / max(1, all_words)}
    if majority is not None:
        row["majority_token_accuracy"] = majority_hits / max(1, all_words)
    return row


def train(kind: str = KIND, *, examples: int, epochs: int, seed: int, device: str = "cpu", batch_size: int = 64,
          lr: float = 3e-3, embed: int = 32, hidden: int = 80, val_examples: int = 40, half: str = "b",
          progress: bool = True) -> Result:
    """``examples``: generated training DIALOGS of training half ``half`` (each gives one example
    per Teller turn, the stop included)."""
    torch.manual_seed(seed)
    split = neural_data.HALVES[half]
    train_set = neural_data.teller_examples(split, examples, seed)
    val_set = neural_data.teller_examples("val", val_examples, seed)
    vocab = teller_vocabulary([e["text"] for e in train_set])
    counts = Counter(w for e in train_set if e["choice"] is not None for w in [*words(e["text"]), None])
    majority = vocab.index[counts.most_common(1)[0][0]] if counts.most_common(1)[0][0] else EOS_ID
    model = build_model(kind, Config(vocab_size=len(vocab), embed=embed, hidden=hidden)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    seeds = neural_data.scene_seeds(split, examples, seed * 100_000)
    result = Result(kind, model, vocab, args={
        "kind": kind, "dialogs": examples, "train_turns": len(train_set), "epochs": epochs, "seed": seed,
        "half": half, "split": split, "train_seeds": [seeds.start, seeds.stop], "batch_size": batch_size,
        "lr": lr, "embed": embed, "hidden": hidden, "val_dialogs": val_examples,
        "seed_ranges": neural_data.SEED_RANGES, "torch": torch.__version__})

    run_epochs(model=model, optimizer=optimizer, n_examples=len(train_set), batch_size=batch_size, epochs=epochs,
               seed=seed, loss_of=lambda idx: loss_of(model, batch_tensors([train_set[i] for i in idx], vocab, device)),
               evaluate=lambda: evaluate(model, vocab, val_set, device, majority), history=result.history, desc=kind,
               progress=progress)
    return result


def plot_history(result: Result, path) -> None:
    plot_history_png(result.history, path, title=result.kind, width=8.5, panels=[Panel("held-out accuracy", {
        "val_choice_accuracy": "next piece / stop", "val_token_accuracy": "words",
        "majority_token_accuracy": "words: most frequent word"}, dashed=("majority_token_accuracy",))])
