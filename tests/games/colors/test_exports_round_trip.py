"""Colors in Context CSV in and out: the released file's contexts are imported as content
(games/colors/content.py import_file, ``manage.py import_content colors_v1 FILE``), played, and
exported with every column of the release (games/colors/exports.py), read back as the release's
readers read it."""
from __future__ import annotations

import csv
import io
from collections import defaultdict

import pytest
from django.core.management import CommandError, call_command

from games.colors import content, exports, rules
from games.colors.agents import LexiconSpeaker, LiteralListener

from .test_exports import EXPECTED_COLUMNS

# Two games in the release's shape: one row per message, the round's columns repeated; the second
# game uses the original click files' condition names ("closer", "further", "equal").
HEADER = ",".join(EXPECTED_COLUMNS)
RELEASED = HEADER + "\n" + "\n".join([
    "1124-1,1459877258390,1,far,target,216,77,50,2,3,distr1,129,53,50,1,1,distr2,9,51,50,3,2,"
    "71.57,50.39,61.67,true,1459877254521,speaker,The blue one,w1,1,3,12,8,2,human",
    "1124-1,1459877258390,1,far,target,216,77,50,2,3,distr1,129,53,50,1,1,distr2,9,51,50,3,2,"
    "71.57,50.39,61.67,true,1459877256000,listener,\"ok, got it\",w2,1,3,10,6,2,human",
    "1124-1,1459877270011,2,split,distr1,300,40,50,1,2,target,310,45,50,3,1,distr2,120,90,50,2,3,"
    "8.95,72.1,70.33,false,1459877265000,speaker,purple,w1,0,1,6,6,1,human",
    "7-2,1459877299999,1,closer,target,10,60,50,1,1,distr1,20,62,50,2,2,distr2,28,58,50,3,3,"
    "9.1,13.3,7.2,true,1459877290000,speaker,the reddest,w3,1,2,11,7,1,human",
])


@pytest.fixture
def released_csv(tmp_path):
    path = tmp_path / "filteredCorpus.csv"
    path.write_text(RELEASED, encoding="utf-8")
    return str(path)


def test_import_builds_one_context_per_game(released_csv):
    items = content.import_file(released_csv)
    assert [item["provenance"]["gameid"] for item in items] == ["1124-1", "7-2"]
    first = items[0]["rounds"]
    assert [r["condition"] for r in first] == ["far", "split"]
    # colors in status order (target, distr1, distr2), positions 0-based per role
    assert first[0]["colors"] == [[216, 77, 50], [129, 53, 50], [9, 51, 50]]
    assert first[0]["positions"] == {"speaker": [1, 0, 2], "listener": [2, 0, 1]}
    assert first[1]["colors"] == [[310, 45, 50], [300, 40, 50], [120, 90, 50]]
    assert first[1]["distances"] == {"target_distr1": 8.95, "target_distr2": 72.1, "distr1_distr2": 70.33}
    assert items[1]["rounds"][0]["condition"] == "close"   # "closer" in the original click files


def test_imported_context_plays_and_exports_the_same_context(released_csv):
    item = content.import_file(released_csv)[0]
    state = rules.initial_state(item, 1, {"rounds": 2})
    now, logged = 1_000, []
    speaker, listener = LexiconSpeaker(), LiteralListener()
    while not rules.is_over(state):
        (role,) = rules.to_act(state)
        now += 500
        action = {**(speaker if role == "speaker" else listener).act(rules.view_for(state, role)), "at": now}
        state, events = rules.apply(state, role, action)
        logged += [(role, e) for e in events]
    record = {"match_id": "m1", "content": item, "seats": {"speaker": {"kind": "agent", "agent": "lex"},
                                                             "listener": {"kind": "human", "worker": "p-9"}},
              "events": [{"seq": i, "type": e.type, "payload": e.payload} for i, (_, e) in enumerate(logged, 1)]}
    out = io.StringIO()
    exports.write_csv([record], out)
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert list(rows[0]) == EXPECTED_COLUMNS
    released = {(r["roundNum"]): r for r in csv.DictReader(io.StringIO(RELEASED)) if r["gameid"] == "1124-1"}
    for row in rows:
        source = released[row["roundNum"]]
        by_status = lambda r: {r[f"{p}Status"]: [r[f"{p}Col{c}"] for c in "HSL"] + [r[f"{p}LocS"], r[f"{p}LocL"]]
                               for p in ("click", "alt1", "alt2")}
        assert by_status(row) == by_status(source)       # the same context, as the release wrote it
        assert [row[k] for k in ("targetD1Diff", "targetD2Diff", "D1D2Diff")] == \
            [source[k] for k in ("targetD1Diff", "targetD2Diff", "D1D2Diff")]
        assert row["condition"] == source["condition"]
        assert row["numOutcome"] == ("1" if row["outcome"] == "true" else "0")
        assert (row["workerid_uniq"], row["source"]) == (("lex", "lex") if row["role"] == "speaker" else ("p-9", "human"))


def test_message_counts_follow_the_release_preprocessing():
    assert exports.message_counts("The blue one") == {"numRawWords": 3, "numRawChars": 12,
                                                     "numCleanChars": 8, "numCleanWords": 2}
    assert exports.clean_message("not the *greenish* one, isn't it?") == "greenish one"
    assert exports.message_counts("purple") == {"numRawWords": 1, "numRawChars": 6,
                                                "numCleanChars": 6, "numCleanWords": 1}
    assert len(exports.CLEAN_STOPWORDS) == 174


def test_a_reader_like_the_releases_reads_the_export(play_colors):
    """What CS224u's ColorsCorpusReader does: speaker rows grouped by (gameid, roundNum), contents
    joined with " ### ", the three HSL colors with the target known from its status."""
    from games.colors.agents import LexiconSpeaker as Speaker, RandomListener

    played = play_colors(31, 4, Speaker(), RandomListener(seed=2))
    out = io.StringIO()
    exports.write_csv([played["record"]], out)
    grouped = defaultdict(list)
    for row in csv.DictReader(io.StringIO(out.getvalue())):
        if row["role"] == "speaker":
            grouped[(row["gameid"], int(row["roundNum"]))].append(row)
    assert len(grouped) == 4
    for rows in grouped.values():
        text = " ### ".join(r["contents"] for r in rows)
        colors = [[float(rows[0][f"{p}Col{c}"]) for c in "HSL"] for p in ("alt1", "alt2", "click")]
        statuses = [rows[0][f"{p}Status"] for p in ("alt1", "alt2", "click")]
        assert text and len(colors) == 3 and "target" in statuses
        assert all(0 <= h <= 360 and 0 <= s <= 100 and 0 <= l <= 100 for h, s, l in colors)


def test_bad_files_are_refused_with_the_line(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text(HEADER + "\n" + RELEASED.splitlines()[1].replace("target,216", "winner,216"))
    with pytest.raises(ValueError, match="line 2"):
        content.import_file(str(bad))
    other = tmp_path / "other.csv"
    other.write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match="no column gameid"):
        content.import_file(str(other))


@pytest.mark.django_db
def test_import_content_command_stores_the_games(released_csv, capsys):
    from live.models import Batch, Content

    batch = Batch.objects.create(slug="cic", title="cic", game_id="colors_v1", config={"rounds": 1})
    call_command("import_content", "colors_v1", released_csv, "--batch", "cic")
    assert Content.objects.filter(game_id="colors_v1").count() == 2
    batch.refresh_from_db()
    assert len(batch.content_pool) == 2
    assert "imported 2 colors_v1 items" in capsys.readouterr().out
    with pytest.raises(CommandError, match="no column"):
        bad = released_csv.replace("filteredCorpus", "nothing")
        open(bad, "w").write("x\n1\n")
        call_command("import_content", "colors_v1", bad)
