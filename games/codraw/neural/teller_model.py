"""Torch module of the neural CoDraw Teller (``codraw_v1``): scene2seq, after Kim et al., "CoDraw"
(seeds/000, Section 4.3), at the size this machine trains in minutes.

* **Scene encoder**: every piece of the target scene (the Teller's view, ``view["target"]``) is
  a vector: its clip art's and (Mike, Jenny) subtype's learned embeddings, depth, flip, place
  (canvas fractions; inches from each edge, also as radial-basis features so that a number word
  is nearly a linear read-out) and its offset from Mike and from Jenny when they are in the scene
  (what ``in Jenny's hand`` needs), and one-hot its clip art, pose and expression (the words to
  say, a direct read-out for the decoder); an MLP makes it the piece's state.
* **What was said**: a bidirectional GRU reads each of the Teller's earlier messages (max-pooled
  over the words); a piece counts as described by the best-matching message (``described``, a
  logit per piece, trained against which pieces the earlier messages were about: the paper's
  auxiliary "still to describe" loss).
* **Choice**: a score per piece from its state and ``described``, and a ``stop`` score from how
  much is left undescribed: a softmax over the pieces and stop (the last column).
* **Decoder**: a GRU language model over words (numbers like ``1.3`` are words), started from the
  chosen piece's state and fed it (and its raw features) at every step; greedy decoding.

``forward`` does all of it in ONE call for a batch: with ``tokens`` (teacher forcing, training) it
returns word logits for the given pieces, without them it decodes greedily for the pieces it
chose. The checkpoint format and loading are games/codraw/neural/model.py's (kind ``codraw_neural_teller``).
"""
from __future__ import annotations

import re

import torch
from torch import nn

from games.codraw import clipart as ca
from games.codraw import language as lang
from games.codraw.neural.vocab import SPECIALS, Vocabulary

BOS, EOS = "<bos>", "<eos>"
BOS_ID, EOS_ID = 3, 4                          # after neural.SPECIALS (pad, unk, num): see teller_vocabulary
MAX_GEN = 40                                   # words per generated message, at most
ALTERNATIVES = 2                               # choices decoded per scene at inference (best first)
RBF_CENTERS = torch.arange(0.0, 5.75, 0.25)    # inches
RBF_WIDTH = 0.15
EDGES = 4                                      # inches from left, right, top, bottom
PIECE_DIM = (2 + ca.N_DEPTHS + 1 + EDGES * (len(RBF_CENTERS) + 1) + 2 * 3
             + ca.N_CLIPARTS + ca.N_POSES + ca.N_EXPRESSIONS)
_WORD = re.compile(r"\d+\.\d+|\d+|[a-z]+'s|[a-z]+|,")


def words(text: str) -> list[str]:
    """The Teller's words: lower case, numbers (``1.3``) and ``jenny's`` whole, commas kept."""
    return _WORD.findall(text.lower().replace("\u2019", "'"))


def detokenize(tokens: list[str]) -> str:
    text = " ".join(tokens).replace(" ,", ",")
    text = re.sub(r"\b(mike|jenny)\b", lambda m: m.group(1).capitalize(), text)
    return text.strip(" ,")


def teller_vocabulary(texts, min_count: int = 1):
    """The Teller's word list (a :class:`vocab.Vocabulary`): pad, unk, num, BOS, EOS, then every
    word of the training messages (numbers included: the Teller says them)."""
    counts: dict[str, int] = {}
    for text in texts:
        for word in words(text):
            counts[word] = counts.get(word, 0) + 1
    vocab = Vocabulary([*SPECIALS, BOS, EOS, *sorted(w for w, c in counts.items() if c >= min_count)])
    assert vocab.index[BOS] == BOS_ID and vocab.index[EOS] == EOS_ID
    return vocab


def encode_words(vocab, text: str) -> list[int]:
    """Word ids of ``text`` (unknown words: unk; no fuzzy matching, the Teller reads its own words)."""
    unk = vocab.index["<unk>"]
    return [vocab.index.get(w, unk) for w in words(text)]


def piece_features(piece: dict, people: dict[int, dict]) -> list[float]:
    """PIECE_DIM numbers for one target piece (``people``: Mike and Jenny of the scene, by idx)."""
    x, y = float(piece["x"]), float(piece["y"])
    inches = [x / lang.INCH_PX, (ca.CANVAS_W - x) / lang.INCH_PX, y / lang.INCH_PX, (ca.CANVAS_H - y) / lang.INCH_PX]
    depth = [0.0] * ca.N_DEPTHS
    depth[int(piece.get("depth", 0))] = 1.0
    out = [x / ca.CANVAS_W, y / ca.CANVAS_H, *depth, float(piece.get("flip", 0))]
    for value in inches:
        out.append(value / 5.0)
        out.extend(torch.exp(-((value - RBF_CENTERS) / RBF_WIDTH) ** 2).tolist())
    for idx in ca.HUMAN_IDXS:
        person = people.get(idx)
        if person is None or idx == int(piece["idx"]):
            out.extend([0.0, 0.0, 0.0])
        else:
            out.extend([1.0, (x - person["x"]) / ca.CANVAS_W, (y - person["y"]) / ca.CANVAS_H])
    names = [0.0] * (ca.N_CLIPARTS + ca.N_POSES + ca.N_EXPRESSIONS)     # one-hot: the words to say
    names[int(piece["idx"])] = 1.0
    if int(piece["idx"]) in ca.HUMAN_IDXS:
        subtype = int(piece.get("subtype") or 0)
        names[ca.N_CLIPARTS + ca.pose_of(subtype)] = 1.0
        names[ca.N_CLIPARTS + ca.N_POSES + ca.expression_of(subtype)] = 1.0
    return out + names


def scene_tensors(targets: list[list[dict]], device):
    """(features (B, N, PIECE_DIM), arts (B, N), subtypes (B, N), mask (B, N)) for the target
    pieces of B scenes, padded to the largest (N >= 1). Subtype index 0 means "not a person"."""
    n = max(1, max((len(t) for t in targets), default=1))
    feats = torch.zeros(len(targets), n, PIECE_DIM)
    arts = torch.zeros(len(targets), n, dtype=torch.long)
    subtypes = torch.zeros(len(targets), n, dtype=torch.long)
    mask = torch.zeros(len(targets), n, dtype=torch.bool)
    for b, pieces in enumerate(targets):
        people = {int(p["idx"]): p for p in pieces if int(p["idx"]) in ca.HUMAN_IDXS}
        for k, p in enumerate(pieces):
            feats[b, k] = torch.tensor(piece_features(p, people))
            arts[b, k] = int(p["idx"])
            subtypes[b, k] = int(p.get("subtype") or 0) + 1 if int(p["idx"]) in ca.HUMAN_IDXS else 0
            mask[b, k] = True
    return feats.to(device), arts.to(device), subtypes.to(device), mask.to(device)


def history_tensors(histories: list[list[list[int]]], device):
    """(ids (B, J, T), lengths (B, J)) of each scene's earlier messages (J >= 1, T >= 1; a
    missing message has length 0)."""
    j = max(1, max((len(h) for h in histories), default=1))
    t = max(1, max((len(m) for h in histories for m in h), default=1))
    ids = torch.zeros(len(histories), j, t, dtype=torch.long)
    lengths = torch.zeros(len(histories), j, dtype=torch.long)
    for b, messages in enumerate(histories):
        for k, message in enumerate(messages):
            if message:
                ids[b, k, :len(message)] = torch.tensor(message, dtype=torch.long)
                lengths[b, k] = len(message)
    return ids.to(device), lengths.to(device)


class NeuralTellerNet(nn.Module):
    """See the module docstring. ``forward(feats, arts, subtypes, mask, hist_ids, hist_len,
    choice=None, tokens=None, alternatives)`` -> ``{"described" (B, N), "choose" (B, N + 1), and
    "words" (B, L - 1, V) given ``tokens`` (B, L, starting with BOS), else "ranked" (B, K) choices
    (N: stop) and "tokens" (B, K, <= MAX_GEN) their greedy messages}``."""

    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        h, e, a = cfg.hidden, cfg.embed, cfg.art_embed
        self.art = nn.Embedding(ca.N_CLIPARTS, a)
        self.subtype = nn.Embedding(ca.N_SUBTYPES + 1, a)
        self.piece = nn.Sequential(nn.Linear(PIECE_DIM + 2 * a, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU())
        self.embedding = nn.Embedding(cfg.vocab_size, e, padding_idx=0)
        self.reader = nn.GRU(e, h, batch_first=True, bidirectional=True)
        self.said = nn.Linear(2 * h, h)
        self.key = nn.Linear(h, h)
        self.pick = nn.Sequential(nn.Linear(h + 1, h), nn.ReLU(), nn.Linear(h, 1))
        self.stop = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 1))
        self.start = nn.Linear(h, h)
        self.decoder = nn.GRU(e + h + PIECE_DIM, h, batch_first=True)
        self.out = nn.Linear(h, cfg.vocab_size)

    def forward(self, feats, arts, subtypes, mask, hist_ids, hist_len, choice=None, tokens=None,
                alternatives: int = ALTERNATIVES) -> dict:
        b, n = arts.shape
        state = self.piece(torch.cat([feats, self.art(arts), self.subtype(subtypes)], dim=-1))   # (B, N, H)
        j, t = hist_ids.shape[1], hist_ids.shape[2]
        flat_len = hist_len.reshape(-1).clamp(min=1)
        packed = nn.utils.rnn.pack_padded_sequence(self.embedding(hist_ids.reshape(b * j, t)), flat_len.cpu(),
                                                   batch_first=True, enforce_sorted=False)
        seq, _ = self.reader(packed)
        seq, _ = nn.utils.rnn.pad_packed_sequence(seq, batch_first=True, padding_value=-1e4)
        messages = self.said(seq.max(dim=1).values.reshape(b, j, -1))                          # (B, J, H)
        match = torch.einsum("bnh,bjh->bnj", self.key(state), messages) / state.shape[-1] ** 0.5
        match = match.masked_fill((hist_len == 0).unsqueeze(1), -30.0)
        described = match.max(dim=-1).values                                                   # (B, N) logits
        left = (1 - torch.sigmoid(described)) * mask
        pick = self.pick(torch.cat([state, torch.sigmoid(described).unsqueeze(-1)], dim=-1)).squeeze(-1)
        pick = pick.masked_fill(~mask, float("-inf"))
        stop = self.stop(torch.stack([left.sum(-1) / 4.0, left.max(-1).values], dim=-1))
        choose = torch.cat([pick, stop], dim=-1)
        out = {"described": described, "choose": choose}
        rows = torch.arange(b, device=arts.device)
        if tokens is not None:
            which = choice.clamp(max=n - 1)
            inputs = self.embedding(tokens[:, :-1])
            given = torch.cat([state[rows, which], feats[rows, which]], dim=-1)                 # (B, H + F)
            steps = torch.cat([inputs, given.unsqueeze(1).expand(-1, inputs.shape[1], -1)], dim=-1)
            seq, _ = self.decoder(steps, torch.tanh(self.start(state[rows, which])).unsqueeze(0))
            out["words"] = self.out(seq)
            return out
        ranked = choose.topk(min(alternatives, n + 1), dim=-1).indices if choice is None else choice.unsqueeze(1)
        k = ranked.shape[1]
        which = ranked.clamp(max=n - 1).reshape(-1)                                            # (B * K,)
        flat = rows.repeat_interleave(k)
        given = torch.cat([state[flat, which], feats[flat, which]], dim=-1)
        out["ranked"] = ranked
        out["tokens"] = self.decode(given, torch.tanh(self.start(state[flat, which])).unsqueeze(0)).reshape(b, k, -1)
        return out

    def decode(self, given: torch.Tensor, hidden: torch.Tensor) -> torch.Tensor:
        """Greedy decoding: (rows, <= MAX_GEN) word ids, EOS after the end."""
        word = torch.full((given.shape[0],), BOS_ID, dtype=torch.long, device=given.device)
        done = torch.zeros(given.shape[0], dtype=torch.bool, device=given.device)
        generated = []
        for _ in range(MAX_GEN):
            step = torch.cat([self.embedding(word), given], dim=-1).unsqueeze(1)
            seq, hidden = self.decoder(step, hidden)
            word = self.out(seq[:, 0]).argmax(dim=-1).masked_fill(done, EOS_ID)
            generated.append(word)
            done = done | (word == EOS_ID)
            if bool(done.all()):
                break
        return torch.stack(generated, dim=1)
