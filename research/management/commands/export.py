"""Export matches as datasets, streaming in constant memory.

    python manage.py export --format jsonl --output all.jsonl
    python manage.py export --format colors-csv --batch colors-pilot --since 2026-11-01
    python manage.py export --format guesswhich --status all     # finished (default), aborted or all
    python manage.py export --format codraw --output codraw.json  # + codraw.keys.csv (key -> match)
    python manage.py export --format codraw --codraw-split test --output test.json

The staff page /research/export/ runs the same export (``research.exports.run_export``).
"""
from __future__ import annotations

from datetime import datetime, time, timezone
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from games.codraw.exports import DEFAULT_SPLIT, SPLIT_MODES, parse_ratios
from research.exports import (DEFAULT_STATUS, STATUSES, ExportError, export_selection, format_options_of,
                              run_export)


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


def keys_path(output: str) -> Path:
    """Where the key file of ``--output X.json`` goes: ``X.keys.csv`` beside it."""
    path = Path(output)
    return path.with_name((path.stem if path.suffix else path.name) + ".keys.csv")


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
        parser.add_argument("--codraw-split", default=DEFAULT_SPLIT, choices=SPLIT_MODES,
                            help="codraw: the split in the keys (train_00000 ...): hash of the match id "
                                 "(default), all train, val or test, or original (the recorded keys)")
        parser.add_argument("--codraw-ratios", default="80,10,10",
                            help="codraw, --codraw-split hash: train,val,test shares (default 80,10,10)")

    def handle(self, *args, **opts):
        options = dict(batch=opts["batch"], game=opts["game"], since=parse_date(opts["since"]),
                       until=parse_date(opts["until"]), status=opts["status"],
                       pseudonymise=not opts["no_pseudonymise"])
        try:
            ratios = parse_ratios(opts["codraw_ratios"])
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        options["format_options"] = {"codraw_split": opts["codraw_split"], "codraw_ratios": ratios}
        keys = None
        try:
            export_selection(opts["format"], batch=options["batch"], game=options["game"],
                             status=options["status"])   # a bad format or game: no file is created
            if opts["output"] == "-":
                n = run_export(opts["format"], _Stdout(self.stdout), **options)
            else:
                keys = keys_path(opts["output"]) if "keys_out" in format_options_of(opts["format"]) else None
                with open(opts["output"], "w", encoding="utf-8", newline="") as out:
                    if keys is None:
                        n = run_export(opts["format"], out, **options)
                    else:
                        with open(keys, "w", encoding="utf-8", newline="") as keys_out:
                            options["format_options"]["keys_out"] = keys_out
                            n = run_export(opts["format"], out, **options)
        except ExportError as exc:
            raise CommandError(str(exc)) from None
        self.stderr.write(f"export {opts['format']} ({opts['status']}): wrote {n} records"
                          + (f"; keys -> matches in {keys}" if keys is not None else ""))
