"""Reading a match's record: its outcome in words (the monitor, the payments review), and the
helpers a game's export formats share (games/<game>/exports.py) over the export record
(research/records.py builds it; docs/exports.md)."""
from __future__ import annotations

from games.registry import GAMES


def outcome_summary(game_id: str, outcome: dict | None) -> str:
    """One match's outcome in words: the game's ``outcome_summary`` (its ``GameSpec.monitor``
    module), else its plain values."""
    o = outcome or {}
    if not o:
        return ""
    spec = GAMES.get(game_id)
    summary = getattr(spec.monitor, "outcome_summary", None) if spec is not None else None
    if summary is not None:
        return summary(o)
    return ", ".join(f"{k}: {v}" for k, v in o.items() if not isinstance(v, (dict, list)))


def model_seats(record: dict) -> dict:
    """The seats of a match record that a model agent played: role -> {"agent", "model"} (the
    model's kind, version, checkpoint and its sha256: ``Seat.agent_model``); {} when none did.
    The game formats add it only when it is not empty, so records without models are unchanged."""
    return {role: {"agent": seat.get("agent"), "model": seat["model"]}
            for role, seat in (record.get("seats") or {}).items() if seat.get("model")}


def model_label(seat: dict) -> str | None:
    """``agent@version#sha256[:12]`` for a model agent's seat of a match record, else None."""
    model = seat.get("model")
    if not model:
        return None
    sha = model.get("checkpoint_sha256")
    return f"{seat.get('agent') or 'agent'}@{model.get('version', '')}" + (f"#{sha[:12]}" if sha else "")


ARM_COLUMNS = ("arm", "arm_order", "arm_position", "arm_seed")


def arm_fields(record: dict) -> dict:
    """The experiment's columns of a match record for a table format (issue 24; docs/exports.md):
    ``arm`` (the batch's arm, "" outside the randomisation; a batch without arms has one implicit arm), ``arm_order`` (within
    subjects: the person's arms in the order met, joined by ``;``; else ""), ``arm_position`` (the
    match's 0-based position in that order) and ``arm_seed`` (the batch's randomisation seed); ""
    where the record has none."""
    order = record.get("arm_order")
    blank = lambda v: "" if v is None else v   # noqa: E731
    return {"arm": record.get("arm") or "", "arm_order": ";".join(map(str, order)) if order else "",
            "arm_position": blank(record.get("arm_position")), "arm_seed": blank(record.get("arm_seed"))}
