"""Training of the neural ALICE (``manage.py train_agent guesswhich_neural_alice`` calls :func:`train`).

Supervised: cross-entropy of the exact grounded ALICE's answer (``neural_data``), over the answer
vocabulary of the training dialogs. Held-out metric per epoch: agreement with the grounded ALICE
on dialogs over scenes never seen in training (``val`` split). Seeded data, initialisation and
batch order: same arguments, same weights on one machine (CPU).

People's dialogs (``data``, ``val_data``: games/guesswhich/neural/corpus.py examples, split by
dialog): trained on beside ``dialogs`` generated ones (0: people's only). A person's answer is
mapped onto the answer vocabulary (:func:`corpus.canonical_answer`). From scratch the vocabulary is
the generated dialogs' answers plus the CLEVR answers (:data:`CORE_ANSWERS`), extended with every
other (normalised) answer people gave at least ``min_count`` times in training; rarer ones are
skipped and counted. Fine-tuning a ``base`` (a loaded checkpoint, ``--from``) keeps its vocabularies
and sizes, and skips (and counts) training answers outside its answer vocabulary. Held-out metrics
are then on people's held-out dialogs: ``val_accuracy`` and ``val_<answer type>_accuracy``
(corpus.ANSWER_TYPES; a held-out answer outside the vocabulary counts as wrong), beside the
majority baseline (``majority_val``: the most frequent training answer, overall and per type).
``data_meta`` (the file's sha256, format, split, the answer mapping's counts) goes into the
checkpoint (``data``), where the agent family reads it (``data_sha256``, recorded in every seat).
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
from clevr.captions import COLORS, MATERIALS, SHAPES, SIZES
from games.colors.neural.model import Vocabulary
from games.guesswhich.neural import corpus as people
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
    data: dict | None = None      # people's data file (train_agent --data): path, format, sha256, split

    def save(self, path) -> tuple[str, str]:
        extra = {"training": self.args, "history": self.history, "data_generator": neural_data.GENERATOR_VERSION}
        if self.data:
            extra["data"] = self.data
        return save_checkpoint(path, model=self.model, vocab=self.vocab, answers=self.answers, extra=extra)


# the CLEVR world's answers: people's answers are mapped onto these (and the generated vocabulary) first
CORE_ANSWERS = ("yes", "no", CANT_TELL, *(str(n) for n in range(11)), *COLORS, *SHAPES, *SIZES, *MATERIALS)


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


def type_accuracies(model, vocab, answers, items, device) -> dict:
    """``val_accuracy`` and ``val_<type>_accuracy`` (the types present) of people's held-out rounds."""
    pred = predict(model, vocab, answers, items, device) if items else []
    right = [p == it["answer"] for p, it in zip(pred, items)]
    out = {"val_accuracy": float(np.mean(right)) if right else float("nan")}
    for t in people.ANSWER_TYPES:
        marks = [r for r, it in zip(right, items) if it["qtype"] == t]
        if marks:
            out[f"val_{t}_accuracy"] = float(np.mean(marks))
    return out


def majority_by_type(train_items: list[dict], items: list[dict]) -> dict:
    """The majority baseline on ``items``: the most frequent training answer, on all and per type."""
    top = Counter(it["answer"] for it in train_items).most_common(1)[0][0]
    out = {"all": float(np.mean([it["answer"] == top for it in items])), "answer": top}
    for t in people.ANSWER_TYPES:
        rows = [it for it in items if it["qtype"] == t]
        if rows:
            out[t] = float(np.mean([it["answer"] == top for it in rows]))
    return out


def people_answers(data: list[dict], val_data: list[dict], answers: list[str] | None, base_answers: list[str] | None,
                   min_count: int) -> tuple[list[str], list[dict], list[dict], dict]:
    """(answer vocabulary, training rounds, held-out rounds, counts) with people's answers mapped
    (module docstring). ``answers``: the generated vocabulary (scratch) or None; ``base_answers``:
    the fine-tuned checkpoint's vocabulary, kept as it is."""
    vocab = list(base_answers) if base_answers is not None else sorted({*CORE_ANSWERS, *(answers or [])})
    mapped, left = people.map_answers(data, vocab)
    added: list[str] = []
    if base_answers is None:
        counts = Counter(e["answer"] for e in left)
        added = sorted(a for a, c in counts.items() if c >= min_count and 0 < len(a) <= 200)
        vocab = sorted({*vocab, *added})
        more, left = people.map_answers(left, vocab)
        mapped += more
    val_mapped, val_left = people.map_answers(val_data, vocab)
    val = val_mapped + [{**e, "qtype": "other"} for e in val_left]    # never predictable: counted wrong
    stats = {"train_rounds": len(data), "train_mapped": len(mapped), "added_answers": added,
             "skipped_out_of_vocabulary": len(left),
             "skipped_examples": sorted(Counter(e["answer"] for e in left).items(), key=lambda x: -x[1])[:10],
             "val_rounds": len(val), "val_out_of_vocabulary": len(val_left), "min_count": min_count}
    return vocab, mapped, val, stats


def train(*, dialogs: int, epochs: int, seed: int, device: str = "cpu", batch_size: int = 64,
          lr: float = 3e-3, embed: int = 32, hidden: int = 64, val_dialogs: int = 60,
          progress: bool = True, data: list[dict] | None = None, val_data: list[dict] | None = None,
          base=None, data_meta: dict | None = None, min_count: int = 2) -> Result:
    """``dialogs`` generated training dialogs; ``data``, ``val_data``, ``base``, ``data_meta``,
    ``min_count``: people's dialogs and fine-tuning (module docstring)."""
    torch.manual_seed(seed)
    train_set = neural_data.make_dialogs(dialogs, seed, "train") if dialogs else []
    answers = answer_vocabulary([it["answer"] for it in train_set]) if train_set else None
    stats = None
    if data is not None:
        answers, mapped, val_set, stats = people_answers(
            data, val_data or [], answers, base.answers if base is not None else None, min_count)
        if base is not None:
            train_set = [it for it in train_set if it["answer"] in set(answers)]
        train_set += mapped
        if not val_set:
            raise ValueError("No held-out rounds of people's dialogs to validate on.")
    else:
        val_set = neural_data.make_dialogs(val_dialogs, seed, "val")
    if not train_set:
        raise ValueError("No training rounds: give generated dialogs (--dialogs > 0) or people's answers "
                         "that map onto the answer vocabulary.")
    if base is not None:
        vocab, answers, model = base.vocab, list(base.answers), base.model.to(device)
        embed, hidden = model.cfg.embed, model.cfg.hidden
    else:
        vocab = Vocabulary.build([it["question"] for it in train_set]
                                 + [history_text(it["caption"], it["history"]) for it in train_set[:2000]]
                                 + [history_text(it["caption"], it["history"]) for it in (data or [])])
        model = NeuralAlice(Config(vocab_size=len(vocab), n_answers=len(answers), embed=embed,
                                   hidden=hidden)).to(device)
    index = {a: i for i, a in enumerate(answers)}
    labels = [index.get(it["answer"], index[CANT_TELL]) for it in train_set]
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    people_train = [it for it in train_set if "dialog" in it]
    result = Result(model, vocab, answers, args={
        "kind": "guesswhich_neural_alice", "dialogs": dialogs, "examples": len(train_set), "epochs": epochs,
        "seed": seed, "batch_size": batch_size, "lr": lr, "embed": embed, "hidden": hidden,
        "val_dialogs": val_dialogs, "torch": torch.__version__, "from": getattr(base, "sha256", None),
        "people_rounds": len(people_train),
        "majority_val_accuracy": majority_accuracy(people_train or train_set, val_set)})
    if data is not None:
        result.args["majority_val"] = majority_by_type(people_train or train_set, val_set)
        result.data = {**(data_meta or {}), "answer_mapping": stats}

    def loss_of(idx: list[int]) -> torch.Tensor:
        logp = model(*encode_batch(vocab, [train_set[i] for i in idx], device))
        return nn.functional.nll_loss(logp, torch.tensor([labels[i] for i in idx], device=device))

    if data is not None:
        evaluate = lambda: type_accuracies(model, vocab, answers, val_set, device)  # noqa: E731
    else:
        evaluate = lambda: {"val_accuracy": accuracy(model, vocab, answers, val_set, device)}  # noqa: E731
    run_epochs(model=model, optimizer=optimizer, n_examples=len(train_set), batch_size=batch_size, epochs=epochs,
               seed=seed, loss_of=loss_of, history=result.history, desc="guesswhich_neural_alice", progress=progress,
               evaluate=evaluate)
    return result


def plot_history(result: Result, path) -> None:
    """The loss and the held-out agreement with the grounded ALICE per epoch (agents/training.py)."""
    if result.data:
        plot(result.history, path, title=result.kind, panels=[Panel(
            "people's held-out dialogs: accuracy", {"val_accuracy": "all", **{
                k: k[4:-9] for k in result.history[-1] if k.endswith("_accuracy") and k != "val_accuracy"}},
            {"majority answer": result.args["majority_val_accuracy"]})])
        return
    plot(result.history, path, title=result.kind, panels=[Panel(
        "accuracy", {"val_accuracy": "agrees with grounded ALICE (held-out scenes)"},
        {"majority answer": result.args["majority_val_accuracy"]})])
