"""The research pages' view of CoDraw (``GameSpec.monitor``; research/monitor.py calls it): mean
similarity score with a bootstrap 95 % CI, a histogram over the metric's range [0, 5] and the mean
score after each round; groups compared by Mann-Whitney U on the final scores; ``METRICS``: the final similarity score, the
number arms are compared on (research/arms.py). Also the staff
pages' pictures of a match (``PICTURES`` and ``replay_svg``: SVG text from plain data, served by
research/pictures.py): the target, the Drawer's canvas after each round, the final canvas and the
canvas at any step of the replay."""
from __future__ import annotations

import numpy as np

from games.base import SYSTEM
from games.codraw import clipart as ca
from games.codraw import rules as codraw_rules
from games.codraw.render import scene_svg
from games.stats import Metric, mann_whitney, mean, mean_ci, num

MAX_SCORE = 5.0
METRICS = (
    Metric("score", "similarity score (0-5)", "mean", value=lambda o: o.get("score"), delta=0.5, unit="of 5"),
)
BINS = 10


def scores(outcomes) -> dict:
    outcomes = [o for o in outcomes if o]
    values = [o["score"] for o in outcomes if o.get("score") is not None]
    counts, edges = np.histogram(np.clip(values, 0.0, MAX_SCORE), bins=BINS, range=(0.0, MAX_SCORE))
    rounds = max((len(o.get("round_scores") or []) for o in outcomes), default=0)
    per_round = []
    for k in range(rounds):
        vals = [o["round_scores"][k] for o in outcomes if k < len(o.get("round_scores") or [])]
        per_round.append({"round": k + 1, "n": len(vals), "mean": mean(vals)})
    return {
        "matches": len(outcomes),
        "score": mean_ci(values),
        "max_score": MAX_SCORE,
        "histogram": {"edges": [float(e) for e in edges], "counts": [int(c) for c in counts]},
        "mean_rounds": mean(o.get("rounds") for o in outcomes),
        "peeked": sum(1 for o in outcomes if o.get("peeked")),
        "per_round_mean_score": per_round,
    }


def _f(x, digits: int = 2) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def outcome_summary(o: dict) -> str:
    text = f"score {_f(o.get('score'))} of 5 after {o.get('rounds', 0)} rounds"
    return text + (", peeked" if o.get("peeked") else "")


def compare_test(outcomes_a, outcomes_b, scores_a: dict, scores_b: dict) -> dict:
    sa, sb = ([o["score"] for o in outcomes if o.get("score") is not None] for outcomes in (outcomes_a, outcomes_b))
    return {"name": "Mann-Whitney U on the final similarity score (two-sided)",
            "columns": [("mean A", "mean_a", 2, ""), ("mean B", "mean_b", 2, ""), ("U", "u", 1, "")],
            "rows": [{"what": "score", **mann_whitney(sa, sb)}]}


def _piece_name(idx) -> str:
    try:
        return ca.CLIPARTS[int(idx)].name
    except (TypeError, ValueError, IndexError):
        return f"piece {idx}"


def event_summary(event: dict) -> str | None:
    t, p = event["type"], event.get("payload") or {}
    private = event.get("private") or {}
    if t == "game_started":
        return f"Game started: {p.get('time_limit_s')} s on the clock, messages up to {p.get('max_message_len')} characters."
    if t == "canvas_changed":
        d = private.get("drawer") or {}
        verb = {"place": "placed", "update": "moved or changed", "remove": "removed"}.get(d.get("op"), d.get("op"))
        return f"Round {p.get('round')}: the Drawer {verb} the {_piece_name(d.get('idx'))}."
    if t == "round_recorded":
        score = (private.get(SYSTEM) or {}).get("score")
        return (f"Round {p.get('round')} recorded" + (" (after the peek)" if p.get("peeked") else "")
                + (f": similarity {score:.2f}" if isinstance(score, (int, float)) else "") + ".")
    if t == "peek_opened":
        return f"Round {p.get('round')}: the Teller peeked at the Drawer's canvas."
    if t == "peek_closed":
        return f"Round {p.get('round')}: the Teller closed the peek."
    if t == "game_ended":
        return f"Game ended by {p.get('ended_by')}: score {_f(p.get('score'))} of 5 after {p.get('rounds')} rounds."
    return None


def board(state: dict, rules, *, match_id: str, seq: int) -> dict:
    return {"phase": state["phase"], "round": state["round"],
            "chat": [{"who": m["role"], "text": m["text"]} for m in state["chat"]],
            "pieces": len(state["canvas"]), "score": num(rules.score(state)),
            "peek": bool(state["peek"]["used"]),
            "canvas_svg": f"/research/matches/{match_id}/replay/{seq}.svg"}


# ------------------------------------------------------------------------------ pictures
# Pure functions of the match (a plain dict: id, content, seed, config, status, seq) and its logged
# events (plain dicts in seq order: seq, type, actor, payload, private, action); each returns
# (SVG text, file name) or raises LookupError (the platform answers 404). research/pictures.py
# serves them, staff only, at /research/matches/<id>/<route> under the URL name.
def target_svg(match: dict, events: list[dict], *, scale: float, query: dict) -> tuple[str, str]:
    content = match.get("content")
    abs_t = content.get("abs_t") if isinstance(content, dict) else None
    if not abs_t:
        raise LookupError("This match has no target scene.")
    return (scene_svg(abs_t, scale=scale, title=f"target of {match['id']}"),
            f"codraw-{match['id']}-target.svg")


def round_svg(match: dict, events: list[dict], *, scale: float, query: dict, round_no: int) -> tuple[str, str]:
    """The Drawer's canvas after round ``round_no`` (0-based), from the logged round_recorded
    (``?before=1``: before the Drawer's changes of that round)."""
    before = query.get("before") in ("1", "true", "yes")
    key = "abs_b" if before else "abs_d"
    for event in events:
        if event["type"] == "round_recorded" and (event.get("payload") or {}).get("round") == round_no:
            canvas = ((event.get("private") or {}).get("drawer") or {}).get(key)
            if canvas is None:
                break
            which = "before" if before else "after"
            return (scene_svg(canvas, scale=scale, title=f"{match['id']}: Drawer's canvas {which} round {round_no}"),
                    f"codraw-{match['id']}-round{round_no}{'-before' if before else ''}.svg")
    raise LookupError(f"No recorded round {round_no} in this match.")


def final_svg(match: dict, events: list[dict], *, scale: float, query: dict) -> tuple[str, str]:
    ended = [e for e in events if e["type"] == "game_ended"]
    if not ended:
        raise LookupError("This game has not ended.")
    return (scene_svg(ended[-1]["payload"]["abs_d"], scale=scale, title=f"{match['id']}: final canvas"),
            f"codraw-{match['id']}-final.svg")


PICTURES = {   # URL name -> (route under /research/matches/<id>/, function)
    "codraw_target_svg": ("codraw/target.svg", target_svg),
    "codraw_round_svg": ("codraw/round/<int:round_no>.svg", round_svg),
    "codraw_final_svg": ("codraw/final.svg", final_svg),
}


def replay_svg(state: dict, *, match_id: str, seq: int, scale: float) -> tuple[str, str]:
    """The Drawer's canvas in ``state``, the match replayed to event ``seq`` (the replay's board)."""
    return (scene_svg(codraw_rules.canvas_scene(state), scale=scale,
                      title=f"{match_id}: the Drawer's canvas after event {seq}"),
            f"codraw-{match_id}-step{seq}.svg")
