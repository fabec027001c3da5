"""Colors in Context CSV export, built from a match record's event log."""
from __future__ import annotations

import csv
import io

from games.colors import exports, rules
from games.colors.agents import LexiconSpeaker, RandomListener

EXPECTED_COLUMNS = (   # filteredCorpus.csv of the Colors in Context release, in its order
    "gameid,clkTime,roundNum,condition,clickStatus,clickColH,clickColS,clickColL,clickLocS,clickLocL,"
    "alt1Status,alt1ColH,alt1ColS,alt1ColL,alt1LocS,alt1LocL,alt2Status,alt2ColH,alt2ColS,alt2ColL,"
    "alt2LocS,alt2LocL,targetD1Diff,targetD2Diff,D1D2Diff,outcome,msgTime,role,contents,workerid_uniq,"
    "numOutcome,numRawWords,numRawChars,numCleanChars,numCleanWords,source"
).split(",") + ["arm", "arm_order", "arm_position", "arm_seed"]   # then the experiment's (issue 24)


def scripted_record(content: dict, seed: int, rounds: int) -> dict:
    """A match record whose round 2 has a listener question and a second speaker message."""
    state = rules.initial_state(content, seed, {"rounds": rounds})
    logged, now = [], 5_000
    for number in range(1, rounds + 1):
        texts = [("speaker", "first")]
        if number == 2:
            texts += [("listener", "which?"), ("speaker", "the dull one")]
        actions = []
        for role, text in texts:
            now += 100
            actions.append((role, {"type": "chat", "text": text, "at": now}))
        now += 700
        actions.append(("listener", {"type": "click", "position": number % 3, "round": number, "at": now}))
        for role, action in actions:
            state, events = rules.apply(state, role, action)
            logged += [(role, event, action if i == 0 else None) for i, event in enumerate(events)]
    events = [{"seq": seq, "type": e.type, "actor": role, "payload": e.payload, "private": e.private,
               "action": action, "t": seq} for seq, (role, e, action) in enumerate(logged, start=1)]
    return {"match_id": "scripted", "game_id": rules.GAME_ID, "seed": seed, "content": content,
            "config": {"rounds": rounds}, "status": "finished", "events": events,
            "outcome": rules.outcome(state)}


def test_column_order():
    assert exports.CSV_COLUMNS == EXPECTED_COLUMNS


def test_one_row_per_message_with_round_fields_repeated(new_colors_match):
    content, _, _ = new_colors_match(21, 6)
    record = scripted_record(content, 21, 6)
    rows = list(exports.csv_rows(record))
    assert len(rows) == 8
    assert all(list(row) == EXPECTED_COLUMNS for row in rows)
    round2 = [row for row in rows if row["roundNum"] == 2]
    assert [(r["role"], r["contents"]) for r in round2] == [
        ("speaker", "first"), ("listener", "which?"), ("speaker", "the dull one")]
    assert len({tuple((k, v) for k, v in r.items() if k not in exports.MESSAGE_COLUMNS)
                for r in round2}) == 1       # round fields repeated verbatim
    assert [r["msgTime"] for r in round2] == [5_900, 6_000, 6_100]

    content_round = record["content"]["rounds"][1]
    row = round2[0]
    chosen = content_round["positions"]["listener"].index(2 % 3)
    assert row["clkTime"] == 6_800 and row["gameid"] == record["match_id"]
    assert row["condition"] == content_round["condition"]
    assert row["clickStatus"] == ("target", "distr1", "distr2")[chosen]
    assert row["outcome"] == ("true" if chosen == 0 else "false")
    assert [row["clickColH"], row["clickColS"], row["clickColL"]] == content_round["colors"][chosen]
    assert row["clickLocL"] == 3
    assert row["clickLocS"] == content_round["positions"]["speaker"][chosen] + 1
    for r in rows:
        assert sorted([r["clickStatus"], r["alt1Status"], r["alt2Status"]]) == ["distr1", "distr2", "target"]
        assert sorted([r["clickLocS"], r["alt1LocS"], r["alt2LocS"]]) == [1, 2, 3]
        assert sorted([r["clickLocL"], r["alt1LocL"], r["alt2LocL"]]) == [1, 2, 3]
        assert r["outcome"] == ("true" if r["clickStatus"] == "target" else "false")


def test_rows_follow_the_log_and_skip_unfinished_rounds(play_colors):
    played = play_colors(22, 3, LexiconSpeaker(), RandomListener(seed=5))
    record = played["record"]
    messages = sum(1 for e in record["events"] if e["type"] == "message_sent")
    rows = list(exports.csv_rows(record))
    assert len(rows) == messages == 3
    # an aborted match: the last round never ended, so its message is not exported
    cut = next(i for i, e in enumerate(record["events"]) if e["type"] == "round_ended" and e["payload"]["round"] == 3)
    aborted = {**record, "status": "aborted", "events": record["events"][:cut - 1]}
    assert [row["roundNum"] for row in exports.csv_rows(aborted)] == [1, 2]


def test_write_csv_reads_back(play_colors):
    records = [play_colors(seed, 2, LexiconSpeaker(), RandomListener())["record"] for seed in (1, 2)]
    out = io.StringIO()
    assert exports.write_csv(records, out) == 4
    out.seek(0)
    reader = csv.DictReader(out)
    assert reader.fieldnames == EXPECTED_COLUMNS
    rows = list(reader)
    assert {row["gameid"] for row in rows} == {"m1", "m2"}
    assert {row["outcome"] for row in rows} <= {"true", "false"}
