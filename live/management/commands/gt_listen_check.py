"""Refuse to serve on a public address what is only safe on one's own machine (issue 11, item 4).

``./run.sh`` makes this check first, before it migrates (``manage.py prepare_run --host $HOST``, which
calls :func:`check_listen_address`); ``manage.py gt_listen_check --host HOST`` makes it alone. A host
other than a loopback one (``0.0.0.0``, ``::``, a LAN address, a name) is refused, with the reason
and the ways out, while

* ``DEBUG`` is on: Django's debug pages show settings, code and tracebacks to whoever reaches them;
* the embedded demo's staff account ``admin`` still has the password ``admin`` (``gt_demo --admin``),
  or this run's demo is about to create it: anyone on the network could open the researcher pages,
  the admin and the exports.

``GT_ALLOW_PUBLIC_DEMO=1`` serves anyway (a network that is yours alone), with a warning.
"""
from __future__ import annotations

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import connection

from groundtalk_web import env
from groundtalk_web.loopback import is_loopback

ALLOW = "GT_ALLOW_PUBLIC_DEMO"


def users_table_exists() -> bool:
    """False on a database not migrated yet (``manage.py prepare_run`` checks before it migrates)."""
    return get_user_model()._meta.db_table in connection.introspection.table_names()


def demo_admin_exists() -> bool:
    if not users_table_exists():
        return False
    user = get_user_model().objects.filter(username="admin", is_active=True).first()
    return user is not None and user.check_password("admin")


def demo_admin_would_be_created() -> bool:
    """Whether ``gt_demo --admin`` would create admin/admin now (embedded only, no user ``admin`` yet)."""
    return settings.EMBEDDED and not (users_table_exists() and
                                      get_user_model().objects.filter(username="admin").exists())


def public_risks(creates_admin: bool = False) -> list[str]:
    """What makes a public address unsafe; ``creates_admin``: this run is about to run ``gt_demo --admin``."""
    risks = []
    if settings.DEBUG:
        risks.append("DEBUG is on (its error pages show settings and code to anyone)")
    if demo_admin_exists():
        risks.append("the demo staff account admin/admin exists (anyone could open the researcher pages)")
    elif creates_admin and demo_admin_would_be_created():
        risks.append("the demo staff account admin/admin exists once this run's demo creates it "
                     "(anyone could open the researcher pages)")
    return risks


def check_listen_address(host: str, creates_admin: bool = False) -> str | None:
    """Refuse (CommandError) a public ``host`` while :func:`public_risks` finds any, unless
    GT_ALLOW_PUBLIC_DEMO is set: then the warning to print is returned (None: nothing to say)."""
    if is_loopback(host):
        return None
    risks = public_risks(creates_admin)
    if not risks:
        return None
    if env.load().GT_ALLOW_PUBLIC_DEMO:
        return f"warning: serving on {host} although {'; '.join(risks)} ({ALLOW}=1)"
    raise CommandError(
        f"refusing to listen on {host}: {'; '.join(risks)}. Listen on 127.0.0.1 (leave HOST unset); or "
        f"turn DEBUG off and give admin a password of its own (manage.py changepassword admin; run.sh "
        f"with GT_DEMO_ADMIN=0 creates no admin/admin); or, on a network that is yours alone, set {ALLOW}=1.")


class Command(BaseCommand):
    help = "Refuse a public listening address while DEBUG is on or admin/admin exists (run.sh: prepare_run)."

    def add_arguments(self, parser):
        parser.add_argument("--host", required=True, help="the address the server is about to listen on")

    def handle(self, *args, host: str, **opts):
        warning = check_listen_address(host)
        if warning:
            self.stderr.write(warning)
