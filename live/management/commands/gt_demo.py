"""Create the demo batches a newcomer can play at once (idempotent)."""
from __future__ import annotations

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from live import agent_seats
from live.models import Batch
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
    dict(slug="codraw-human-human", title="CoDraw: two people draw a scene", game_id="codraw_v1",
         pairing=Batch.Pairing.HUMAN_HUMAN, max_wait_s=120, on_timeout=Batch.OnTimeout.AGENT,
         agents={"teller": "codraw_rule_teller", "drawer": "codraw_rule_drawer"}),
    dict(slug="codraw-tell-to-agent", title="CoDraw: you describe, an agent draws", game_id="codraw_v1",
         pairing=Batch.Pairing.HUMAN_AGENT, human_roles=["teller"], agents={"drawer": "codraw_rule_drawer"}),
    dict(slug="guesswhich-alice", title="GuessWhich: find the secret image by asking ALICE", game_id="guesswhich_v1",
         pairing=Batch.Pairing.HUMAN_AGENT, human_roles=["questioner"], agents={"answerer": "alice_exact"}),
    dict(slug="visdial-human-human", title="Visual dialog: ask about an image you cannot see", game_id="visdial_v1",
         pairing=Batch.Pairing.HUMAN_HUMAN, max_wait_s=120, on_timeout=Batch.OnTimeout.AGENT,
         agents={"questioner": "visdial_qbot", "answerer": "visdial_alice_exact"}),
]


class Command(BaseCommand):
    help = "Create demo batches (and, embedded only, an admin/admin staff account)."

    def add_arguments(self, parser):
        parser.add_argument("--admin", action="store_true", help="create admin/admin (embedded mode only)")

    def handle(self, *args, **opts):
        known = agent_seats.all_agents()
        for spec in DEMO_BATCHES:
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
