"""People's rounds of the color game from a file, for training and validating the neural agents on
human language (``manage.py train_agent colors_neural_listener --data FILE``).

Two formats, told apart by the header (both are one row per chat message with the round's fields
repeated, the columns of the released ``filteredCorpus.csv`` of Monroe et al. 2017):

* ``filteredCorpus.csv``: the Colors in Context release (and files in its shape, such as the
  authors' model-output files of its dev split);
* ``colors-csv``: GroundTalk's own export (:mod:`games.colors.exports`), the release's columns plus
  the experiment's arm columns (:data:`games.records.ARM_COLUMNS`).

A file with neither header is refused with a ValueError naming the columns expected.

Each round becomes one example as the listener model sees it (the shape of
:mod:`games.colors.neural.data`)::

    {"gameid": "3421-f", "round": 1, "condition": "far", "colors": [[h, s, l] x3],  # listener order
     "target": 0..2, "text": "grey", "file_click_correct": True}

* ``text``: all the speaker's messages of the round sent before the click, joined by spaces (as
  Monroe et al.'s L0 reads a round). Where the recorded times put every speaker message after the
  click (clock skew: 10 of the 10,277 rows of the shared dev file), all the round's speaker
  messages are used. A round without a speaker message is skipped.
* ``colors``: the three colours in the listener's positions (``*LocL``); ``target``: the position
  of the colour whose ``*Status`` is ``target``. The click columns say only where the colours are:
  who clicked what is never read (in the authors' model-output files the clicks are a model's).

:func:`split_by_game` splits the rounds by game id (never by row), seeded.
"""
from __future__ import annotations

import csv
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from agents.checkpoints import file_sha256
from agents.training import split_by_group
from games.records import ARM_COLUMNS

PREFIXES = ("click", "alt1", "alt2")
REQUIRED = ("gameid", "roundNum", "condition", "role", "contents", "msgTime", "clkTime",
            *(f"{p}{c}" for p in PREFIXES for c in ("Status", "ColH", "ColS", "ColL", "LocL")))
FORMATS = ("filteredCorpus.csv", "colors-csv")
CONDITIONS = ("far", "split", "close")


@dataclass
class Corpus:
    """The rounds read from one file, its format and sha256, and what was skipped."""

    path: str
    format: str
    sha256: str
    rounds: list[dict] = field(default_factory=list)
    rows: int = 0
    skipped_rounds: int = 0      # rounds without a speaker message

    @property
    def games(self) -> list[str]:
        return sorted({r["gameid"] for r in self.rounds})


def detect_format(header: list[str], path: str | Path = "file") -> str:
    """``"colors-csv"`` (GroundTalk's export: the release's columns and the arm columns),
    ``"filteredCorpus.csv"`` (the release's columns), else ValueError naming what is missing."""
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise ValueError(
            f"{path}: not a colour-game corpus file: its header lacks {', '.join(missing)}. Expected the columns "
            f"of Colors in Context's filteredCorpus.csv ({', '.join(REQUIRED)}; the release's other columns may "
            f"follow), or GroundTalk's colors-csv export (those plus {', '.join(ARM_COLUMNS)}).")
    return "colors-csv" if all(c in header for c in ARM_COLUMNS) else "filteredCorpus.csv"


def _number(value: str) -> float:
    return float(value) if value not in ("", "NA", None) else float("nan")


def read_corpus(path: str | Path) -> Corpus:
    """Every round of ``path`` with a speaker message, in file order (see the module docstring)."""
    path = Path(path)
    with open(path, newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        fmt = detect_format(list(reader.fieldnames or []), path)
        by_round: dict[tuple[str, str], list[dict]] = defaultdict(list)
        rows = 0
        for row in reader:
            rows += 1
            by_round[(row["gameid"], row["roundNum"])].append(row)
    corpus = Corpus(str(path), fmt, file_sha256(path), rows=rows)
    for (gameid, round_num), rows_of in by_round.items():
        first = rows_of[0]
        speaker = [r for r in rows_of if r["role"] == "speaker" and r["contents"].strip()]
        if not speaker:
            corpus.skipped_rounds += 1
            continue
        click_at = _number(first["clkTime"])
        before = [r for r in speaker if not _number(r["msgTime"]) > click_at]
        speaker = sorted(before or speaker, key=lambda r: _number(r["msgTime"]))
        colors: list = [None, None, None]
        target = None
        for prefix in PREFIXES:
            slot = int(float(first[f"{prefix}LocL"])) - 1
            if not 0 <= slot < 3 or colors[slot] is not None:
                raise ValueError(f"{path}: game {gameid} round {round_num}: {prefix}LocL is "
                                 f"{first[f'{prefix}LocL']!r}; the three colours need positions 1, 2 and 3.")
            colors[slot] = [float(first[f"{prefix}Col{c}"]) for c in "HSL"]
            if first[f"{prefix}Status"] == "target":
                target = slot
        if target is None:
            raise ValueError(f"{path}: game {gameid} round {round_num}: no colour has the status 'target'.")
        corpus.rounds.append({"gameid": gameid, "round": int(float(round_num)), "condition": first["condition"],
                              "colors": colors, "target": target,
                              "text": " ".join(r["contents"].strip() for r in speaker),
                              "file_click_correct": first["clickStatus"] == "target"})
    return corpus


def split_by_game(rounds: list[dict], val_fraction: float, seed: int) -> tuple[list[dict], list[dict], list[str]]:
    """``(train rounds, validation rounds, validation game ids)``: a seeded ``val_fraction`` of the
    game ids (at least one game each side when there are two or more) and all their rounds."""
    return split_by_group(rounds, "gameid", val_fraction, f"colors-corpus-split:{seed}", "game")
