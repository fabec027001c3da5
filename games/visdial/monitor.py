"""The research pages' view of the visual-dialog chat (``GameSpec.monitor``; research/monitor.py
calls it): what its outcome holds (rounds answered, complete dialogs, words per question and
answer). It has no score to compare groups on; ``METRICS`` (research/arms.py): whether the dialog was
completed and how many rounds were answered (its outcome holds no rating)."""
from __future__ import annotations

from games.stats import Metric, mean, proportion

METRICS = (
    Metric("complete", "dialogs completed", "proportion", trials=lambda o: (1 if o.get("complete") else 0, 1),
           delta=0.1),
    Metric("rounds_completed", "rounds answered", "mean", value=lambda o: o.get("rounds_completed"), delta=1.0),
)


def scores(outcomes) -> dict:
    outcomes = [o for o in outcomes if o]
    return {
        "matches": len(outcomes),
        "complete": proportion(sum(1 for o in outcomes if o.get("complete")), len(outcomes)),
        "mean_rounds_completed": mean(o.get("rounds_completed") for o in outcomes),
        "mean_question_words": mean(o.get("mean_question_words") for o in outcomes),
        "mean_answer_words": mean(o.get("mean_answer_words") for o in outcomes),
    }


def outcome_summary(o: dict) -> str:
    return f"{o.get('rounds_completed', 0)}/{o.get('rounds', 0)} rounds answered" + \
        (", complete" if o.get("complete") else "")


def _quote(text) -> str:
    return f"“{text}”"


def event_summary(event: dict) -> str | None:
    """The CLEVR dialog games' events in words (GuessWhich's module uses it too)."""
    t, p = event["type"], event.get("payload") or {}
    if t == "game_started":
        pool = f" pool of {p['pool_size']}," if p.get("pool_size") else ""
        return f"Game started:{pool} {p.get('rounds')} rounds; caption {_quote(p.get('caption', ''))}."
    if t == "guess_made":
        return f"Round {p.get('round')}: the questioner's best guess is image {p.get('image_id')}."
    if t == "dialog_ended":
        return f"Dialog over after {p.get('rounds')} rounds; the questioner now clicks until the secret is found."
    if t == "dialog_completed":
        return f"Dialog complete after {p.get('rounds')} rounds."
    if t == "image_clicked":
        return f"Final guess {p.get('click')}: image {p.get('image_id')} is {'the secret' if p.get('correct') else 'wrong'}."
    if t == "secret_found":
        return f"Secret {p.get('secret_id')} found at rank {p.get('rank')}."
    if t == "feedback_given":
        ratings = ", ".join(f"{k} {v}" for k, v in (p.get("ratings") or {}).items())
        return f"Feedback: {ratings}" + (f"; {_quote(p['comment'])}" if p.get("comment") else "") + "."
    if t == "feedback_skipped":
        return f"Feedback skipped (by {p.get('by')})."
    if t == "game_finished":
        return f"Finished: rank {p.get('rank')}, bonus {p.get('bonus')}."
    return None


def board(state: dict, rules, *, match_id: str, seq: int) -> dict:
    return {"phase": state["phase"], "round": state["round"], "rounds": state["rounds"],
            "dialog": [{"round": d["round"], "question": d["question"], "answer": d.get("answer")}
                       for d in state["dialog"]]}


def match_images(match) -> dict:
    content = match.content if isinstance(match.content, dict) else {}
    if content.get("image_id") is not None:
        return {"image": str(content["image_id"])}
    return {}


def image_scene(match, image_id: str) -> dict | None:
    """The scene of the dialog's image, else None."""
    content = match.content if isinstance(match.content, dict) else {}
    if str(content.get("image_id")) == image_id:
        return content.get("scene") or {}
    return None
