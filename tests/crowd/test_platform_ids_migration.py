"""crowd/migrations/0007_canonical_platform_ids.py: ids stored before ids had one form (commit
d5c1b23) are put in it, so an old ``a1realworker3`` no longer escapes exclusion, membership or pay.

On the test database with Django's MigrationExecutor, inside the test's transaction (rolled back,
so the recorded migrations and the rows are as before): back to 0006, old spellings written (one
worker twice in one batch under two spellings, ids that are no id in any form), forward to 0007,
then the rows, the operator's lines and the exclusion of a new canonical entry are checked. The
migration is a RunPython only (no table changes), so it takes no lock beyond the rows it writes."""
from __future__ import annotations

import importlib

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from crowd import payments, platform_ids, studies
from crowd.models import Launch, OnboardingResult, Participant, Study
from tests.support.factories import batch as make_batch

pytestmark = pytest.mark.django_db

BEFORE, AFTER = ("crowd", "0006_end_questions"), ("crowd", "0007_canonical_platform_ids")
MIGRATION = importlib.import_module("crowd.migrations.0007_canonical_platform_ids")
ZW = "A1REAL\u200bWORKER3"          # a zero-width space: no id in any form
PROLIFIC_UPPER = "60F6ACB180A2B1D7000000AB"


def migrate(target) -> None:
    executor = MigrationExecutor(connection)
    executor.migrate([target])
    executor.loader.build_graph()


def test_old_spellings_take_the_one_form_and_collisions_are_left_and_named(capsys):
    migrate(BEFORE)
    old_study = Study.objects.create(name="earlier study")
    earlier = make_batch(slug="earlier")
    old_study.batches.add(earlier)
    later = make_batch(slug="later")
    later.excluded_studies.add(old_study)
    P = Participant.objects.create
    old = P(batch=earlier, platform="mturk", worker_id="a1realworker3", assignment_id="3abcassign",
            hit_id=" 3hitone ", submit_to="https://www.mturk.com",
            assignments=[{"assignment_id": "3oldassign", "hit_id": "3hitone", "session_id": "", "study_id": "",
                          "at": "2026-01-01T00:00:00+00:00", "why": "replaced by a new one before finishing"}])
    twice_canonical = P(batch=earlier, platform="mturk", worker_id="A2TWICE", assignment_id="3TWICEA", hit_id="3HITONE")
    twice_other = P(batch=earlier, platform="mturk", worker_id="a2twice", assignment_id="3twiceb", hit_id="3hitone")
    oldest = P(batch=earlier, platform="mturk", worker_id="a3both", assignment_id="3bothA", hit_id="3hitone")
    newer = P(batch=earlier, platform="mturk", worker_id="A3Both", assignment_id="3bothB", hit_id="3hitone")
    dotted = P(batch=earlier, platform="mturk", worker_id="A1REALWORKER3.", assignment_id="3dot.", hit_id="3hitone")
    hidden = P(batch=earlier, platform="mturk", worker_id=ZW, assignment_id="3zw", hit_id="3hitone")
    pro = P(batch=earlier, platform="prolific", worker_id=PROLIFIC_UPPER, study_id=PROLIFIC_UPPER.replace("AB", "CD"),
            session_id=PROLIFIC_UPPER.replace("AB", "EF"))
    lab = P(batch=earlier, platform="lab", worker_id="Lab.Name")
    quiz = OnboardingResult.objects.create(platform="mturk", worker_id="a1realworker3", game_id="colors_v1",
                                           kind="quiz", version="1", passed=True)
    quiz_twice = [OnboardingResult.objects.create(platform="mturk", worker_id=w, game_id="colors_v1", kind="quiz",
                                                  version="1") for w in ("A2TWICE", "a2Twice")]
    launch = Launch.objects.create(batch=earlier, platform="mturk", hit_id="3hitone", hit_type_id="3typeone",
                                   live=True, status="sent")
    # before: the worker's new, canonical entry is not seen to have taken part
    assert studies.excluding_studies(later, platform="mturk", worker_id="A1REALWORKER3") == []

    migrate(AFTER)
    out = capsys.readouterr().out.splitlines()

    row = Participant.objects.get(pk=old.pk)
    assert (row.worker_id, row.assignment_id, row.hit_id) == ("A1REALWORKER3", "3ABCASSIGN", "3HITONE")
    assert row.assignments[0]["assignment_id"] == "3OLDASSIGN" and row.assignments[0]["hit_id"] == "3HITONE"
    assert row.assignments[0]["why"] == "replaced by a new one before finishing"
    # the same worker twice in one batch: the canonical one keeps it, the other is left as stored, named
    assert Participant.objects.get(pk=twice_canonical.pk).worker_id == "A2TWICE"
    left = Participant.objects.get(pk=twice_other.pk)
    assert (left.worker_id, left.assignment_id) == ("a2twice", "3twiceb")
    # neither in form: the oldest takes it
    assert Participant.objects.get(pk=oldest.pk).worker_id == "A3BOTH"
    assert Participant.objects.get(pk=newer.pk).worker_id == "A3Both"
    named = [line for line in out if line.startswith("crowd 0007: batch earlier:")]
    assert len(named) == 2
    assert any(f"participant {twice_other.pk} " in line and f"participant {twice_canonical.pk} " in line
               for line in named)
    assert any(f"participant {newer.pk} " in line and f"participant {oldest.pk} " in line for line in named)
    # no id in any form: left as stored
    assert Participant.objects.get(pk=dotted.pk).worker_id == "A1REALWORKER3."
    assert Participant.objects.get(pk=dotted.pk).assignment_id == "3dot."
    assert Participant.objects.get(pk=hidden.pk).worker_id == ZW
    assert Participant.objects.get(pk=hidden.pk).assignment_id == "3ZW"
    p = Participant.objects.get(pk=pro.pk)
    assert (p.worker_id, p.study_id, p.session_id) == (PROLIFIC_UPPER.lower(), PROLIFIC_UPPER.replace("AB", "CD").lower(),
                                                       PROLIFIC_UPPER.replace("AB", "EF").lower())
    assert Participant.objects.get(pk=lab.pk).worker_id == "Lab.Name"
    assert OnboardingResult.objects.get(pk=quiz.pk).worker_id == "A1REALWORKER3"
    assert [OnboardingResult.objects.get(pk=r.pk).worker_id for r in quiz_twice] == ["A2TWICE", "a2Twice"]
    assert any(f"onboarding result {quiz_twice[1].pk} " in line for line in out)
    # no worker id in what the migration prints (a deploy's log)
    assert not any(w in line.lower() for line in out for w in ("a2twice", "a3both", "a1realworker3"))
    assert (Launch.objects.get(pk=launch.pk).hit_id, Launch.objects.get(pk=launch.pk).hit_type_id) == \
        ("3HITONE", "3TYPEONE")

    # the point: the worker's new entry, in the one form, is now excluded and a member
    assert studies.excluding_studies(later, platform="mturk", worker_id="A1REALWORKER3") == ["earlier study"]
    with pytest.raises(studies.Excluded):
        studies.check_not_excluded(later, platform="mturk", worker_id=platform_ids.mturk_worker("a1realworker3"))
    # the review page names the participants the migration left, and the ids no form fits
    rows = {r.participant.pk: r for r in payments.review_rows(earlier)}
    assert [o.pk for o in rows[twice_other.pk].same_worker] == [twice_canonical.pk]
    assert [o.pk for o in rows[twice_canonical.pk].same_worker] == [twice_other.pk]
    assert [o.pk for o in rows[newer.pk].same_worker] == [oldest.pk]
    assert rows[dotted.pk].bad_id and rows[hidden.pk].bad_id and not rows[old.pk].bad_id
    assert rows[old.pk].same_worker == []

    # reverse: nothing to undo
    migrate(BEFORE)
    assert Participant.objects.get(pk=old.pk).worker_id == "A1REALWORKER3"
    migrate(AFTER)


@pytest.mark.parametrize("kind, value", [
    ("worker", "a1realworker3"), ("worker", " A1B2 "), ("worker", "A1REALWORKER3."), ("worker", ZW),
    ("worker", "B123"), ("worker", "A"), ("entity", "3abc"), ("entity", "3ab-c"), ("entity", "Ａ1"),
    ("prolific", PROLIFIC_UPPER), ("prolific", PROLIFIC_UPPER[:-1]), ("prolific", PROLIFIC_UPPER + "."),
])
def test_the_migrations_forms_are_platform_ids_forms(kind, value):
    """The migration keeps its own copy of the forms (a migration must not change with the code):
    it agrees with crowd/platform_ids.py, and leaves what that refuses as stored."""
    check = {"worker": platform_ids.mturk_worker, "entity": platform_ids.mturk_entity,
             "prolific": platform_ids.prolific}[kind]
    try:
        expected = check(value)
    except platform_ids.BadId:
        expected = value
    assert MIGRATION.canonical(kind, value) == expected
