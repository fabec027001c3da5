"""The codraw_drawer_validation command (research/management/commands/codraw_drawer_validation.py)."""
from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from games.codraw import drawer_validation as dv

LINES = [
    '{"id": "t1", "text": "a big tree on the left", "tags": ["issue", "size"], '
    '"pieces": [{"name": "oak tree", "x": 95, "y": 190, "size": "big"}]}',
    '{"id": "t2", "text": "not yet", "tags": ["issue", "nothing"], "pieces": []}',
    '{"id": "t3", "batch": "b", "text": "mike in a witch hat on the right", "tags": ["worn"], '
    '"pieces": [{"name": "Mike", "x": 400, "y": 265}, {"name": "witch hat", "on": "Mike\'s head"}]}',
]


@pytest.fixture
def small_set(tmp_path):
    path = tmp_path / "set.jsonl"
    path.write_text("\n".join(LINES) + "\n")
    return path


def test_plays_prints_writes_and_reloads(small_set, tmp_path, capsys):
    doc = tmp_path / "doc.md"
    doc.write_text("before\n<!-- codraw_drawer_validation:begin -->\nold\n<!-- codraw_drawer_validation:end -->\nafter\n")
    out_json, plot = tmp_path / "r.json", tmp_path / "r.png"
    call_command("codraw_drawer_validation", "--drawer", "rule", "--set", str(small_set), "--json", str(out_json),
                 "--plot", str(plot), "--doc", str(doc))
    printed = capsys.readouterr().out
    assert "3 messages: issue 2" in printed and "**rule**, human phrasing" in printed
    assert "**rule**, rule_teller phrasing" in printed
    reports = json.loads(out_json.read_text())["reports"]
    assert [(r["drawer"], r["phrasing"]) for r in reports] == [("rule", "human"), ("rule", "rule_teller")]
    human = reports[0]["categories"]
    assert human["nothing"]["abstain"] == 1 and human["worn"]["on_wearer"] == 1 and human["all"]["clipart"] == 1
    assert reports[1]["categories"]["all"]["items"] == 2          # the rule Teller says nothing for "not yet"
    text = doc.read_text()
    assert text.startswith("before\n") and text.endswith("after\n") and "old" not in text
    assert "| rule | human | 3 | 100% |" in text and "| rule | rule_teller | 2 | 100% |" in text
    assert plot.read_bytes()[:4] == b"\x89PNG"
    # printed again from the file, without playing
    call_command("codraw_drawer_validation", "--set", str(small_set), "--load", str(out_json), "--phrasing", "human")
    assert "| rule | human | 3 | 100% |" in capsys.readouterr().out


def test_bad_input_is_a_clear_error(small_set, tmp_path):
    with pytest.raises(CommandError, match="No checkpoint at"):
        call_command("codraw_drawer_validation", "--drawer", "neural", "--checkpoint", str(tmp_path / "none.pt"),
                     "--set", str(small_set))
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x", "text": "a tre", "tags": ["names"], "pieces": [{"name": "tre", "x": 1, "y": 1}]}\n')
    with pytest.raises(CommandError, match=r"bad.jsonl:1.*canonical name"):
        call_command("codraw_drawer_validation", "--drawer", "rule", "--set", str(bad))
    with pytest.raises(CommandError, match="not a file this command wrote"):
        call_command("codraw_drawer_validation", "--set", str(small_set), "--load", str(small_set))
    doc = tmp_path / "plain.md"
    doc.write_text("no markers\n")
    with pytest.raises(CommandError, match="markers"):
        call_command("codraw_drawer_validation", "--drawer", "rule", "--phrasing", "human", "--set", str(small_set),
                     "--doc", str(doc))


def test_the_shipped_set_loads():
    assert len(dv.load()) >= 150
