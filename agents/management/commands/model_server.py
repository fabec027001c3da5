"""Serve the models file's torch agents to the embedded mode's web process (agents/serving/server.py).

    python manage.py model_server                       # every torch family of the models file
    python manage.py model_server --family colors_neural_l0 --port 8765

It listens on 127.0.0.1 only (``--port``, default ``GT_MODEL_SERVER_PORT``: the web process posts
there, ``GT_MODEL_SERVER_URL``), loads and warms up each family in the background (``GET /health``
says which are ready; one that cannot load is named on stderr and the others are served) and
batches the concurrent turns of a family into one ``act_batch`` call. ``run.sh`` starts it in the
embedded mode when the models file has torch agents and torch is installed. On the full stack the
model workers serve these agents instead (``manage.py model_worker``).

Like ``model_worker`` it supervises: the server runs in a child process started again whenever it
exits unasked; ``--no-supervise`` runs it in this process. A models file without torch agents or
an unknown ``--family`` ends it at start with the reason (exit status 2), without restarts.
"""
from __future__ import annotations

import logging
import sys

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from agents.management.commands.agent_worker import Command as AgentWorkerCommand
from agents.model_config import ModelConfigError
from agents.serving.server import serve, torch_families


class Command(BaseCommand):
    help = "Serve the models file's torch agents on 127.0.0.1 for the embedded mode (batched)."

    def add_arguments(self, parser):
        parser.add_argument("--family", action="append", default=[],
                            help="a family_key to serve (repeat it; default: every torch family of the models file)")
        parser.add_argument("--port", type=int, default=None,
                            help="the port on 127.0.0.1 (default: GT_MODEL_SERVER_PORT)")
        parser.add_argument("--loglevel", default="warning")
        parser.add_argument("--no-supervise", action="store_true",
                            help="run the server in this process instead of a supervised child")

    def handle(self, *args, **opts):
        port = opts["port"] or settings.GT_MODEL_SERVER_PORT
        if not 1 <= port <= 65535:
            raise CommandError(f"--port must be between 1 and 65535, not {port}")
        try:
            families = torch_families(opts["family"] or None)
        except ModelConfigError as exc:
            raise CommandError(str(exc)) from None
        if not families:
            raise CommandError("The models file has no torch agent: the model server has nothing to serve.")
        if not opts["no_supervise"]:
            command = [sys.executable, sys.argv[0], "model_server", "--no-supervise", "--port", str(port),
                       "--loglevel", opts["loglevel"]]
            for key in opts["family"]:
                command += ["--family", key]
            AgentWorkerCommand.supervise(self, command, label="model server", fatal_codes=(2,))
            return
        logging.basicConfig(level=opts["loglevel"].upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
        try:
            serve(port, opts["family"] or None)
        except ModelConfigError as exc:
            self.stderr.write(f"model server: {exc}")
            sys.exit(2)
