"""Import recorded stimuli as stored content, with provenance, and optionally attach them to a batch.

    python manage.py import_content codraw CoDraw_1_0.json [--batch codraw-pilot] [--limit 200]
    python manage.py import_content guesswhich CLEVR_v1.0/scenes/CLEVR_val_scenes.json --limit 100 \
        [--pool-size 20] [--difficulty medium] [--images DIR] [--start 0] [--seed 0] [--batch SLUG]
    python manage.py import_content visdial CLEVR_v1.0/scenes/CLEVR_val_scenes.json --limit 100

CLEVR scenes files (the official ``{"info", "scenes"}`` format) become GuessWhich items (one per
scene: the scene is the secret of a pool drawn from the file's other scenes, captioned from its
scene graph) or visual-dialog items (one per scene). The real renders are used when they are
beside the file (``images/<split>/`` as CLEVR ships them) or in ``--images``; otherwise the scenes
are drawn. See :mod:`clevr.dataset`.

A batch with a content pool draws each new match's content from it (the least used first)
instead of generating it from a seed.
"""
from __future__ import annotations

import inspect

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from games.registry import UnknownGame, game_named
from live.models import Batch, Content

# importer keyword -> command option, for importers that take it (CLEVR's)
IMPORT_OPTIONS = {"images": "images", "start": "start", "limit": "limit", "pool_size": "pool_size",
                  "difficulty": "difficulty", "seed": "seed"}


def import_items(game, path: str, opts: dict) -> list[dict]:
    """Content items from ``path`` through the game's ``content.import_file``, passing the options
    it accepts; an option it does not take is an error rather than ignored."""
    importer = getattr(game.content, "import_file", None)
    if importer is None:
        raise CommandError(f"{game.id} cannot import content files")
    accepted = set(inspect.signature(importer).parameters)
    kwargs = {}
    for kw, opt in IMPORT_OPTIONS.items():
        value = opts.get(opt)
        if value in (None, "") or (kw == "start" and value == 0) or (kw == "seed" and value == 0):
            continue
        if kw == "limit" and value == 0:
            continue
        if kw not in accepted:
            if kw == "limit":
                continue  # applied after import for importers without it
            raise CommandError(f"{game.id} import does not take --{opt.replace('_', '-')}")
        kwargs[kw] = value
    try:
        items = importer(path, **kwargs)
    except (OSError, ValueError) as exc:
        raise CommandError(f"Cannot read {path}: {exc}") from None
    if opts.get("limit") and "limit" not in kwargs:
        items = items[:opts["limit"]]
    if not items:
        raise CommandError(f"{path} holds no playable content")
    return items


class Command(BaseCommand):
    help = ("Store a game's recorded content (CoDraw scenes, Colors in Context contexts, CLEVR scenes for "
            "guesswhich / visdial) and optionally give it to a batch.")

    def add_arguments(self, parser):
        parser.add_argument("game")
        parser.add_argument("file")
        parser.add_argument("--batch", default="", help="add the imported items to this batch's content pool")
        parser.add_argument("--limit", type=int, default=0, help="import at most this many items")
        parser.add_argument("--start", type=int, default=0, help="CLEVR: the first scene to import")
        parser.add_argument("--images", default="", help="CLEVR: the folder of the real renders "
                            "(default: images/<split>/ beside the file, when there)")
        parser.add_argument("--pool-size", type=int, default=None, help="guesswhich: images per pool (20)")
        parser.add_argument("--difficulty", default=None, choices=("easy", "medium", "hard"),
                            help="guesswhich: distractor bands (medium)")
        parser.add_argument("--seed", type=int, default=0, help="CLEVR: seed of captions and pools")

    def handle(self, *args, **opts):
        try:
            game = game_named(opts["game"])
        except UnknownGame as exc:
            raise CommandError(exc.args[0]) from None
        if opts["pool_size"] is not None and not 2 <= opts["pool_size"] <= 200:
            raise CommandError("--pool-size must be in 2..200")
        if opts["limit"] < 0 or opts["start"] < 0:
            raise CommandError("--limit and --start must not be negative")
        batch = None
        if opts["batch"]:
            batch = Batch.objects.filter(slug=opts["batch"]).first()
            if batch is None:
                raise CommandError(f"No batch {opts['batch']!r}")
            if batch.game_id != game.id:
                raise CommandError(f"Batch {batch.slug} plays {batch.game_id}, not {game.id}")
        items = import_items(game, opts["file"], opts)
        created = 0
        ids = []
        with transaction.atomic():
            for item in items:
                provenance = item.get("provenance", {"source": "import", "file": opts["file"]})
                key = f"{provenance.get('file', opts['file'])}:{provenance.get('key', len(ids))}"
                row, new = Content.objects.update_or_create(game_id=game.id, key=key,
                                                            defaults={"data": item, "provenance": provenance})
                created += new
                ids.append(row.pk)
            if batch is not None:
                batch.content_pool = sorted(set(batch.content_pool) | set(ids))
                batch.save(update_fields=["content_pool"])
        self.stdout.write(f"imported {len(ids)} {game.id} items ({created} new)"
                          + (f"; batch {batch.slug} now draws from {len(batch.content_pool)}" if batch else ""))
