"""Agent-agent evaluation through the service: ``simulate`` for each game, and CoDraw's
script-based Drawer evaluation on dialogs exported from earlier matches."""
from __future__ import annotations

import io
import json
import re

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from live.models import Match

pytestmark = pytest.mark.django_db


def simulate(*args) -> str:
    out = io.StringIO()
    call_command("simulate", *args, stdout=out)
    return out.getvalue()


def test_colors_prints_accuracy_per_condition_and_stores_matches():
    text = simulate("colors", "--matches", "3", "--seat", "speaker=colors_lexicon_speaker",
                    "--seat", "listener=colors_random_listener", "--config", '{"rounds": 12}', "--batch", "eval-c")
    for condition in ("far", "split", "close"):
        assert re.search(rf"{condition}\s+\d+\.\d%\s+\(\d+/12\)", text), text
    assert Match.objects.filter(batch__slug="eval-c", status="finished").count() == 3


def test_wrong_seats_are_clear_errors():
    with pytest.raises(CommandError, match="missing listener"):
        simulate("colors", "--seat", "speaker=colors_lexicon_speaker")
    with pytest.raises(CommandError, match="plays speaker"):
        simulate("colors", "--seat", "speaker=colors_lexicon_speaker", "--seat", "listener=colors_lexicon_speaker")
    with pytest.raises(CommandError, match="Unknown agent"):
        simulate("colors", "--seat", "speaker=nobody", "--seat", "listener=colors_random_listener")


def test_codraw_script_based_drawer_evaluation(tmp_path):
    simulate("codraw", "--matches", "2", "--seat", "teller=codraw_rule_teller", "--seat", "drawer=codraw_rule_drawer",
             "--batch", "recorded")
    export = tmp_path / "CoDraw_recorded.json"
    call_command("export", "--format", "codraw", "--batch", "recorded", "--output", str(export), stderr=io.StringIO())
    data = json.loads(export.read_text())["data"]
    assert len(data) == 2 and all(entry["dialog"] for entry in data.values())
    text = simulate("codraw", "--matches", "2", "--content-file", str(export), "--config", '{"script_teller": true}',
                    "--seat", "teller=codraw_script_teller", "--seat", "drawer=codraw_rule_drawer", "--json")
    scores = [json.loads(line)["score"] for line in text.splitlines() if line.startswith("{")]
    assert len(scores) == 2 and all(s > 3.5 for s in scores), scores
    assert re.search(r"mean", text)


def test_guesswhich_versions_compared_with_mann_whitney(tmp_path):
    for version in ("alice_exact", "alice_weak"):
        text = simulate("guesswhich", "--matches", "3", "--seat", "questioner=qbot", "--seat", f"answerer={version}",
                        "--batch", f"gw-{version}", "--seed", "40")
        assert "mean rank" in text and "MRR" in text and "per-round mean coarse rank" in text
    out = io.StringIO()
    plot = tmp_path / "versions.png"
    call_command("guesswhich_report", "--compare", "alice_exact", "alice_weak", "--plot", str(plot), stdout=out)
    report = out.getvalue()
    assert "== alice_exact" in report and "== alice_weak" in report
    assert "Mann-Whitney U" in report and "p" in report.split("Mann-Whitney U")[1]
    assert plot.stat().st_size > 1000


def test_imported_codraw_scenes_feed_a_batch(tmp_path):
    from crowd.lobby import lobby_poll
    from crowd.models import Participant
    from live.models import Batch, Content
    from games.codraw.scenes import parse_scene

    simulate("codraw", "--matches", "2", "--seat", "teller=codraw_rule_teller", "--seat", "drawer=codraw_rule_drawer",
             "--batch", "source")
    export = tmp_path / "CoDraw_1_0.json"
    call_command("export", "--format", "codraw", "--batch", "source", "--output", str(export), stderr=io.StringIO())
    batch = Batch.objects.create(slug="codraw-imported", title="t", game_id="codraw_v1", pairing="human-human")
    out = io.StringIO()
    call_command("import_content", "codraw", str(export), "--batch", batch.slug, stdout=out)
    assert "imported 2 codraw_v1 items" in out.getvalue()
    batch.refresh_from_db()
    assert len(batch.content_pool) == 2
    targets = set(json.loads(export.read_text())["data"][k]["abs_t"] for k in json.loads(export.read_text())["data"])
    people = [Participant.objects.create(batch=batch, platform="lab", worker_id=f"w{i}", state="waiting",
                                         waiting_since="2026-01-01T00:00:00Z") for i in range(4)]
    used = []
    for p in people[::2]:
        match = Match.objects.get(pk=lobby_poll(participant_id=p.pk).match_id)
        assert match.content_ref_id in batch.content_pool
        used.append(match.content_ref_id)
        assert match.content == Content.objects.get(pk=match.content_ref_id).data
        assert match.content["abs_t"] in targets and parse_scene(match.content["abs_t"]).placed
    assert len(set(used)) == 2  # least-used first: both scenes are played
    with pytest.raises(CommandError, match="Cannot read"):
        call_command("import_content", "codraw", str(tmp_path / "missing.json"))


def test_arms_play_each_arm_agent_against_agent_recorded_with_its_arm():
    from live.models import Batch
    from research import arms as research_arms
    from tests.support.factories import batch as make_batch

    b = make_batch(slug="pilot", pairing=Batch.Pairing.HUMAN_AGENT, human_roles=["speaker"], config={"rounds": 3},
                   arms=[{"name": "literal", "agents": {"listener": "colors_literal_listener"}},
                         {"name": "random", "agents": {"listener": "colors_random_listener"}, "config": {"rounds": 2}},
                         {"name": "people", "agents": {}, "human_roles": ["speaker", "listener"]}])
    text = simulate("--batch", "pilot", "--arms", "--matches", "2", "--seat", "speaker=colors_lexicon_speaker")
    assert "arm literal: seats: speaker=colors_lexicon_speaker, listener=colors_literal_listener" in text
    assert "arm random: seats:" in text and "skipped arm 'people' has no agent for listener" in text
    matches = Match.objects.filter(batch=b, status="finished")
    assert sorted(m.arm for m in matches) == ["literal", "literal", "random", "random"]
    assert {m.arm: m.config["rounds"] for m in matches} == {"literal": 3, "random": 2}   # the arm's override
    listener = {m.arm: m.seats.get(role="listener").agent_name for m in matches}
    assert listener == {"literal": "colors_literal_listener", "random": "colors_random_listener"}
    assert all(m.assignment["unit"] == "simulation" and m.assignment["seed"] == b.arm_seed for m in matches)
    # the monitor's per-arm statistics count them
    table = research_arms.batch_arm_statistics(batch=b)["metrics"][0]["arms"]
    assert {row["arm"]: row["matches"] for row in table} == {"literal": 2, "random": 2, "people": 0}
    # one arm; a human-human arm played with agents on every seat
    simulate("--batch", "pilot", "--arm", "people", "--matches", "1", "--seat", "speaker=colors_lexicon_speaker",
             "--seat", "listener=colors_pragmatic_listener")
    assert Match.objects.get(batch=b, arm="people").seats.get(role="listener").agent_name == "colors_pragmatic_listener"
    for args, message in ((("--arms",), "name it with --batch"), (("--batch", "nope", "--arms"), "No batch 'nope'"),
                          (("--batch", "pilot", "--arm", "x"), "no arm 'x' \\(its arms: literal, random, people\\)"),
                          (("--batch", "pilot", "--arm", "people"), "no agent for speaker, listener"),
                          (("--batch", "pilot", "--arms"), "No arm could be played"),
                          (("guesswhich", "--batch", "pilot", "--arms"), "plays colors_v1, not guesswhich")):
        with pytest.raises(CommandError, match=message):
            simulate(*args)
