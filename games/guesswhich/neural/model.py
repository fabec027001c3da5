"""Torch modules and featurisation of the neural ALICE (GuessWhich / visual dialog answerer).

In the spirit of the GuessWhich paper's supervised ALICE (Chattopadhyay et al. 2017, ``seeds/001_*``;
Das et al.'s visual-dialog answerer with a late-fusion encoder), sized to train in a couple of
minutes on one CPU thread, reading CLEVR scene graphs instead of images:

* question encoder: word embeddings (a :class:`games.colors.neural.model.Vocabulary` built from the
  training questions, fuzzy reading of misspelt words, ``<unk>`` otherwise) and a bidirectional GRU;
* dialog history: the last :data:`HISTORY_ROUNDS` question/answer pairs (and the caption) as one
  token sequence ``caption | q1 a1 | q2 a2 ...`` through a second bidirectional GRU;
* scene encoder: a set encoder over the objects (:func:`object_features`: one-hot shape, color,
  size, material and the ground-plane position), an MLP per object, then attention from the
  question and history (softmax attention for "which object", and a sigmoid gate per object whose
  sum and gated mean serve counting);
* answer classifier: an MLP over [question; history; attended object; gated sum; gate count] to
  the answer vocabulary of the generated dialogs (yes / no, counts, colors, shapes, materials,
  sizes, refusals such as "I can't tell." ...; answers seen fewer than ``min_count`` times in
  training are learnt as "I can't tell.").

Checkpoints: the format every model family shares (agents/checkpoints.py: one ``torch.save`` file
of plain values and tensors read with ``torch.load(weights_only=True)``, ``{"format", "version",
"kind", "meta_json", "state_dict"}``), identified by the file's sha256 and the weights' sha256
(stable across re-saves).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence

from agents.checkpoints import load_model, write_checkpoint
from clevr.alice import CANT_TELL
from clevr.captions import COLORS, MATERIALS, SHAPES, SIZES
from games.colors.neural.model import Vocabulary, pad_batch

FORMAT = "groundtalk.guesswhich_neural"
VERSION = 1
KIND = "guesswhich_neural_alice"
HISTORY_ROUNDS = 3
MAX_OBJECTS = 12
OBJECT_DIM = len(SHAPES) + len(COLORS) + len(SIZES) + len(MATERIALS) + 2 + 1


def object_features(scene: dict) -> list[list[float]]:
    """Per object: one-hot shape, color, size, material; x and y / 3 (CLEVR's ground plane is
    [-3, 3]^2); a constant 1 (so an all-zero row is padding)."""
    rows = []
    for obj in (scene.get("objects") or [])[:MAX_OBJECTS]:
        row = [float(obj.get("shape") == v) for v in SHAPES] + [float(obj.get("color") == v) for v in COLORS]
        row += [float(obj.get("size") == v) for v in SIZES] + [float(obj.get("material") == v) for v in MATERIALS]
        x, y = (list(obj.get("3d_coords") or [0.0, 0.0]) + [0.0, 0.0])[:2]
        rows.append(row + [float(x) / 3.0, float(y) / 3.0, 1.0])
    return rows


def scene_batch(scenes: list[dict], device) -> tuple[torch.Tensor, torch.Tensor]:
    """(B, N, OBJECT_DIM) features and (B, N) mask of real objects."""
    feats = [object_features(s) for s in scenes]
    width = max(1, max(len(f) for f in feats))
    x = torch.zeros((len(scenes), width, OBJECT_DIM))
    mask = torch.zeros((len(scenes), width), dtype=torch.bool)
    for i, rows in enumerate(feats):
        if rows:
            x[i, :len(rows)] = torch.tensor(rows)
            mask[i, :len(rows)] = True
    return x.to(device), mask.to(device)


def history_text(caption: str | None, history) -> str:
    """The caption and the last HISTORY_ROUNDS (question, answer) pairs as one string."""
    parts = [caption or ""] + [f"{q} {a}" for q, a in list(history)[-HISTORY_ROUNDS:]]
    return " | ".join(parts)


@dataclass(frozen=True)
class Config:
    vocab_size: int
    n_answers: int
    embed: int = 32
    hidden: int = 64


class _Encoder(nn.Module):
    def __init__(self, embedding: nn.Embedding, cfg: Config):
        super().__init__()
        self.embedding = embedding
        self.rnn = nn.GRU(cfg.embed, cfg.hidden, batch_first=True, bidirectional=True)

    def forward(self, ids, lengths):
        packed = pack_padded_sequence(self.embedding(ids), lengths.cpu(), batch_first=True, enforce_sorted=False)
        _, h = self.rnn(packed)
        return torch.cat([h[0], h[1]], dim=-1)


class NeuralAlice(nn.Module):
    """``forward(q_ids, q_len, h_ids, h_len, objects, mask) -> (B, n_answers)`` log-probabilities."""

    def __init__(self, cfg: Config):
        super().__init__()
        self.cfg = cfg
        h = cfg.hidden
        embedding = nn.Embedding(cfg.vocab_size, cfg.embed, padding_idx=0)
        self.question = _Encoder(embedding, cfg)
        self.history = _Encoder(embedding, cfg)
        self.objects = nn.Sequential(nn.Linear(OBJECT_DIM, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU())
        self.query = nn.Linear(4 * h, h)
        self.att = nn.Linear(h, 1)
        self.gate = nn.Linear(h, 1)
        self.classifier = nn.Sequential(nn.Linear(4 * h + 2 * h + 1, 2 * h), nn.ReLU(),
                                        nn.Linear(2 * h, cfg.n_answers))

    def forward(self, q_ids, q_len, h_ids, h_len, objects, mask):
        return self.head(self.context(q_ids, q_len, h_ids, h_len), objects, mask)

    def context(self, q_ids, q_len, h_ids, h_len):
        """(B, 4H): the question and the dialog history encoded (what does not depend on the image)."""
        return torch.cat([self.question(q_ids, q_len), self.history(h_ids, h_len)], dim=-1)

    def head(self, context, objects, mask):
        """Log-probabilities of the answers for each context row and the scene of the same row."""
        obj = self.objects(objects)                                                               # (B, N, H)
        joint = torch.tanh(obj * self.query(context).unsqueeze(1))                                # (B, N, H)
        scores = self.att(joint).squeeze(-1).masked_fill(~mask, -1e9)
        attended = (torch.softmax(scores, dim=-1).unsqueeze(-1) * obj).sum(dim=1)
        gate = torch.sigmoid(self.gate(joint).squeeze(-1)) * mask.float()                        # (B, N)
        count = gate.sum(dim=1, keepdim=True)
        gated = (gate.unsqueeze(-1) * obj).sum(dim=1) / count.clamp_min(1.0)
        return torch.log_softmax(self.classifier(torch.cat([context, attended, gated, count], dim=-1)), dim=-1)


def encode_batch(vocab: Vocabulary, items: list[dict], device) -> tuple:
    """Model inputs for items ``{"scene", "caption", "history", "question"}``."""
    q_ids, q_len = pad_batch([vocab.encode(it["question"]) for it in items], device)
    h_ids, h_len = pad_batch([vocab.encode(history_text(it.get("caption"), it.get("history") or []))
                              for it in items], device)
    objects, mask = scene_batch([it["scene"] for it in items], device)
    return q_ids, q_len, h_ids, h_len, objects, mask


def pool_tensors(pools: list[list[dict]], device) -> tuple[torch.Tensor, torch.Tensor]:
    """(G, P, N, OBJECT_DIM) features and (G, P, N) mask of ``pools`` (lists of scenes, all of size P)."""
    objects, mask = scene_batch([scene for pool in pools for scene in pool], device)
    return objects.view(len(pools), len(pools[0]), *objects.shape[1:]), mask.view(len(pools), len(pools[0]), -1)


def pool_log_probs(model: NeuralAlice, vocab: Vocabulary, rows: list[dict], pool_of_row: list[int],
                   pools: tuple[torch.Tensor, torch.Tensor], device) -> torch.Tensor:
    """(rows, P, answers) log P(answer | image, question, dialog) of every image of a pool.

    ``rows``: ``{"caption", "history", "question"}``; ``pool_of_row[r]``: which pool of ``pools``
    (:func:`pool_tensors`) row ``r`` asks about. The text of a row is encoded once and scored
    against each image (the same numbers as :meth:`NeuralAlice.forward` on one item per image, far
    fewer GRU steps)."""
    objects, mask = pools
    n_pool = objects.shape[1]
    q_ids, q_len = pad_batch([vocab.encode(r["question"]) for r in rows], device)
    h_ids, h_len = pad_batch([vocab.encode(history_text(r.get("caption"), r.get("history") or [])) for r in rows],
                             device)
    index = torch.tensor(pool_of_row, device=device)
    ctx = model.context(q_ids, q_len, h_ids, h_len).repeat_interleave(n_pool, dim=0)
    logp = model.head(ctx, objects[index].flatten(0, 1), mask[index].flatten(0, 1))
    return logp.view(len(rows), n_pool, -1)


def answer_vocabulary(answers: list[str], min_count: int = 3) -> list[str]:
    counts: dict[str, int] = {}
    for a in answers:
        counts[a] = counts.get(a, 0) + 1
    return sorted({CANT_TELL, *(a for a, c in counts.items() if c >= min_count)})


def save_checkpoint(path, *, model: NeuralAlice, vocab: Vocabulary, answers: list[str],
                    extra: dict | None = None) -> tuple[str, str]:
    """The checkpoint (agents/checkpoints.py's format); returns (file sha256, weights sha256)."""
    meta = {"config": asdict(model.cfg), "vocabulary": vocab.words, "fuzzy_words": vocab.fuzzy_words,
            "answers": answers, **(extra or {})}
    return write_checkpoint(path, fmt=FORMAT, version=VERSION, kind=KIND, meta=meta, model=model)


@dataclass
class Loaded:
    model: NeuralAlice
    vocab: Vocabulary
    answers: list[str]
    meta: dict
    sha256: str
    weights_sha256: str
    path: str


def _build(kind: str, meta: dict) -> tuple[NeuralAlice, Vocabulary]:
    return NeuralAlice(Config(**meta["config"])), Vocabulary(meta["vocabulary"], meta["fuzzy_words"])


def load_checkpoint(path, device="cpu", expect: str = KIND) -> Loaded:
    """A neural ALICE checkpoint (another format, version or kind: ValueError), on ``device``."""
    got = load_model(path, fmt=FORMAT, version=VERSION, build=_build, device=device, expect=expect)
    return Loaded(model=got.model, vocab=got.vocab, answers=got.meta["answers"], meta=got.meta, sha256=got.sha256,
                  weights_sha256=got.weights_sha256, path=got.path)
