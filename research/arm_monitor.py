"""The batch monitor's experiment view (issue 24, items 3 and 5): the arms' statistics of
:mod:`research.arms` and the costs of :mod:`crowd.costs`, as the monitor polls them.

The statistics (intervals by bootstrap, every pair's test, the planner) are computed again only
when the batch's ended matches change (their count or latest update, as ``monitor.batch_scores``
caches the scores), its arms do, or a person answers an end question (pairwise preference, "was
your partner a person?"); a poll in between reads the cache. The planner's difference
to detect (``delta``, the primary metric's) may be chosen: only the planner is computed again for
it, from the cached matches. The costs are a few aggregate queries per poll (money is spent
while matches run).
"""
from __future__ import annotations

import math
import threading

from django.db.models import Count, Max

from crowd import costs
from crowd.end_questions import PREFERENCE_QUESTIONS
from crowd.models import PartnerKindAnswer, PreferenceAnswer
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
    # the end-question answers are only ever added (one per person and match, or pair and question)
    prefs = PreferenceAnswer.objects.filter(batch=batch).aggregate(n=Count("id"), last=Max("id"))
    kinds = PartnerKindAnswer.objects.filter(batch=batch).aggregate(n=Count("id"), last=Max("id"))
    return (ended["n"], ended["last"], tuple(arms.batch_arm_names(batch)),
            prefs["n"], prefs["last"], kinds["n"], kinds["last"])


def _answers(batch: Batch, names: list) -> dict:
    """The people's answers to the end questions: ``preferences`` (win rates per pair and arm, the
    Bradley-Terry ranking with bootstrap intervals; each question with its wording) and
    ``taken_for_person`` (per arm); None where the batch has no such answers."""
    answers, judgements = arms.batch_preferences(batch=batch), arms.batch_judgements(batch=batch)
    prefs = arms.preferences(answers, names) if answers else None
    if prefs:
        for key, summary in prefs["questions"].items():
            summary["text"] = PREFERENCE_QUESTIONS.get(key, key)
    return {"preferences": prefs,
            "taken_for_person": arms.taken_for_person(judgements, names) if judgements else None}


def _cached(batch: Batch) -> tuple[list, dict]:
    """(the batch's ArmMatch rows, their statistics with each metric's default delta)."""
    fp = _fingerprint(batch)
    key = (batch.pk, batch.game_id)
    with _lock:
        hit = _cache.get(key)
    if hit and hit[0] == fp:
        return hit[1], hit[2]
    names = arms.batch_arm_names(batch)
    matches = arms.batch_arm_matches(batch=batch)
    stats = {**arms.game_arm_statistics(batch.game_id, matches, names), **_answers(batch, names)}
    with _lock:
        if len(_cache) >= _CACHE_SIZE:
            _cache.clear()
        _cache[key] = (fp, matches, stats)
    return matches, stats


def batch_arms(*, batch: Batch, delta: float | None = None) -> dict:
    """The arms' statistics (:func:`research.arms.game_arm_statistics`) of the batch's ended
    matches, with the primary metric's planner for ``delta`` when given, and the end questions'
    ``preferences`` and ``taken_for_person`` (:func:`research.arms.batch_arm_statistics`'s)."""
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
