"""A small, real torch model family for the color game's listener, for the model-serving tests.

It follows the contract of docs/agents.md ("Model agents"): ``TinyColorsListener.load(checkpoint,
device, **options)`` and ``act_batch(views)`` (one forward pass for every view that can click).
The network scores each of the three colors by the dot product of a color encoding (hue as sine
and cosine, saturation, lightness) and a text encoding (hashed bag of words); :func:`train` fits it
for a few hundred steps on descriptions generated here (hue words, light/dark), enough to beat
chance. Test options: ``calls_file`` appends each act_batch call's size (a cross-check of the
worker's own batch log); ``fail_word``: act_batch raises when a speaker message contains it (a
model that errors).
"""
from __future__ import annotations

import math
import random
import re
import zlib

import torch
from torch import nn

VOCAB = 64
HUES = [(0, "red"), (30, "orange"), (60, "yellow"), (120, "green"), (180, "teal"), (220, "blue"),
        (275, "purple"), (320, "pink"), (360, "red")]


def words(text: str) -> list[str]:
    return re.findall(r"[a-z]+", text.lower())


def text_features(text: str) -> list[float]:
    vec = [0.0] * VOCAB
    for word in words(text):
        vec[zlib.crc32(word.encode()) % VOCAB] += 1.0
    return vec


def color_features(hsl) -> list[float]:
    h, s, l = hsl
    return [math.sin(math.radians(h)), math.cos(math.radians(h)), s / 100.0, l / 100.0]


def describe(hsl, rng: random.Random) -> str:
    h, s, l = hsl
    name = min(HUES, key=lambda item: abs(item[0] - h))[1]
    shade = "dark " if l < 35 else "light " if l > 65 else ""
    return rng.choice(["", "the ", "it's the ", "pick the "]) + shade + name


class TinyListenerNet(nn.Module):
    def __init__(self, hidden: int = 16):
        super().__init__()
        self.color = nn.Sequential(nn.Linear(4, hidden), nn.Tanh(), nn.Linear(hidden, hidden))
        self.text = nn.Linear(VOCAB, hidden)

    def forward(self, colors: torch.Tensor, text: torch.Tensor) -> torch.Tensor:
        """colors (B, 3, 4), text (B, VOCAB) -> scores (B, 3)."""
        return (self.color(colors) * self.text(text).unsqueeze(1)).sum(-1)


def random_context(rng: random.Random) -> list[list[float]]:
    return [[rng.uniform(0, 360), rng.uniform(30, 100), rng.uniform(20, 80)] for _ in range(3)]


def train(path: str, *, steps: int = 120, seed: int = 0, hidden: int = 16) -> dict:
    """Train on generated contexts and save ``{"config", "state_dict"}``; returns accuracy before and
    after on held-out generated data."""
    torch.set_num_threads(1)   # a tiny network: threads only contend on a shared test machine
    torch.manual_seed(seed)
    rng = random.Random(seed)
    net = TinyListenerNet(hidden)

    def batch(n):
        colors, texts, targets = [], [], []
        for _ in range(n):
            context = random_context(rng)
            target = rng.randrange(3)
            colors.append([color_features(c) for c in context])
            texts.append(text_features(describe(context[target], rng)))
            targets.append(target)
        return torch.tensor(colors), torch.tensor(texts), torch.tensor(targets)

    test = batch(300)

    def accuracy():
        with torch.no_grad():
            return (net(test[0], test[1]).argmax(-1) == test[2]).float().mean().item()

    before = accuracy()
    optimiser = torch.optim.Adam(net.parameters(), lr=0.02)
    for _ in range(steps):
        colors, texts, targets = batch(32)
        loss = nn.functional.cross_entropy(net(colors, texts), targets)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    torch.save({"config": {"hidden": hidden}, "state_dict": net.state_dict()}, path)
    return {"before": before, "after": accuracy()}


class TinyColorsListener:
    """The family: ``load`` then ``act_batch``."""

    def __init__(self, net: TinyListenerNet, device: str, calls_file: str = "", fail_word: str = ""):
        self.net, self.device = net, torch.device(device)
        self.calls_file, self.fail_word = calls_file, fail_word

    @classmethod
    def load(cls, checkpoint: str, device: str, **options) -> "TinyColorsListener":
        saved = torch.load(checkpoint, map_location=device, weights_only=True)
        net = TinyListenerNet(**saved["config"])
        net.load_state_dict(saved["state_dict"])
        return cls(net.to(device).eval(), device, **options)

    def act_batch(self, views: list[dict]) -> list[dict | None]:
        if self.calls_file:
            with open(self.calls_file, "a") as f:
                f.write(f"{len(views)}\n")
        rows = [i for i, view in enumerate(views) if view.get("can_click") and view.get("colors")]
        answers: list[dict | None] = [None] * len(views)
        texts = [" ".join(m["text"] for m in views[i]["messages"] if m["role"] == "speaker") for i in rows]
        if self.fail_word and any(self.fail_word in text for text in texts):
            raise RuntimeError(f"the model fails on {self.fail_word!r} (a test option)")
        colors = torch.tensor([[color_features(c["hsl"]) for c in views[i]["colors"]] for i in rows] or
                              [[[0.0] * 4] * 3], device=self.device)
        text = torch.tensor([text_features(t) for t in texts] or [[0.0] * VOCAB], device=self.device)
        with torch.no_grad():   # one forward pass for the whole batch (a dummy row when none can click)
            choice = self.net(colors, text).argmax(-1).tolist()
        for row, i in enumerate(rows):
            answers[i] = {"type": "click", "position": int(choice[row]), "round": views[i]["round"]}
        return answers
