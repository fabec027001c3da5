"""Score a model's answers on an exported VisDial file, with VisDial's own metrics.

``manage.py visdial_score EXPORT.json PREDICTIONS.json [--dense DENSE.json]`` reads:

* ``EXPORT.json``: a ``--format visdial`` (or ``guesswhich-visdial``) export, VisDial v1.0 JSON;
* ``PREDICTIONS.json``: the VisDial challenge's submission shape, a list of
  ``{"image_id": int, "round_id": int (1-based), "ranks": [n_options ints, 1-based]}`` (the rank
  of each answer option, as EvalAI takes it), or the same rows with ``"scores"`` (floats) instead of
  ``ranks``, turned into ranks by :func:`clevr.metrics.scores_to_ranks` (the reference's sort
  position);
* ``DENSE.json`` (optional): dense relevance as VisDial v1.0 val ships it, a list of
  ``{"image_id", "round_id" (1-based), "gt_relevance": [n_options floats]}``.

The ground truth of each round is its ``gt_index``; R@1/5/10, mean rank and MRR come from
:func:`clevr.metrics.retrieval_metrics`, NDCG from :func:`clevr.metrics.ndcg_from_ranks`
averaged over the annotated rounds (as ``visdialch/metrics.py``).

A prediction for a dialog or round that is not in the export, a round predicted twice, or ranks
that are not a permutation of 1..n_options are errors (:class:`ScoringError`), never skipped.

An answerer agent can be scored on the exported dialogs the way VisDial scores a discriminative
model (``--agent visdial_alice_exact --image-ids SIDE.json``): :func:`answerer_predictions` asks it
each round's question about the dialog's scene (found through the side file's match id) with the
exported dialog so far as history, and scores every option by its similarity to the agent's own
answer (RapidFuzz ratio of VisDial-normalised texts); options are then ranked by sort position.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
from rapidfuzz import fuzz

from clevr.metrics import ndcg_from_ranks, retrieval_metrics, scores_to_ranks
from games.visdial.exports import norm_answer


class ScoringError(ValueError):
    """A predictions or dense-annotation file that does not fit the export; the message says where."""


def load_json(path) -> object:
    """A JSON file, or a :class:`ScoringError` saying why it cannot be read."""
    try:
        with open(Path(path), "rb") as f:
            return json.load(f)
    except FileNotFoundError:
        raise ScoringError(f"{path}: no such file") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ScoringError(f"{path}: not valid JSON ({exc})") from None


def _rounds(export: dict) -> dict[tuple[int, int], dict]:
    try:
        dialogs = export["data"]["dialogs"]
    except (KeyError, TypeError):
        raise ScoringError("the export is not VisDial v1.0 JSON (no data.dialogs)") from None
    out = {}
    for d in dialogs:
        for k, turn in enumerate(d["dialog"]):
            out[(d["image_id"], k + 1)] = turn
    return out


def _row_key(row, where: str) -> tuple[int, int]:
    if not isinstance(row, dict) or not isinstance(row.get("image_id"), int) \
            or not isinstance(row.get("round_id"), int) or isinstance(row.get("round_id"), bool):
        raise ScoringError(f"{where}: needs integer image_id and round_id")
    return row["image_id"], row["round_id"]


def prediction_ranks(row: dict, n_options: int, where: str) -> np.ndarray:
    """The 1-based ranks of one prediction row (``ranks``, or ``scores`` ranked as VisDial)."""
    if "ranks" in row:
        ranks = row["ranks"]
        if not isinstance(ranks, list) or sorted(r for r in ranks if isinstance(r, int)) != \
                list(range(1, n_options + 1)):
            raise ScoringError(f"{where}: ranks must be a permutation of 1..{n_options}")
        return np.asarray(ranks)
    scores = row.get("scores")
    if not isinstance(scores, list) or len(scores) != n_options or not all(
            isinstance(s, (int, float)) and not isinstance(s, bool) and math.isfinite(s) for s in scores):
        raise ScoringError(f"{where}: needs ranks, or {n_options} finite scores")
    return scores_to_ranks(scores)


def score(export: dict, predictions: list, dense: list | None = None) -> dict:
    """VisDial's metrics of ``predictions`` on ``export`` (see the module docstring):
    ``{"n", "r@1", "r@5", "r@10", "mean_rank", "mrr", "ndcg", "n_dense"}``."""
    rounds = _rounds(export)
    if not isinstance(predictions, list):
        raise ScoringError("predictions must be a list of {image_id, round_id, ranks|scores}")
    ranks_of: dict[tuple[int, int], np.ndarray] = {}
    for k, row in enumerate(predictions):
        where = f"prediction {k}"
        key = _row_key(row, where)
        turn = rounds.get(key)
        if turn is None:
            raise ScoringError(f"{where}: image_id {key[0]} round {key[1]} is not in the export")
        if key in ranks_of:
            raise ScoringError(f"{where}: image_id {key[0]} round {key[1]} is predicted twice")
        ranks_of[key] = prediction_ranks(row, len(turn["answer_options"]), where)
    gt_ranks = [int(ranks_of[key][rounds[key]["gt_index"]]) for key in ranks_of]
    out = retrieval_metrics(gt_ranks)
    ndcgs = []
    for k, row in enumerate(dense or []):
        where = f"dense annotation {k}"
        key = _row_key(row, where)
        rel = row.get("gt_relevance")
        if key not in ranks_of:
            raise ScoringError(f"{where}: image_id {key[0]} round {key[1]} has no prediction")
        if not isinstance(rel, list) or len(rel) != len(ranks_of[key]):
            raise ScoringError(f"{where}: gt_relevance must have one value per option")
        value = ndcg_from_ranks(ranks_of[key], rel)
        if not math.isnan(value):
            ndcgs.append(value)
    out["ndcg"] = float(np.mean(ndcgs)) if ndcgs else math.nan
    out["n_dense"] = len(ndcgs)
    return out


def answerer_predictions(export: dict, images: dict, agent) -> list[dict]:
    """Prediction rows (``scores``) of an answerer agent (anything with ALICE's ``respond(scene,
    question, history, caption, round_index)``) on ``export``. ``images`` maps each exported
    ``image_id`` to ``{"scene", "caption"}`` (the scene the dialog was played on, the caption as
    shown); a dialog without one is an error."""
    questions, answers = export["data"]["questions"], export["data"]["answers"]
    rows = []
    for d in export["data"]["dialogs"]:
        image = images.get(d["image_id"])
        if image is None or not isinstance((image.get("scene") or {}).get("objects"), list):
            raise ScoringError(f"image_id {d['image_id']}: no scene for it (give the side file of this export)")
        history = []
        for r, turn in enumerate(d["dialog"]):
            question = questions[turn["question"]]
            said = norm_answer(agent.respond(image["scene"], question, history, image.get("caption"), r + 1).text)
            scores = [float(fuzz.ratio(said, answers[k])) for k in turn["answer_options"]]
            rows.append({"image_id": d["image_id"], "round_id": r + 1, "scores": scores})
            history.append((question, answers[turn["answer"]]))
    return rows


def score_files(export_path, predictions_path, dense_path=None) -> dict:
    """:func:`score` over files."""
    export = load_json(export_path)
    predictions = load_json(predictions_path)
    dense = load_json(dense_path) if dense_path else None
    if dense is not None and not isinstance(dense, list):
        raise ScoringError(f"{dense_path}: expected a list of dense annotations")
    return score(export, predictions, dense)
