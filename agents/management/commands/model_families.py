"""Print the family keys of the models file's torch agents, one a line (run.sh starts a model
worker for each on the full stack, and the model server in the embedded mode when there is any).

    python manage.py model_families              # every torch family
    python manage.py model_families --device cpu # those on the CPU only (or: gpu)
"""
from __future__ import annotations

from django.core.management.base import BaseCommand

from agents.serving.server import family_keys


class Command(BaseCommand):
    help = "Print the family_key of each torch family of the models file, one a line."

    def add_arguments(self, parser):
        parser.add_argument("--device", choices=["cpu", "gpu"], default=None,
                            help="only the families on the CPU, or only those on a CUDA device")

    def handle(self, *args, **opts):
        for key in family_keys(opts["device"]):
            self.stdout.write(key)
