"""Everything ``./run.sh`` does before it starts its processes, in one Django process (each
``manage.py`` costs a Django start-up of seconds of CPU):

1. the listening address first, before any table is made: a public ``--host`` is refused while
   DEBUG is on, admin/admin exists or this run's demo would create it (``--demo --admin`` on the
   embedded demo), unless GT_ALLOW_PUBLIC_DEMO=1 (``gt_listen_check``'s check and messages);
2. ``migrate``;
3. with ``--demo``, the demo batches as ``gt_demo`` loads them (``--admin``: and admin/admin, embedded only);
4. last, for the script, lines of the form ``key=value`` (values: family keys, which the models file
   allows only as ``[a-z][a-z0-9_-]*``, space-separated)::

       torch=1                      # torch is installed (found, not imported: this is the web's Python)
       families=KEY KEY ...         # the models file's torch families (manage.py model_families)
       cpu_families=KEY ...         # those on the CPU (model_families --device cpu)
       gpu_families=KEY ...         # those on a CUDA device (model_families --device gpu)

    python manage.py prepare_run --host 127.0.0.1 --demo --admin
"""
from __future__ import annotations

import importlib.util

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from agents.model_config import ModelConfigError
from agents.serving.server import family_keys
from live.management.commands.gt_listen_check import check_listen_address


def torch_installed() -> bool:
    """Whether torch can be imported here, without importing it (the web process never does)."""
    return importlib.util.find_spec("torch") is not None


def family_lines() -> list[str]:
    """``families=``, ``cpu_families=`` and ``gpu_families=`` lines (keys sorted, space-separated)."""
    try:
        return [f"{name}={' '.join(family_keys(device))}"
                for name, device in (("families", None), ("cpu_families", "cpu"), ("gpu_families", "gpu"))]
    except ModelConfigError as e:
        raise CommandError(str(e)) from e


class Command(BaseCommand):
    help = ("run.sh's preparation in one process: refuse an unsafe public --host (before migrating), migrate, "
            "load the demo (--demo [--admin]), print torch=, families=, cpu_families=, gpu_families= lines.")

    def add_arguments(self, parser):
        parser.add_argument("--host", required=True, help="the address the server is about to listen on")
        parser.add_argument("--demo", action="store_true", help="load the demo batches (manage.py gt_demo)")
        parser.add_argument("--admin", action="store_true",
                            help="with --demo: create admin/admin as gt_demo --admin does (embedded mode only)")

    def handle(self, *args, host: str, demo: bool, admin: bool, **opts):
        if admin and not demo:
            raise CommandError("--admin creates the demo's staff account: give it with --demo.")
        warning = check_listen_address(host, creates_admin=demo and admin)
        if warning:
            self.stderr.write(warning)
        call_command("migrate", interactive=False, verbosity=0, stdout=self.stdout, stderr=self.stderr)
        if demo:
            call_command("gt_demo", admin=admin, stdout=self.stdout, stderr=self.stderr)
        self.stdout.write(f"torch={int(torch_installed())}")
        for line in family_lines():
            self.stdout.write(line)
