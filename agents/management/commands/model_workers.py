"""Run the batched model workers of several torch families in one process, a thread each
(agents/serving/group.py): what ``run.sh`` and docker-compose start for the CPU families on the
full stack.

    python manage.py model_workers --device cpu                 # every CPU family of the models file
    python manage.py model_workers --family colors_neural_l0 --family codraw_neural_drawer

Each family is served as ``model_worker --family K`` serves it (warmed up before it consumes
``model.<family_key>``, batched, heartbeats). A family that cannot load is named on stderr and the
others are served. Supervised like ``model_worker`` (``--no-supervise`` for systemd or Docker);
when no family can load, or none is named, it ends with the reason (exit status 2), without restarts.
"""
from __future__ import annotations

import logging
import sys

from django.core.management.base import BaseCommand, CommandError

from agents.management.commands.agent_worker import Command as AgentWorkerCommand
from agents.model_config import ModelConfigError
from agents.serving.group import serve_group
from agents.serving.server import torch_families


class Command(BaseCommand):
    help = "Run the model workers of several torch families in one process (--device cpu: every CPU family)."

    def add_arguments(self, parser):
        parser.add_argument("--family", action="append", default=[], help="a family_key (repeat it)")
        parser.add_argument("--device", choices=["cpu", "gpu"], default=None,
                            help="every family on the CPU (or on a CUDA device) of the models file")
        parser.add_argument("--timings", default="", help="per-turn timings: one file per family, <path>.<family_key>")
        parser.add_argument("--loglevel", default="warning")
        parser.add_argument("--no-supervise", action="store_true",
                            help="run the workers in this process instead of a supervised child")

    def handle(self, *args, **opts):
        try:
            families = torch_families(opts["family"] or None)
        except ModelConfigError as exc:
            raise CommandError(str(exc)) from None
        keys = [k for k, configs in sorted(families.items())
                if opts["device"] is None or (configs[0].device == "cpu") == (opts["device"] == "cpu")]
        if not keys:
            raise CommandError("No torch family to serve (the models file has none"
                               f"{' on ' + opts['device'] if opts['device'] else ''}).")
        if not opts["no_supervise"]:
            command = [sys.executable, sys.argv[0], "model_workers", "--no-supervise", "--loglevel", opts["loglevel"]]
            for key in keys:
                command += ["--family", key]
            if opts["timings"]:
                command += ["--timings", opts["timings"]]
            AgentWorkerCommand.supervise(self, command, label="model workers", fatal_codes=(2,))
            return
        logging.basicConfig(level=opts["loglevel"].upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
        try:
            serve_group(keys, timings_path=opts["timings"] or None)
        except ModelConfigError as exc:
            self.stderr.write(f"model workers: {exc}")
            sys.exit(2)
