"""The research pages' view of the color game (``GameSpec.monitor``; research/monitor.py calls it):
accuracy over rounds with a Wilson 95 % interval, overall and per condition (far, split, close);
groups compared per condition and overall with Fisher's exact test on correct/incorrect rounds
(rounds as independent trials, as in Monroe et al. 2017). ``METRICS``: the accuracy over rounds, the
numbers arms are compared on (research/arms.py)."""
from __future__ import annotations

from games.colors.rules import CONDITIONS
from games.stats import Metric, fisher, mean, proportion

METRICS = (
    Metric("accuracy", "accuracy (correct rounds)", "proportion",
           trials=lambda o: (int(o.get("correct") or 0), int(o.get("played") or 0)), delta=0.05),
)


def scores(outcomes) -> dict:
    outcomes = [o for o in outcomes if o]
    by_condition = {}
    for condition in CONDITIONS:
        n = sum((o.get("by_condition") or {}).get(condition, {}).get("played", 0) for o in outcomes)
        k = sum((o.get("by_condition") or {}).get(condition, {}).get("correct", 0) for o in outcomes)
        by_condition[condition] = proportion(k, n)
    return {
        "matches": len(outcomes),
        "accuracy": proportion(sum(o.get("correct", 0) for o in outcomes), sum(o.get("played", 0) for o in outcomes)),
        "by_condition": by_condition,
        "mean_response_ms": mean(o.get("mean_response_ms") for o in outcomes),
        "mean_speaker_words": mean(o.get("mean_speaker_words") for o in outcomes),
    }


def outcome_summary(o: dict) -> str:
    parts = [f"{c} {v.get('correct', 0)}/{v.get('played', 0)}" for c, v in (o.get("by_condition") or {}).items()
             if v.get("played")]
    return f"{o.get('correct', 0)}/{o.get('played', 0)} correct" + (f" ({', '.join(parts)})" if parts else "")


def compare_test(outcomes_a, outcomes_b, scores_a: dict, scores_b: dict) -> dict:
    rows = [{"what": "all rounds", **fisher(scores_a["accuracy"], scores_b["accuracy"])}]
    for condition in scores_a["by_condition"]:
        rows.append({"what": condition, **fisher(scores_a["by_condition"][condition], scores_b["by_condition"][condition])})
    return {"name": "Fisher's exact test on correct/incorrect rounds (two-sided)",
            "columns": [("accuracy A", "accuracy_a", "percent", "–"), ("accuracy B", "accuracy_b", "percent", "–"),
                        ("odds ratio", "odds_ratio", 3, "–")],
            "rows": rows}


def event_summary(event: dict) -> str | None:
    t, p = event["type"], event.get("payload") or {}
    if t == "round_started":
        return f"Round {p.get('round')} of {p.get('rounds')} started."
    if t == "color_clicked":
        which = "the target" if p.get("status") == "target" else f"a distractor ({p.get('status')})"
        return f"Round {p.get('round')}: the listener clicked {which}."
    if t == "round_ended":
        return f"Round {p.get('round')} ({p.get('condition')}): {p.get('outcome')}; score {p.get('score', {}).get('correct')}/{p.get('score', {}).get('played')}."
    if t == "game_ended":
        return f"Game over: {p.get('correct')}/{p.get('played')} correct."
    return None


def board(state: dict, rules, *, match_id: str, seq: int) -> dict:
    over = rules.is_over(state)
    last = None
    if state["history"]:
        h = state["history"][-1]
        colors = state["rounds"][h["round"] - 1]["colors"]
        last = {"round": h["round"], "condition": h["condition"], "correct": h["correct"],
                "chosen": h["chosen"], "colors": [list(c) for c in colors]}
    current = None if over else state["rounds"][state["round"]]
    return {"round": min(state["round"] + 1, len(state["rounds"])), "rounds": len(state["rounds"]),
            "over": over, "correct": state["correct"], "played": len(state["history"]),
            "condition": current["condition"] if current else None,
            "colors": [list(c) for c in current["colors"]] if current else [],   # index 0: the target
            "messages": [{"who": m["role"], "text": m["text"]} for m in state["messages"]],
            "last": last}
