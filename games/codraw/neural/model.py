"""Torch modules of the neural CoDraw Drawer (``codraw_v1``) and the checkpoint format of both
neural CoDraw agents (the Teller's module: games/codraw/neural/teller_model.py).

After the neural Drawer baseline of Kim et al., "CoDraw" (seeds/000, Section 4.2): the Teller's
message is read by a bidirectional GRU over a word vocabulary built from the training data (a
number is the token ``<num>`` plus its value as an extra input); the canvas so far is
a fixed-size vector (for each of the 58 clip arts: on the canvas, x, y, depth, flip, subtype);
one head scores every clip art from the message (which ones it adds or moves: with
``Config.multilabel``, the paper's sigmoid per clip art, every clip art whose probability reaches
``Config.threshold`` is asked for and none means "nothing drawable is said"; it reads the GRU
state through its own layer, ``choose_message``, so that it does not pull on the pieces' one; older checkpoints
have a softmax over the 58, plus an abstain class with ``Config.abstain``), and per-clip-art heads (a shared MLP over the
message/canvas state joined with the clip art's embedding, so one call gives them for all 58)
read the message and the canvas (the clip art's own slot blanked) and predict its place (x, y regressed in canvas fractions), depth (3 classes), flip (2) and, for Mike
and Jenny, subtype (35 = pose x expression).

Checkpoint (``torch.load(weights_only=True)``-safe): ``{"format", "version", "kind",
"meta_json" (config, vocabulary, fuzzy words, training arguments, history), "state_dict"}``;
the weights sha256 (agents/checkpoints.py ``state_dict_sha256``) names what it holds (stable across
re-saves), the file sha256 the file itself.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
from torch import nn

from agents.checkpoints import LoadedModel, load_model, write_checkpoint
from games.codraw import clipart as ca
from games.codraw.neural.teller_model import NeuralTellerNet
from games.codraw.neural.vocab import Vocabulary

FORMAT = "groundtalk.codraw_neural"
VERSION = 1
KINDS = ("codraw_neural_drawer", "codraw_neural_teller")
PIECE_FEATURES = 6             # per clip art: on canvas, x, y, depth, flip, subtype (scaled 0..1)
CANVAS_DIM = ca.N_CLIPARTS * PIECE_FEATURES
ABSTAIN = ca.N_CLIPARTS        # the choice "nothing drawable" (Config.abstain)


def pad_batch(encoded: list[tuple[list[int], list[float]]], device):
    """(ids (B, T), values (B, T), lengths (B,)) from :meth:`Vocabulary.encode` results."""
    lengths = torch.tensor([max(1, len(ids)) for ids, _ in encoded], dtype=torch.long)
    ids = torch.zeros(len(encoded), int(lengths.max()), dtype=torch.long)
    values = torch.zeros(len(encoded), int(lengths.max()), dtype=torch.float32)
    for i, (seq, vals) in enumerate(encoded):
        if seq:
            ids[i, :len(seq)] = torch.tensor(seq, dtype=torch.long)
            values[i, :len(vals)] = torch.tensor(vals, dtype=torch.float32)
    return ids.to(device), values.to(device), lengths


def canvas_features(pieces: list[dict]) -> list[float]:
    """The canvas as CANVAS_DIM numbers (pieces: dicts with idx, x, y, depth, flip, subtype)."""
    out = [0.0] * CANVAS_DIM
    for p in pieces:
        base = int(p["idx"]) * PIECE_FEATURES
        out[base:base + PIECE_FEATURES] = [1.0, float(p["x"]) / ca.CANVAS_W, float(p["y"]) / ca.CANVAS_H,
                                           int(p.get("depth", 0)) / (ca.N_DEPTHS - 1),
                                           float(p.get("flip", 0)), int(p.get("subtype", 0) or 0) / (ca.N_SUBTYPES - 1)]
    return out


@dataclass
class Config:
    vocab_size: int
    embed: int = 32
    hidden: int = 64
    art_embed: int = 16
    abstain: bool = False      # trained on messages that name nothing (softmax: a 59th class, ABSTAIN; since v2 data)
    multilabel: bool = False   # a sigmoid per clip art (no abstain class: none above threshold = abstain); old: softmax
    threshold: float = 0.5     # multilabel: a clip art is asked for at this probability (chosen on generated held-out data)


class NeuralDrawerNet(nn.Module):
    """``forward(ids, values, lengths, canvas) -> dict``: ``choose`` (B, 58) logits (which clip
    arts the message adds or moves: with ``cfg.multilabel`` one sigmoid each, else a softmax; (B, 59)
    with ``cfg.abstain`` and no ``multilabel``: the last, ``ABSTAIN``, is "the message asks for
    nothing to be drawn"), ``xy`` (B, 58, 2) in canvas fractions, ``depth`` (B, 58, 3),
    ``flip`` (B, 58, 2), ``subtype`` (B, 58, 35) logits.

    The choice reads the message; each clip art's heads read the message, the canvas and the clip
    art's embedding, with the clip art's own slot of the canvas blanked. So drawing the chosen
    piece changes neither the choice nor its predicted place: a Drawer acting on the prediction
    reaches it in one action and then stops (agents.py)."""

    def __init__(self, cfg: Config):
        super().__init__()
        self.cfg = cfg
        self.embedding = nn.Embedding(cfg.vocab_size, cfg.embed, padding_idx=0)
        self.gru = nn.GRU(cfg.embed + 1, cfg.hidden, batch_first=True, bidirectional=True)
        self.message = nn.Sequential(nn.Linear(2 * cfg.hidden, cfg.hidden), nn.ReLU())
        self.choose = nn.Linear(cfg.hidden, ca.N_CLIPARTS + (1 if cfg.abstain and not cfg.multilabel else 0))
        if cfg.multilabel:       # start at the prior (about one clip art in 58 asked for), not at p = 0.5 for all
            nn.init.constant_(self.choose.bias, -math.log(ca.N_CLIPARTS - 1))
            # the choice's own read of the message (the pieces' heads keep theirs: the two do not pull one layer)
            self.choose_message = nn.Sequential(nn.Linear(2 * cfg.hidden, cfg.hidden), nn.ReLU())
        self.art = nn.Embedding(ca.N_CLIPARTS, cfg.art_embed)
        self.canvas = nn.Linear(CANVAS_DIM, cfg.hidden)
        self.piece = nn.Sequential(nn.ReLU(), nn.Linear(cfg.hidden, cfg.hidden), nn.ReLU())
        self.piece_in = nn.Linear(cfg.hidden + cfg.art_embed, cfg.hidden)
        self.xy = nn.Linear(cfg.hidden, 2)
        self.depth = nn.Linear(cfg.hidden, ca.N_DEPTHS)
        self.flip = nn.Linear(cfg.hidden, ca.N_FLIPS)
        self.subtype = nn.Linear(cfg.hidden, ca.N_SUBTYPES)
        own = torch.ones(ca.N_CLIPARTS, CANVAS_DIM)
        for k in range(ca.N_CLIPARTS):
            own[k, k * PIECE_FEATURES:(k + 1) * PIECE_FEATURES] = 0.0
        self.register_buffer("others", own, persistent=False)     # row k: every slot but k's

    def forward(self, ids: torch.Tensor, values: torch.Tensor, lengths: torch.Tensor, canvas: torch.Tensor) -> dict:
        words = torch.cat([self.embedding(ids), values.unsqueeze(-1) / 5.0], dim=-1)
        packed = nn.utils.rnn.pack_padded_sequence(words, lengths.cpu(), batch_first=True, enforce_sorted=False)
        _, h = self.gru(packed)                                  # (2, B, H)
        state = torch.cat([h[0], h[1]], dim=-1)
        message = self.message(state)                            # (B, H)
        chooser = self.choose_message(state) if self.cfg.multilabel else message
        n, b = ca.N_CLIPARTS, message.shape[0]
        joined = torch.cat([message.unsqueeze(1).expand(b, n, -1), self.art.weight.unsqueeze(0).expand(b, n, -1)],
                           dim=-1)
        scene = self.canvas(canvas.unsqueeze(1) * self.others.unsqueeze(0))     # (B, 58, H)
        piece = self.piece(self.piece_in(joined) + scene)
        return {"choose": self.choose(chooser), "xy": torch.sigmoid(self.xy(piece)),
                "depth": self.depth(piece), "flip": self.flip(piece), "subtype": self.subtype(piece)}


def build_model(kind: str, cfg: Config) -> nn.Module:
    if kind == "codraw_neural_teller":               # games/codraw/neural/teller_model.py (scene2seq)
        return NeuralTellerNet(cfg)
    if kind != "codraw_neural_drawer":
        raise ValueError(f"unknown kind {kind!r}; known: {KINDS}")
    return NeuralDrawerNet(cfg)


def save_checkpoint(path, *, kind: str, model: nn.Module, vocab: Vocabulary, extra: dict | None = None):
    """Write the checkpoint; return (file sha256, weights sha256)."""
    meta = {"config": asdict(model.cfg), "vocabulary": vocab.words, **(extra or {})}
    return write_checkpoint(path, fmt=FORMAT, version=VERSION, kind=kind, meta=meta, model=model)


Loaded = LoadedModel


def load_checkpoint(path, device="cpu", expect: str | None = None) -> Loaded:
    """Read a checkpoint with ``torch.load(weights_only=True)``; refuse another format or kind."""
    return load_model(path, fmt=FORMAT, version=VERSION, device=device, expect=expect,
                      build=lambda kind, meta: (build_model(kind, Config(**meta["config"])),
                                                Vocabulary(meta["vocabulary"])))
