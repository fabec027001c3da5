"""Create the demo batches a newcomer can play at once (idempotent)."""
from __future__ import annotations

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from games.models import Batch
from games.registry import GAMES

DEMO_BATCHES = [
    dict(slug="colors-human-human", title="Color game: two people", game_id="colors_v1",
         pairing=Batch.Pairing.HUMAN_HUMAN, max_wait_s=90, on_timeout=Batch.OnTimeout.AGENT,
         agents={"speaker": "colors_lexicon_speaker", "listener": "colors_pragmatic_listener"},
         config={"rounds": 10}, games_per_worker=1),
    dict(slug="colors-listen-to-agent", title="Color game: you listen, an agent speaks", game_id="colors_v1",
         pairing=Batch.Pairing.HUMAN_AGENT, human_roles=["listener"], agents={"speaker": "colors_lexicon_speaker"},
         config={"rounds": 10}),
    dict(slug="colors-speak-to-agent", title="Color game: you speak, an agent listens", game_id="colors_v1",
         pairing=Batch.Pairing.HUMAN_AGENT, human_roles=["speaker"], agents={"listener": "colors_pragmatic_listener"},
         config={"rounds": 10}),
]


class Command(BaseCommand):
    help = "Create demo batches (and, embedded only, an admin/admin staff account)."

    def add_arguments(self, parser):
        parser.add_argument("--admin", action="store_true", help="create admin/admin (embedded mode only)")

    def handle(self, *args, **opts):
        for spec in DEMO_BATCHES:
            if spec["game_id"] not in GAMES:
                continue
            batch, created = Batch.objects.update_or_create(slug=spec["slug"], defaults=spec)
            self.stdout.write(f"{'created' if created else 'updated'} batch {batch.slug}: /b/{batch.slug}/?worker=NAME")
        if opts["admin"]:
            if not settings.EMBEDDED:
                self.stderr.write("--admin is for the embedded demo only; use createsuperuser.")
                return
            User = get_user_model()
            if not User.objects.filter(username="admin").exists():
                User.objects.create_superuser("admin", "", "admin")
                self.stdout.write("created staff account admin / admin (embedded demo only)")
