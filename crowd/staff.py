"""Who on the staff may do what (issue 21, item 4): Django permissions, grouped into two roles.

``is_staff`` only lets a person log in to the admin; every staff page also needs a permission,
checked by :func:`staff_permission` (and by the admin itself for its model pages):

* ``crowd.research``        the research pages: batches, live monitor, match logs and replays,
                            comparison, export, lab links;
* ``crowd.launch_sandbox``  launch on MTurk's sandbox or as a Prolific draft study;
* ``crowd.review``          the review page (read only) and its reconciliation CSV;
* ``crowd.launch_live``     launch live on MTurk, publish or restart a Prolific study, add
                            assignments to a live HIT (real people, real money);
* ``crowd.pay``             approve, reject, pay bonuses, soft-block, change the bonus rule and budget.

The groups (made by crowd/migrations/0003_staff_groups.py, listed and edited in the admin under
Authentication and Authorization > Groups):

* ``researcher``: build and watch: ``research``, ``launch_sandbox``, ``review``, and in the admin
  add/change/view batches, studies and content, view matches, events, seats, participants, the
  launches, the pay audit and the bonus rules;
* ``payer``: launch live and pay: ``review``, ``launch_sandbox``, ``launch_live``, ``pay``, and in the
  admin add/change/view bonus rules, view the launches and the pay audit.

A person who builds the batches and pays is in both groups. A superuser has every permission.
Nobody in a group may delete anything in the admin (only superusers).
"""
from __future__ import annotations

from functools import wraps

from django.contrib.admin.views.decorators import staff_member_required
from django.shortcuts import render

RESEARCH = "crowd.research"
LAUNCH_SANDBOX = "crowd.launch_sandbox"
LAUNCH_LIVE = "crowd.launch_live"
REVIEW = "crowd.review"
PAY = "crowd.pay"

# codename -> what the admin shows (the StaffPower model's Meta.permissions; the migration copies it)
POWERS = [
    ("research", "Can use the research pages (monitor, match logs, comparison, export, lab links)"),
    ("launch_sandbox", "Can launch on the MTurk sandbox or as a Prolific draft"),
    ("review", "Can see the review page and the reconciliation CSV"),
    ("launch_live", "Can launch live on MTurk or publish on Prolific (real money)"),
    ("pay", "Can approve, reject, pay bonuses, block workers and change the bonus rule"),
]

# group -> permissions as "app_label.codename" (the migration makes these; tests compare them)
ROLES = {
    "researcher": [
        RESEARCH, LAUNCH_SANDBOX, REVIEW,
        "live.add_batch", "live.change_batch", "live.view_batch",
        "crowd.add_study", "crowd.change_study", "crowd.view_study",
        "live.add_content", "live.change_content", "live.view_content",
        "live.view_match", "live.view_matchevent", "live.view_seat", "crowd.view_participant",
        "crowd.view_bonusrule", "crowd.view_launch", "crowd.view_payaction",
    ],
    "payer": [
        REVIEW, LAUNCH_SANDBOX, LAUNCH_LIVE, PAY,
        "crowd.add_bonusrule", "crowd.change_bonusrule", "crowd.view_bonusrule",
        "crowd.view_launch", "crowd.view_payaction", "live.view_batch", "crowd.view_participant",
    ],
}

PERMISSIONS = tuple(f"crowd.{codename}" for codename, _ in POWERS)


def missing(user, perm: str) -> str:
    """Why ``user`` may not do what ``perm`` allows ('' when they may), in plain words."""
    if user.has_perm(perm):
        return ""
    label = dict(POWERS).get(perm.split(".", 1)[1], perm)
    groups = " or ".join(f"“{g}”" for g, perms in ROLES.items() if perm in perms) or "“payer”"
    return (f"Your account lacks the permission “{label[0].lower() + label[1:]}” ({perm}): ask an administrator "
            f"to add you to the {groups} group.")


def forbidden(request, reason: str):
    """The 403 page of a staff member who lacks a permission: which one, and which group has it."""
    return render(request, "research/forbidden.html",
                  {"title": "This page is not open to you", "status": 403, "reason": reason}, status=403)


def staff_permission(*perms: str):
    """A staff page: a logged-out visitor goes to the admin's login page (as
    ``staff_member_required``); a staff member with none of ``perms`` gets 403 with the permission
    it needs and the group that has it. The view carries ``staff_permissions`` so a test can walk
    every URL of the URL conf and find the pages that have none."""
    def decorate(view):
        @wraps(view)
        def checked(request, *args, **kwargs):
            if not any(request.user.has_perm(p) for p in perms):
                return forbidden(request, missing(request.user, perms[0]))
            return view(request, *args, **kwargs)

        guarded = staff_member_required(checked)
        guarded.staff_permissions = tuple(perms)
        return guarded

    return decorate
