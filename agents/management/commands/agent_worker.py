"""Start a Celery model worker for some agents (one queue per agent).

    python manage.py agent_worker                      # every CPU agent, plus the control queue
    python manage.py agent_worker --agents colors_lexicon_speaker --concurrency 2
    python manage.py agent_worker --gpu                # GPU agents: solo pool, one worker per GPU

The CPU worker runs Celery's threads pool: 4 threads; when it serves LLM agents (``kind =
"openai"``, agents/llm/), whose turns mostly wait on their endpoints, the sum of their endpoints'
``max_concurrency`` (at least 32, at most 256; 256 when one has no limit). ``--concurrency`` sets it.

The command supervises its worker: Celery runs in a child process, which is started again (with
a growing pause, up to 10 s) whenever it exits without being asked to. A Redis restart can make
Celery's worker exit (kombu's ``restore_unacked`` fails on the lost connection); agents then come
back as soon as Redis does, without an operator. SIGTERM or SIGINT stop the child and the command.
``--no-supervise`` runs Celery in this process (for a supervisor of your own: systemd, Docker's
``restart: always``).
"""
from __future__ import annotations

import signal
import subprocess
import sys
import time

from django.core.management.base import BaseCommand, CommandError

from agents.registry import all_agents
from groundtalk_web.celery import app

THREADS = 4
LLM_THREADS = 32   # an LLM agent's turn waits on the network for seconds: many threads, little CPU
MAX_THREADS = 256


def default_threads(specs) -> int:
    """The threads of a CPU worker serving ``specs``: 4; with LLM agents at least 32, and enough
    for every endpoint's ``max_concurrency`` together (each call holds a thread while it waits;
    at most 256). The benchmark found 32 threads capping ``max_concurrency`` 128 at 32 calls in
    flight (docs/bench.md, "Issue 23: LLM agents")."""
    llm = [s.model for s in specs if s.model is not None and s.model.kind == "openai"]
    if not llm:
        return THREADS
    per_endpoint = {(m.endpoint, m.model): m.max_concurrency for m in llm}
    if any(limit == 0 for limit in per_endpoint.values()):   # an endpoint without a limit
        return MAX_THREADS
    return min(MAX_THREADS, max(LLM_THREADS, sum(per_endpoint.values())))


class Command(BaseCommand):
    help = "Run a Celery worker consuming the queues of the named agents (default: all CPU agents)."

    def add_arguments(self, parser):
        parser.add_argument("--agents", default="", help="comma-separated agent names")
        parser.add_argument("--gpu", action="store_true", help="the GPU agents, with the solo pool")
        parser.add_argument("--no-control", action="store_true", help="do not consume the control queue")
        parser.add_argument("--concurrency", type=int, default=None,
                            help=f"threads (default {THREADS}; with LLM agents, their endpoints' max_concurrency together, "
                                 f"{LLM_THREADS} to {MAX_THREADS})")
        parser.add_argument("--loglevel", default="warning")
        parser.add_argument("--no-supervise", action="store_true",
                            help="run Celery in this process instead of a supervised child")

    def handle(self, *args, **opts):
        specs = all_agents()
        # torch agents of the models file are served by ``model_worker --family`` (batched, warm)
        batched = {n for n, s in specs.items() if s.model is not None and s.model.kind == "torch"}
        names = [n for n in opts["agents"].split(",") if n] or [
            n for n, s in specs.items() if (s.device == "gpu") == opts["gpu"] and n not in batched]
        unknown = [n for n in names if n not in specs]
        if unknown:
            raise CommandError(f"Unknown agent(s): {', '.join(unknown)}")
        served_elsewhere = [n for n in names if n in batched]
        if served_elsewhere:
            raise CommandError("Model agent(s) " + ", ".join(served_elsewhere) + " are served by "
                               + ", ".join(sorted({f"`manage.py model_worker --family {specs[n].model.family_key}`"
                                                   for n in served_elsewhere})))
        queues = sorted({specs[n].queue_name for n in names} | (set() if opts["no_control"] else {"control"}))
        gpu = opts["gpu"] or any(specs[n].device == "gpu" for n in names)
        argv = ["worker", "-Q", ",".join(queues), "--loglevel", opts["loglevel"],
                "--pool", "solo" if gpu else "threads"]
        if not gpu:
            argv += ["--concurrency", str(opts["concurrency"] or default_threads([specs[n] for n in names]))]
        if opts["no_supervise"]:
            self.stdout.write(f"agent worker on queues: {', '.join(queues)}")
            app.worker_main(argv)
            return
        self.supervise([sys.executable, "-m", "celery", "-A", "groundtalk_web", *argv])

    def supervise(self, command: list[str], label: str = "agent worker", fatal_codes: tuple[int, ...] = ()) -> None:
        """Run ``command`` and start it again whenever it exits unasked (module docstring); an exit
        status in ``fatal_codes`` (a configuration error) ends the supervisor too."""
        stopping = False
        child: subprocess.Popen | None = None

        def stop(signum, frame):
            nonlocal stopping
            stopping = True
            if child is not None and child.poll() is None:
                child.send_signal(signal.SIGTERM)

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        pause = 0.5
        while not stopping:
            started = time.monotonic()
            child = subprocess.Popen(command)
            self.stdout.write(f"{label}: started (pid {child.pid}): {' '.join(command[3:])}")
            self.stdout.flush()
            code = child.wait()
            if stopping:
                break
            if code in fatal_codes:
                raise CommandError(f"{label}: exited with {code} (see the message above); not restarting")
            if time.monotonic() - started > 60:
                pause = 0.5   # it had been running fine: restart at once
            self.stderr.write(f"{label}: exited with {code}; starting it again in {pause:.1f} s")
            self.stderr.flush()
            time.sleep(pause)
            pause = min(pause * 2, 10.0)
        if child is not None:
            try:
                child.wait(30)
            except subprocess.TimeoutExpired:
                child.kill()
