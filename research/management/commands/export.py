"""Export matches as datasets, streaming in constant memory.

    python manage.py export --format jsonl --output all.jsonl
    python manage.py export --format colors-csv --batch colors-pilot --since 2026-11-01
    python manage.py export --format guesswhich --status all     # finished (default), aborted or all

The staff page /research/export/ runs the same export (``research.exports.run_export``).
"""
from __future__ import annotations

from datetime import datetime, time, timezone

from django.core.management.base import BaseCommand, CommandError

from research.exports import DEFAULT_STATUS, STATUSES, ExportError, export_selection, run_export


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
        parser.add_argument("--status", default=DEFAULT_STATUS, choices=STATUSES,
                            help=f"matches by status (default: {DEFAULT_STATUS}; active matches only with all)")
        parser.add_argument("--output", "-o", default="-", help="file to write (default: standard output)")
        parser.add_argument("--no-pseudonymise", action="store_true",
                            help="keep raw worker ids (default: HMAC pseudonyms)")

    def handle(self, *args, **opts):
        options = dict(batch=opts["batch"], game=opts["game"], since=parse_date(opts["since"]),
                       until=parse_date(opts["until"]), status=opts["status"],
                       pseudonymise=not opts["no_pseudonymise"])
        try:
            export_selection(opts["format"], batch=options["batch"], game=options["game"],
                             status=options["status"])   # a bad format or game: no file is created
            if opts["output"] == "-":
                n = run_export(opts["format"], _Stdout(self.stdout), **options)
            else:
                with open(opts["output"], "w", encoding="utf-8", newline="") as out:
                    n = run_export(opts["format"], out, **options)
        except ExportError as exc:
            raise CommandError(str(exc)) from None
        self.stderr.write(f"export {opts['format']} ({opts['status']}): wrote {n} records")
