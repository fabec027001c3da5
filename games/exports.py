"""Export formats: ``jsonl`` (every match, every event, scores) here, game formats in each game's
``exports.py`` as ``EXPORT_FORMATS = {"name": writer}``; a writer is ``writer(records, out)`` over
an iterator of match records (see ``games.selectors.match_record``) and a text stream."""
from __future__ import annotations

import json
from typing import Callable, Iterator, TextIO

from games.registry import GAMES

Writer = Callable[[Iterator[dict], TextIO], int]


def write_jsonl(records: Iterator[dict], out: TextIO) -> int:
    n = 0
    for record in records:
        out.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
        out.write("\n")
        n += 1
    return n


def export_formats() -> dict[str, tuple[str | None, Writer]]:
    """Format name -> (the game id it belongs to, or None for all games; writer)."""
    formats: dict[str, tuple[str | None, Writer]] = {"jsonl": (None, write_jsonl)}
    for game in GAMES.values():
        try:
            module = __import__(f"{game.package}.exports", fromlist=["EXPORT_FORMATS"])
        except ModuleNotFoundError:
            continue
        for name, writer in getattr(module, "EXPORT_FORMATS", {}).items():
            formats[name] = (game.id, writer)
    return formats
