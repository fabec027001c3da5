"""Evaluation of the neural CoDraw agents (``manage.py codraw_neural_eval``).

:func:`table1` is the paper's Table 1 (seeds/000, Section 5 and 6) on generated scenes: script-based
Drawer evaluation (a :class:`agents.ScriptTeller` replays a recorded dialog of the test scene:
the rule Teller's paraphrased messages to the rule Drawer, :func:`recorded_script`) and
machine-machine pairs of Tellers and Drawers (neural, rule, nearest-neighbour), the neural Teller
and Drawer trained on disjoint halves of the training scenes (crosstalk, neural_data.HALVES); one
row per pair, scene similarity with a 95% bootstrap interval, as one Markdown table (:func:`table`)
and one chart (:func:`plot`). :func:`evaluate` is the Drawer-only comparison below.

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
from dataclasses import dataclass

from games.codraw import clipart as ca
from games.codraw import content as codraw_content
from games.codraw import rules
from games.codraw.neural import data as neural_data
from games.codraw.agents import RuleDrawer, RuleTeller, ScriptTeller, my_turn, play, score_interval

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
    # each seed of the shorter range looked up in the other (a range's ``in`` is arithmetic), so a
    # range of 10**8 seeds is never expanded into a set
    short, other = sorted((train_seeds, test_seeds), key=len)
    if any(seed in other for seed in short):
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


# ------------------------------------------------------------------------ the Table 1 of the paper
class EmptyTeller:
    """Ends the game at once (trivial Teller baseline: score 0)."""

    def act(self, view: dict) -> dict | None:
        return {"type": "end"} if my_turn(view, rules.TELLER) else None


SCRIPT = "script"


@dataclass(frozen=True)
class Pair:
    """One row of the table: ``teller`` (a name of ``tellers``, or SCRIPT: replay the recorded
    dialog), ``drawer`` (a name of ``drawers``), ``evaluation`` (the column's words)."""

    teller: str
    drawer: str
    evaluation: str


def recorded_script(seed: int) -> dict:
    """The test scene ``seed`` with a recorded dialog: the rule Teller (no peek, its messages
    paraphrased as :class:`ParaphrasedTeller`) and the rule Drawer, as a CoDraw_1_0.json dialog
    would be (``content["dialog"]``: ``msg_t`` per round), for script-based Drawer evaluation."""
    content = codraw_content.generate(seed)
    state = play(content, {rules.TELLER: ParaphrasedTeller(seed), rules.DRAWER: RuleDrawer()}, seed=seed)
    return {**content, "dialog": [{"msg_t": r["msg_t"], "msg_d": r["msg_d"]} for r in state["rounds"]]}


def _agent(maker, seed: int):
    return maker(seed) if isinstance(maker, type) else maker


def table1(tellers: dict, drawers: dict, pairs: list[Pair], scenes: int, offset: int = 0,
           progress: bool = False) -> list[dict]:
    """Scene similarity per pair on ``scenes`` test scenes (neural_data's ``test`` range), played
    in-process with the rules: a SCRIPT Teller is :class:`agents.ScriptTeller` replaying
    :func:`recorded_script` (config ``script_teller``), the others play live. ``tellers`` and
    ``drawers``: {name: agent, or an agent class made per scene with the seed}. Returns one row per
    pair: ``{"evaluation", "teller", "drawer", "mean", "low", "high", "scores"}`` (95% bootstrap)."""
    from tqdm import tqdm

    seeds = neural_data.scene_seeds("test", scenes, offset)
    scripts: dict[int, dict] = {}
    rows = []
    for pair in pairs:
        scores = []
        for seed in tqdm(seeds, desc=f"{pair.teller} / {pair.drawer}", disable=not progress, leave=False):
            drawer = _agent(drawers[pair.drawer], seed)
            if pair.teller == SCRIPT:
                if seed not in scripts:
                    scripts[seed] = recorded_script(seed)
                state = play(scripts[seed], {rules.TELLER: ScriptTeller(), rules.DRAWER: drawer}, seed=seed,
                             config={"script_teller": True})
            else:
                teller = _agent(tellers[pair.teller], seed)
                state = play(codraw_content.generate(seed), {rules.TELLER: teller, rules.DRAWER: drawer}, seed=seed)
            scores.append(rules.score(state))
        mean, low, high = score_interval(scores)
        rows.append({"evaluation": pair.evaluation, "teller": pair.teller, "drawer": pair.drawer,
                     "mean": mean, "low": low, "high": high, "scores": scores})
    return rows


def table(rows: list[dict]) -> str:
    """ONE Markdown table, as the paper's Table 1: evaluation, Teller, Drawer, scene similarity."""
    lines = ["| Evaluation | Teller | Drawer | Scene similarity (95% CI) |", "|---|---|---|---|"]
    for row in rows:
        teller = "script (recorded dialog)" if row["teller"] == SCRIPT else row["teller"]
        lines.append(f"| {row['evaluation']} | {teller} | {row['drawer']} | "
                     f"{row['mean']:.2f} [{row['low']:.2f}, {row['high']:.2f}] |")
    return "\n".join(lines)


def plot(rows: list[dict], path) -> None:
    """Horizontal bars, one per row of :func:`table`, with the 95% intervals."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{'script' if r['teller'] == SCRIPT else r['teller']} + {r['drawer']}" for r in rows]
    groups = list(dict.fromkeys(r["evaluation"] for r in rows))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    fig, ax = plt.subplots(figsize=(8, 0.32 * len(rows) + 1.6))
    y = list(range(len(rows)))[::-1]
    for k, row in enumerate(rows):
        color = colors[groups.index(row["evaluation"]) % len(colors)]
        ax.barh(y[k], row["mean"], xerr=[[row["mean"] - row["low"]], [row["high"] - row["mean"]]], capsize=2,
                color=color, label=row["evaluation"])
    handles, names = ax.get_legend_handles_labels()
    unique = dict(zip(names, handles))
    ax.legend(unique.values(), unique.keys(), fontsize=7, loc="upper center", bbox_to_anchor=(0.4, -0.1),
              ncol=len(unique), frameon=False)
    ax.set_yticks(y, labels, fontsize=8)
    ax.set_xlim(0, 5)
    ax.set_xlabel("scene similarity (0..5), 95% bootstrap CI")
    ax.set_title("CoDraw Tellers and Drawers on held-out scenes (Teller + Drawer)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
