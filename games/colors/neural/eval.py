"""Accuracy per condition of the neural and rule color listeners (``manage.py colors_neural_eval``).

Every round is played through the game's rules (:func:`games.colors.rules.apply`): a one-round
state per context, the speaker's chat applied, then each listener's click applied to the same
listener view, and the click's correctness read from the rules' outcome. Settings:

* ``lexicon speaker``: agent-agent play, the rule :class:`LexiconSpeaker` describes the target;
* ``neural speaker``: agent-agent play, the neural S0 describes it (one batched forward pass);
* ``people's phrasing``: the held-out human-like descriptions of :mod:`neural_data`
  (``style="people"``: templates, hedges, negations and typos never seen in training);
* ``training phrasing``: new contexts described with the training templates (for comparison).

Listeners: the rule literal L0 and RSA L1 of :mod:`games.colors.agents`, the neural L0 and the
neural L2 (blended, :class:`games.colors.neural.model.PragmaticListener`), and the random baseline.
Intervals are Wilson 95 % intervals per proportion (as on the research monitor).
"""
from __future__ import annotations

from dataclasses import dataclass

from scipy import stats

from games.colors import agents as rule_agents
from games.colors import content, rules
from games.colors.neural import data as neural_data

CONDITIONS = rules.CONDITIONS
SHORT = {"lexicon speaker": "lexicon\nspeaker", "neural speaker": "neural\nspeaker",
         "people's phrasing (held out)": "people's\nphrasing", "training phrasing, new contexts": "training\nphrasing"}
START = 1_700_000_000_000


@dataclass
class Cell:
    correct: int
    played: int

    @property
    def accuracy(self) -> float:
        return self.correct / self.played if self.played else float("nan")

    def interval(self) -> tuple[float, float]:
        if not self.played:
            return (float("nan"), float("nan"))
        ci = stats.binomtest(self.correct, self.played).proportion_ci(confidence_level=0.95, method="wilson")
        return (float(ci.low), float(ci.high))


def one_round_state(round_: dict, seed: int) -> dict:
    return rules.initial_state({"rounds": [round_]}, seed, {"rounds": 1})


def rounds_from_examples(examples: list[dict]) -> list[dict]:
    """Content rounds (target first) for examples given in the listener's order."""
    out = []
    for e in examples:
        t = e["target"]
        others = [i for i in range(3) if i != t]
        out.append({"condition": e["condition"], "colors": [e["colors"][i] for i in (t, *others)],
                    "positions": {"speaker": [0, 1, 2], "listener": [t, *others]}})
    return out


def act_all(agent, views: list[dict]) -> list[dict]:
    batch = getattr(agent, "act_batch", None)
    return batch(views) if batch else [agent.act(view) for view in views]


def play(rounds: list[dict], texts_or_speaker, listeners: dict, seed: int) -> tuple[dict, list[str]]:
    """Per listener, per condition: how many rounds it got right. ``texts_or_speaker`` is either
    the speaker's texts (one per round) or a speaker agent asked for all rounds at once."""
    states = [one_round_state(r, seed + i) for i, r in enumerate(rounds)]
    if isinstance(texts_or_speaker, list):
        chats = [{"type": "chat", "text": text, "round": 1} for text in texts_or_speaker]
    else:
        chats = act_all(texts_or_speaker, [rules.view_for(s, "speaker") for s in states])
    spoken = [rules.apply(s, "speaker", {**chat, "at": START})[0] for s, chat in zip(states, chats)]
    views = [rules.view_for(s, "listener") for s in spoken]
    results = {}
    for name, listener in listeners.items():
        cells = {c: Cell(0, 0) for c in CONDITIONS}
        for state, action in zip(spoken, act_all(listener, views)):
            after, _ = rules.apply(state, "listener", {**action, "at": START + 1000})
            record = after["history"][-1]
            cell = cells[record["condition"]]
            cell.correct += int(record["correct"])
            cell.played += 1
        results[name] = cells
    return results, [chat["text"] for chat in chats]


def evaluate(*, listeners: dict, neural_speaker, n: int, seed: int) -> dict:
    """All four settings: {setting: {"results": {listener: {condition: Cell}}, "mean_words": x}}."""
    out = {}
    game_rounds = content.generate(seed, {"rounds": n})["rounds"]
    for setting, speaker in (("lexicon speaker", rule_agents.LexiconSpeaker()),
                             ("neural speaker", neural_speaker)):
        if speaker is None:
            continue
        results, texts = play(game_rounds, speaker, listeners, seed)
        out[setting] = {"results": results, "examples": texts[:6],
                        "mean_words": sum(len(t.split()) for t in texts) / len(texts)}
    for setting, style, data_seed in (("people's phrasing (held out)", "people", seed + 1),
                                      ("training phrasing, new contexts", "train", seed + 2)):
        examples = neural_data.make_examples(n, data_seed, style)
        texts = [e["text"] for e in examples]
        results, _ = play(rounds_from_examples(examples), texts, listeners, seed)
        out[setting] = {"results": results, "examples": texts[:6],
                        "mean_words": sum(len(t.split()) for t in texts) / len(texts)}
    return out


def overall(cells: dict) -> Cell:
    return Cell(sum(c.correct for c in cells.values()), sum(c.played for c in cells.values()))


def fmt(cell: Cell) -> str:
    low, high = cell.interval()
    return f"{100 * cell.accuracy:.1f} ({100 * low:.0f}-{100 * high:.0f})"


def markdown(report: dict) -> str:
    lines = []
    for setting, data in report.items():
        lines += [f"**{setting}** (mean {data['mean_words']:.1f} words per description; e.g. "
                  + ", ".join(f"“{t}”" for t in data["examples"][:4]) + ")", "",
                  "| listener | all | far | split | close |", "| --- | --- | --- | --- | --- |"]
        for name, cells in data["results"].items():
            lines.append(f"| {name} | {fmt(overall(cells))} | "
                         + " | ".join(fmt(cells[c]) for c in CONDITIONS) + " |")
        lines.append("")
    n = next(iter(next(iter(report.values()))["results"].values()))
    lines.append(f"Accuracy in % with Wilson 95 % intervals; {sum(c.played for c in n.values())} "
                 "rounds per setting, conditions balanced.")
    return "\n".join(lines)


def plot(report: dict, path) -> None:
    """One panel per condition: accuracy per listener (bars) in each setting (groups)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    settings = list(report)
    names = list(next(iter(report.values()))["results"])
    fig, axes = plt.subplots(1, 3, figsize=(13, 4.6), sharey=True)
    width = 0.8 / len(names)
    colors = plt.get_cmap("tab10").colors
    for ax, condition in zip(axes, CONDITIONS):
        for j, name in enumerate(names):
            cells = [report[s]["results"][name][condition] for s in settings]
            acc = np.array([c.accuracy for c in cells])
            ci = np.array([c.interval() for c in cells])
            x = np.arange(len(settings)) + (j - (len(names) - 1) / 2) * width
            ax.bar(x, acc, width, yerr=[acc - ci[:, 0], ci[:, 1] - acc], capsize=2,
                   color=colors[j % len(colors)], label=name)
        ax.axhline(1 / 3, color="grey", linestyle="--", linewidth=1)
        ax.set_xticks(np.arange(len(settings)))
        ax.set_xticklabels([SHORT.get(s, s) for s in settings], fontsize=8)
        ax.set_title(condition)
        ax.set_ylim(0, 1.05)
    axes[0].set_ylabel("listener accuracy (95 % Wilson)")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(names), fontsize=8)
    fig.suptitle("Color listeners per condition (dashed: chance)")
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
