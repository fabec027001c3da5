"""The move of the models out of games/ (issue 22): live/migrations/0001_initial.py and
0002_seat_excluded_studies.py, crowd/migrations/0004_moved_from_games.py and
games/migrations/0015_move_models_out.py change Django's state only; the tables keep their names,
columns, indexes and constraints, and the content types move from app "games" to "live" or "crowd",
so permissions, staff groups and admin log entries stay attached.

Data written through the historical models before the move reads back through the new models
after it, and the way back and forth again works.

The module runs on a database of its own, made and migrated here: its migrations back and forth
take locks on every moved table and the content types it checks are only those its own
migrations made, so neither the session's server and Celery worker (busy on the test database
with what an earlier test file left running) nor the rows an earlier file left behind can meet it
(issue 22: it failed in a parallel run that way)."""
from __future__ import annotations

from django.contrib.admin.models import LogEntry
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

import pytest

from crowd.models import (BonusRule, OnboardingResult, Participant, PayAction, PracticeRound,
                          QuestionnaireResponse, QuizAttempt, Study)
from live.models import Batch, Content, Match, MatchEvent, Seat
from tests.support.staff_users import staff_user

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(scope="module", autouse=True)
def own_database(django_db_setup, django_db_blocker):
    """A fresh PostgreSQL database, migrated, as the default connection's for this module; dropped
    after it. (Under SQLite the module keeps the test database: no server shares it.)"""
    from django.conf import settings
    from django.db import connections

    if connection.vendor != "postgresql":
        yield None
        return
    settings_dict = connection.settings_dict
    test_name = settings_dict["NAME"]
    own = f"{test_name}_migration"[:63]
    with django_db_blocker.unblock():
        with connection.cursor() as cur:
            cur.execute(f'DROP DATABASE IF EXISTS "{own}"')
            cur.execute(f'CREATE DATABASE "{own}"')
        connections.close_all()
        settings_dict["NAME"] = settings.DATABASES["default"]["NAME"] = own
    try:
        with django_db_blocker.unblock():
            call_command("migrate", verbosity=0, interactive=False)
        ContentType.objects.clear_cache()
        yield own
    finally:
        connections.close_all()
        settings_dict["NAME"] = settings.DATABASES["default"]["NAME"] = test_name
        ContentType.objects.clear_cache()
        with django_db_blocker.unblock():
            with connection.cursor() as cur:
                cur.execute(f'DROP DATABASE IF EXISTS "{own}"')


# The state just before the move; live had no migration then.
BEFORE = [("games", "0014_quiz_attempts"), ("crowd", "0003_staff_groups")]
MOVED = [Batch, Content, Match, Seat, MatchEvent, Participant, Study, OnboardingResult, QuizAttempt,
         QuestionnaireResponse, PracticeRound]


def migrate_before():
    """Back to the state before the move; its historical models."""
    executor = MigrationExecutor(connection)
    executor.migrate([*BEFORE, ("live", None)])
    executor.loader.build_graph()
    assert not any(app == "live" for app, _ in executor.loader.applied_migrations)
    return executor.loader.project_state([*BEFORE, ("admin", "0003_logentry_add_action_flag_choices")]).apps


def migrate_latest():
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
    executor.loader.build_graph()
    assert not executor.migration_plan(executor.loader.graph.leaf_nodes())
    ContentType.objects.clear_cache()


def write_before_the_move(apps) -> dict:
    """One of everything, through the historical models (app "games"), plus a staff group holding
    permissions on games.batch, a user in it and an admin log entry about the batch."""
    G = lambda name: apps.get_model("games", name)   # noqa: E731
    batch = G("Batch").objects.create(slug="moved", title="Moved", game_id="colors_v1")
    study = G("Study").objects.create(name="moved study")
    study.batches.add(batch)
    other = G("Batch").objects.create(slug="moved-2", title="Moved 2", game_id="colors_v1")
    other.excluded_studies.add(study)
    content = G("Content").objects.create(game_id="colors_v1", key="k1", data={"x": 1})
    worker = G("Participant").objects.create(batch=batch, platform="mturk", worker_id="W-MOVE")
    match = G("Match").objects.create(batch=batch, game_id="colors_v1", seed=7, content={"c": 1},
                                      state={"s": 1}, content_ref=content)
    G("Seat").objects.create(match=match, role="speaker", kind="human", participant=worker)
    G("Seat").objects.create(match=match, role="listener", kind="agent", agent_name="colors_lexicon_listener")
    G("MatchEvent").objects.create(match=match, seq=1, type="chat", actor="speaker", payload={"text": "hi"}, t=1)
    result = G("OnboardingResult").objects.create(platform="mturk", worker_id="W-MOVE", game_id="colors_v1",
                                                  kind="quiz", version="1", batch=batch)
    G("QuizAttempt").objects.create(result=result, participant=worker, number=1, seed=3, game_id="colors_v1")
    G("QuestionnaireResponse").objects.create(participant=worker, match=match, answers={"q": 5})
    C = lambda name: apps.get_model("crowd", name)   # noqa: E731
    C("BonusRule").objects.create(batch=batch, kind="colors_accuracy", cents_per_unit=5, cap_cents=50,
                                  budget_cents=500)
    C("PayAction").objects.create(participant=worker, kind="approve", key="move-approve")

    CT = apps.get_model("contenttypes", "ContentType")
    Permission = apps.get_model("auth", "Permission")
    batch_type, _ = CT.objects.get_or_create(app_label="games", model="batch")
    perms = [Permission.objects.get_or_create(content_type=batch_type, codename=codename,
                                              defaults={"name": f"Can {codename} batch"})[0]
             for codename in ("view_batch", "change_batch")]
    group = apps.get_model("auth", "Group").objects.create(name="move-test")
    group.permissions.add(*perms)
    user = apps.get_model("auth", "User").objects.create(username="mover", is_staff=True)
    user.groups.add(group)
    # a content type for live.content made before the move reached it (as post_migrate would): the
    # move folds it into games.content, keeping the permission its holder has
    early = CT.objects.create(app_label="live", model="content")
    early_perm = Permission.objects.create(content_type=early, codename="view_content", name="Can view content")
    apps.get_model("auth", "Group").objects.create(name="move-early").permissions.add(early_perm)
    CT.objects.get_or_create(app_label="games", model="content")
    log = apps.get_model("admin", "LogEntry").objects.create(
        user=user, content_type=batch_type, object_id=str(batch.pk), object_repr="moved", action_flag=2)
    return {"batch": batch.pk, "worker": worker.pk, "match": match.pk, "log": log.pk}


def check_after_the_move(ids: dict) -> None:
    batch = Batch.objects.get(slug="moved")
    assert batch.pk == ids["batch"]
    worker = Participant.objects.select_related("batch").get(worker_id="W-MOVE")
    assert worker.pk == ids["worker"] and worker.batch == batch
    match = Match.objects.select_related("batch", "content_ref").get(pk=ids["match"])
    assert match.batch == batch and match.content_ref.key == "k1" and match.state == {"s": 1}
    seat = Seat.objects.select_related("match__batch", "participant__batch").get(role="speaker")
    assert seat.match == match and seat.participant == worker and seat.participant.batch == batch
    assert [e.payload for e in match.events.all()] == [{"text": "hi"}]
    assert list(batch.participants.all()) == [worker]
    # joins across the two apps, both ways
    assert list(Participant.objects.filter(seats__match__events__type="chat", batch__slug="moved")) == [worker]
    assert list(Batch.objects.filter(matches__seats__participant__worker_id="W-MOVE")) == [batch]
    assert list(batch.studies.values_list("name", flat=True)) == ["moved study"]
    assert list(Study.objects.get(name="moved study").excluding_batches.values_list("slug", flat=True)) \
        == ["moved-2"]
    assert worker.quiz_attempts.get().result.batch == batch
    assert worker.questionnaire.match == match
    assert BonusRule.objects.get(batch__slug="moved").batch == batch
    assert PayAction.objects.select_related("participant__batch").get(key="move-approve").participant == worker
    assert list(worker.pay_actions.values_list("kind", flat=True)) == ["approve"]

    # the content types moved: permissions, groups and log entries with them
    assert not ContentType.objects.filter(app_label="games").exists()
    for model in MOVED:
        assert ContentType.objects.get_for_model(model).app_label == model._meta.app_label
    group = Group.objects.get(name="move-test")
    assert {f"{p.content_type.app_label}.{p.codename}" for p in group.permissions.all()} \
        == {"live.view_batch", "live.change_batch"}
    user = get_user_model().objects.get(username="mover")
    assert user.has_perm("live.view_batch") and user.has_perm("live.change_batch")
    assert not user.has_perm("games.view_batch") and not user.has_perm("live.delete_batch")
    early = Group.objects.get(name="move-early").permissions.get()
    assert (early.content_type.app_label, early.codename) == ("live", "view_content")
    assert ContentType.objects.filter(model="content").count() == 1
    assert LogEntry.objects.get(pk=ids["log"]).get_edited_object() == batch


def test_the_tables_keep_their_names_indexes_and_constraints(own_database):
    """Every moved model's table, index and constraint is the one the database has (no migration
    made them anew), the many-to-many tables kept their names, and no model change is pending."""
    if own_database:
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_database()")
            assert cursor.fetchone()[0] == own_database
    with connection.cursor() as cursor:
        tables = set(connection.introspection.table_names(cursor))
        for model in MOVED:
            table = model._meta.db_table
            assert table == f"games_{model._meta.model_name}" and table in tables
            in_db = connection.introspection.get_constraints(cursor, table)
            for item in [*model._meta.indexes, *model._meta.constraints]:
                assert item.name in in_db, (table, item.name)
            columns = {c.name for c in connection.introspection.get_table_description(cursor, table)}
            assert {f.column for f in model._meta.local_concrete_fields} == columns, table
    assert Batch.excluded_studies.through._meta.db_table == "games_batch_excluded_studies"
    assert Study.batches.through._meta.db_table == "games_study_batches"
    assert {"games_batch_excluded_studies", "games_study_batches"} <= tables
    call_command("makemigrations", "--check", "--dry-run", verbosity=0)   # exits non-zero on a change


def test_rows_written_before_the_move_read_back_after_it_and_back_again():
    try:
        apps = migrate_before()
        ids = write_before_the_move(apps)
        migrate_latest()
        check_after_the_move(ids)

        # backwards: the old states and content types again, the rows unchanged
        apps = migrate_before()
        assert apps.get_model("games", "Seat").objects.get(role="speaker").participant.batch.slug == "moved"
        old_group = apps.get_model("auth", "Group").objects.get(name="move-test")
        assert {(p.content_type.app_label, p.codename) for p in old_group.permissions.all()} \
            == {("games", "view_batch"), ("games", "change_batch")}
        CT = apps.get_model("contenttypes", "ContentType")
        # no moved model's content type is left under live/ (models added to live after the move,
        # e.g. ArmCounter, keep theirs: Django does not delete content types when migrating back)
        moved_live = {m._meta.model_name for m in MOVED if m._meta.app_label == "live"}
        assert not CT.objects.filter(app_label="live", model__in=moved_live).exists()
        assert CT.objects.filter(app_label="crowd", model="participant").count() == 0
        assert CT.objects.filter(app_label="games", model="participant").count() == 1

        migrate_latest()
        check_after_the_move(ids)
    finally:
        migrate_latest()


def test_the_old_admin_addresses_redirect_to_the_new_ones(client):
    """/admin/games/<model>/... (bookmarks, links from before the move) lands on the same admin page
    under the model's new app, which checks the permissions there."""
    moves = {"/admin/games/batch/7/change/?_changelist_filters=status%3Dopen":
             "/admin/live/batch/7/change/?_changelist_filters=status%3Dopen",
             "/admin/games/participant/?verification=refused": "/admin/crowd/participant/?verification=refused",
             "/admin/games/matchevent/": "/admin/live/matchevent/",
             "/admin/games/study/add/": "/admin/crowd/study/add/",
             "/admin/games/": "/admin/"}
    for old, new in moves.items():
        r = client.get(old)
        assert (r.status_code, r["Location"]) == (301, new), old
    assert client.get("/admin/games/bonusrule/").status_code == 404   # never a games model
    assert client.get("/admin/games/nosuch/").status_code == 404
    client.force_login(staff_user("adm-moved", roles=("researcher",)))
    assert client.get("/admin/games/batch/", follow=True).redirect_chain == [("/admin/live/batch/", 301)]
    assert client.get("/admin/live/batch/").status_code == 200
