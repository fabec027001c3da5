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

``key`` says the dialog's split, as the authors' ``codraw_data.py`` reads it (``data_for_splits``
takes the keys that start with ``train``, ``val`` and ``test``, sorted): ``<split>_<n>`` with ``n``
numbered from 0 per split in export order (match creation time, then match id), zero-padded to 5
digits (``train_00000``, ``val_00000``, ``test_00000``) as the release's keys are. The split of each
match is chosen at export (``split``): ``hash`` (default of the ``codraw`` format) from a stable
hash of the match id (sha256; ``ratios`` 80/10/10 unless told), so a match stays in its split
across exports; ``train``, ``val`` or ``test`` puts every match there; ``original`` keeps the
keys as recorded: the imported scene's key (``train_00001``) when the content came from a CoDraw
file (suffixed with the match id if two matches played it), else ``groundtalk_<match_id>``
(which no split function selects). :func:`key_rows` / the ``codraw-keys`` format map every key back
to its match (``key``, ``split``, ``match_id``, ``batch``, ``source_key``: the imported key);
``manage.py export --format codraw --output X.json`` writes it next to the file as ``X.keys.csv``.
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

import hashlib
import json
import statistics
from typing import IO, Iterable, Sequence

from games.records import ARM_COLUMNS, arm_fields, model_seats
from groundtalk_web import csvsafe

from games.codraw.metric import original_similarity

ROUND_FIELDS = ("seq_t", "seq_d", "msg_t", "msg_d", "abs_t", "abs_b", "abs_d", "peeked", "score")
ENTRY_FIELDS = ("image_id", "abs_t", "socketId", "dialog")
TOP_FIELDS = ("count", "stat", "data")
STAT_FIELDS = ("start", "end", "duration", "round")

SPLITS = ("train", "val", "test")               # the key prefixes codraw_data.py selects by
SPLIT_MODES = ("hash", "train", "val", "test", "original")
DEFAULT_SPLIT = "hash"
DEFAULT_RATIOS = (80.0, 10.0, 10.0)             # train/val/test shares of the hash split
KEY_DIGITS = 5                                  # train_00000, as the release numbers its keys
KEY_COLUMNS = ("key", "split", "match_id", "batch", "source_key", *ARM_COLUMNS)   # then the experiment's arm


def parse_ratios(value: str | Sequence[float]) -> tuple[float, float, float]:
    """Train/val/test shares from ``"80,10,10"`` (or three numbers): non-negative, not all zero;
    any scale (``8,1,1`` is the same split). ``ValueError`` otherwise."""
    parts = value.replace(":", ",").replace("/", ",").split(",") if isinstance(value, str) else list(value)
    try:
        ratios = tuple(float(p) for p in parts)
    except (TypeError, ValueError):
        raise ValueError(f"split ratios must be three numbers, train,val,test (e.g. 80,10,10): {value!r}") from None
    if len(ratios) != 3 or any(r < 0 or r != r or r == float("inf") for r in ratios) or sum(ratios) <= 0:
        raise ValueError(f"split ratios must be three numbers >= 0, not all 0, train,val,test (e.g. 80,10,10): {value!r}")
    return ratios   # type: ignore[return-value]


def check_split(split: str) -> str:
    if split not in SPLIT_MODES:
        raise ValueError(f"unknown CoDraw split {split!r}; use one of {', '.join(SPLIT_MODES)}")
    return split


def hash_split(match_id: str, ratios: Sequence[float] = DEFAULT_RATIOS) -> str:
    """The split of a match under ``hash``: sha256 of its id read as a number in [0, 1), cut at the
    ratios' cumulative shares. The same id gives the same split in every export and process."""
    ratios = parse_ratios(ratios)
    digest = hashlib.sha256(f"groundtalk-codraw-split:{match_id}".encode("utf-8")).digest()
    point = int.from_bytes(digest[:8], "big") / 2 ** 64 * sum(ratios)
    edge = 0.0
    for name, share in zip(SPLITS, ratios):
        edge += share
        if share and point < edge:
            return name
    return [name for name, share in zip(SPLITS, ratios) if share][-1]


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


def _keyed(records: Iterable[dict], statuses: tuple[str, ...], split: str,
           ratios: Sequence[float]) -> list[tuple[str, str, dict]]:
    """(key, split, record) of every exported match, in export order."""
    check_split(split)
    ratios = parse_ratios(ratios)
    chosen = [r for r in sorted(records, key=lambda r: (r.get("created_at") or "", r.get("match_id") or ""))
              if str(r.get("game_id", "")).startswith("codraw") and r.get("status") in statuses]
    if split == "original":
        keyed, seen = [], set()
        for record in chosen:
            key = (record.get("content") or {}).get("key") or f"groundtalk_{record['match_id']}"
            if key in seen:
                key = f"{key}_{record['match_id']}"
            seen.add(key)
            prefix = key.split("_", 1)[0]
            keyed.append((key, prefix if prefix in SPLITS else "", record))
        return keyed
    splits = [split if split in SPLITS else hash_split(record["match_id"], ratios) for record in chosen]
    digits = {name: max(KEY_DIGITS, len(str(splits.count(name) - 1))) for name in SPLITS}
    numbers = dict.fromkeys(SPLITS, 0)
    keyed = []
    for record, name in zip(chosen, splits):
        keyed.append((f"{name}_{numbers[name]:0{digits[name]}d}", name, record))
        numbers[name] += 1
    return keyed


def codraw_json(records: Iterable[dict], *, statuses: tuple[str, ...] = ("finished",), split: str = "original",
                ratios: Sequence[float] = DEFAULT_RATIOS, key_rows: list[dict] | None = None) -> dict:
    """The ``CoDraw_1_0.json`` document for the CoDraw matches among ``records`` whose status is in
    ``statuses`` (pass ``("finished", "aborted", "active")`` to include unfinished ones), keyed by
    ``split`` (module docstring; ``original`` here, ``hash`` in the ``codraw`` format). A list
    passed as ``key_rows`` receives one row (``KEY_COLUMNS``) per dialog: its key's match."""
    data: dict[str, dict] = {}
    stat: dict[str, dict] = {}
    for key, name, record in _keyed(records, statuses, split, ratios):
        entry, socket, entry_stat = entry_of(record)
        data[key] = entry
        if entry_stat is not None:
            stat[socket] = entry_stat
        if key_rows is not None:
            key_rows.append({"key": key, "split": name, "match_id": record["match_id"],
                             "batch": record.get("batch") or "",
                             "source_key": (record.get("content") or {}).get("key") or "", **arm_fields(record)})
    return {"count": len(data), "stat": stat, "data": data}


def dumps(records: Iterable[dict], **kwargs) -> str:
    return json.dumps(codraw_json(records, **kwargs), ensure_ascii=False)


def write_key_rows(rows: Iterable[dict], out: IO[str]) -> int:
    """The key file: a header and one row per dialog, every cell quoted (groundtalk_web.csvsafe)."""
    writer = csvsafe.DictWriter(out, KEY_COLUMNS)
    writer.writeheader()
    n = 0
    for row in rows:
        writer.writerow(row)
        n += 1
    return n


# The export keeps every status: its ``--status`` has chosen the matches (finished by default).
_ALL_STATUSES = ("finished", "timed_out", "aborted", "active")


def write_codraw_json(records: Iterable[dict], out: IO[str], *, codraw_split: str = DEFAULT_SPLIT,
                      codraw_ratios: str | Sequence[float] = DEFAULT_RATIOS, keys_out: IO[str] | None = None) -> int:
    """``manage.py export --format codraw``: write the document, return the number of dialogs; with
    ``keys_out``, write the key file (:func:`write_key_rows`) there too."""
    rows: list[dict] = []
    document = codraw_json(records, statuses=_ALL_STATUSES, split=codraw_split,
                           ratios=parse_ratios(codraw_ratios), key_rows=rows)
    json.dump(document, out, ensure_ascii=False)
    if keys_out is not None:
        write_key_rows(rows, keys_out)
    return len(document["data"])


def write_codraw_keys(records: Iterable[dict], out: IO[str], *, codraw_split: str = DEFAULT_SPLIT,
                      codraw_ratios: str | Sequence[float] = DEFAULT_RATIOS) -> int:
    """``--format codraw-keys``: the key file of the ``codraw`` export of the same matches and split
    options (the export page's second download), one row per dialog."""
    rows: list[dict] = []
    codraw_json(records, statuses=_ALL_STATUSES, split=codraw_split, ratios=parse_ratios(codraw_ratios),
                key_rows=rows)
    return write_key_rows(rows, out)


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
