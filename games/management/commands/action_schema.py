"""Write each game's action schema (games/<game>/actions.py) as JSON Schema, and docs/actions.md.

    python manage.py action_schema                      # docs/schemas/<game_id>.json + docs/actions.md
    python manage.py action_schema --game colors_v1 --output /tmp/schemas
    python manage.py action_schema --check              # exit 1 if the committed files are out of date

The committed copies must match the code; tests/games/test_actions.py checks it.
"""
from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from games.actions import action_json_schema, render_markdown, schema_json
from games.registry import GAMES

ROOT = Path(settings.BASE_DIR)
DEFAULT_OUTPUT = ROOT / "docs" / "schemas"
DEFAULT_MARKDOWN = ROOT / "docs" / "actions.md"


def expected_files(game_ids: list[str], output: Path, markdown: Path | None) -> dict[Path, str]:
    """What the command writes: path -> text."""
    files = {output / f"{game_id}.json": schema_json(game_id) for game_id in game_ids}
    if markdown is not None:
        files[markdown] = render_markdown([action_json_schema(game_id) for game_id in game_ids])
    return files


class Command(BaseCommand):
    help = "Write each game's action JSON Schema (docs/schemas/<game_id>.json) and docs/actions.md."

    def add_arguments(self, parser):
        parser.add_argument("--game", action="append", dest="games", metavar="ID",
                            help="only this game (repeatable); then no Markdown unless --markdown is given")
        parser.add_argument("--output", default=str(DEFAULT_OUTPUT), metavar="DIR",
                            help="directory for <game_id>.json (default docs/schemas)")
        parser.add_argument("--markdown", metavar="FILE",
                            help="the Markdown reference (default docs/actions.md when writing every game)")
        parser.add_argument("--check", action="store_true",
                            help="write nothing; exit with an error if a file differs from the code")

    def handle(self, *args, games=None, output=None, markdown=None, check=False, **options):
        unknown = sorted(set(games or ()) - set(GAMES))
        if unknown:
            raise CommandError(f"Unknown game(s) {', '.join(unknown)}; known: {', '.join(sorted(GAMES))}")
        game_ids = sorted(games) if games else sorted(GAMES)
        md = Path(markdown) if markdown else (None if games else DEFAULT_MARKDOWN)
        files = expected_files(game_ids, Path(output), md)
        if check:
            stale = [str(path) for path, text in files.items()
                     if not path.is_file() or path.read_text(encoding="utf-8") != text]
            if stale:
                raise CommandError("Out of date (run `python manage.py action_schema`): " + ", ".join(stale))
            self.stdout.write(f"{len(files)} file(s) up to date")
            return
        for path, text in files.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            self.stdout.write(f"wrote {path}")
