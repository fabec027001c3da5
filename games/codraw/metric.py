"""The CoDraw scene similarity metric (0 to 5; 5 = a perfect reconstruction).

This is ``scene_similarity`` of the authors' released models code (facebookresearch/codraw-models,
``abs_metric.py``), the version that is monotonic and splits Mike's and Jenny's subtype into
expression and pose (paper, Section 3.3 and Appendix C)::

    T, P = idx of the placed pieces of the target and of the prediction
    I = T & P, U = T | P
    n0 = |I|
    for each idx in I (target piece t, predicted piece p):
        n1 += t.flip != p.flip
        n2 += t.expression != p.expression      (Mike and Jenny only)
        n3 += t.pose != p.pose                  (Mike and Jenny only)
        n4 += t.depth != p.depth
        n5 += min(1, sqrt((t.x/500 - p.x/500)^2 + (t.y/400 - p.y/400)^2))
    for each unordered pair i < j in I:
        n6 += (t_i.x - t_j.x) * (p_i.x - p_j.x) <= 0
        n7 += (t_i.y - t_j.y) * (p_i.y - p_j.y) <= 0
    d0..d5 = |U|, d6 = d7 = |U| * (|I| - 1), every d at least 1
    score = sum(w_k * n_k / d_k), w = [5, -1, -0.5, -0.5, -1, -1, -1, -1]

Only placed pieces count (``x = y = -10000`` palette pieces are ignored); when a scene holds the
same idx twice the first placed one is used, as in the reference code. Pairs are taken in
ascending idx order (the sums do not depend on it). Sums run in plain Python floats in the order
written above, so results are reproducible to the last bit.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable

from games.codraw.clipart import CANVAS_H, CANVAS_W, HUMAN_IDXS
from games.codraw.scenes import Piece, Scene, as_scene

WEIGHTS = (5.0, -1.0, -0.5, -0.5, -1.0, -1.0, -1.0, -1.0)
COMPONENTS = ("clipart", "flip", "expression", "pose", "depth", "position", "x_order", "y_order")
MAX_SCORE = 5.0


@dataclass(frozen=True)
class Similarity:
    """A scene similarity with its parts: ``score == sum(weighted)``."""

    score: float
    numerators: tuple[float, ...]
    denominators: tuple[int, ...]
    intersection: int
    union: int

    @property
    def terms(self) -> tuple[float, ...]:
        return tuple(n / d for n, d in zip(self.numerators, self.denominators))

    @property
    def weighted(self) -> tuple[float, ...]:
        return tuple(w * n / d for w, n, d in zip(WEIGHTS, self.numerators, self.denominators))

    def to_dict(self) -> dict:
        """JSON-safe: ``{"score", "intersection", "union", "components": {name: {numerator,
        denominator, weight, weighted}}}``."""
        return {
            "score": self.score,
            "intersection": self.intersection,
            "union": self.union,
            "components": {
                name: {"numerator": n, "denominator": d, "weight": w, "weighted": w * n / d}
                for name, n, d, w in zip(COMPONENTS, self.numerators, self.denominators, WEIGHTS)
            },
        }


def _placed_by_idx(scene: Scene) -> dict[int, Piece]:
    found: dict[int, Piece] = {}
    for piece in scene.pieces:
        if piece.placed and piece.idx not in found:
            found[piece.idx] = piece
    return found


def similarity(pred: "Scene | str | Iterable[Piece | dict]",
               target: "Scene | str | Iterable[Piece | dict]") -> Similarity:
    """The scene similarity of a predicted (drawn) scene to the target, with its components."""
    truth = _placed_by_idx(as_scene(target))
    guess = _placed_by_idx(as_scene(pred))
    common = sorted(truth.keys() & guess.keys())
    n_common = len(common)
    n_union = len(truth.keys() | guess.keys())

    num = [float(n_common), 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    for idx in common:
        t, p = truth[idx], guess[idx]
        num[1] += int(t.flip != p.flip)
        if idx in HUMAN_IDXS:
            num[2] += int(t.expression != p.expression)
            num[3] += int(t.pose != p.pose)
        num[4] += int(t.depth != p.depth)
        num[5] += min(1.0, math.sqrt((t.x / CANVAS_W - p.x / CANVAS_W) ** 2
                                     + (t.y / CANVAS_H - p.y / CANVAS_H) ** 2))
    for a in range(n_common):
        ta, pa = truth[common[a]], guess[common[a]]
        for b in range(a + 1, n_common):
            tb, pb = truth[common[b]], guess[common[b]]
            num[6] += int((ta.x - tb.x) * (pa.x - pb.x) <= 0)
            num[7] += int((ta.y - tb.y) * (pa.y - pb.y) <= 0)

    den = [max(1, n_union)] * 6 + [max(1, n_union * (n_common - 1))] * 2
    score = 0.0
    for weight, n, d in zip(WEIGHTS, num, den):
        score += weight * n / d
    return Similarity(score=score, numerators=tuple(num), denominators=tuple(den),
                      intersection=n_common, union=n_union)


def scene_similarity(pred, target) -> float:
    """The score alone (0..5)."""
    return similarity(pred, target).score


def clipart_similarity(a: Piece, b: Piece) -> float:
    """Similarity of two single pieces (the nearest-neighbour Teller's measure): 0 if they are
    different clip arts, else ``5 - flip - 0.5 expression - 0.5 pose - depth - min(1, distance)``."""
    if a.idx != b.idx:
        return 0.0
    score = 5.0
    score -= int(a.flip != b.flip)
    if a.idx in HUMAN_IDXS:
        score -= 0.5 * int(a.expression != b.expression)
        score -= 0.5 * int(a.pose != b.pose)
    score -= int(a.depth != b.depth)
    score -= min(1.0, math.sqrt((a.x / CANVAS_W - b.x / CANVAS_W) ** 2 + (a.y / CANVAS_H - b.y / CANVAS_H) ** 2))
    return score


# ------------------------------------------------------------------- the score the release records
ORIGINAL_WEIGHTS = (5, -1, -1, -1, -1, -0.5, -0.5)


def original_similarity(pred, target) -> list:
    """The per-round ``score`` of ``CoDraw_1_0.json``: ``[score, weights, terms, weighted]``.

    The release's rounds carry the score the original interface computed, in the shape its README
    shows (7 weights ``[5, -1, -1, -1, -1, -0.5, -0.5]``). Those are the weights of the first
    version of the metric, ``scene_similarity_orig`` of codraw-models ``abs_metric.py`` (paper,
    arXiv v1), computed here as that function does: with I, U the matched and all idx and
    ``iou = |I|/|U|``, n1 = flips of matched non-human pieces (over their number), n2 = Mike/Jenny
    whose subtype or flip differ (over their number), n3 = depths, n4 = summed distances (not
    capped) (both over |I|), n5/n6 = ordered pairs, a piece with itself included, whose x/y order
    is strictly reversed (over |I|^2); every denominator at least 1; ``score = 5 iou +
    sum_k w_k iou n_k/d_k``. As in the README's example, ``terms`` is ``[iou, n1/d1, ..., n6/d6]``
    and ``weighted`` is ``[5 iou, w1 iou n1/d1, ...]``, so ``score == sum(weighted)``. The
    interface's own code is not public, so this is the documented shape over the authors' Python
    version of the same metric. Empty scenes on both sides give ``iou = 0``.
    """
    truth = _placed_by_idx(as_scene(target))
    guess = _placed_by_idx(as_scene(pred))
    union = truth.keys() | guess.keys()
    common = sorted(truth.keys() & guess.keys())
    iou = len(common) / len(union) if union else 0.0
    num = [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    den = [1, 0, 0, 0, 0, 0, 0]
    for idx in common:
        t, p = truth[idx], guess[idx]
        if idx not in HUMAN_IDXS:
            num[1] += int(t.flip != p.flip)
            den[1] += 1
        else:
            num[2] += int(t.subtype != p.subtype or t.flip != p.flip)
            den[2] += 1
        num[3] += int(t.depth != p.depth)
        num[4] += math.sqrt((t.x / CANVAS_W - p.x / CANVAS_W) ** 2 + (t.y / CANVAS_H - p.y / CANVAS_H) ** 2)
        den[3] += 1
        den[4] += 1
    for a in common:
        for b in common:
            num[5] += int((truth[a].x - truth[b].x) * (guess[a].x - guess[b].x) < 0)
            num[6] += int((truth[a].y - truth[b].y) * (guess[a].y - guess[b].y) < 0)
            den[5] += 1
            den[6] += 1
    den = [max(1, d) for d in den]
    terms = [iou] + [num[k] / den[k] for k in range(1, 7)]
    weighted = [ORIGINAL_WEIGHTS[0] * iou] + [ORIGINAL_WEIGHTS[k] * iou * terms[k] + 0.0 for k in range(1, 7)]
    return [sum(weighted), list(ORIGINAL_WEIGHTS), terms, weighted]
