"""Staff accounts for tests: ``is_staff`` opens no staff page by itself (crowd/staff.py); a test's
researcher is in the groups the migration crowd/0003_staff_groups makes.

A transactional test's flush empties every table, the migration's groups too (Django re-makes
content types and permissions after a flush, not data a migration wrote): ``ensure_groups`` makes
them again with the migration's own function."""
from __future__ import annotations

import importlib

from django.apps import apps
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

staff_groups_migration = importlib.import_module("crowd.migrations.0003_staff_groups")


def ensure_groups() -> None:
    if Group.objects.filter(name__in=list(staff_groups_migration.ROLES)).count() < len(staff_groups_migration.ROLES):
        staff_groups_migration.make_groups(apps, None)


def staff_user(username: str, password: str = "pw", roles=("researcher", "payer")):
    """A staff account (not a superuser) in ``roles``."""
    ensure_groups()
    user = get_user_model().objects.create_user(username, password=password, is_staff=True)
    user.groups.add(*Group.objects.filter(name__in=list(roles)))
    return user
