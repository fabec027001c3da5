"""``manage.py export``: JSON lines and the Colors in Context CSV, pseudonymised, filtered."""
from __future__ import annotations

import csv
import io
import json
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from games.colors.exports import CSV_COLUMNS
from crowd.lobby import lobby_poll
from live.models import Match
from live.services import match_apply_action

from tests.support.factories import batch as make_batch
from tests.support.factories import participant

pytestmark = pytest.mark.django_db


def played_match(slug: str, workers=("alice", "bob")):
    """A finished one-round match (exports select finished matches unless told otherwise)."""
    b = make_batch(slug=slug, config={"rounds": 1})
    p1, p2 = participant(b, workers[0]), participant(b, workers[1])
    status = lobby_poll(participant_id=p1.pk)
    match = Match.objects.get(pk=status.match_id)
    match_apply_action(match_id=match.id, role="speaker", action={"type": "chat", "text": "the blue one"})
    match_apply_action(match_id=match.id, role="listener", action={"type": "chat", "text": "lighter?"})
    match_apply_action(match_id=match.id, role="listener", action={"type": "click", "position": 1, "round": 1})
    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED
    return match


def run_export(*args) -> str:
    out = io.StringIO()
    call_command("export", *args, stdout=out)
    return out.getvalue()


def test_jsonl_has_every_event_and_pseudonyms():
    match = played_match("ex1")
    lines = [json.loads(line) for line in run_export("--format", "jsonl").splitlines()]
    assert len(lines) == 1
    record = lines[0]
    assert record["match_id"] == str(match.id) and record["game_id"] == "colors_v1"
    assert [e["seq"] for e in record["events"]] == list(range(1, match.events.count() + 1))
    workers = {s["worker"] for s in record["seats"].values()}
    assert "alice" not in json.dumps(record) and all(w.startswith("W") for w in workers)
    raw = json.loads(run_export("--format", "jsonl", "--no-pseudonymise").splitlines()[0])
    assert {s["worker"] for s in raw["seats"].values()} == {"alice", "bob"}


def test_colors_csv_rows_per_message_and_filters():
    played_match("ex2")
    played_match("ex3", workers=("carol", "dan"))
    text = run_export("--format", "colors-csv", "--batch", "ex2")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert list(rows[0].keys()) == CSV_COLUMNS
    assert [r["contents"] for r in rows] == ["the blue one", "lighter?"]
    assert {r["roundNum"] for r in rows} == {"1"}
    tomorrow = (timezone.now() + timedelta(days=1)).date().isoformat()
    assert len(run_export("--format", "jsonl", "--since", tomorrow).splitlines()) == 0
    assert len(run_export("--format", "jsonl", "--until", tomorrow).splitlines()) == 2


def test_unknown_format_is_a_clear_error():
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="Unknown format"):
        run_export("--format", "xml")
    with pytest.raises(CommandError, match="Not a date"):
        run_export("--since", "yesterday-ish")
