"""Start a model worker for one model family of the models file (agents/serving/worker.py).

    python manage.py model_worker --family colors_l0
    python manage.py model_worker --family colors_l0 --timings var/model-timings.jsonl

It loads the family's checkpoint on the configured device, runs a warm-up pass, and only then
consumes the family's queue ``model.<family_key>`` (and heartbeats, so batches with its agents are
served). Turns of concurrent matches are batched (``batch_size``, ``wait_ms``). One process per
family and GPU; torch is imported here, never in the web process.

Like ``agent_worker`` it supervises: the worker runs in a child process started again (with a
growing pause, up to 10 s) whenever it exits unasked; ``--no-supervise`` runs it in this process.
A bad configuration, a missing checkpoint or a CUDA device that is not there ends the command at
start with the reason (exit status 2), without restarts.
"""
from __future__ import annotations

import logging
import sys

from django.core.management.base import BaseCommand, CommandError

from agents.management.commands.agent_worker import Command as AgentWorkerCommand
from agents.registry import family_configs
from agents.model_config import ModelConfigError
from agents.serving.worker import serve


class Command(BaseCommand):
    help = "Run a batched model worker for one model family (--family KEY of the models file)."

    def add_arguments(self, parser):
        parser.add_argument("--family", required=True, help="the family_key of the models file's torch agents")
        parser.add_argument("--timings", default="", help="append per-turn timings (JSON lines) to this file")
        parser.add_argument("--loglevel", default="warning")
        parser.add_argument("--no-supervise", action="store_true",
                            help="run the worker in this process instead of a supervised child")

    def handle(self, *args, **opts):
        try:
            family_configs(opts["family"])
        except ModelConfigError as exc:
            raise CommandError(str(exc)) from None
        if not opts["no_supervise"]:
            command = [sys.executable, sys.argv[0], "model_worker", "--family", opts["family"], "--no-supervise",
                       "--loglevel", opts["loglevel"]]
            if opts["timings"]:
                command += ["--timings", opts["timings"]]
            AgentWorkerCommand.supervise(self, command, label="model worker", fatal_codes=(2,))
            return
        logging.basicConfig(level=opts["loglevel"].upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
        logging.getLogger().setLevel(opts["loglevel"].upper())
        if opts["timings"] or opts["loglevel"].lower() == "info":
            logging.getLogger("agents.serving.timings").setLevel(logging.INFO)

        try:
            serve(opts["family"], timings_path=opts["timings"] or None)
        except ModelConfigError as exc:
            self.stderr.write(f"model worker: {exc}")
            sys.exit(2)
