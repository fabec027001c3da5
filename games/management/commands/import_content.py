"""Import recorded stimuli as stored content, with provenance, and optionally attach them to a batch.

    python manage.py import_content codraw CoDraw_1_0.json [--batch codraw-pilot] [--limit 200]

A batch with a content pool draws each new match's content from it (the least used first)
instead of generating it from a seed.
"""
from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from games.management.commands.simulate import load_content_file, resolve_game
from games.models import Batch, Content


class Command(BaseCommand):
    help = "Store a game's recorded content (e.g. CoDraw scenes) and optionally give it to a batch."

    def add_arguments(self, parser):
        parser.add_argument("game")
        parser.add_argument("file")
        parser.add_argument("--batch", default="", help="add the imported items to this batch's content pool")
        parser.add_argument("--limit", type=int, default=0)

    def handle(self, *args, **opts):
        game = resolve_game(opts["game"])
        items = load_content_file(game, opts["file"])
        if opts["limit"]:
            items = items[:opts["limit"]]
        batch = None
        if opts["batch"]:
            batch = Batch.objects.filter(slug=opts["batch"]).first()
            if batch is None:
                raise CommandError(f"No batch {opts['batch']!r}")
            if batch.game_id != game.id:
                raise CommandError(f"Batch {batch.slug} plays {batch.game_id}, not {game.id}")
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
