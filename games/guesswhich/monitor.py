"""The research pages' view of GuessWhich (``GameSpec.monitor``; research/monitor.py calls it):
:func:`games.guesswhich.agents.summary` (mean rank and MRR with bootstrap CIs, the per-round
coarse-rank curve); groups compared by :func:`clevr.metrics.compare_versions` (Mann-Whitney U on
the secret's rank), exactly as ``guesswhich_report --compare``. ``METRICS`` (research/arms.py): the
secret's rank (lower is better; matches where it was found), its reciprocal (the mean is the MRR)
and the questioner's mean feedback rating of the answerer (1-5; matches where it was given)."""
from __future__ import annotations

from clevr.metrics import compare_versions
from games.guesswhich.agents import summary
from games.stats import Metric, num
from games.visdial.monitor import event_summary   # noqa: F401 - the same events as the visual-dialog chat


def _found(o: dict, key: str):
    return o.get(key) if o.get("found") else None


def mean_rating(o: dict) -> float | None:
    """The mean of the questioner's six feedback ratings (None: skipped, or not reached)."""
    ratings = [v for v in ((o.get("feedback") or {}).get("ratings") or {}).values() if isinstance(v, (int, float))]
    return sum(ratings) / len(ratings) if ratings else None


METRICS = (
    Metric("rank", "rank of the secret", "ordinal", value=lambda o: _found(o, "rank"),
           higher_is_better=False, delta=1.0, unit="rank"),
    Metric("reciprocal_rank", "reciprocal rank (mean: MRR)", "ordinal", value=lambda o: _found(o, "reciprocal_rank"),
           delta=0.1),
    Metric("rating", "questioner's mean rating of the answerer (1-5)", "ordinal", value=mean_rating, delta=0.5,
           unit="of 5"),
)


def scores(outcomes) -> dict:
    s = summary(outcomes)
    return {**s,
            "mean_rank": {"value": num(s["mean_rank"]["value"]), "ci95": [num(x) for x in s["mean_rank"]["ci95"]]},
            "mrr": {"value": num(s["mrr"]["value"]), "ci95": [num(x) for x in s["mrr"]["ci95"]]}}


def outcome_summary(o: dict) -> str:
    played = f"{o.get('rounds_played', 0)}/{o.get('rounds', 0)} rounds"
    if o.get("found"):
        return f"secret found at rank {o.get('rank')} of {o.get('pool_size')}; {played}; bonus {o.get('bonus')}"
    return f"secret not found yet; {played}"


def _jsonable(v):
    return num(v) if isinstance(v, float) else v


def compare_test(outcomes_a, outcomes_b, scores_a: dict, scores_b: dict) -> dict:
    test = compare_versions(*([o["rank"] for o in outcomes if o.get("found")] for outcomes in (outcomes_a, outcomes_b)))
    return {"name": "Mann-Whitney U on the secret's rank (two-sided)",
            "columns": [("mean rank A", "mean_rank_a", 2, "–"), ("mean rank B", "mean_rank_b", 2, "–"),
                        ("U", "u", 1, "–")],
            "rows": [{"what": "rank", **{k: _jsonable(v) for k, v in test.items()}}]}


def board(state: dict, rules, *, match_id: str, seq: int) -> dict:
    return {"phase": state["phase"], "round": state["round"], "rounds": state["rounds"],
            "dialog": [{"round": d["round"], "question": d["question"], "answer": d.get("answer"),
                        "guess": d.get("guess")} for d in state["dialog"]],
            "final_clicks": [c["image_id"] for c in state["final_clicks"]],
            "bonus": rules.bonus(state)["total"]}


def match_images(match) -> dict:
    content = match.content if isinstance(match.content, dict) else {}
    return {"pool": [str(item["id"]) for item in content.get("pool") or []],
            "secret": str(content.get("secret_id"))}


def image_scene(match, image_id: str) -> dict | None:
    """The scene of one image of the pool (the secret included), else None."""
    content = match.content if isinstance(match.content, dict) else {}
    for item in content.get("pool") or []:
        if str(item.get("id")) == image_id:
            return item.get("scene") or {}
    return None
