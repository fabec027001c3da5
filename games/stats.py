"""Statistics helpers for a game's monitor module (``<package>.monitor``, see :class:`games.spec.GameSpec`):
JSON-safe numbers, proportions with Wilson intervals, bootstrap means, Fisher's exact test rows.
The research pages (research/monitor.py) use the same helpers."""
from __future__ import annotations

import math

import numpy as np
from scipy import stats

from clevr.metrics import bootstrap_ci


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
    ci = stats.binomtest(int(correct), int(n)).proportion_ci(confidence_level=0.95, method="wilson")
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
    res = stats.fisher_exact(table, alternative="two-sided")
    return {**row, "odds_ratio": num(res.statistic), "p_value": num(res.pvalue)}


def mann_whitney(sa, sb) -> dict:
    """Mann-Whitney U (two-sided) between two samples: a comparison row (``n_a``, ``n_b``, ``u``,
    ``p_value``, ``mean_a``, ``mean_b``)."""
    test = stats.mannwhitneyu(sa, sb, alternative="two-sided")
    return {"n_a": len(sa), "n_b": len(sb), "u": num(test.statistic), "p_value": num(test.pvalue),
            "mean_a": mean(sa), "mean_b": mean(sb)}
