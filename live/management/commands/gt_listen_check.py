"""Refuse to serve on a public address what is only safe on one's own machine (issue 11, item 4).

``./run.sh`` calls ``manage.py gt_listen_check --host $HOST`` before it starts the server. A host
other than a loopback one (``0.0.0.0``, ``::``, a LAN address, a name) is refused, with the reason
and the ways out, while

* ``DEBUG`` is on: Django's debug pages show settings, code and tracebacks to whoever reaches them;
* the embedded demo's staff account ``admin`` still has the password ``admin`` (``gt_demo --admin``):
  anyone on the network could open the researcher pages, the admin and the exports.

``GT_ALLOW_PUBLIC_DEMO=1`` serves anyway (a network that is yours alone), with a warning.
"""
from __future__ import annotations

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from groundtalk_web import env
from groundtalk_web.loopback import is_loopback

ALLOW = "GT_ALLOW_PUBLIC_DEMO"


def demo_admin_exists() -> bool:
    user = get_user_model().objects.filter(username="admin", is_active=True).first()
    return user is not None and user.check_password("admin")


def public_risks() -> list[str]:
    risks = []
    if settings.DEBUG:
        risks.append("DEBUG is on (its error pages show settings and code to anyone)")
    if demo_admin_exists():
        risks.append("the demo staff account admin/admin exists (anyone could open the researcher pages)")
    return risks


class Command(BaseCommand):
    help = "Refuse a public listening address while DEBUG is on or admin/admin exists (run.sh calls it)."

    def add_arguments(self, parser):
        parser.add_argument("--host", required=True, help="the address the server is about to listen on")

    def handle(self, *args, host: str, **opts):
        if is_loopback(host):
            return
        risks = public_risks()
        if not risks:
            return
        if env.load().GT_ALLOW_PUBLIC_DEMO:
            self.stderr.write(f"warning: serving on {host} although {'; '.join(risks)} ({ALLOW}=1)")
            return
        raise CommandError(
            f"refusing to listen on {host}: {'; '.join(risks)}. Listen on 127.0.0.1 (leave HOST unset); or "
            f"turn DEBUG off and give admin a password of its own (manage.py changepassword admin; run.sh "
            f"with GT_DEMO_ADMIN=0 creates no admin/admin); or, on a network that is yours alone, set {ALLOW}=1.")
