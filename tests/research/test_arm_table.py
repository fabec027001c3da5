"""The comparison's CSV of a batch's arms (research/arm_table.py): one row per ended match with its
arm, order, position, seed and the game's metrics, the people pseudonymised; staff only."""
from __future__ import annotations

import csv
import io

import pytest

from live.models import Match
from live.selectors import pseudonym
from tests.research.test_arm_monitor import staff, two_arm_batch  # noqa: F401 (the staff fixture)

pytestmark = pytest.mark.django_db


def test_the_csv_has_a_row_per_ended_match_with_its_arm_and_metrics(staff):  # noqa: F811
    b = two_arm_batch("arms-csv")
    Match.objects.filter(batch=b).update(assignment={"unit": "within", "order": ["literal", "pragmatic"],
                                                     "position": 0, "seed": 77})
    Match.objects.create(batch=b, game_id="colors_v1", seed=1, content={}, state={}, arm="literal",
                         status=Match.Status.ACTIVE, outcome={})   # not ended: no row
    response = staff.get("/research/compare/", {"game": "colors_v1", "arm_batch": b.slug, "format": "csv"})
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    assert 'filename="arms-csv-arms.csv"' in response["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert len(rows) == 12
    assert list(rows[0])[:8] == ["match_id", "status", "workers", "arm", "arm_order", "arm_position", "arm_seed", "unit"]
    assert "accuracy_successes" in rows[0] and "accuracy_trials" in rows[0]
    by_arm = {}
    for row in rows:
        by_arm.setdefault(row["arm"], []).append(row)
        assert (row["arm_order"], row["arm_position"], row["arm_seed"], row["unit"]) == ("literal;pragmatic", "0", "77", "within")
        assert row["accuracy_trials"] == "3" and row["status"] == "finished"
    assert sorted(by_arm) == ["literal", "pragmatic"] and all(len(v) == 6 for v in by_arm.values())
    assert sorted(int(r["accuracy_successes"]) for r in by_arm["pragmatic"]) == [2, 2, 2, 3, 3, 3]
    workers = {r["workers"] for r in rows}
    assert workers == {pseudonym(f"p{i}") for i in range(6)}   # never the raw ids


def test_only_staff_download_it(client):
    b = two_arm_batch("arms-csv-anon")
    response = client.get("/research/compare/", {"game": "colors_v1", "arm_batch": b.slug, "format": "csv"})
    assert response.status_code in (302, 403)
