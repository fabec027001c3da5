"""Staff accounts for tests: ``is_staff`` opens no staff page by itself (crowd/staff.py); a test's
researcher is in the groups the migration crowd/0003_staff_groups makes.

A transactional test's flush empties every table, the migration's groups too (Django re-makes
content types and permissions after a flush, not data a migration wrote): ``ensure_groups`` makes
them again: the roles of crowd/staff.py, which the migration's copy (relabelled by the move of
issue 22, games/migrations/0015_move_models_out.py) equals (tests/crowd/test_staff.py)."""
from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission

from crowd.staff import ROLES


def ensure_groups() -> None:
    if Group.objects.filter(name__in=list(ROLES)).count() < len(ROLES):
        for name, perms in ROLES.items():
            group, _ = Group.objects.get_or_create(name=name)
            group.permissions.add(*[Permission.objects.get(content_type__app_label=app, codename=codename)
                                    for app, codename in (p.split(".", 1) for p in perms)])


def staff_user(username: str, password: str = "pw", roles=("researcher", "payer")):
    """A staff account (not a superuser) in ``roles``."""
    ensure_groups()
    user = get_user_model().objects.create_user(username, password=password, is_staff=True)
    user.groups.add(*Group.objects.filter(name__in=list(roles)))
    return user
