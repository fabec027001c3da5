"""The comparison's table of a batch's arms, one row per ended match (issue 24, item 6): what the
arms page computed from, for a lab's own analysis in R or pandas.

``/research/compare/?arm_batch=<slug>&format=csv`` downloads it (research/views.py). Columns:
``match_id``, ``status``, ``workers`` (the people of its human seats, pseudonymised as in every
export, joined by ``;``), the experiment's ``arm``, ``arm_order``, ``arm_position`` and ``arm_seed``
(:func:`games.records.arm_fields`, as in the game formats), ``unit`` (how the arm was drawn:
``between``, ``within``, ``simulation``), then each of the game's metrics (``monitor.METRICS``,
research/arms.py): a proportion as ``<key>_successes`` and ``<key>_trials``, any other metric as
``<key>``; empty where the match has no value. The matches are those the arms page counts
(:func:`research.arms.batch_arm_matches`: ended, outside practice, inside the randomisation).
"""
from __future__ import annotations

from typing import IO

from games.records import arm_fields
from games.registry import get_game
from groundtalk_web.csvsafe import DictWriter
from live.models import Batch, Match, Seat
from live.selectors import pseudonym
from research.arms import batch_arm_matches


def columns(metrics) -> list[str]:
    names = ["match_id", "status", "workers", "arm", "arm_order", "arm_position", "arm_seed", "unit"]
    for metric in metrics:
        names += [f"{metric.key}_successes", f"{metric.key}_trials"] if metric.kind == "proportion" else [metric.key]
    return names


def metric_cells(metrics, outcome: dict) -> dict:
    cells: dict = {}
    for metric in metrics:
        if metric.kind == "proportion":
            counted = metric.trials(outcome)
            cells[f"{metric.key}_successes"], cells[f"{metric.key}_trials"] = counted if counted else ("", "")
        else:
            value = metric.value(outcome)
            cells[metric.key] = "" if value is None else value
    return cells


def write_arm_table(batch: Batch, out: IO[str]) -> int:
    """The table of ``batch``'s arms into ``out``; returns the rows written."""
    metrics = tuple(getattr(get_game(batch.game_id).monitor, "METRICS", ()))
    rows = batch_arm_matches(batch=batch)
    ids = [row.match_id for row in rows]
    matches = {str(pk): (status, arm, assignment) for pk, status, arm, assignment in
               Match.objects.filter(pk__in=ids).values_list("id", "status", "arm", "assignment")}
    workers: dict[str, list[str]] = {}
    for match_id, worker in (Seat.objects.filter(match_id__in=ids, participant__isnull=False)
                             .order_by("role").values_list("match_id", "participant__worker_id")):
        workers.setdefault(str(match_id), []).append(pseudonym(worker))
    writer = DictWriter(out, columns(metrics))
    writer.writeheader()
    for row in rows:
        status, arm, assignment = matches[row.match_id]
        record = {"arm": arm,   # as recorded: a batch without arms records its one implicit arm
                  "arm_order": assignment.get("order"), "arm_position": assignment.get("position"),
                  "arm_seed": assignment.get("seed")}
        writer.writerow({"match_id": row.match_id, "status": status, "workers": ";".join(workers.get(row.match_id, [])),
                         **arm_fields(record), "unit": assignment.get("unit", ""),
                         **metric_cells(metrics, row.outcome)})
    return len(rows)
