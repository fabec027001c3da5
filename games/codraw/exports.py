"""CoDraw exports, built only from match records (see docs/HELPERS_CONTRACT.md).

:func:`codraw_json` writes the shape of the released ``CoDraw_1_0.json``, so the authors' loaders
(``codraw_data.py`` reads ``["data"]``, each entry's ``abs_t`` and ``dialog``) read it unchanged::

    {"data": {key: {"image_id", "abs_t",
                    "dialog": [{"seq_t", "seq_d", "msg_t", "msg_d", "abs_b", "abs_d", "peeked"?}]}}}

``peeked`` is present (``true``) only on rounds whose Teller message came after the peek, as in
the release. ``key`` is the imported scene's key (``train_00001``) when the content came from a
CoDraw file (suffixed with the match id if two matches played it), else ``groundtalk_<match_id>``; ``image_id`` is
the imported one, else the match's seed. Rounds come from ``round_recorded`` events in ``seq``
order (the canvas strings from the event's Drawer-private part).

:func:`summary` / :func:`summarize` are the metric summary of a set of matches (mean scene
similarity and friends); ``EXPORT_FORMATS = {"codraw": write_codraw_json}`` registers the format
with ``manage.py export``.
"""
from __future__ import annotations

import json
import statistics
from typing import IO, Iterable

ROUND_FIELDS = ("seq_t", "seq_d", "msg_t", "msg_d", "abs_b", "abs_d")


def rounds_of(record: dict) -> list[dict]:
    """The recorded rounds of one match record, in the dataset's round format."""
    rounds = []
    for event in sorted(record.get("events", []), key=lambda e: e["seq"]):
        if event["type"] != "round_recorded":
            continue
        payload = event.get("payload") or {}
        hidden = (event.get("private") or {}).get("drawer") or {}
        entry = {"seq_t": payload["seq_t"], "seq_d": payload["seq_d"], "msg_t": payload["msg_t"],
                 "msg_d": payload["msg_d"], "abs_b": hidden.get("abs_b", ""), "abs_d": hidden.get("abs_d", "")}
        if payload.get("peeked"):
            entry["peeked"] = True
        rounds.append(entry)
    return rounds


def entry_of(record: dict) -> dict:
    content = record.get("content") or {}
    image_id = content.get("image_id")
    return {"image_id": record.get("seed") if image_id is None else image_id,
            "abs_t": content["abs_t"],
            "dialog": rounds_of(record)}


def codraw_json(records: Iterable[dict], *, statuses: tuple[str, ...] = ("finished",)) -> dict:
    """The ``CoDraw_1_0.json`` document for the CoDraw matches among ``records`` whose status is in
    ``statuses`` (pass ``("finished", "aborted", "active")`` to include unfinished ones)."""
    data: dict[str, dict] = {}
    for record in sorted(records, key=lambda r: (r.get("created_at") or "", r.get("match_id") or "")):
        if not str(record.get("game_id", "")).startswith("codraw") or record.get("status") not in statuses:
            continue
        content = record.get("content") or {}
        key = content.get("key") or f"groundtalk_{record['match_id']}"
        if key in data:
            key = f"{key}_{record['match_id']}"
        data[key] = entry_of(record)
    return {"data": data}


def dumps(records: Iterable[dict], **kwargs) -> str:
    return json.dumps(codraw_json(records, **kwargs), ensure_ascii=False)


def write_codraw_json(records: Iterable[dict], out: IO[str]) -> int:
    """``manage.py export --format codraw``: write the document, return the number of dialogs.
    The export's ``--status`` has chosen the matches (finished by default), so every status is kept."""
    document = codraw_json(records, statuses=("finished", "aborted", "active"))
    json.dump(document, out, ensure_ascii=False)
    return len(document["data"])


EXPORT_FORMATS = {"codraw": write_codraw_json}


def summary(outcomes: Iterable[dict]) -> dict:
    """Mean/median final scene similarity, rounds and peek rate over match outcomes
    (``rules.outcome`` dicts, or match records, whose ``outcome`` is used)."""
    scores, rounds, peeks = [], [], []
    for item in outcomes:
        outcome = item.get("outcome", item) if "events" in item else item
        if "score" not in outcome or (outcome.get("finished") is False):
            continue
        scores.append(float(outcome["score"]))
        rounds.append(int(outcome.get("rounds", 0)))
        peeks.append(bool(outcome.get("peeked", False)))
    if not scores:
        return {"matches": 0}
    return {
        "matches": len(scores),
        "score_mean": statistics.fmean(scores),
        "score_median": statistics.median(scores),
        "score_stdev": statistics.stdev(scores) if len(scores) > 1 else 0.0,
        "rounds_mean": statistics.fmean(rounds),
        "peek_rate": sum(peeks) / len(peeks),
    }


def summarize(outcomes: list[dict]) -> str:
    """The text ``manage.py simulate`` prints: scene similarity (0..5) over the matches."""
    stats = summary(outcomes)
    if not stats["matches"]:
        return "codraw_v1: no finished matches"
    return (f"codraw_v1: {stats['matches']} matches\n"
            f"  scene similarity  mean {stats['score_mean']:.3f}  median {stats['score_median']:.3f}"
            f"  sd {stats['score_stdev']:.3f}  (0..5; humans in the paper: 4.17)\n"
            f"  rounds            mean {stats['rounds_mean']:.2f}\n"
            f"  peeked            {100 * stats['peek_rate']:.0f}% of matches")
