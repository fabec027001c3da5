"""Evaluation of the neural CoDraw Drawer (``manage.py codraw_neural_eval``).

Crosstalk-style, as the paper (seeds/000, Section 5): the Drawer is trained on dialogs over scenes
of the ``train`` seed range and evaluated on scenes of the ``test`` range (neural_data.SEED_RANGES;
disjoint, checked), played in-process with the rules (:func:`games.codraw.agents.play`) against the
rule Teller (``RuleTeller(peek=False)``: the neural Drawer never removes pieces, so corrections are
left out for every Drawer alike). Two wordings of the Teller:

* ``template``: the rule Teller's own messages;
* ``paraphrased``: the same messages reworded by :func:`neural_data.paraphrase` (seeded per scene;
  the Teller's own bookkeeping still reads its original wording).

Drawers: the neural Drawer, the rule Drawer (language.py: the parser the Teller's template was
written for), and two trivial baselines: ``empty`` (replies without drawing) and ``random``
(places the palette piece of its seeded choice at a random place, depth and flip per message).
Score: the scene similarity of games/codraw/metric.py (0..5), mean with a 95% bootstrap interval.
"""
from __future__ import annotations

import random

from games.codraw import clipart as ca
from games.codraw import content as codraw_content
from games.codraw import neural_data, rules
from games.codraw.agents import RuleDrawer, RuleTeller, my_turn, play, score_interval

WORDINGS = ("template", "paraphrased")


class ParaphrasedTeller:
    """The rule Teller, its messages reworded (seeded per scene and message number)."""

    def __init__(self, seed: int):
        self.teller, self.seed, self.original = RuleTeller(peek=False), seed, {}

    def act(self, view: dict) -> dict | None:
        chat = [dict(m, text=self.original.get(m["text"], m["text"])) if m.get("role") == rules.TELLER else m
                for m in view.get("chat", [])]
        action = self.teller.act({**view, "chat": chat})
        if action and action.get("type") == "chat":
            rng = random.Random(f"codraw-neural-eval:{self.seed}:{len(self.original)}")
            text = neural_data.paraphrase(action["text"], rng)
            self.original[text] = action["text"]
            action = {**action, "text": text}
        return action


class EmptyDrawer:
    """Draws nothing: replies to every message (trivial baseline, score 0)."""

    def act(self, view: dict) -> dict | None:
        return {"type": "chat", "text": "ok"} if my_turn(view, rules.DRAWER) else None


class RandomDrawer:
    """Per message, places one palette piece not yet drawn at a random place (seeded)."""

    def __init__(self, seed: int):
        self.seed = seed

    def act(self, view: dict) -> dict | None:
        if not my_turn(view, rules.DRAWER):
            return None
        messages = sum(1 for m in view.get("chat", []) if m.get("role") == rules.TELLER)
        drawer_replies = sum(1 for m in view.get("chat", []) if m.get("role") == rules.DRAWER)
        drawn = {int(p["idx"]) for p in view.get("canvas", [])}
        free = [int(p["idx"]) for p in view.get("palette", []) if int(p["idx"]) not in drawn]
        if len(drawn) > drawer_replies or not free or messages == 0:   # one piece per round
            return {"type": "chat", "text": "ok"}
        rng = random.Random(f"codraw-random-drawer:{self.seed}:{messages}")
        idx = rng.choice(free)
        return {"type": "place", "idx": idx, "x": rng.randint(0, ca.CANVAS_W), "y": rng.randint(0, ca.CANVAS_H),
                "depth": rng.randrange(ca.N_DEPTHS), "flip": rng.randrange(ca.N_FLIPS)}


def check_disjoint(train_seeds: range, test_seeds: range) -> None:
    if set(train_seeds) & set(test_seeds):
        raise ValueError("training and test scenes overlap")


def evaluate(drawers: dict, scenes: int, offset: int = 0, wordings=WORDINGS, progress: bool = False) -> dict:
    """``drawers``: {name: agent, or an agent class made per scene with the seed}. Returns
    ``{wording: {drawer: {"mean", "low", "high", "scores"}}}`` over ``scenes`` test scenes."""
    from tqdm import tqdm

    seeds = neural_data.scene_seeds("test", scenes, offset)
    results: dict = {}
    for wording in wordings:
        results[wording] = {}
        for name, drawer in drawers.items():
            scores = []
            for seed in tqdm(seeds, desc=f"{wording} / {name}", disable=not progress, leave=False):
                agent = drawer(seed) if isinstance(drawer, type) else drawer
                teller = ParaphrasedTeller(seed) if wording == "paraphrased" else RuleTeller(peek=False)
                state = play(codraw_content.generate(seed), {rules.TELLER: teller, rules.DRAWER: agent}, seed=seed)
                scores.append(rules.score(state))
            mean, low, high = score_interval(scores)
            results[wording][name] = {"mean": mean, "low": low, "high": high, "scores": scores}
    return results


def default_drawers(neural) -> dict:
    return {"neural": neural, "rule": RuleDrawer(), "random": RandomDrawer, "empty": EmptyDrawer()}


def table(results: dict) -> str:
    names = list(next(iter(results.values())))
    lines = ["| Drawer | " + " | ".join(f"{w} Teller" for w in results) + " |",
             "|---|" + "---|" * len(results)]
    for name in names:
        cells = [f"{results[w][name]['mean']:.2f} [{results[w][name]['low']:.2f}, {results[w][name]['high']:.2f}]"
                 for w in results]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot(results: dict, path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    names = list(next(iter(results.values())))
    fig, ax = plt.subplots(figsize=(7, 3.4))
    width = 0.8 / len(results)
    for k, wording in enumerate(results):
        means = [results[wording][n]["mean"] for n in names]
        err = [[m - results[wording][n]["low"] for n, m in zip(names, means)],
               [results[wording][n]["high"] - m for n, m in zip(names, means)]]
        ax.bar(np.arange(len(names)) + k * width, means, width, yerr=err, capsize=3, label=f"{wording} Teller")
    ax.set_xticks(np.arange(len(names)) + width * (len(results) - 1) / 2, names)
    ax.set_ylabel("scene similarity (0..5)")
    ax.set_title("CoDraw Drawers with the rule Teller, held-out scenes")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
