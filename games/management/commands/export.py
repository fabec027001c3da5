"""Export matches as datasets, streaming in constant memory.

    python manage.py export --format jsonl --output all.jsonl
    python manage.py export --format colors-csv --batch colors-pilot --since 2026-11-01
"""
from __future__ import annotations

from datetime import datetime, time, timezone

from django.core.management.base import BaseCommand, CommandError

from games.exports import export_formats
from games.selectors import match_records


def parse_date(value: str | None):
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise CommandError(f"Not a date: {value!r} (use YYYY-MM-DD or an ISO timestamp)") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return parsed


class _Stdout:
    """The command's stdout as a plain text stream (no line endings added)."""

    def __init__(self, wrapper):
        self.wrapper = wrapper

    def write(self, text: str) -> int:
        self.wrapper.write(text, ending="")
        return len(text)


class Command(BaseCommand):
    help = "Export matches (every event, scores) as JSON lines or a game's dataset format."

    def add_arguments(self, parser):
        parser.add_argument("--format", default="jsonl", help="jsonl, or a game format (colors-csv, codraw, ...)")
        parser.add_argument("--batch", default=None, help="only this batch (slug)")
        parser.add_argument("--game", default=None, help="only this game id")
        parser.add_argument("--since", default=None, help="matches created on or after this date")
        parser.add_argument("--until", default=None, help="matches created before this date")
        parser.add_argument("--output", "-o", default="-", help="file to write (default: standard output)")
        parser.add_argument("--no-pseudonymise", action="store_true",
                            help="keep raw worker ids (default: HMAC pseudonyms)")

    def handle(self, *args, **opts):
        formats = export_formats()
        if opts["format"] not in formats:
            raise CommandError(f"Unknown format {opts['format']!r}; known: {', '.join(sorted(formats))}")
        game_id, writer = formats[opts["format"]]
        if opts["game"] and game_id and opts["game"] != game_id:
            raise CommandError(f"{opts['format']} is a {game_id} format")
        records = match_records(game_id=opts["game"] or game_id, batch_slug=opts["batch"],
                                since=parse_date(opts["since"]), until=parse_date(opts["until"]),
                                pseudonymise=not opts["no_pseudonymise"])
        if opts["output"] == "-":
            n = writer(records, _Stdout(self.stdout))
        else:
            with open(opts["output"], "w", encoding="utf-8", newline="") as out:
                n = writer(records, out)
        self.stderr.write(f"export {opts['format']}: wrote {n} records")
