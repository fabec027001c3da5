"""Training loops for the neural color agents (``manage.py train_agent`` calls :func:`train`).

* ``colors_neural_listener`` (L0): cross-entropy of the target among the three colors.
  Held-out metrics per epoch: accuracy on new contexts with training-style phrasing (``val``) and on
  the "people's kind of language" set (``people``, phrasings never seen in training).
* ``colors_neural_speaker`` (S0): token cross-entropy of the generated descriptions (teacher
  forcing). Held-out metric per epoch: how often the rule literal listener
  (:class:`games.colors.agents.LiteralListener`) picks the target from the speaker's greedy
  description of new contexts.

Everything is seeded (data, initialisation, batch order), so on one machine the same arguments
give the same checkpoint bytes on CPU. Data: ``examples`` training examples from seed ``seed``,
validation from ``seed + 1`` and the held-out people set from ``seed + 2``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import nn

from agents.training import Panel, plot_history as plot_history_png, run_epochs
from games.colors.neural import data as neural_data
from games.colors.neural.model import (BOS, EOS, SPECIALS, UNK, Config, LiteralListener, Speaker, Vocabulary,
                                 build_model, ids_to_lists, pad_batch, save_checkpoint)
from games.colors.agents import LiteralListener as RuleListener


UNK_DROPOUT = 0.1           # listener training: each word becomes <unk> with this probability


@dataclass
class Result:
    kind: str
    model: nn.Module
    vocab: Vocabulary
    history: list[dict] = field(default_factory=list)   # per epoch: loss and held-out metrics
    args: dict = field(default_factory=dict)

    def save(self, path) -> tuple[str, str]:
        """Write the checkpoint; return (file sha256, weights sha256)."""
        return save_checkpoint(path, kind=self.kind, model=self.model, vocab=self.vocab,
                               extra={"training": self.args, "history": self.history,
                                      "data_generator": neural_data.GENERATOR_VERSION})


def colors_tensor(examples: list[dict], device) -> torch.Tensor:
    return torch.tensor([e["colors"] for e in examples], dtype=torch.float32, device=device)


def listener_accuracy(model: LiteralListener, vocab: Vocabulary, examples: list[dict], device,
                      batch_size: int = 256) -> float:
    if not examples:
        return float("nan")
    model.eval()
    hits = 0
    with torch.no_grad():
        for start in range(0, len(examples), batch_size):
            chunk = examples[start:start + batch_size]
            ids, lengths = pad_batch([vocab.encode(e["text"]) for e in chunk], device)
            pred = model(ids, lengths, colors_tensor(chunk, device)).argmax(dim=-1).cpu()
            hits += int((pred == torch.tensor([e["target"] for e in chunk])).sum())
    return hits / len(examples)


def speaker_texts(model: Speaker, vocab: Vocabulary, contexts: list[dict], device,
                  batch_size: int = 256) -> list[str]:
    model.eval()
    texts = []
    with torch.no_grad():
        for start in range(0, len(contexts), batch_size):
            chunk = contexts[start:start + batch_size]
            target = torch.tensor([c["target"] for c in chunk], device=device)
            ids = model.greedy(colors_tensor(chunk, device), target)
            texts.extend(vocab.decode(seq) for seq in ids_to_lists(ids))
    return texts


def rule_listener_accuracy(contexts: list[dict], texts: list[str]) -> float:
    rule = RuleListener()
    hits = 0
    for context, text in zip(contexts, texts):
        view = {"colors": [{"hsl": c} for c in context["colors"]], "round": 1, "can_click": True,
                "messages": [{"role": "speaker", "text": text}]}
        hits += rule.act(view)["position"] == context["target"]
    return hits / len(contexts) if contexts else float("nan")


def train(kind: str, *, examples: int, epochs: int, seed: int, device: str = "cpu",
          batch_size: int = 64, lr: float = 3e-3, embed: int = 32, hidden: int = 64,
          val_examples: int = 300, unk_dropout: float = UNK_DROPOUT, progress: bool = True) -> Result:
    """Generate the data, train one model and return it with its per-epoch history."""
    torch.manual_seed(seed)
    train_set = neural_data.make_examples(examples, seed, "train")
    val_set = neural_data.make_examples(val_examples, seed + 1, "train")
    people_set = neural_data.make_examples(val_examples, seed + 2, "people")
    vocab = Vocabulary.build([e["text"] for e in train_set])
    cfg = Config(vocab_size=len(vocab), embed=embed, hidden=hidden, color_hidden=hidden)
    model = build_model(kind, cfg).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    encoded = [vocab.encode(e["text"]) for e in train_set]
    result = Result(kind, model, vocab, args={
        "kind": kind, "examples": examples, "epochs": epochs, "seed": seed, "batch_size": batch_size,
        "lr": lr, "embed": embed, "hidden": hidden, "val_examples": val_examples,
        "unk_dropout": unk_dropout if kind == "colors_neural_listener" else 0.0,
        "torch": torch.__version__})

    def loss_of(idx: list[int]) -> torch.Tensor:
        batch = [train_set[i] for i in idx]
        colors = colors_tensor(batch, device)
        target = torch.tensor([e["target"] for e in batch], device=device)
        if kind == "colors_neural_listener":
            ids, lengths = pad_batch([encoded[i] for i in idx], device)
            if unk_dropout:   # word dropout: unseen words should not throw the listener
                drop = (torch.rand(ids.shape) < unk_dropout).to(device) & (ids >= len(SPECIALS))
                ids = ids.masked_fill(drop, SPECIALS.index(UNK))
            return nn.functional.nll_loss(model(ids, lengths, colors), target)
        bos, eos = SPECIALS.index(BOS), SPECIALS.index(EOS)
        ids, _ = pad_batch([[bos, *encoded[i], eos] for i in idx], device)
        logits = model(colors, target, ids[:, :-1])
        return nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1),
                                           ignore_index=0)

    def evaluate() -> dict:
        if kind == "colors_neural_listener":
            return {"val_accuracy": listener_accuracy(model, vocab, val_set, device),
                    "people_accuracy": listener_accuracy(model, vocab, people_set, device)}
        return {"rule_listener_accuracy": rule_listener_accuracy(val_set, speaker_texts(model, vocab, val_set, device))}

    run_epochs(model=model, optimizer=optimizer, n_examples=len(train_set), batch_size=batch_size, epochs=epochs,
               seed=seed, loss_of=loss_of, evaluate=evaluate, history=result.history, desc=kind, progress=progress)
    return result


def plot_history(result: Result, path) -> None:
    """Loss and held-out accuracy per epoch, as a PNG."""
    plot_history_png(result.history, path, title=result.kind, panels=[Panel("accuracy", {
        "val_accuracy": "held-out contexts", "people_accuracy": "people's phrasing (held out)",
        "rule_listener_accuracy": "rule L0 understands S0"}, lines={"chance": 1 / 3})])
