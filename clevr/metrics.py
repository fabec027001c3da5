"""Metrics for GuessWhich and visual dialog.

GuessWhich (``seeds/001_*``): mean rank and mean reciprocal rank of the secret image with
bootstrap 95% confidence intervals (:func:`scipy.stats.bootstrap`), a Mann-Whitney U test between
two ALICE versions (:func:`scipy.stats.mannwhitneyu`), and the per-round coarse-rank curve.

Visual Dialog (``seeds/004_*``): retrieval metrics over the rank of the human answer among the
100 candidate answers (R@1, R@5, R@10, mean rank, MRR) and VisDial v1.0's NDCG over dense
relevance scores (DCG@K with K = the number of relevant options, as in the VisDial evaluation code).

Public API: ``mean_rank``, ``mrr``, ``bootstrap_ci``, ``summarize_ranks``, ``compare_versions``,
``coarse_rank_curve``, ``retrieval_metrics``, ``scores_to_ranks``, ``ranks_from_scores``, ``ndcg``, ``ndcg_from_ranks``.
"""
from __future__ import annotations

import math

import numpy as np


def mean_rank(ranks) -> float:
    r = np.asarray(list(ranks), dtype=float)
    return float(r.mean()) if r.size else math.nan


def mrr(ranks) -> float:
    r = np.asarray(list(ranks), dtype=float)
    return float((1.0 / r).mean()) if r.size else math.nan


def bootstrap_ci(values, statistic=np.mean, *, confidence: float = 0.95, n_resamples: int = 10000,
                 seed: int = 0) -> tuple[float, float]:
    """A ``confidence`` interval for ``statistic`` of ``values`` (BCa bootstrap, seeded).
    Degenerate samples (fewer than 2 values, or all equal) give the point value at both ends."""
    v = np.asarray(list(values), dtype=float)
    if v.size == 0:
        return (math.nan, math.nan)
    if v.size < 2 or np.all(v == v[0]):
        x = float(statistic(v))
        return (x, x)
    from scipy import stats   # imported here: ~1.3 s of CPU, and every Django process imports this module

    res = stats.bootstrap((v,), lambda x, axis=-1: statistic(x, axis=axis), confidence_level=confidence,
                          n_resamples=n_resamples, random_state=np.random.default_rng(seed),
                          method="BCa", vectorized=True)
    lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
    if not (math.isfinite(lo) and math.isfinite(hi)):  # BCa can fail on tiny samples
        res = stats.bootstrap((v,), lambda x, axis=-1: statistic(x, axis=axis), confidence_level=confidence,
                              n_resamples=n_resamples, random_state=np.random.default_rng(seed),
                              method="percentile", vectorized=True)
        lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
    return (lo, hi)


def _reciprocal(x, axis=-1):
    return np.mean(1.0 / x, axis=axis)


def summarize_ranks(ranks, *, seed: int = 0) -> dict:
    """Mean rank and MRR of the secret, each with a bootstrap 95% CI."""
    r = [float(x) for x in ranks if x is not None]
    lo, hi = bootstrap_ci(r, seed=seed)
    rlo, rhi = bootstrap_ci(r, _reciprocal, seed=seed)
    return {"n": len(r),
            "mean_rank": {"value": mean_rank(r), "ci95": [lo, hi]},
            "mrr": {"value": mrr(r), "ci95": [rlo, rhi]}}


def compare_versions(ranks_a, ranks_b) -> dict:
    """Two-sided Mann-Whitney U test on the secret's rank under two versions (e.g. two ALICEs)."""
    a = [float(x) for x in ranks_a if x is not None]
    b = [float(x) for x in ranks_b if x is not None]
    if not a or not b:
        return {"n_a": len(a), "n_b": len(b), "u": math.nan, "p_value": math.nan}
    from scipy import stats

    res = stats.mannwhitneyu(a, b, alternative="two-sided")
    return {"n_a": len(a), "n_b": len(b), "u": float(res.statistic), "p_value": float(res.pvalue),
            "mean_rank_a": mean_rank(a), "mean_rank_b": mean_rank(b)}


def coarse_rank_curve(per_game_ranks) -> list[float | None]:
    """Mean coarse rank per round over games (each game: a list of per-round coarse ranks;
    games that stopped early simply do not count for later rounds)."""
    games = [list(g) for g in per_game_ranks]
    n = max((len(g) for g in games), default=0)
    out: list[float | None] = []
    for k in range(n):
        vals = [g[k] for g in games if k < len(g) and g[k] is not None]
        out.append(float(np.mean(vals)) if vals else None)
    return out


def retrieval_metrics(gt_ranks) -> dict:
    """VisDial's retrieval metrics from the 1-based rank of the ground-truth answer among the
    candidate answers of each question."""
    r = np.asarray(list(gt_ranks), dtype=float)
    if r.size == 0:
        return {"n": 0, "r@1": math.nan, "r@5": math.nan, "r@10": math.nan, "mean_rank": math.nan,
                "mrr": math.nan}
    return {"n": int(r.size), "r@1": float((r <= 1).mean()), "r@5": float((r <= 5).mean()),
            "r@10": float((r <= 10).mean()), "mean_rank": float(r.mean()), "mrr": float((1 / r).mean())}


def scores_to_ranks(scores) -> np.ndarray:
    """1-based rank of every option from a model's scores, as VisDial's evaluation code
    (``scores_to_ranks`` in ``visdialch/metrics.py``) computes it: options are sorted by descending
    score and each option's rank is its position in that order. Ties are broken by sort position,
    and the sort is stable, so of two equal scores the option with the lower index ranks first.
    ``scores``: shape (..., n_options); returns ints of the same shape."""
    s = np.asarray(scores, dtype=float)
    order = np.argsort(-s, axis=-1, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(1, s.shape[-1] + 1), axis=-1)
    return ranks


def ranks_from_scores(scores, gt_index: int) -> int:
    """1-based rank of option ``gt_index`` by :func:`scores_to_ranks` (the VisDial evaluation's
    sort position: a tie with an option of lower index ranks the ground truth after it, a tie
    with a higher index before it)."""
    return int(scores_to_ranks(scores)[..., gt_index])


def ndcg_from_ranks(ranks, relevance) -> float:
    """VisDial v1.0 NDCG for one question from the options' 1-based ``ranks`` (a submission's
    ``ranks``, or :func:`scores_to_ranks`) and their dense ``relevance`` (0..1): K = the number of
    options with non-zero relevance; DCG@K of the options in rank order over the ideal DCG@K
    (``NDCG`` in ``visdialch/metrics.py``)."""
    rel = np.asarray(relevance, dtype=float)
    k = int((rel != 0).sum())
    if k == 0:
        return math.nan
    order = np.argsort(np.asarray(ranks), kind="stable")[:k]
    discounts = 1.0 / np.log2(np.arange(2, k + 2))
    dcg = float((rel[order] * discounts).sum())
    ideal = float((np.sort(rel)[::-1][:k] * discounts).sum())
    return dcg / ideal


def ndcg(scores, relevance) -> float:
    """VisDial v1.0 NDCG for one question from a model's ``scores`` of the options (ranked by
    :func:`scores_to_ranks`) and their dense ``relevance``; see :func:`ndcg_from_ranks`."""
    return ndcg_from_ranks(scores_to_ranks(scores), relevance)
