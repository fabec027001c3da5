"""CoDraw exports, built only from match records (see docs/HELPERS_CONTRACT.md).

:func:`codraw_json` writes the released ``CoDraw_1_0.json`` in the shape, and key order, of its
README (facebookresearch/CoDraw), so the authors' loaders (``codraw_data.py`` reads ``["data"]``,
each entry's ``abs_t`` and ``dialog``, each round's ``abs_b``, ``abs_d``, ``msg_t``, ``msg_d``,
``peeked`` and ``score``) read it unchanged::

    {"count": number of dialogs,
     "stat": {socketId: {"start", "end", "duration", "round"}},
     "data": {key: {"image_id", "abs_t", "socketId",
                    "dialog": [{"seq_t", "seq_d", "msg_t", "msg_d", "abs_t", "abs_b", "abs_d",
                                "peeked"?, "score"}]}}}

``peeked`` is present (``true``) only on rounds whose Teller message came after the peek, as in
the release. ``score`` is ``[score, weights, terms, weighted]`` of the metric the original
interface recorded (metric.original_similarity); a replayed round whose canvas is the recorded
one carries the recorded score (absent if the recording had none). Canvas strings are the rules'
(every slot of the Drawer's layout: 28 slots with 5 Mike and 5 Jenny looks; unplaced slots keep
their flips).

``key`` is the imported scene's key (``train_00001``) when the content came from a CoDraw file
(suffixed with the match id if two matches played it), else ``groundtalk_<match_id>``;
``image_id`` is the imported one, else the match's seed. ``socketId`` and the ``stat`` entry are
the recorded ones when the match replayed the whole recorded dialog (config ``replay_dialog``,
every round's canvas the recorded one), else ``/#groundtalk_<match_id>`` and the match's own:
``start``/``end`` the first and last event times (ms since the epoch), ``duration`` in seconds,
``round`` the number of rounds. Rounds come from ``round_recorded`` events in ``seq`` order (the
canvas strings from the event's Drawer-private part, the score from its system part).

:func:`summary` / :func:`summarize` are the metric summary of a set of matches (mean scene
similarity and friends); the game's spec (``SPEC.exports`` in ``__init__.py``) registers
:func:`write_codraw_json` as the ``codraw`` format of ``manage.py export``.
"""
from __future__ import annotations

import json
import statistics
from typing import IO, Iterable

from games.records import model_seats

from games.codraw.metric import original_similarity

ROUND_FIELDS = ("seq_t", "seq_d", "msg_t", "msg_d", "abs_t", "abs_b", "abs_d", "peeked", "score")
ENTRY_FIELDS = ("image_id", "abs_t", "socketId", "dialog")
TOP_FIELDS = ("count", "stat", "data")
STAT_FIELDS = ("start", "end", "duration", "round")


def _rounds(record: dict) -> list[tuple[dict, bool]]:
    """(round, whether its canvas is the recorded one) of every recorded round, in order."""
    content = record.get("content") or {}
    abs_t = content.get("abs_t", "")
    rounds = []
    for event in sorted(record.get("events", []), key=lambda e: e["seq"]):
        if event["type"] != "round_recorded":
            continue
        payload = event.get("payload") or {}
        private = event.get("private") or {}
        hidden = private.get("drawer") or {}
        system = private.get("system") or {}
        entry = {"seq_t": payload["seq_t"], "seq_d": payload["seq_d"], "msg_t": payload["msg_t"],
                 "msg_d": payload["msg_d"], "abs_t": abs_t, "abs_b": hidden.get("abs_b", ""),
                 "abs_d": hidden.get("abs_d", "")}
        if payload.get("peeked"):
            entry["peeked"] = True
        score = system.get("release_score")
        if score is None and "release_score" not in system:        # matches from before it was kept
            score = original_similarity(entry["abs_d"], abs_t)
        if score != "absent":
            entry["score"] = score
        rounds.append((entry, bool(system.get("from_recording"))))
    return rounds


def rounds_of(record: dict) -> list[dict]:
    """The recorded rounds of one match record, in the dataset's round format."""
    return [entry for entry, _ in _rounds(record)]


def _replays_recording(record: dict, rounds: list[tuple[dict, bool]]) -> bool:
    content = record.get("content") or {}
    dialog = content.get("dialog") or []
    return bool((record.get("config") or {}).get("replay_dialog")) and bool(dialog) \
        and len(rounds) == len(dialog) and all(same for _, same in rounds) \
        and all(r["msg_t"] == d.get("msg_t") and r["msg_d"] == d.get("msg_d")
                for (r, _), d in zip(rounds, dialog))


def _own_stat(record: dict, rounds: int) -> dict:
    times = [e["t"] for e in record.get("events", []) if isinstance(e.get("t"), (int, float))]
    start, end = (min(times), max(times)) if times else (None, None)
    return {"start": start, "end": end,
            "duration": None if start is None else (end - start) / 1000, "round": rounds}


def entry_of(record: dict) -> tuple[dict, str, dict]:
    """The ``data`` entry of one match, its socket id and its ``stat`` entry."""
    content = record.get("content") or {}
    image_id = content.get("image_id")
    rounds = _rounds(record)
    if _replays_recording(record, rounds) and isinstance(content.get("socketId"), str):
        socket, stat = content["socketId"], content.get("stat")
        if isinstance(stat, dict):            # in the released order (a jsonb column sorts keys)
            stat = {**{k: stat[k] for k in STAT_FIELDS if k in stat}, **stat}
    else:
        socket, stat = f"/#groundtalk_{record['match_id']}", _own_stat(record, len(rounds))
    entry = {"image_id": record.get("seed") if image_id is None else image_id,
             "abs_t": content["abs_t"], "socketId": socket,
             "dialog": [r for r, _ in rounds]}
    models = model_seats(record)
    if models:   # a model played a seat: its version and checkpoint hash (absent otherwise)
        entry["groundtalk_models"] = models
    return entry, socket, stat


def codraw_json(records: Iterable[dict], *, statuses: tuple[str, ...] = ("finished",)) -> dict:
    """The ``CoDraw_1_0.json`` document for the CoDraw matches among ``records`` whose status is in
    ``statuses`` (pass ``("finished", "aborted", "active")`` to include unfinished ones)."""
    data: dict[str, dict] = {}
    stat: dict[str, dict] = {}
    for record in sorted(records, key=lambda r: (r.get("created_at") or "", r.get("match_id") or "")):
        if not str(record.get("game_id", "")).startswith("codraw") or record.get("status") not in statuses:
            continue
        content = record.get("content") or {}
        key = content.get("key") or f"groundtalk_{record['match_id']}"
        if key in data:
            key = f"{key}_{record['match_id']}"
        entry, socket, entry_stat = entry_of(record)
        data[key] = entry
        if entry_stat is not None:
            stat[socket] = entry_stat
    return {"count": len(data), "stat": stat, "data": data}


def dumps(records: Iterable[dict], **kwargs) -> str:
    return json.dumps(codraw_json(records, **kwargs), ensure_ascii=False)


def write_codraw_json(records: Iterable[dict], out: IO[str]) -> int:
    """``manage.py export --format codraw``: write the document, return the number of dialogs.
    The export's ``--status`` has chosen the matches (finished by default), so every status is kept."""
    document = codraw_json(records, statuses=("finished", "aborted", "active"))
    json.dump(document, out, ensure_ascii=False)
    return len(document["data"])


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
