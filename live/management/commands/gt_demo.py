"""Create the demo batches a newcomer can play at once (idempotent)."""
from __future__ import annotations

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from live import agent_seats
from live.models import Batch
from games.registry import GAMES


def demo_batches() -> list[dict]:
    """Every registered game's demo batches (``GameSpec.demo_batches``), as Batch fields."""
    return [{**batch, "game_id": spec.id} for spec in GAMES.values() for batch in spec.demo_batches]


class Command(BaseCommand):
    help = "Create demo batches (and, embedded only, an admin/admin staff account)."

    def add_arguments(self, parser):
        parser.add_argument("--admin", action="store_true", help="create admin/admin (embedded mode only)")

    def handle(self, *args, **opts):
        known = agent_seats.all_agents()
        for spec in demo_batches():
            if spec["game_id"] not in GAMES or any(a not in known for a in spec.get("agents", {}).values()):
                self.stdout.write(f"skipped batch {spec['slug']}: its game or agents are not installed")
                continue
            # open entry (?worker=NAME; /b/<slug>/demo/ makes a new name per visit) for the demo,
            # honoured only embedded, or on the full stack with GT_DEMO=1 on a loopback HOST (crowd/entry.py)
            batch, created = Batch.objects.update_or_create(slug=spec["slug"], defaults={**spec, "entry_kinds": ["demo"]})
            self.stdout.write(f"{'created' if created else 'updated'} batch {batch.slug}: /b/{batch.slug}/demo/"
                              " (demo links: embedded, or the full stack with GT_DEMO=1 on a loopback HOST)")
        if opts["admin"]:
            if not settings.EMBEDDED:
                self.stderr.write("--admin is for the embedded demo only; make a staff account with "
                                  "manage.py createsuperuser.")
                return
            User = get_user_model()
            if not User.objects.filter(username="admin").exists():
                User.objects.create_superuser("admin", "", "admin")
                self.stdout.write("created staff account admin / admin (embedded demo only)")
