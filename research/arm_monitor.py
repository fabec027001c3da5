"""The batch monitor's experiment view (issue 24, items 3 and 5): the arms' statistics of
:mod:`research.arms` and the costs of :mod:`crowd.costs`, as the monitor polls them.

The statistics (intervals by bootstrap, every pair's test, the planner) are computed again only
when the batch's ended matches change (their count or latest update, as ``monitor.batch_scores``
caches the scores) or its arms do; a poll in between reads the cache. The planner's difference
to detect (``delta``, the primary metric's) may be chosen: only the planner is computed again for
it, from the cached matches. The costs are a few aggregate queries per poll (money is spent
while matches run).
"""
from __future__ import annotations

import math
import threading

from django.db.models import Count, Max

from crowd import costs
from live.models import Batch
from research import arms
from research.monitor import ENDED

_cache: dict = {}
_lock = threading.Lock()
_CACHE_SIZE = 64


class BadDelta(ValueError):
    """A difference to detect that is not a positive number; the message says so."""


def parse_delta(text: str | None) -> float | None:
    """The ``delta`` query parameter: None when absent or empty, else a positive finite number."""
    if text is None or not str(text).strip():
        return None
    try:
        value = float(text)
    except ValueError:
        raise BadDelta(f"The difference to detect must be a number, not {text!r}.") from None
    if not math.isfinite(value) or value <= 0:
        raise BadDelta("The difference to detect must be a positive number.")
    return value


def _fingerprint(batch: Batch) -> tuple:
    ended = batch.matches.filter(status__in=ENDED).aggregate(n=Count("id"), last=Max("updated_at"))
    return (ended["n"], ended["last"], tuple(arms.batch_arm_names(batch)))


def _cached(batch: Batch) -> tuple[list, dict]:
    """(the batch's ArmMatch rows, their statistics with each metric's default delta)."""
    fp = _fingerprint(batch)
    key = (batch.pk, batch.game_id)
    with _lock:
        hit = _cache.get(key)
    if hit and hit[0] == fp:
        return hit[1], hit[2]
    matches = arms.batch_arm_matches(batch=batch)
    stats = arms.game_arm_statistics(batch.game_id, matches, arms.batch_arm_names(batch))
    with _lock:
        if len(_cache) >= _CACHE_SIZE:
            _cache.clear()
        _cache[key] = (fp, matches, stats)
    return matches, stats


def batch_arms(*, batch: Batch, delta: float | None = None) -> dict:
    """The arms' statistics (:func:`research.arms.game_arm_statistics`) of the batch's ended
    matches, with the primary metric's planner for ``delta`` when given."""
    matches, stats = _cached(batch)
    out = {**stats, "has_arms": bool(batch.arms), "assignment": batch.assignment}
    metrics = arms.metrics(batch.game_id)
    if delta is not None and metrics and stats["metrics"] and delta != metrics[0].delta:
        first = dict(stats["metrics"][0])
        first["plan"] = arms.plan(metrics[0], matches, stats["arms"], delta=delta)
        out["metrics"] = [first, *stats["metrics"][1:]]
    return out


def batch_experiment(*, batch: Batch, delta: float | None = None) -> dict:
    """What the monitor adds to its poll: ``arms`` (statistics) and ``costs`` (crowd pay and model
    cost per arm, the budget)."""
    return {"arms": batch_arms(batch=batch, delta=delta), "costs": costs.batch_costs(batch=batch)}
