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


def test_the_arm_and_the_end_questions_are_in_the_records_and_the_csv():
    from crowd.models import Participant, PartnerKindAnswer, PreferenceAnswer

    match = played_match("ex-arms")
    other = played_match("ex-arms-other", workers=("erin", "finn"))   # no arm, no answers
    Match.objects.filter(pk=match.pk).update(arm="pragmatic", assignment={
        "unit": "person", "order": ["literal", "pragmatic"], "row": 1, "position": 1, "seed": 4242})
    alice = Participant.objects.get(worker_id="alice")
    earlier = Match.objects.create(batch=match.batch, game_id="colors_v1", seed=3, content={}, state={},
                                   arm="literal", status=Match.Status.FINISHED)
    PartnerKindAnswer.objects.create(participant=alice, batch=match.batch, match=match, arm="pragmatic",
                                     said_person=True, confidence=4)
    PreferenceAnswer.objects.create(participant=alice, batch=match.batch, match_a=earlier, match_b=match,
                                    arm_a="literal", arm_b="pragmatic", question="play_again", choice="b")
    records = {r["match_id"]: r for r in map(json.loads, run_export("--format", "jsonl", "--status", "all").splitlines())}
    r = records[str(match.id)]
    assert (r["arm"], r["arm_order"], r["arm_position"], r["arm_seed"]) == ("pragmatic", ["literal", "pragmatic"], 1, 4242)
    from live.selectors import pseudonym
    worker = pseudonym("alice")
    assert worker in {s["worker"] for s in r["seats"].values()} and "alice" not in json.dumps(r)
    [kind] = r["partner_kind_answers"]
    assert {k: kind[k] for k in ("worker", "arm", "said_person", "confidence")} == {
        "worker": worker, "arm": "pragmatic", "said_person": True, "confidence": 4}
    [pref] = r["preferences"]
    assert pref["worker"] == worker and (pref["match_a"], pref["match_b"]) == (str(earlier.id), str(match.id))
    assert (pref["question"], pref["choice"], pref["preferred_arm"]) == ("play_again", "b", "pragmatic")
    assert pref["text"] == "Which partner would you rather play with again?"
    assert records[str(earlier.id)]["preferences"] == [pref]           # in both matches' records
    assert records[str(other.id)]["partner_kind_answers"] == [] and records[str(other.id)]["preferences"] == []
    raw = json.loads([line for line in run_export("--format", "jsonl", "--batch", "ex-arms", "--no-pseudonymise").splitlines()
                      if str(match.id) in line][0])
    assert raw["partner_kind_answers"][0]["worker"] == "alice" == raw["preferences"][0]["worker"]

    rows = list(csv.DictReader(io.StringIO(run_export("--format", "colors-csv"))))
    mine = [row for row in rows if row["gameid"] == str(match.id)]
    assert mine and all((row["arm"], row["arm_order"], row["arm_position"], row["arm_seed"])
                        == ("pragmatic", "literal;pragmatic", "1", "4242") for row in mine)
    other.refresh_from_db()   # a batch without arms: its one implicit arm, no order, its seed all the same
    assert other.arm == "human-human"
    assert all((row["arm"], row["arm_order"], row["arm_position"], row["arm_seed"])
               == ("human-human", "", "", str(other.assignment["seed"])) for row in rows if row["gameid"] == str(other.id))
