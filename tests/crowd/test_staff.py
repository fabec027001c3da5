"""Staff powers (issue 21, item 4): ``is_staff`` opens no staff page by itself; each page needs its
permission (crowd/staff.py), held through the groups "researcher" and "payer" that the migration
crowd/0003_staff_groups made.

The walk takes every URL of the URL conf: a page is either on the list of pages a worker (or
anyone) may open, or it must name its permission, answer 403 to a staff member without it and
work for one with it. A new view that forgets the check fails here."""
from __future__ import annotations

import importlib
from types import SimpleNamespace

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.migrations.loader import MigrationLoader
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from crowd import mturk, staff
from crowd.models import BonusRule, Launch, PayAction
from tests.support import crowd_helpers as h
from tests.support import play
from tests.support.staff_users import staff_user

pytestmark = pytest.mark.django_db

# Pages for workers, the demo and anyone: no staff permission (by URL name).
PUBLIC = {"home", "batch_entry", "demo_entry", "participant", "participant_status", "device_start",
          "device_finish", "match_play", "match_partner_gone", "match_turn", "match_end_stalled",
          "clevr_scene_image", "action_schema", "codraw_art_config", "codraw_art_file", None}


def patterns(resolver=None, prefix=""):
    """(route, pattern) of every URL outside the admin (the admin checks model permissions itself)."""
    for p in (resolver or get_resolver()).url_patterns:
        route = prefix + str(p.pattern)
        if isinstance(p, URLResolver):
            if route.startswith("admin/"):
                continue
            yield from patterns(p, route)
        elif isinstance(p, URLPattern):
            yield route, p


def staff_patterns():
    return [(route, p) for route, p in patterns() if p.name not in PUBLIC]


@pytest.fixture
def world():
    b = h.batch(entry_kinds=["mturk", "lab"])
    h.participant(b, "W1", outcome={"correct": 2})
    launch = Launch.objects.create(batch=b, platform="mturk", hit_id="HIT1", status="sent")
    gw = play.guesswhich()
    cd = play.codraw(pieces=2)
    colors = play.colors()
    return {"batch": b, "launch": launch, "gw": gw, "codraw": cd, "colors": colors}


def url_for(route: str, p: URLPattern, w: dict) -> str:
    """The route with each argument filled with something that exists."""
    kwargs = {}
    for name in p.pattern.converters:
        if name == "slug":
            kwargs[name] = w["batch"].slug
        elif name == "pk":
            kwargs[name] = w["launch"].pk
        elif name == "match_id":
            kwargs[name] = (w["gw"] if "img" in route else w["codraw"] if "codraw" in route or "replay" in route
                            else w["colors"]).id
        elif name == "image_id":
            kwargs[name] = w["gw"].content["secret_id"]
        elif name in ("seq", "round_no"):
            kwargs[name] = 1 if name == "seq" else 0
        else:
            raise AssertionError(f"the walk does not know how to fill <{name}> of {route}: teach url_for")
    return reverse(p.name, kwargs=kwargs)


def client_as(client, user):
    client.force_login(user)
    return client


def with_perm(username: str, perm: str):
    user = get_user_model().objects.create_user(username, password="pw", is_staff=True)
    app, codename = perm.split(".")
    user.user_permissions.add(Permission.objects.get(content_type__app_label=app, codename=codename))
    return get_user_model().objects.get(pk=user.pk)   # no permission cache


def test_every_staff_page_names_a_permission():
    found = staff_patterns()
    assert len(found) >= 14, [r for r, _ in found]
    missing = [route for route, p in found if not getattr(p.callback, "staff_permissions", None)]
    assert not missing, f"staff pages without a permission check (crowd.staff.staff_permission): {missing}"
    for route, p in found:
        for perm in p.callback.staff_permissions:
            assert perm in staff.PERMISSIONS, (route, perm)


def test_every_staff_page_is_403_without_its_permission_and_works_with_it(client, world, rec):
    nobody = staff_user("staff-no-group", roles=())
    for i, (route, p) in enumerate(staff_patterns()):
        url = url_for(route, p, world)
        client.logout()
        r = client.get(url)
        assert r.status_code == 302 and "/admin/login/" in r["Location"], (url, r.status_code)
        client_as(client, nobody)
        for method in (client.get, client.post):
            r = method(url)
            assert r.status_code == 403, (url, method.__name__, r.status_code)
            assert b"ask an administrator" in r.content and p.callback.staff_permissions[0].encode() in r.content
        user = with_perm(f"walker{i}", p.callback.staff_permissions[0])
        client_as(client, user)
        r = client.get(url)
        if r.status_code == 405:   # a POST-only page (it changes something): with the permission it acts
            r = client.post(url, {"action": "nothing"})
            assert r.status_code == 302, (url, r.status_code)
        else:
            assert r.status_code == 200, (url, r.status_code, r.content[:300])
    assert not PayAction.objects.exists()


def test_superuser_and_both_groups_open_every_staff_page(client, world, rec):
    for user in (get_user_model().objects.create_superuser("root", "", "pw"), staff_user("both")):
        client_as(client, user)
        for route, p in staff_patterns():
            url = url_for(route, p, world)
            r = client.get(url)
            assert r.status_code in (200, 405), (user.username, url, r.status_code)


def test_the_groups_are_the_roles_of_crowd_staff():
    """The migration's copy of the roles is crowd/staff.py's (its games.* permissions relabelled to
    the apps the models moved to in issue 22), and its function, followed by the move's relabelling
    (games 0015), makes exactly them."""
    migration = importlib.import_module("crowd.migrations.0003_staff_groups")
    move = importlib.import_module("games.migrations.0015_move_models_out")

    def relabelled(perm):
        app, codename = perm.split(".")
        return f"{move.MOVED[codename.split('_', 1)[1]]}.{codename}" if app == "games" else perm

    assert {name: [relabelled(p) for p in perms] for name, perms in migration.ROLES.items()} == staff.ROLES
    assert migration.POWERS == staff.POWERS
    Group.objects.filter(name__in=list(staff.ROLES)).delete()
    loader = MigrationLoader(connection)
    migration.make_groups(loader.project_state(("crowd", "0003_staff_groups")).apps, None)
    # make_groups made games.* content types beside today's live.* and crowd.* ones: the move folds them in
    move.forwards(loader.project_state(("games", "0015_move_models_out")).apps, SimpleNamespace(connection=connection))
    assert not ContentType.objects.filter(app_label="games").exists()
    for name, perms in staff.ROLES.items():
        held = {f"{p.content_type.app_label}.{p.codename}" for p in Group.objects.get(name=name).permissions.all()}
        assert held == set(perms), name
    researcher = staff_user("r", roles=("researcher",))
    payer = staff_user("p", roles=("payer",))
    assert researcher.has_perm(staff.RESEARCH) and not researcher.has_perm(staff.PAY)
    assert not researcher.has_perm(staff.LAUNCH_LIVE) and not researcher.has_perm("crowd.change_bonusrule")
    assert payer.has_perm(staff.PAY) and payer.has_perm(staff.LAUNCH_LIVE) and not payer.has_perm(staff.RESEARCH)
    assert not any(u.has_perm(f"live.delete_{m}") for u in (researcher, payer) for m in ("batch", "match"))


def launch_form(**kw):
    d = dict(platform="mturk", target="live", confirm_live="on", title="Colors", description="Play", keywords="g",
             reward_cents="150", places="4", minutes="10", duration_minutes="60", lifetime_hours="24",
             auto_approve_hours="72", locales="US", min_approval_rate="98", min_approved_hits="100",
             block_qualification_id="", exclude_qualifications="", allow_list="", block_list="")
    d.update(kw)
    return d


def test_a_researcher_cannot_launch_live_pay_or_change_the_rule(client, world, rec):
    """The researcher builds and watches: the review page opens read-only; launching live, any pay
    action and the bonus rule answer 403 and send nothing."""
    b = world["batch"]
    client_as(client, staff_user("res", roles=("researcher",)))
    r = client.post(f"/research/batches/{b.slug}/launch/", launch_form(), secure=True)
    assert r.status_code == 403 and b"crowd.launch_live" in r.content and b"payer" in r.content
    assert Launch.objects.count() == 1
    assert b'id="sandbox-only"' in client.get(f"/research/batches/{b.slug}/launch/").content
    page = client.get(f"/research/batches/{b.slug}/review/")
    assert page.status_code == 200 and b'id="read-only"' in page.content and b'id="apply" disabled' in page.content
    p = b.participants.get()
    for data in ({"action": "approve", "p": [p.pk]}, {"action": "reject", "p": [p.pk], "reason": "no"},
                 {"action": "bonus", "p": [p.pk]},
                 {"form": "rule", "rule-kind": "colors_accuracy", "rule-cents_per_unit": "5", "rule-cap_cents": "50",
                  "rule-budget_cents": "500"}):
        r = client.post(f"/research/batches/{b.slug}/review/", data)
        assert r.status_code == 403 and b"crowd.pay" in r.content, data
    assert not PayAction.objects.exists() and not BonusRule.objects.filter(batch=b).exists()
    launch = world["launch"]
    Launch.objects.filter(pk=launch.pk).update(live=True)
    r = client.post(f"/research/batches/{b.slug}/launch/{launch.pk}/", {"action": "expire"})
    assert r.status_code == 403
    assert Launch.objects.get(pk=launch.pk).status == "sent"
    changes = {"CreateHITType", "CreateHITWithHITType", "ApproveAssignment", "RejectAssignment", "SendBonus",
               "UpdateExpirationForHIT", "CreateAdditionalAssignmentsForHIT", "AssociateQualificationWithWorker"}
    assert not changes & set(rec.ops()), rec.ops()


def test_a_payer_launches_live_and_pays(client, world, monkeypatch):
    """The payer gets past the permission (the live launch reaches the form's own checks; the stubbed
    MTurk sees the HIT)."""
    mt, stub = h.stubbed_mturk()
    monkeypatch.setattr(mturk, "client", lambda live=False: mt)
    b = world["batch"]
    client_as(client, staff_user("pay", roles=("payer",)))
    stub.add_response("create_hit_type", {"HITTypeId": "HT9"}, None)
    stub.add_response("create_hit_with_hit_type", {"HIT": {"HITId": "HIT9", "HITTypeId": "HT9"}}, None)
    with stub:
        r = client.post(f"/research/batches/{b.slug}/launch/", launch_form(), secure=True)
    assert r.status_code == 302, r.content[:500]
    assert Launch.objects.get(hit_id="HIT9").live is True
    assert client.get("/research/").status_code == 403   # the research pages are the researcher's
    assert b'id="sandbox-only"' not in client.get(f"/research/batches/{b.slug}/launch/").content


def test_admin_models_need_their_permissions(client, world):
    """The admin checks model permissions: staff without a group see no model; the researcher sees
    the batches and the pay audit but cannot change a bonus rule; the payer can."""
    nobody = client_as(client, staff_user("adm-none", roles=()))
    models = [m for m in admin.site._registry if m._meta.app_label in ("live", "crowd", "auth")]
    for model in models:
        url = f"/admin/{model._meta.app_label}/{model._meta.model_name}/"
        assert nobody.get(url).status_code == 403, url
    rule = h.rule(world["batch"])
    client_as(client, staff_user("adm-res", roles=("researcher",)))
    assert client.get("/admin/live/batch/").status_code == 200
    assert client.get("/admin/crowd/payaction/").status_code == 200
    assert client.get("/admin/auth/user/").status_code == 403
    change = f"/admin/crowd/bonusrule/{rule.pk}/change/"
    r = client.post(change, {"batch": rule.batch_id, "kind": "colors_accuracy", "cents_per_unit": "400",
                             "cap_cents": "10000", "budget_cents": "1000000"})
    assert r.status_code == 403
    client_as(client, staff_user("adm-pay", roles=("payer",)))
    r = client.post(change, {"batch": rule.batch_id, "kind": "colors_accuracy", "cents_per_unit": "20",
                             "cap_cents": "60", "budget_cents": "600"})
    assert r.status_code == 302
    rule.refresh_from_db()
    assert (rule.cap_cents, rule.budget_cents) == (60, 600)


def test_the_admin_lists_each_accounts_roles(admin_client):
    staff_user("ann", roles=("researcher",))
    staff_user("bob", roles=("researcher", "payer"))
    staff_user("cy", roles=())
    page = admin_client.get("/admin/auth/user/").content.decode()
    assert "roles (groups)" in page.lower() and "researcher, payer" in page.replace("payer, researcher", "researcher, payer")
    assert "none: no staff page opens" in page and "superuser: every permission" in page
    group = Group.objects.get(name="payer")
    page = admin_client.get(f"/admin/auth/group/{group.pk}/change/").content.decode()
    assert "Can launch live on MTurk or publish on Prolific (real money)" in page
