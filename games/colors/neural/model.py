"""Torch modules and featurisation for the neural color agents (``colors_v1``).

After Monroe, Hawkins, Goodman & Potts (2017), "Colors in Context: A Pragmatic Neural Model for
Grounded Language Understanding", TACL 5 (and the Fourier color features of Monroe, Goodman &
Potts 2016), sized to train in a couple of minutes on two CPU cores:

* :func:`fourier_features`: a color (HSL as the game sends it) as HSV, then the real and imaginary
  parts of ``exp(-2πi (j h + k s + l v))`` for ``j, k, l`` in ``{0, 1, 2}`` (54 numbers), as in
  the paper.
* :class:`Vocabulary` / :func:`tokenize`: lowercased words with the paper's preprocessing (the
  endings ``-er``, ``-est``, ``-ish`` split off as tokens of their own), a vocabulary built from
  the training data, ``<unk>`` for the rest; an unknown word within a small edit distance of a
  frequent known one (RapidFuzz ratio) is read as that word, so "grene" and "blu" still mean
  something. The listener is trained with word dropout (``neural_train.UNK_DROPOUT``: a word replaced by
  ``<unk>``) so that words it never saw cost it less.
* :class:`TextEncoder`: word embeddings and a bidirectional GRU.
* :class:`LiteralListener` (L0): scores each of the three colors given the utterance. The paper's
  L0 scores a color by a Gaussian around a predicted color; here the score is a small MLP over the
  utterance vector and each color's features next to its difference from the other two, so that
  "the darker one" and "not the green" (which depend on the context) can be learnt.
* :class:`Speaker` (S0): a GRU over the context colors, target last (as in the paper), whose final
  state starts a GRU decoder of the description (``<s> ... </s>``).
* :class:`PragmaticListener` (L2): Monroe et al.'s pragmatic listener over the two literal models.
  For each context color ``c`` the speaker proposes alternatives deterministically (its greedy
  description, and greedy continuations of its ``BRANCHES`` most likely first words); with the
  observed utterance ``u`` they make the set ``U``. ``S1(u' | t) ∝ L0(t | u')^ALPHA`` over ``U``,
  ``L2(t | u) ∝ S1(u | t)``, and the listener returns the blend ``BLEND * log L0 + (1 - BLEND) *
  log L2`` (the paper's "blended" listener). Everything (alternatives, L0 over them) happens in
  one ``forward`` call for a whole batch.
* :class:`SpeakerDecoder`: greedy decoding as a module, one ``forward`` call per batch.

Checkpoints (:func:`save_checkpoint`, :func:`load_checkpoint`) are one file written by
``torch.save`` of a dict holding only tensors and plain values (``torch.load(weights_only=True)``
reads it): ``{"format", "version", "kind", "meta_json", "state_dict"}``; ``meta_json`` carries the
model config, the vocabulary, the training arguments and the data generator's version. Two hashes
identify one: the file's sha256 (this exact file) and the weights sha256 over what it holds (``agents.checkpoints.state_dict_sha256``)
(stable across saves, since ``torch.save`` stamps every file with a random serialization id).
"""
from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from rapidfuzz import fuzz, process
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence

from agents.checkpoints import LoadedModel, load_model, write_checkpoint

FORMAT = "groundtalk.colors_neural"
VERSION = 1
KINDS = ("colors_neural_listener", "colors_neural_speaker")
PAD, UNK, BOS, EOS = "<pad>", "<unk>", "<s>", "</s>"
SPECIALS = (PAD, UNK, BOS, EOS)
FOURIER_DIM = 54
MAX_TOKENS = 24            # longer messages are cut (the game allows 140 characters)
MAX_DECODE = 8             # tokens the speaker may say
FUZZY_CUTOFF = 80          # RapidFuzz ratio for reading an unknown word as a known one
FUZZY_MIN_LEN = 4
FUZZY_MIN_COUNT = 5        # only words seen this often in training are fuzzy targets
SPLIT_SUFFIXES = {         # the paper's preprocessing: -er, -est, -ish as tokens of their own
    "darker": ("dark", "+er"), "darkest": ("dark", "+est"), "lighter": ("light", "+er"),
    "lightest": ("light", "+est"), "brighter": ("bright", "+er"), "brightest": ("bright", "+est"),
    "duller": ("dull", "+er"), "dullest": ("dull", "+est"), "paler": ("pale", "+er"),
    "palest": ("pale", "+est"), "deeper": ("deep", "+er"), "deepest": ("deep", "+est"),
}
SPELLING = {"gray": "grey", "grayish": "greyish", "colour": "color"}
JOINED = {"+er": "er", "+est": "est", "+ish": "ish"}


# ------------------------------------------------------------------------------------ featurisation
def hsl_to_hsv(hsl: torch.Tensor) -> torch.Tensor:
    """HSL ``[h 0-360, s 0-100, l 0-100]`` (any leading shape) as HSV in ``[0, 1]^3``."""
    h = hsl[..., 0] / 360.0
    s = hsl[..., 1] / 100.0
    light = hsl[..., 2] / 100.0
    v = light + s * torch.minimum(light, 1.0 - light)
    s_v = torch.where(v > 0, 2.0 * (1.0 - light / v.clamp_min(1e-8)), torch.zeros_like(v))
    return torch.stack([h, s_v, v], dim=-1)


_JKL = torch.tensor([[j, k, m] for j in range(3) for k in range(3) for m in range(3)],
                    dtype=torch.float32)  # (27, 3)


def fourier_features(hsl: torch.Tensor) -> torch.Tensor:
    """Monroe et al.'s Fourier features of HSV: cos and sin of ``2π (j h + k s + l v)`` (54 dims)."""
    hsv = hsl_to_hsv(hsl.float())
    angle = 2.0 * math.pi * hsv @ _JKL.to(hsv.device).T          # (..., 27)
    return torch.cat([torch.cos(angle), torch.sin(angle)], dim=-1)


def tokenize(text: str) -> list[str]:
    words = []
    for word in re.findall(r"[a-z]+", text.lower()):
        word = SPELLING.get(word, word)
        if word in SPLIT_SUFFIXES:
            words.extend(SPLIT_SUFFIXES[word])
        elif word.endswith("ish") and len(word) > 5:
            words.extend([word[:-3], "+ish"])
        else:
            words.append(word)
    return words[:MAX_TOKENS]


def detokenize(tokens: list[str]) -> str:
    out: list[str] = []
    for token in tokens:
        if token in JOINED:
            if out:
                out[-1] += JOINED[token]
        elif token not in SPECIALS:
            out.append(token)
    return " ".join(out)


class Vocabulary:
    """Words seen in training (``min_count`` times) plus the four specials, in a fixed order.
    ``fuzzy_words``: the words an unknown word may be read as (frequent ones only, so that a
    new word is not read as a rare training typo)."""

    def __init__(self, words: list[str], fuzzy_words: list[str] | None = None):
        self.words = list(words)
        self.index = {word: i for i, word in enumerate(self.words)}
        plain = [w for w in self.words if w not in SPECIALS and not w.startswith("+")]
        self.fuzzy_words = list(fuzzy_words) if fuzzy_words is not None else plain
        self._fuzzy: dict[str, int] = {}

    @classmethod
    def build(cls, texts: list[str], min_count: int = 1, fuzzy_min_count: int = FUZZY_MIN_COUNT) -> "Vocabulary":
        counts: dict[str, int] = {}
        for text in texts:
            for token in tokenize(text):
                counts[token] = counts.get(token, 0) + 1
        kept = sorted(w for w, c in counts.items() if c >= min_count)
        fuzzy = [w for w in kept if counts[w] >= fuzzy_min_count and len(w) >= FUZZY_MIN_LEN
                 and not w.startswith("+")]
        return cls([*SPECIALS, *kept], fuzzy)

    def __len__(self) -> int:
        return len(self.words)

    def lookup(self, token: str) -> int:
        if token in self.index:
            return self.index[token]
        if token not in self._fuzzy:
            found = None
            if len(token) >= FUZZY_MIN_LEN and self.fuzzy_words:
                found = process.extractOne(token, self.fuzzy_words, scorer=fuzz.ratio,
                                           score_cutoff=FUZZY_CUTOFF)
            self._fuzzy[token] = self.index[found[0]] if found else self.index[UNK]
        return self._fuzzy[token]

    def encode(self, text: str) -> list[int]:
        return [self.lookup(token) for token in tokenize(text)]

    def decode(self, ids: list[int]) -> str:
        return detokenize([self.words[i] for i in ids])


def pad_batch(sequences: list[list[int]], device) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-padded ``(B, T)`` ids and ``(B,)`` lengths (an empty message counts as one ``<unk>``)."""
    sequences = [seq or [SPECIALS.index(UNK)] for seq in sequences]
    width = max(len(seq) for seq in sequences)
    ids = torch.zeros((len(sequences), width), dtype=torch.long)
    for i, seq in enumerate(sequences):
        ids[i, :len(seq)] = torch.tensor(seq, dtype=torch.long)
    lengths = torch.tensor([len(seq) for seq in sequences], dtype=torch.long)
    return ids.to(device), lengths


# ------------------------------------------------------------------------------------------ modules
@dataclass(frozen=True)
class Config:
    vocab_size: int
    embed: int = 32
    hidden: int = 64
    color_hidden: int = 64
    dropout: float = 0.0   # listener: dropout on the utterance and colour vectors while training


class TextEncoder(nn.Module):
    def __init__(self, cfg: Config):
        super().__init__()
        self.embed = nn.Embedding(cfg.vocab_size, cfg.embed, padding_idx=0)
        self.rnn = nn.GRU(cfg.embed, cfg.hidden, batch_first=True, bidirectional=True)

    def forward(self, ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        packed = pack_padded_sequence(self.embed(ids), lengths.cpu(), batch_first=True, enforce_sorted=False)
        _, h = self.rnn(packed)                                       # (2, B, H)
        return torch.cat([h[0], h[1]], dim=-1)                        # (B, 2H)


def context_features(colors: torch.Tensor) -> torch.Tensor:
    """Each color's Fourier features next to their difference from the other two's mean (B, 3, 108)."""
    f = fourier_features(colors)                                      # (B, 3, 54)
    others = (f.sum(dim=1, keepdim=True) - f) / 2.0
    return torch.cat([f, f - others], dim=-1)


class LiteralListener(nn.Module):
    """L0: ``forward(ids, lengths, colors (B, 3, 3) HSL) -> (B, 3)`` log-probabilities."""

    def __init__(self, cfg: Config):
        super().__init__()
        self.cfg = cfg
        self.text = TextEncoder(cfg)
        self.color = nn.Sequential(nn.Linear(2 * FOURIER_DIM, cfg.color_hidden), nn.Tanh())
        self.utter = nn.Linear(2 * cfg.hidden, cfg.color_hidden)
        self.score = nn.Sequential(nn.Linear(3 * cfg.color_hidden, cfg.color_hidden), nn.Tanh(),
                                   nn.Linear(cfg.color_hidden, 1))
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, ids, lengths, colors):
        u = self.drop(torch.tanh(self.utter(self.text(ids, lengths)))).unsqueeze(1).expand(-1, 3, -1)
        c = self.drop(self.color(context_features(colors)))
        return torch.log_softmax(self.score(torch.cat([u, c, u * c], dim=-1)).squeeze(-1), dim=-1)


class Speaker(nn.Module):
    """S0: ``forward(colors, target, ids_in) -> (B, T, V)`` next-token logits (teacher forcing)."""

    def __init__(self, cfg: Config):
        super().__init__()
        self.cfg = cfg
        self.colors = nn.GRU(FOURIER_DIM, cfg.hidden, batch_first=True)
        self.embed = nn.Embedding(cfg.vocab_size, cfg.embed, padding_idx=0)
        self.decoder = nn.GRU(cfg.embed + cfg.hidden, cfg.hidden, batch_first=True)
        self.out = nn.Linear(cfg.hidden, cfg.vocab_size)

    def encode(self, colors: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """The context read by a GRU with the target last: (B, H)."""
        b = colors.shape[0]
        order = torch.arange(3, device=colors.device).expand(b, 3)
        is_target = order == target.unsqueeze(1)
        # distractors in their shown order, then the target
        rank = torch.where(is_target, torch.full_like(order, 3), order)
        perm = rank.argsort(dim=1)
        seq = torch.gather(fourier_features(colors), 1, perm.unsqueeze(-1).expand(-1, -1, FOURIER_DIM))
        _, h = self.colors(seq)
        return h[0]

    def step(self, tokens: torch.Tensor, context: torch.Tensor, h: torch.Tensor | None):
        x = torch.cat([self.embed(tokens), context.unsqueeze(1).expand(-1, tokens.shape[1], -1)], dim=-1)
        out, h = self.decoder(x, h if h is not None else context.unsqueeze(0).contiguous())
        return self.out(out), h

    def forward(self, colors, target, ids_in):
        logits, _ = self.step(ids_in, self.encode(colors, target), None)
        return logits

    def greedy(self, colors, target, first: torch.Tensor | None = None, max_len: int = MAX_DECODE):
        """Greedy descriptions ``(B, max_len)`` (``</s>``-padded); ``first`` forces the first word.
        The first word is never ``</s>`` nor a special, so a description is never empty."""
        b = colors.shape[0]
        context = self.encode(colors, target)
        token = torch.full((b, 1), SPECIALS.index(BOS), dtype=torch.long, device=colors.device)
        h, out = None, []
        done = torch.zeros(b, dtype=torch.bool, device=colors.device)
        eos = SPECIALS.index(EOS)
        for t in range(max_len):
            logits, h = self.step(token, context, h)
            logits = logits[:, -1]
            if t == 0:
                logits[:, :len(SPECIALS)] = -math.inf
            else:
                logits[:, :len(SPECIALS) - 1] = -math.inf   # never <pad>, <unk>, <s>
            nxt = first if (t == 0 and first is not None) else logits.argmax(dim=-1)
            nxt = torch.where(done, torch.full_like(nxt, eos), nxt)
            out.append(nxt)
            done = done | (nxt == eos)
            token = nxt.unsqueeze(1)
        return torch.stack(out, dim=1)

    def first_words(self, colors, target, k: int) -> torch.Tensor:
        """The ``k`` most likely first words (B, k)."""
        logits, _ = self.step(torch.full((colors.shape[0], 1), SPECIALS.index(BOS), dtype=torch.long,
                                         device=colors.device), self.encode(colors, target), None)
        logits = logits[:, -1]
        logits[:, :len(SPECIALS)] = -math.inf
        return logits.topk(k, dim=-1).indices


class SpeakerDecoder(nn.Module):
    """Greedy S0 descriptions of the target for a batch: ``forward(colors, target) -> ids``."""

    def __init__(self, speaker: Speaker):
        super().__init__()
        self.speaker = speaker

    def forward(self, colors, target):
        return self.speaker.greedy(colors, target)


def ids_to_lists(ids: torch.Tensor) -> list[list[int]]:
    eos = SPECIALS.index(EOS)
    out = []
    for row in ids.tolist():
        out.append(row[:row.index(eos)] if eos in row else row)
    return out


class PragmaticListener(nn.Module):
    """L2 blended with L0 (see the module docstring): ``forward(ids, lengths, colors) -> (B, 3)``
    log-scores. ``speaker_vocab_map`` maps the speaker's word ids to the listener's."""

    BRANCHES = 3
    ALPHA = 2.0
    BLEND = 0.5

    def __init__(self, listener: LiteralListener, speaker: Speaker, speaker_to_listener: torch.Tensor):
        super().__init__()
        self.listener, self.speaker = listener, speaker
        self.register_buffer("speaker_to_listener", speaker_to_listener, persistent=False)

    def alternatives(self, colors: torch.Tensor) -> list[list[list[int]]]:
        """Per view, the speaker's deterministic descriptions of each of its colors (listener ids):
        for each color, its greedy description and ``BRANCHES`` greedy ones from forced first words."""
        b, k = colors.shape[0], self.BRANCHES
        rep = colors.repeat_interleave(3, dim=0)                       # (3B, 3, 3): view, then color
        target = torch.arange(3, device=colors.device).repeat(b)
        greedy = ids_to_lists(self.speaker.greedy(rep, target))        # 3B
        firsts = self.speaker.first_words(rep, target, k).reshape(-1)  # 3Bk
        branches = ids_to_lists(self.speaker.greedy(rep.repeat_interleave(k, dim=0),
                                                    target.repeat_interleave(k), first=firsts))
        table = self.speaker_to_listener.tolist()
        out = []
        for v in range(b):
            seqs = []
            for c in range(3):
                row = 3 * v + c
                seqs.append(greedy[row])
                seqs.extend(branches[row * k:(row + 1) * k])
            out.append([[table[i] for i in seq] for seq in seqs])
        return out

    def forward(self, ids, lengths, colors):
        b = colors.shape[0]
        alts = self.alternatives(colors)
        observed = [ids[i, :lengths[i]].tolist() for i in range(b)]
        utterances = [[observed[i], *alts[i]] for i in range(b)]
        n_alt = len(utterances[0])
        flat_ids, flat_len = pad_batch([u for per in utterances for u in per], colors.device)
        log_l0 = self.listener(flat_ids, flat_len, colors.repeat_interleave(n_alt, dim=0))
        log_l0 = log_l0.view(b, n_alt, 3)                               # log L0(t | u')
        log_s1 = torch.log_softmax(self.ALPHA * log_l0, dim=1)         # over utterances, per t
        log_l2 = torch.log_softmax(log_s1[:, 0, :], dim=-1)            # L2(t | u) ∝ S1(u | t)
        return self.BLEND * log_l0[:, 0, :] + (1.0 - self.BLEND) * log_l2


# --------------------------------------------------------------------------------------- checkpoints
def build_model(kind: str, cfg: Config) -> nn.Module:
    if kind == "colors_neural_listener":
        return LiteralListener(cfg)
    if kind == "colors_neural_speaker":
        return Speaker(cfg)
    raise ValueError(f"Unknown model kind {kind!r}; expected one of {KINDS}.")


def save_checkpoint(path: str | Path, *, kind: str, model: nn.Module, vocab: Vocabulary,
                    extra: dict | None = None) -> tuple[str, str]:
    """Write the checkpoint; return its file sha256 and its weights sha256."""
    config = asdict(model.cfg)
    if not config.get("dropout"):   # absent unless used: checkpoints without it keep their metadata and hash
        config.pop("dropout", None)
    meta = {"config": config, "vocabulary": vocab.words, "fuzzy_words": vocab.fuzzy_words,
            **(extra or {})}
    return write_checkpoint(path, fmt=FORMAT, version=VERSION, kind=kind, meta=meta, model=model)


Loaded = LoadedModel


def load_checkpoint(path: str | Path, device: str | torch.device = "cpu",
                    expect: str | None = None) -> Loaded:
    """Read a checkpoint with ``torch.load(weights_only=True)``; refuse another format or kind."""
    return load_model(path, fmt=FORMAT, version=VERSION, device=device, expect=expect,
                      build=lambda kind, meta: (build_model(kind, Config(**meta["config"])),
                                                Vocabulary(meta["vocabulary"], meta["fuzzy_words"])))
