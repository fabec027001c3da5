"""Recording which model played a seat (``Seat.agent_model``), written by whoever ran the model."""
from __future__ import annotations

from live.models import Seat


def seats_record_model(*, turns: list[tuple[str, str]], record: dict) -> int:
    """Record ``record`` (a model's kind, version, family, checkpoint and ``checkpoint_sha256``) on the
    seats ``(match_id, role)`` that do not hold that checkpoint hash yet. A seat that held another
    hash (a worker with another checkpoint took over mid-match) keeps it under ``earlier``. One
    read per call; seats already recorded cost no write. Returns the seats written."""
    if not turns:
        return 0
    sha = record.get("checkpoint_sha256")
    wanted = {(str(m), r) for m, r in turns}
    written = 0
    # compared here rather than in SQL: SQLite (the embedded mode) has no JSON containment
    seats = Seat.objects.filter(match_id__in={m for m, _ in wanted}, kind=Seat.Kind.AGENT)
    for pk, match_id, role, old in seats.values_list("id", "match_id", "role", "agent_model"):
        if (str(match_id), role) not in wanted:
            continue
        old = old or {}
        if all(old.get(key) == value for key, value in record.items()):
            continue   # recorded already
        new = dict(record)
        earlier = list(old.get("earlier", []))
        if old.get("checkpoint_sha256") and old.get("checkpoint_sha256") != sha:
            earlier.append({k: old[k] for k in ("version", "checkpoint", "checkpoint_sha256") if k in old})
        if earlier:
            new["earlier"] = earlier
        written += Seat.objects.filter(pk=pk).update(agent_model=new)
    return written
