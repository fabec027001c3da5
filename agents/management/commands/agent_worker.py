"""Start a Celery model worker for some agents (one queue per agent).

    python manage.py agent_worker                      # every CPU agent, plus the control queue
    python manage.py agent_worker --agents colors_lexicon_speaker --concurrency 2
    python manage.py agent_worker --gpu                # GPU agents: solo pool, one worker per GPU
"""
from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from agents.registry import all_agents


class Command(BaseCommand):
    help = "Run a Celery worker consuming the queues of the named agents (default: all CPU agents)."

    def add_arguments(self, parser):
        parser.add_argument("--agents", default="", help="comma-separated agent names")
        parser.add_argument("--gpu", action="store_true", help="the GPU agents, with the solo pool")
        parser.add_argument("--no-control", action="store_true", help="do not consume the control queue")
        parser.add_argument("--concurrency", type=int, default=4)
        parser.add_argument("--loglevel", default="warning")

    def handle(self, *args, **opts):
        from groundtalk_web.celery import app

        specs = all_agents()
        names = [n for n in opts["agents"].split(",") if n] or [
            n for n, s in specs.items() if (s.device == "gpu") == opts["gpu"]]
        unknown = [n for n in names if n not in specs]
        if unknown:
            raise CommandError(f"Unknown agent(s): {', '.join(unknown)}")
        queues = sorted({specs[n].queue_name for n in names} | (set() if opts["no_control"] else {"control"}))
        gpu = opts["gpu"] or any(specs[n].device == "gpu" for n in names)
        argv = ["worker", "-Q", ",".join(queues), "--loglevel", opts["loglevel"],
                "--pool", "solo" if gpu else "threads"]
        if not gpu:
            argv += ["--concurrency", str(opts["concurrency"])]
        self.stdout.write(f"agent worker on queues: {', '.join(queues)}")
        app.worker_main(argv)
