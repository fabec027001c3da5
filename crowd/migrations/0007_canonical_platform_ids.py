"""Every stored MTurk and Prolific id in its one canonical form (issue 21, item 2).

Since commit d5c1b23 an id is checked and canonicalised at entry (crowd/platform_ids.py: MTurk
upper case, Prolific lower-case 24 hex digits). Rows stored before then may hold ``a1realworker3``
for ``A1REALWORKER3``, and so escape exclusion (crowd/studies.py), study membership and pay
matching, which all compare stored ids with a new entry's canonical one. This puts them in that form:

* ``Participant``: worker, assignment and HIT ids (mturk), worker, study and session ids
  (prolific), and the same ids in each ``assignments`` entry;
* ``OnboardingResult.worker_id`` (a quiz passed under one spelling counts for the other);
* ``Launch``: HIT and HIT type ids (mturk), study id (prolific) (the platforms' own, normally in
  form already).

An id that is not one of its platform's even in canonical form (a dot, a zero-width character) is
left as stored: no form is its. Where the canonical form would break a unique constraint (the same
worker entered one batch twice under two spellings, ``participant_unique_worker``; one onboarding
result twice, ``onboarding_worker_game_unique``) the row that already has the canonical form keeps
it (else the oldest row takes it) and the other row is left as stored; one line on stdout names
both rows for the operator. The review page lists such participants of a batch as "the same worker"
(crowd/payments.py:review_rows), whatever this migration left.

The forms are copied here from crowd/platform_ids.py as they are now (a migration must not change
when that module does); tests/crowd/test_platform_ids_migration.py checks that they agree.
Reverse: nothing (the old spellings are not kept, and no code needs them).
"""
from __future__ import annotations

import re

from django.db import migrations

MTURK_WORKER = re.compile(r"A[A-Z0-9]{1,63}")
MTURK_ENTITY = re.compile(r"[A-Z0-9]{1,64}")
PROLIFIC_ID = re.compile(r"[0-9a-f]{24}")

PARTICIPANT_IDS = {"mturk": {"worker_id": "worker", "assignment_id": "entity", "hit_id": "entity"},
                   "prolific": {"worker_id": "prolific", "study_id": "prolific", "session_id": "prolific"}}
ENTRY_IDS = {"mturk": {"assignment_id": "entity", "hit_id": "entity"},
             "prolific": {"study_id": "prolific", "session_id": "prolific"}}
LAUNCH_IDS = {"mturk": {"hit_id": "entity", "hit_type_id": "entity"}, "prolific": {"study_id": "prolific"}}


def canonical(kind: str, value):
    """``value`` in its canonical form, or ``value`` as stored when it is empty or not an id of
    ``kind`` even so (crowd/platform_ids.py: surrounding ASCII blanks dropped, ASCII only)."""
    if not isinstance(value, str) or not value:
        return value
    v = value.strip(" \t\r\n")
    if not v.isascii():
        return value
    if kind == "worker":
        v = v.upper()
        return v if MTURK_WORKER.fullmatch(v) else value
    if kind == "entity":
        v = v.upper()
        return v if MTURK_ENTITY.fullmatch(v) else value
    v = v.lower()
    return v if PROLIFIC_ID.fullmatch(v) else value


def _changes(row, ids: dict) -> dict:
    out = {}
    for field, kind in ids.items():
        new = canonical(kind, getattr(row, field))
        if new != getattr(row, field):
            out[field] = new
    return out


def _entries(assignments, ids: dict):
    """The participant's ``assignments`` list with each entry's ids canonical (None: unchanged)."""
    if not isinstance(assignments, list):
        return None
    changed, out = False, []
    for entry in assignments:
        if isinstance(entry, dict):
            new = {k: canonical(ids[k], v) if k in ids else v for k, v in entry.items()}
            changed = changed or new != entry
            entry = new
        out.append(entry)
    return out if changed else None


def _collision_first(rows, key):
    """Rows grouped by ``key`` (their canonical unique key): in each group, the row that keeps or
    takes the canonical form first (one already in it, else the oldest), then the others."""
    groups: dict = {}
    for row in rows:
        groups.setdefault(key(row), []).append(row)
    for group in groups.values():
        group.sort(key=lambda r: (not r.already, r.pk))
        yield group


def canonicalise(apps, schema_editor):
    Participant = apps.get_model("crowd", "Participant")
    OnboardingResult = apps.get_model("crowd", "OnboardingResult")
    Launch = apps.get_model("crowd", "Launch")

    people = list(Participant.objects.filter(platform__in=list(PARTICIPANT_IDS)).select_related("batch")
                  .order_by("pk"))
    for p in people:
        p.changes = _changes(p, PARTICIPANT_IDS[p.platform])
        p.already = "worker_id" not in p.changes
    for group in _collision_first(people, lambda p: (p.batch_id, p.platform,
                                                     p.changes.get("worker_id", p.worker_id))):
        keeper = group[0]
        for p in group[1:]:
            if "worker_id" in p.changes:
                # the rows by their keys only: a worker id stays out of the deploy's logs (the
                # admin and the review page show it to staff)
                print(f"crowd 0007: batch {p.batch.slug}: participant {p.pk} ({p.platform}) is "
                      f"participant {keeper.pk} in another spelling: left as stored "
                      f"(one worker entered twice; the review page lists both)")
                p.changes, p.collided = {}, True
    for p in people:
        if getattr(p, "collided", False):
            continue   # left as stored, all of it
        entries = _entries(p.assignments, ENTRY_IDS[p.platform])
        if entries is not None:
            p.changes["assignments"] = entries
        if p.changes:
            Participant.objects.filter(pk=p.pk).update(**p.changes)

    results = list(OnboardingResult.objects.filter(platform__in=["mturk", "prolific"]).order_by("pk"))
    for r in results:
        r.changes = _changes(r, {"worker_id": "worker" if r.platform == "mturk" else "prolific"})
        r.already = not r.changes
    for group in _collision_first(results, lambda r: (r.platform, r.changes.get("worker_id", r.worker_id),
                                                      r.game_id, r.kind, r.version)):
        keeper = group[0]
        for r in group[1:]:
            if r.changes:
                print(f"crowd 0007: onboarding result {r.pk} ({r.platform}, {r.game_id} {r.kind} "
                      f"{r.version}) is result {keeper.pk} in another spelling: left as stored")
                r.changes = {}
    for r in results:
        if r.changes:
            OnboardingResult.objects.filter(pk=r.pk).update(**r.changes)

    for launch in Launch.objects.filter(platform__in=list(LAUNCH_IDS)):
        changes = _changes(launch, LAUNCH_IDS[launch.platform])
        if changes:
            Launch.objects.filter(pk=launch.pk).update(**changes)


class Migration(migrations.Migration):

    dependencies = [
        ("crowd", "0006_end_questions"),
    ]

    operations = [
        migrations.RunPython(canonicalise, migrations.RunPython.noop, elidable=True),
    ]
