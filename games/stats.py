"""Statistics helpers for a game's monitor module (``<package>.monitor``, see :class:`games.spec.GameSpec`):
JSON-safe numbers, proportions with Wilson intervals, bootstrap means, Fisher's exact test rows, and
:class:`Metric`, how a game declares the per-match numbers its arms are compared on (``METRICS``).
The research pages (research/monitor.py, research/arms.py) use the same helpers."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from clevr.metrics import bootstrap_ci


def _stats():
    """scipy.stats, imported on first use: importing it costs about 1.3 s of CPU, and every Django
    process imports this module (the game registry, the research pages) without testing anything."""
    from scipy import stats

    return stats


def num(x):
    """JSON-safe float: NaN and infinities become None."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def mean(values):
    v = [float(x) for x in values if x is not None]
    return float(np.mean(v)) if v else None


def proportion(correct: int, n: int) -> dict:
    """A proportion with its Wilson 95 % interval (None when n is 0)."""
    if n <= 0:
        return {"n": 0, "correct": 0, "value": None, "ci95": [None, None]}
    ci = _stats().binomtest(int(correct), int(n)).proportion_ci(confidence_level=0.95, method="wilson")
    return {"n": int(n), "correct": int(correct), "value": correct / n, "ci95": [num(ci.low), num(ci.high)]}


def mean_ci(values) -> dict:
    """The mean with its bootstrap 95 % interval (:func:`clevr.metrics.bootstrap_ci`)."""
    v = [float(x) for x in values if x is not None]
    lo, hi = bootstrap_ci(v)
    return {"n": len(v), "value": num(np.mean(v)) if v else None, "ci95": [num(lo), num(hi)]}


def fisher(pa: dict, pb: dict) -> dict:
    """Fisher's exact test (two-sided) between two :func:`proportion` results: a comparison row."""
    row = {"n_a": pa["n"], "n_b": pb["n"], "accuracy_a": pa["value"], "accuracy_b": pb["value"]}
    if not pa["n"] or not pb["n"]:
        return {**row, "odds_ratio": None, "p_value": None}
    table = [[pa["correct"], pa["n"] - pa["correct"]], [pb["correct"], pb["n"] - pb["correct"]]]
    res = _stats().fisher_exact(table, alternative="two-sided")
    return {**row, "odds_ratio": num(res.statistic), "p_value": num(res.pvalue)}


def mann_whitney(sa, sb) -> dict:
    """Mann-Whitney U (two-sided) between two samples: a comparison row (``n_a``, ``n_b``, ``u``,
    ``p_value``, ``mean_a``, ``mean_b``)."""
    test = _stats().mannwhitneyu(sa, sb, alternative="two-sided")
    return {"n_a": len(sa), "n_b": len(sb), "u": num(test.statistic), "p_value": num(test.pvalue),
            "mean_a": mean(sa), "mean_b": mean(sb)}


KINDS = ("proportion", "mean", "ordinal")


@dataclass(frozen=True)
class Metric:
    """One number a game's matches are compared on, per match, from its outcome (a game's
    ``monitor.METRICS``: a tuple of these, the first the game's *primary* metric; research/arms.py
    computes each arm's value, the differences between arms and the sample-size planner from them).

    ``kind`` says which statistics fit:

    * ``"proportion"``: successes over trials, pooled over matches (the colors game's correct
      rounds, as its monitor counts them); ``trials(outcome) -> (successes, trials)`` or None.
      Wilson interval, Newcombe's interval of a difference, Fisher's exact test.
    * ``"mean"``: a roughly continuous score; ``value(outcome) -> float`` or None. Bootstrap
      interval (:func:`mean_ci`), Welch's t.
    * ``"ordinal"``: ranks, ratings, skewed scores; ``value``. Bootstrap intervals of the mean and
      of a difference of means, Mann-Whitney U.

    ``higher_is_better``: False for ranks. ``delta``: the planner's default difference to detect,
    in the metric's own units (a proportion: 0.05 is five points). ``unit``: words after a number
    ("of 5", "rank")."""

    key: str
    label: str
    kind: str
    value: Callable[[dict], float | None] | None = None
    trials: Callable[[dict], tuple[int, int] | None] | None = None
    higher_is_better: bool = True
    delta: float = 0.1
    unit: str = ""

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"Metric {self.key!r}: kind must be one of {', '.join(KINDS)}, not {self.kind!r}.")
        if self.kind == "proportion" and self.trials is None:
            raise ValueError(f"Metric {self.key!r}: a proportion needs trials(outcome) -> (successes, trials).")
        if self.kind != "proportion" and self.value is None:
            raise ValueError(f"Metric {self.key!r}: a {self.kind} metric needs value(outcome) -> float.")
        if not self.delta > 0:
            raise ValueError(f"Metric {self.key!r}: delta must be positive.")

    def of(self, outcome: dict | None) -> float | None:
        """The match's value (a proportion's: successes / trials), None when it has none."""
        if not outcome:
            return None
        if self.kind == "proportion":
            st = self.trials(outcome)
            return (st[0] / st[1]) if st and st[1] else None
        v = self.value(outcome)
        return num(v) if v is not None else None
