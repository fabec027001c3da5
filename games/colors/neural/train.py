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

On people's data (``--data FILE``, :mod:`games.colors.neural.corpus`): ``data`` (the training
games' rounds) is added to the ``examples`` generated ones (0: people's rounds only), and the
held-out metrics are on ``val_data`` (the validation games' rounds), overall and per condition
(``val_far``, ``val_split``, ``val_close``). ``base`` (``--from``) starts from a checkpoint of the
same kind: its weights and its vocabulary, extended by the training data's new words (their
embeddings, and the speaker's output rows, start fresh). ``data_meta`` (the file's sha256, format,
the validation games) is stored in the checkpoint's metadata under ``data``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import torch
from torch import nn

from agents.training import Panel, plot_history as plot_history_png, run_epochs
from games.colors.neural import data as neural_data
from games.colors.neural.model import (BOS, EOS, FUZZY_MIN_COUNT, FUZZY_MIN_LEN, SPECIALS, UNK, Config,
                                       LiteralListener, Speaker, Vocabulary, build_model, ids_to_lists, pad_batch,
                                       save_checkpoint, tokenize)
from games.colors.agents import LiteralListener as RuleListener, PragmaticListener as RulePragmatic


UNK_DROPOUT = 0.1           # listener training: each word becomes <unk> with this probability


@dataclass
class Result:
    kind: str
    model: nn.Module
    vocab: Vocabulary
    history: list[dict] = field(default_factory=list)   # per epoch: loss and held-out metrics
    args: dict = field(default_factory=dict)
    data: dict | None = None                              # people's data: file sha256, format, split

    def save(self, path) -> tuple[str, str]:
        """Write the checkpoint; return (file sha256, weights sha256)."""
        extra = {"training": self.args, "history": self.history, "data_generator": neural_data.GENERATOR_VERSION}
        if self.data is not None:
            extra["data"] = self.data
        return save_checkpoint(path, kind=self.kind, model=self.model, vocab=self.vocab, extra=extra)


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


def accuracy_by_condition(hits: list[bool], examples: list[dict], prefix: str = "val") -> dict:
    """``{prefix}_accuracy`` and ``{prefix}_{condition}`` for each condition present."""
    out = {f"{prefix}_accuracy": sum(hits) / len(hits) if hits else float("nan")}
    for condition in ("far", "split", "close"):
        mine = [h for h, e in zip(hits, examples) if e.get("condition") == condition]
        if mine:
            out[f"{prefix}_{condition}"] = sum(mine) / len(mine)
    return out


def listener_hits(model: LiteralListener, vocab: Vocabulary, examples: list[dict], device,
                  batch_size: int = 256) -> list[bool]:
    model.eval()
    hits: list[bool] = []
    with torch.no_grad():
        for start in range(0, len(examples), batch_size):
            chunk = examples[start:start + batch_size]
            ids, lengths = pad_batch([vocab.encode(e["text"]) for e in chunk], device)
            pred = model(ids, lengths, colors_tensor(chunk, device)).argmax(dim=-1).tolist()
            hits.extend(p == e["target"] for p, e in zip(pred, chunk))
    return hits


def extend_vocabulary(model: nn.Module, vocab: Vocabulary, texts: list[str]) -> Vocabulary:
    """``vocab`` plus the words of ``texts`` it lacks (appended, so old ids keep their rows); the
    model's embedding (and the speaker's output layer) grow to match, new rows freshly initialised."""
    counts: dict[str, int] = {}
    for text in texts:
        for token in tokenize(text):
            counts[token] = counts.get(token, 0) + 1
    new = sorted(w for w in counts if w not in vocab.index)
    fuzzy = [*vocab.fuzzy_words, *(w for w in new if counts[w] >= FUZZY_MIN_COUNT and len(w) >= FUZZY_MIN_LEN
                                   and not w.startswith("+"))]
    grown = Vocabulary([*vocab.words, *new], fuzzy)
    if not new:
        return grown
    old_embed = model.text.embed if isinstance(model, LiteralListener) else model.embed
    embed = nn.Embedding(len(grown), old_embed.embedding_dim, padding_idx=0)
    with torch.no_grad():
        embed.weight[:len(vocab)] = old_embed.weight
    if isinstance(model, LiteralListener):
        model.text.embed = embed
    else:
        model.embed = embed
        out = nn.Linear(model.out.in_features, len(grown))
        with torch.no_grad():
            out.weight[:len(vocab)] = model.out.weight
            out.bias[:len(vocab)] = model.out.bias
        model.out = out
    model.cfg = replace(model.cfg, vocab_size=len(grown))
    return grown


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


def rule_listener_hits(contexts: list[dict], texts: list[str], rule=None) -> list[bool]:
    """Whether a rule listener (the literal one unless ``rule``) picks each context's target from ``texts``."""
    rule = rule or RuleListener()
    hits = []
    for context, text in zip(contexts, texts):
        view = {"colors": [{"hsl": c} for c in context["colors"]], "round": 1, "can_click": True,
                "messages": [{"role": "speaker", "text": text}]}
        hits.append(rule.act(view)["position"] == context["target"])
    return hits


def rule_listener_accuracy(contexts: list[dict], texts: list[str]) -> float:
    hits = rule_listener_hits(contexts, texts)
    return sum(hits) / len(hits) if hits else float("nan")


def train(kind: str, *, examples: int, epochs: int, seed: int, device: str = "cpu",
          batch_size: int = 64, lr: float = 3e-3, embed: int = 32, hidden: int = 64,
          val_examples: int = 300, unk_dropout: float = UNK_DROPOUT, progress: bool = True,
          data: list[dict] | None = None, val_data: list[dict] | None = None, base=None,
          data_meta: dict | None = None, dropout: float = 0.0, cosine: bool = False) -> Result:
    """Generate the data (and add people's ``data``), train one model (from ``base``, a loaded
    checkpoint, when given) and return it with its per-epoch history."""
    torch.manual_seed(seed)
    people = data is not None
    train_set = neural_data.make_examples(examples, seed, "train") if examples else []
    train_set = [*(data or []), *train_set]
    if not train_set:
        raise ValueError("No training examples: give generated examples or people's data.")
    if people:
        val_set, people_set = list(val_data or []), []
    else:
        val_set = neural_data.make_examples(val_examples, seed + 1, "train")
        people_set = neural_data.make_examples(val_examples, seed + 2, "people")
    if base is not None:
        if base.kind != kind:
            raise ValueError(f"--from holds a {base.kind}, not a {kind}.")
        model = base.model.to(device)
        vocab = extend_vocabulary(model, base.vocab, [e["text"] for e in train_set])
        model.to(device)
        embed, hidden = model.cfg.embed, model.cfg.hidden
    else:
        vocab = Vocabulary.build([e["text"] for e in train_set])
        cfg = Config(vocab_size=len(vocab), embed=embed, hidden=hidden, color_hidden=hidden,
                     dropout=dropout if kind == "colors_neural_listener" else 0.0)
        model = build_model(kind, cfg).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    encoded = [vocab.encode(e["text"]) for e in train_set]
    result = Result(kind, model, vocab, args={
        "kind": kind, "examples": examples, "epochs": epochs, "seed": seed, "batch_size": batch_size,
        "lr": lr, "embed": embed, "hidden": hidden, "val_examples": val_examples,
        "unk_dropout": unk_dropout if kind == "colors_neural_listener" else 0.0,
        "torch": torch.__version__}, data=data_meta)
    if dropout or cosine:   # recorded only when used (the generated-data recipe's metadata is unchanged)
        result.args.update({"dropout": dropout, "cosine": cosine})
    total_steps = epochs * ((len(train_set) + batch_size - 1) // batch_size)
    step = [0]
    if people:
        result.args.update({"people_rounds": len(data or []), "val_rounds": len(val_set)})
    if base is not None:
        result.args["from"] = {"sha256": base.sha256, "weights_sha256": base.weights_sha256}

    def loss_of(idx: list[int]) -> torch.Tensor:
        if cosine:   # the learning rate falls from lr to 0 along a half cosine over the whole run
            for group in optimizer.param_groups:
                group["lr"] = lr * 0.5 * (1 + math.cos(math.pi * step[0] / total_steps))
            step[0] += 1
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
        if people and not val_set:
            return {}
        if people and kind == "colors_neural_listener":
            return accuracy_by_condition(listener_hits(model, vocab, val_set, device), val_set)
        if people:
            return accuracy_by_condition(rule_listener_hits(val_set, speaker_texts(model, vocab, val_set, device)),
                                         val_set, "rule_listener")
        if kind == "colors_neural_listener":
            return {"val_accuracy": listener_accuracy(model, vocab, val_set, device),
                    "people_accuracy": listener_accuracy(model, vocab, people_set, device)}
        return {"rule_listener_accuracy": rule_listener_accuracy(val_set, speaker_texts(model, vocab, val_set, device))}

    run_epochs(model=model, optimizer=optimizer, n_examples=len(train_set), batch_size=batch_size, epochs=epochs,
               seed=seed, loss_of=loss_of, evaluate=evaluate, history=result.history, desc=kind, progress=progress)
    return result


def compare_listeners(result: Result, rounds: list[dict], device="cpu") -> dict[str, dict]:
    """Per listener, accuracy overall and per condition on people's ``rounds`` (the held-out games):
    the trained neural L0, the rule literal and pragmatic listeners, and the file's own clicks."""
    texts = [r["text"] for r in rounds]
    out = {"neural L0 (this checkpoint)": listener_hits(result.model, result.vocab, rounds, device),
           "rule literal L0 (colors_literal_listener)": rule_listener_hits(rounds, texts),
           "rule pragmatic L1 (colors_pragmatic_listener)": rule_listener_hits(rounds, texts, RulePragmatic())}
    if all("file_click_correct" in r for r in rounds):
        out["the file's clicks"] = [r["file_click_correct"] for r in rounds]
    return {name: accuracy_by_condition(hits, rounds, "val") for name, hits in out.items()}


def plot_history(result: Result, path) -> None:
    """Loss and held-out accuracy per epoch, as a PNG."""
    plot_history_png(result.history, path, title=result.kind, panels=[Panel("accuracy", {
        "val_accuracy": "held-out contexts", "people_accuracy": "people's phrasing (held out)",
        "val_far": "held-out games, far", "val_split": "held-out games, split", "val_close": "held-out games, close",
        "rule_listener_accuracy": "rule L0 understands S0"}, lines={"chance": 1 / 3})])
