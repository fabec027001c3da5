"""Write each game's agent table into its docs page from the registry (agents/docs.py)."""
from django.core.management.base import BaseCommand, CommandError

from agents import docs


class Command(BaseCommand):
    help = "Regenerate the agent tables of docs/games/*.md from agents.registry (--check: fail if stale)."

    def add_arguments(self, parser):
        parser.add_argument("--check", action="store_true", help="change nothing; exit 1 when a table is stale")

    def handle(self, *args, check=False, **options):
        if check:
            stale = docs.stale_pages()
            if stale:
                raise CommandError("stale agent tables (run `python manage.py agent_docs`): "
                                   + ", ".join(str(p.relative_to(docs.ROOT)) for p in stale))
            self.stdout.write("agent tables up to date")
            return
        for page in docs.write_pages():
            self.stdout.write(f"updated {page.relative_to(docs.ROOT)}")
