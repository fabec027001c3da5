"""Dataset exports for the color reference game (``colors_v1``), built only from the event log.

Monroe, Hawkins, Goodman & Potts (2017), "Colors in Context", TACL 5. ``csv_rows`` yields the
released corpus's per-message rows (``filteredCorpus.csv``; columns documented on the Stanford
CoCoLab dataset page and read by e.g. the CS224u ``ColorsCorpusReader``): one row per chat message
of every finished round, with the round's fields repeated on each row.

* ``msgTime`` / ``clkTime``: server time in ms since the epoch (the original used ``Date.now()``).
* ``roundNum``: 1-based. ``role``: "speaker" or "listener". ``outcome``: "true" / "false".
* ``click*``: the color the listener clicked; ``alt1*`` / ``alt2*``: the other two, in status
  order (target, distr1, distr2). ``*Status``: "target", "distr1" or "distr2" (in "split"
  rounds distr1 is the distractor close to the target). ``*ColH/S/L``: HSL, H 0-360, S and L 0-100.
  ``*LocS`` / ``*LocL``: the color's position 1-3 for the speaker / the listener.

Rounds without a ``round_ended`` event (an aborted match's last round) are not exported.
"""
from __future__ import annotations

import csv
from typing import IO, Iterable, Iterator

# ----------------------------------------------------------------------------------------- constants
CSV_COLUMNS = [
    "gameid", "msgTime", "roundNum", "condition", "role", "contents", "clkTime", "outcome",
    "clickStatus", "clickColH", "clickColS", "clickColL", "clickLocS", "clickLocL",
    "alt1Status", "alt1ColH", "alt1ColS", "alt1ColL", "alt1LocS", "alt1LocL",
    "alt2Status", "alt2ColH", "alt2ColS", "alt2ColL", "alt2LocS", "alt2LocL",
]


# ----------------------------------------------------------------------------------------- functions
def color_fields(prefix: str, record: dict, index: int) -> dict:
    h, s, l = record["colors"][index]
    return {
        f"{prefix}Status": record["statuses"][index],
        f"{prefix}ColH": h, f"{prefix}ColS": s, f"{prefix}ColL": l,
        f"{prefix}LocS": record["positions"]["speaker"][index] + 1,
        f"{prefix}LocL": record["positions"]["listener"][index] + 1,
    }


def round_fields(gameid: str, record: dict) -> dict:
    """The columns shared by every message row of one finished round."""
    clicked = record["click"]["color"]
    alt1, alt2 = [index for index in range(len(record["colors"])) if index != clicked]
    return {
        "gameid": gameid,
        "roundNum": record["round"],
        "condition": record["condition"],
        "clkTime": record["click_at"],
        "outcome": "true" if record["correct"] else "false",
        **color_fields("click", record, clicked),
        **color_fields("alt1", record, alt1),
        **color_fields("alt2", record, alt2),
    }


def csv_rows(record: dict) -> Iterator[dict]:
    """One dict per message (keys: ``CSV_COLUMNS``), from a match record's ``round_ended`` events."""
    events = sorted(record["events"], key=lambda event: event["seq"])
    for event in events:
        if event["type"] != "round_ended":
            continue
        shared = round_fields(record["match_id"], event["payload"])
        for message in event["payload"]["messages"]:
            row = {**shared, "msgTime": message["at"], "role": message["role"],
                   "contents": message["text"]}
            yield {column: row[column] for column in CSV_COLUMNS}


def write_csv(records: Iterable[dict], out: IO[str]) -> int:
    """Write the rows of several match records as one CSV; returns the number of rows."""
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS)
    writer.writeheader()
    count = 0
    for record in records:
        for row in csv_rows(record):
            writer.writerow(row)
            count += 1
    return count


# ``python manage.py export --format colors-csv``
EXPORT_FORMATS = {"colors-csv": write_csv}
