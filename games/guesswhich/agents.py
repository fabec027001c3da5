"""GuessWhich agents: ALICE versions (answerer) and QBot (questioner), plus ``summarize``.

* ``alice_exact``, ``alice_noisy``, ``alice_weak``: :class:`clevr.alice.Alice` versions
  (exact; a wrong answer in 20% of rounds; weaker colour perception), so two can be compared as in
  the paper (mean rank, MRR, Mann-Whitney U).
* ``qbot``: :class:`clevr.qbot.QBot`, information-gain questions and belief-based guesses.
* ``qbot_random``: the paper's random baseline (random questions, random guesses).

``summarize(outcomes)`` turns the outcomes of many matches into the numbers the paper reports:
mean rank and MRR of the secret with bootstrap 95% CIs, mean bonus, the per-round mean coarse
rank of the best guess and the per-round share of right best guesses.
"""
from __future__ import annotations

import numpy as np

from agents.base import AgentSpec
from clevr.alice import ALICE_VERSIONS, make_alice
from clevr.metrics import coarse_rank_curve, summarize_ranks
from clevr.qbot import QBot

GAME_ID = "guesswhich_v1"


def _qbot(**kwargs) -> QBot:
    return QBot(**kwargs)


AGENTS = [
    AgentSpec(name, GAME_ID, "answerer", make_alice, description=params["description"],
              kwargs={"name": name})
    for name, params in ALICE_VERSIONS.items()
] + [
    AgentSpec("qbot", GAME_ID, "questioner", _qbot,
              description="QBot: CLEVR-Dialog questions chosen by expected information gain over the "
                          "pool; guesses the most likely image.",
              kwargs={"name": "qbot", "strategy": "infogain"}),
    AgentSpec("qbot_random", GAME_ID, "questioner", _qbot,
              description="Random baseline: random CLEVR-Dialog questions and random guesses.",
              kwargs={"name": "qbot_random", "strategy": "random"}),
]


def summary(outcomes) -> dict:
    """Mean rank / MRR (bootstrap 95% CIs), bonus and per-round curves over match outcomes."""
    outcomes = [o for o in outcomes if o]
    found = [o for o in outcomes if o.get("found")]
    ranks = summarize_ranks([o["rank"] for o in found])
    rounds = max((len(o.get("round_guess_correct") or []) for o in outcomes), default=0)
    accuracy = []
    for k in range(rounds):
        vals = [o["round_guess_correct"][k] for o in outcomes if k < len(o.get("round_guess_correct") or [])]
        accuracy.append(float(np.mean(vals)) if vals else None)
    pool = outcomes[0].get("pool_size") if outcomes else None
    return {
        "matches": len(outcomes),
        "found": len(found),
        "pool_size": pool,
        "mean_rank": ranks["mean_rank"],
        "mrr": ranks["mrr"],
        "chance_mean_rank": (pool + 1) / 2 if pool else None,
        "mean_bonus": float(np.mean([o["bonus"] for o in found])) if found else None,
        "per_round_mean_coarse_rank": coarse_rank_curve([o.get("coarse_ranks") or [] for o in outcomes]),
        "per_round_guess_accuracy": accuracy,
    }


def _fmt(x, digits=2) -> str:
    return "-" if x is None or x != x else f"{x:.{digits}f}"


def summarize(outcomes) -> str:
    """The simulate command's report: the numbers of :func:`summary` as text."""
    s = summary(outcomes)
    mr, rr = s["mean_rank"], s["mrr"]
    lines = [f"{GAME_ID}: {s['matches']} matches, secret found in {s['found']} (pool of {s['pool_size']})",
             f"  mean rank {_fmt(mr['value'])}  95% CI [{_fmt(mr['ci95'][0])}, {_fmt(mr['ci95'][1])}]"
             f"  (chance {_fmt(s['chance_mean_rank'], 1)})",
             f"  MRR       {_fmt(rr['value'], 3)}  95% CI [{_fmt(rr['ci95'][0], 3)}, {_fmt(rr['ci95'][1], 3)}]",
             f"  mean bonus {_fmt(s['mean_bonus'], 1)}",
             "  per-round mean coarse rank: " + " ".join(_fmt(x, 1) for x in s["per_round_mean_coarse_rank"]),
             "  per-round best guess right: " + " ".join(_fmt(x, 2) for x in s["per_round_guess_accuracy"])]
    return "\n".join(lines)


def plot(outcomes, path: str) -> None:
    """Per-round mean coarse rank of the best guess (the paper's Fig. 4), ``simulate --plot``."""
    import matplotlib   # here: matplotlib takes seconds to load; only a plot needs it

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    s = summary(outcomes)
    curve = s["per_round_mean_coarse_rank"]
    fig, ax = plt.subplots(figsize=(5, 3.2))
    ax.plot(range(1, len(curve) + 1), [c if c is not None else float("nan") for c in curve], marker="o")
    if s["chance_mean_rank"]:
        ax.axhline(s["chance_mean_rank"], color="gray", linestyle="--", label="chance")
        ax.legend()
    ax.set_xlabel("round")
    ax.set_ylabel("mean coarse rank of the secret")
    ax.set_title(f"GuessWhich, {s['matches']} matches")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
