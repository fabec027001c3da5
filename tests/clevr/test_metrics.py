"""Metrics: mean rank, MRR, bootstrap CIs, Mann-Whitney, coarse-rank curves, VisDial retrieval."""
from __future__ import annotations

import math

import pytest

from clevr import metrics


def test_mean_rank_and_mrr():
    assert metrics.mean_rank([1, 2, 3, 6]) == 3.0
    assert metrics.mrr([1, 2, 4]) == pytest.approx((1 + 0.5 + 0.25) / 3)


def test_bootstrap_ci_brackets_the_mean_and_is_seeded():
    ranks = [1, 1, 2, 3, 5, 8, 2, 1, 4, 6, 1, 2]
    lo, hi = metrics.bootstrap_ci(ranks)
    assert lo < metrics.mean_rank(ranks) < hi
    assert (lo, hi) == metrics.bootstrap_ci(ranks)
    assert metrics.bootstrap_ci([3, 3, 3]) == (3.0, 3.0)
    s = metrics.summarize_ranks(ranks)
    assert s["n"] == 12 and s["mrr"]["ci95"][0] < s["mrr"]["value"] < s["mrr"]["ci95"][1]


def test_mann_whitney_tells_different_versions_apart():
    good = [1, 1, 2, 1, 3, 1, 2, 1, 1, 2, 1, 1]
    bad = [10, 14, 7, 20, 11, 9, 16, 5, 12, 18, 8, 13]
    res = metrics.compare_versions(good, bad)
    assert res["p_value"] < 0.001
    assert metrics.compare_versions(good, good)["p_value"] > 0.5


def test_coarse_rank_curve_averages_per_round():
    assert metrics.coarse_rank_curve([[4, 2, 1], [6, 2], [2, None, 1]]) == [4.0, 2.0, 1.0]


def test_retrieval_metrics():
    r = metrics.retrieval_metrics([1, 3, 7, 20])
    assert r["r@1"] == 0.25 and r["r@5"] == 0.5 and r["r@10"] == 0.75
    assert r["mean_rank"] == 7.75
    assert r["mrr"] == pytest.approx((1 + 1 / 3 + 1 / 7 + 1 / 20) / 4)
    assert metrics.ranks_from_scores([0.1, 0.9, 0.5], 2) == 2


def test_ndcg():
    rel = [0, 1.0, 0.5, 0, 0]
    assert metrics.ndcg([0, 5, 4, 0, 0], rel) == pytest.approx(1.0)
    worst = metrics.ndcg([5, 0, 0, 4, 3], rel)
    assert worst == 0.0
    swapped = metrics.ndcg([0, 4, 5, 0, 0], rel)
    ideal = 1.0 + 0.5 / math.log2(3)
    assert swapped == pytest.approx((0.5 + 1.0 / math.log2(3)) / ideal)
