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

People's dialogs (``data``, ``val_data``: :func:`people_examples` of games/codraw/neural/corpus.py
rounds, ``train_agent codraw_neural_teller --data``): each round with a Teller message whose
Drawer then drew or moved pieces of the target is one example: the target and the Teller's earlier
messages (what the Teller saw; the model reads neither the canvas nor the Drawer's replies), the
message (the decoder is teacher-forced on the person's words, given the first such piece), the
choice (the pieces the Drawer drew for it, the target spread evenly over them: the piece the
message talks about, as the Drawer read it) and ``described`` (the target pieces already on the
canvas before it). Rounds after which the Drawer changed no target piece (``ok``, ``looks
great``, a wrong clip art) teach nothing but stay in later turns' history; when to stop stays
generated (a person's last message says nothing about whether the scene is all told). They are
trained on beside ``examples`` generated dialogs (0: people's only), the vocabulary built from
both; ``base`` (a loaded checkpoint of this kind, ``--from``) is fine-tuned with its vocabulary
and sizes (people's words it lacks are ``<unk>``). Held-out people's turns add, per epoch:
``val_people_choice_accuracy`` (the top choice is a piece the Drawer drew; beside
``people_chance_choice``: a uniform pick among the pieces and stop), ``val_people_token_accuracy``
and ``val_people_perplexity`` (teacher-forced, every word of the message and its end, ``<unk>``
included; beside ``people_majority_token_accuracy`` and ``people_unigram_perplexity``: the most
frequent word and the add-one unigram of the people's TRAINING messages) and
``val_people_unk_share``; a ``base`` is also evaluated before fine-tuning (``args["before"]``).
``data_meta`` (the file's sha256, format, split) goes into the checkpoint (``data``), whence the
family's ``data_sha256`` goes into every seat's record.
"""
from __future__ import annotations

import math
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


def people_examples(examples: list[dict], targets: dict[str, list[dict]]) -> tuple[list[dict], int]:
    """``(Teller examples, rounds left out)`` from games/codraw/neural/corpus.py examples (with
    their ``history``) and ``Corpus.targets``: one per round whose Drawer drew or moved pieces of
    the target (module docstring), ``choices`` their positions in the target (``choice`` the first:
    the piece the decoder is given), ``described`` the target pieces on the canvas before it."""
    out, left_out = [], 0
    for e in examples:
        target = targets[e["dialog"]]
        where = {int(p["idx"]): k for k, p in enumerate(target)}
        choices = list(dict.fromkeys(where[int(c["idx"])] for c in e["changes"] if int(c["idx"]) in where))
        if not choices:
            left_out += 1
            continue
        on_canvas = {int(p["idx"]) for p in e["canvas"]}
        out.append({"target": target, "history": list(e["history"]), "choice": choices[0], "choices": choices,
                    "text": e["text"], "described": sorted(k for idx, k in where.items() if idx in on_canvas),
                    "dialog": e["dialog"], "condition": e.get("condition", ""), "people": True})
    return out, left_out


def batch_tensors(examples: list[dict], vocab, device) -> dict:
    """The model's inputs and targets for a list of :func:`neural_data.teller_examples` (and
    :func:`people_examples`: their ``choices`` spread the choice's target evenly)."""
    feats, arts, subtypes, mask = scene_tensors([e["target"] for e in examples], device)
    hist_ids, hist_len = history_tensors([[encode_words(vocab, m) for m in e["history"]] for e in examples], device)
    n = arts.shape[1]
    choice = torch.tensor([n if e["choice"] is None else e["choice"] for e in examples], dtype=torch.long,
                          device=device)
    chosen = torch.zeros(len(examples), n + 1, device=device)
    for b, e in enumerate(examples):
        for k in e.get("choices") or [n if e["choice"] is None else e["choice"]]:
            chosen[b, k] = 1.0
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
            "chosen": chosen / chosen.sum(dim=-1, keepdim=True), "described": described, "mask": mask,
            "tokens": tokens.to(device)}


def choice_loss(choose: torch.Tensor, chosen: torch.Tensor) -> torch.Tensor:
    """Cross-entropy of the choice against a spread target (one-hot: the usual one); the masked
    pieces' -inf logits have target 0 and add nothing."""
    logp = torch.log_softmax(choose, dim=-1).masked_fill(chosen == 0, 0.0)
    return -(chosen * logp).sum(dim=-1).mean()


def loss_of(model, batch: dict) -> torch.Tensor:
    out = model(*batch["inputs"], choice=batch["choice"].clamp(max=batch["mask"].shape[1] - 1),
                tokens=batch["tokens"])
    loss = choice_loss(out["choose"], batch["chosen"])
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


def word_counts(vocab, examples: list[dict]) -> Counter:
    """Word ids (and EOS) of the examples' messages, as the decoder is trained to say them."""
    return Counter(t for e in examples for t in [*encode_words(vocab, e["text"]), EOS_ID])


def people_baselines(vocab, train_people: list[dict], val_people: list[dict]) -> dict:
    """The held-out people's turns' baselines (module docstring), from the people's TRAINING messages."""
    counts, held = word_counts(vocab, train_people), word_counts(vocab, val_people)
    total, size = sum(counts.values()), len(vocab)
    n_held = max(1, sum(held.values()))
    nll = -sum(c * math.log((counts.get(t, 0) + 1) / (total + size)) for t, c in held.items())
    majority = counts.most_common(1)[0][0] if counts else EOS_ID
    return {"people_chance_choice": sum(len(e["choices"]) / (len(e["target"]) + 1) for e in val_people)
            / max(1, len(val_people)),
            "people_majority_token_accuracy": held.get(majority, 0) / n_held,
            "people_unigram_perplexity": math.exp(nll / n_held),
            "val_people_unk_share": held.get(vocab.index["<unk>"], 0) / n_held}


def evaluate_people(model, vocab, examples: list[dict], device) -> dict:
    """``val_people_choice_accuracy``, ``val_people_token_accuracy``, ``val_people_perplexity``
    over held-out :func:`people_examples`."""
    model.eval()
    chosen = right_words = all_words = 0
    nll = 0.0
    with torch.no_grad():
        for start in range(0, len(examples), 256):
            batch = batch_tensors(examples[start:start + 256], vocab, device)
            out = model(*batch["inputs"], choice=batch["choice"].clamp(max=batch["mask"].shape[1] - 1),
                        tokens=batch["tokens"])
            best = out["choose"].argmax(-1)
            chosen += int((batch["chosen"].gather(1, best.unsqueeze(1)) > 0).sum())
            target = batch["tokens"][:, 1:]
            real = target != 0
            right_words += int(((out["words"].argmax(-1) == target) & real).sum())
            all_words += int(real.sum())
            nll += float(nn.functional.cross_entropy(out["words"].reshape(-1, out["words"].shape[-1]),
                                                     target.reshape(-1), ignore_index=0, reduction="sum"))
    return {"val_people_choice_accuracy": chosen / max(1, len(examples)),
            "val_people_token_accuracy": right_words / max(1, all_words),
            "val_people_perplexity": math.exp(nll / max(1, all_words))}


def train(kind: str = KIND, *, examples: int, epochs: int, seed: int, device: str = "cpu", batch_size: int = 64,
          lr: float = 3e-3, embed: int = 32, hidden: int = 80, val_examples: int = 40, half: str = "b",
          progress: bool = True, data: list[dict] | None = None, val_data: list[dict] | None = None,
          base=None, data_meta: dict | None = None) -> Result:
    """``examples``: generated training DIALOGS of training half ``half`` (each gives one example
    per Teller turn, the stop included); ``data``, ``val_data`` (:func:`people_examples`),
    ``base``, ``data_meta``: people's dialogs and fine-tuning (module docstring)."""
    torch.manual_seed(seed)
    split = neural_data.HALVES[half]
    generated = neural_data.teller_examples(split, examples, seed) if examples else []
    train_set = generated + list(data or [])
    if not train_set:
        raise ValueError("No training examples: give generated dialogs (examples > 0) or people's data "
                         "(rounds whose Drawer drew a piece of the target).")
    val_set = neural_data.teller_examples("val", val_examples, seed)
    if base is not None:
        vocab, model = base.vocab, base.model.to(device)
        embed, hidden = model.cfg.embed, model.cfg.hidden
    else:
        vocab = teller_vocabulary([e["text"] for e in train_set])
        model = build_model(kind, Config(vocab_size=len(vocab), embed=embed, hidden=hidden)).to(device)
    counts = Counter(w for e in generated if e["choice"] is not None for w in [*words(e["text"]), None])
    top = counts.most_common(1)[0][0] if counts else None
    majority = vocab.index.get(top, EOS_ID) if top else EOS_ID
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    seeds = neural_data.scene_seeds(split, examples, seed * 100_000)
    result = Result(kind, model, vocab, args={
        "kind": kind, "dialogs": examples, "train_turns": len(train_set), "epochs": epochs, "seed": seed,
        "half": half, "split": split, "train_seeds": [seeds.start, seeds.stop], "batch_size": batch_size,
        "lr": lr, "embed": embed, "hidden": hidden, "val_dialogs": val_examples,
        "people_turns": len(data or []), "from": getattr(base, "sha256", None),
        "seed_ranges": neural_data.SEED_RANGES, "torch": torch.__version__}, data=data_meta)
    people_rows = people_baselines(vocab, list(data or []), list(val_data)) if val_data else {}

    def evaluate_all() -> dict:
        row = evaluate(model, vocab, val_set, device, majority)
        if val_data:
            row.update(evaluate_people(model, vocab, val_data, device), **people_rows)
        return row

    if base is not None:
        result.args["before"] = evaluate_all()       # the checkpoint fine-tuned, before: a baseline
    run_epochs(model=model, optimizer=optimizer, n_examples=len(train_set), batch_size=batch_size, epochs=epochs,
               seed=seed, loss_of=lambda idx: loss_of(model, batch_tensors([train_set[i] for i in idx], vocab, device)),
               evaluate=evaluate_all, history=result.history, desc=kind, progress=progress)
    return result


def plot_history(result: Result, path) -> None:
    panels = [Panel("held-out accuracy", {
        "val_choice_accuracy": "next piece / stop", "val_token_accuracy": "words",
        "majority_token_accuracy": "words: most frequent word",
        "val_people_choice_accuracy": "people's: piece", "val_people_token_accuracy": "people's: words",
        "people_majority_token_accuracy": "people's words: most frequent"},
        dashed=("majority_token_accuracy", "people_majority_token_accuracy"))]
    if result.history and "val_people_perplexity" in result.history[0]:
        panels.append(Panel("people's held-out messages: perplexity", {
            "val_people_perplexity": "model", "people_unigram_perplexity": "unigram"},
            dashed=("people_unigram_perplexity",), ylim=None))
    plot_history_png(result.history, path, title=result.kind, width=8.5 + 3.5 * (len(panels) - 1), panels=panels)
