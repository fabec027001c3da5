"""Dataset exports for the color reference game (``colors_v1``), built only from the event log.

Monroe, Hawkins, Goodman & Potts (2017), "Colors in Context", TACL 5. ``csv_rows`` yields the
released corpus's per-message rows (``filteredCorpus.csv``, linked from the Stanford CoCoLab
dataset page and read by e.g. the CS224u ``ColorsCorpusReader``): one row per chat message of every
finished round, with the round's fields repeated on each row, and every column of the release in
its order: the click file's columns (``gameid, clkTime, roundNum, condition, click*, alt1*,
alt2*, targetD1Diff, targetD2Diff, D1D2Diff, outcome``, the order the original game's server wrote
them), then the message's (``msgTime, role, contents``), then the columns the authors' R
preprocessing added (``workerid_uniq, numOutcome, numRawWords, numRawChars, numCleanChars,
numCleanWords, source``; futurulus/coop-nets behavioralAnalysis/colorReference.Rmd), then the
experiment's ``arm, arm_order, arm_position, arm_seed`` (the match's arm of its batch, issue 24;
empty outside one; ``games.records.arm_fields``).

* ``msgTime`` / ``clkTime``: server time in ms since the epoch (the original used ``Date.now()``).
* ``roundNum``: 1-based. ``role``: "speaker" or "listener". ``outcome``: "true" / "false";
  ``numOutcome``: 1 / 0.
* ``click*``: the color the listener clicked; ``alt1*`` / ``alt2*``: the other two, in status
  order (target, distr1, distr2). ``*Status``: "target", "distr1" or "distr2" (in "split"
  rounds distr1 is the distractor close to the target). ``*ColH/S/L``: HSL, H 0-360, S and L 0-100.
  ``*LocS`` / ``*LocL``: the color's position 1-3 for the speaker / the listener.
* ``targetD1Diff``, ``targetD2Diff``, ``D1D2Diff``: CIEDE2000 between target and distr1, target and
  distr2, distr1 and distr2 (the context's recorded distances; computed when it has none).
* ``workerid_uniq``: the sender's pseudonym (the export's keyed hash of the worker id, stable
  across games, as in the release), or the agent's name for an agent's message.
* ``numRawWords`` = 1 + the number of spaces, ``numRawChars`` = characters; ``numClean*`` the same
  after the release's cleaning: characters other than letters, digits, spaces and ``'`` become
  spaces, then the words of R tm's English stop-word list are removed (``CLEAN_STOPWORDS``).
* ``source``: "human" for a person's message, else the agent's name (the release used "human" and
  a model's label); a model agent's is ``name@version#sha256-prefix`` of the checkpoint it played.

Rounds without a ``round_ended`` event (an aborted match's last round) are not exported.
"""
from __future__ import annotations

import re
from typing import IO, Iterable, Iterator

from games.records import ARM_COLUMNS, arm_fields, model_label
from groundtalk_web import csvsafe
from games.colors.content import PAIR_NAMES, pair_distances

# ----------------------------------------------------------------------------------------- constants
CSV_COLUMNS = [
    "gameid", "clkTime", "roundNum", "condition",
    "clickStatus", "clickColH", "clickColS", "clickColL", "clickLocS", "clickLocL",
    "alt1Status", "alt1ColH", "alt1ColS", "alt1ColL", "alt1LocS", "alt1LocL",
    "alt2Status", "alt2ColH", "alt2ColS", "alt2ColL", "alt2LocS", "alt2LocL",
    "targetD1Diff", "targetD2Diff", "D1D2Diff", "outcome",
    "msgTime", "role", "contents",
    "workerid_uniq", "numOutcome", "numRawWords", "numRawChars", "numCleanChars", "numCleanWords", "source",
    # after the release's columns: the experiment's arm of the match (games.records.arm_fields)
    *ARM_COLUMNS,
]

# The columns that belong to one message; the others are the round's, repeated on each of its rows.
MESSAGE_COLUMNS = ("msgTime", "role", "contents", "workerid_uniq", "numRawWords", "numRawChars",
                   "numCleanChars", "numCleanWords", "source")

# R tm's stopwords("english") (174 words), which the release's preprocessing removed (qdap
# rm_stopwords) before counting numCleanWords / numCleanChars. Data, kept here as the release used it.
CLEAN_STOPWORDS = frozenset("""
i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her
hers herself it its itself they them their theirs themselves what which who whom this that these
those am is are was were be been being have has had having do does did doing would should could
ought i'm you're he's she's it's we're they're i've you've we've they've i'd you'd he'd she'd we'd
they'd i'll you'll he'll she'll we'll they'll isn't aren't wasn't weren't hasn't haven't hadn't
doesn't don't didn't won't wouldn't shan't shouldn't can't cannot couldn't mustn't let's that's
who's what's here's there's when's where's why's how's a an the and but if or because as until
while of at by for with about against between into through during before after above below to
from up down in out on off over under again further then once here there when where why how all
any both each few more most other some such no nor not only own same so than too very
""".split())
_NOT_KEPT = re.compile(r"[^\w\s']|_")


# ----------------------------------------------------------------------------------------- functions
def color_fields(prefix: str, record: dict, index: int) -> dict:
    h, s, l = record["colors"][index]
    return {
        f"{prefix}Status": record["statuses"][index],
        f"{prefix}ColH": h, f"{prefix}ColS": s, f"{prefix}ColL": l,
        f"{prefix}LocS": record["positions"]["speaker"][index] + 1,
        f"{prefix}LocL": record["positions"]["listener"][index] + 1,
    }


def clean_message(text: str) -> str:
    """The release's cleaned message: punctuation to spaces, stop words removed, lower case."""
    words = _NOT_KEPT.sub(" ", text).split()
    return " ".join(w.lower() for w in words if w.lower() not in CLEAN_STOPWORDS)


def message_counts(text: str) -> dict:
    clean = clean_message(text)
    return {"numRawWords": 1 + text.count(" "), "numRawChars": len(text),
            "numCleanChars": len(clean), "numCleanWords": 1 + clean.count(" ")}


def context_distances(record: dict, content_round: dict | None) -> dict:
    """targetD1Diff, targetD2Diff, D1D2Diff of a round (CIEDE2000), from its context."""
    distances = (content_round or {}).get("distances")
    if not distances:
        distances = {name: round(float(d), 2) for name, d in zip(PAIR_NAMES, pair_distances(record["colors"]))}
    return {"targetD1Diff": distances["target_distr1"], "targetD2Diff": distances["target_distr2"],
            "D1D2Diff": distances["distr1_distr2"]}


def round_fields(gameid: str, record: dict, content_round: dict | None = None) -> dict:
    """The columns shared by every message row of one finished round."""
    clicked = record["click"]["color"]
    alt1, alt2 = [index for index in range(len(record["colors"])) if index != clicked]
    return {
        "gameid": gameid,
        "roundNum": record["round"],
        "condition": record["condition"],
        "clkTime": record["click_at"],
        "outcome": "true" if record["correct"] else "false",
        "numOutcome": 1 if record["correct"] else 0,
        **color_fields("click", record, clicked),
        **color_fields("alt1", record, alt1),
        **color_fields("alt2", record, alt2),
        **context_distances(record, content_round),
    }


def sender(record: dict, role: str) -> tuple[str, str]:
    """(workerid_uniq, source) of the seat that sent a message."""
    seat = (record.get("seats") or {}).get(role) or {}
    if seat.get("kind") == "agent" or seat.get("agent"):
        # a model agent's label names its version and checkpoint hash (games.records.model_label)
        return seat.get("agent") or "agent", model_label(seat) or seat.get("agent") or "agent"
    return seat.get("worker") or "", "human"


def csv_rows(record: dict) -> Iterator[dict]:
    """One dict per message (keys: ``CSV_COLUMNS``), from a match record's ``round_ended`` events."""
    events = sorted(record["events"], key=lambda event: event["seq"])
    content_rounds = (record.get("content") or {}).get("rounds") or []
    arm = arm_fields(record)
    for event in events:
        if event["type"] != "round_ended":
            continue
        number = event["payload"]["round"]
        context = content_rounds[number - 1] if 0 < number <= len(content_rounds) else None
        if context is not None and [list(c) for c in context.get("colors", [])] != event["payload"]["colors"]:
            context = None   # not this round's context: compute its distances from the colors
        shared = {**round_fields(record["match_id"], event["payload"], context), **arm}
        for message in event["payload"]["messages"]:
            worker, source = sender(record, message["role"])
            row = {**shared, "msgTime": message["at"], "role": message["role"], "contents": message["text"],
                   "workerid_uniq": worker, "source": source, **message_counts(message["text"])}
            yield {column: row[column] for column in CSV_COLUMNS}


def write_csv(records: Iterable[dict], out: IO[str]) -> int:
    """Write the rows of several match records as one CSV; returns the number of rows. Text cells
    are quoted and numbers bare (R's ``write.csv`` layout); a message (``contents``) or a worker id
    that a spreadsheet would take for a formula gets a single quote in front
    (groundtalk_web.csvsafe; ``csvsafe.original_text`` gives the message back, docs/exports.md)."""
    writer = csvsafe.dataset_writer(out, CSV_COLUMNS)
    writer.writeheader()
    count = 0
    for record in records:
        for row in csv_rows(record):
            writer.writerow(row)
            count += 1
    return count
