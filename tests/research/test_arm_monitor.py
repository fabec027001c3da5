"""The batch monitor's experiment view (research/arm_monitor.py): the JSON's per-arm numbers are
research/arms.py's on the same data, the planner's difference comes from the query, the numbers
are cached until a match ends; a batch that cannot run says so on /research/ and its page."""
from __future__ import annotations

import html
import json

import pytest

from crowd.models import Participant
from live import batches as live_batches
from live.models import Match, Seat
from research import arm_monitor, arms
from tests.support.factories import batch as make_batch
from tests.support.staff_users import staff_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(client):
    client.force_login(staff_user("arm-staff", "pw"))
    return client


def two_arm_batch(slug="arms-json"):
    b = make_batch(slug=slug, game_id="colors_v1", pairing="human-agent", human_roles=["speaker"],
                   agents={"listener": "colors_literal_listener"}, assignment="within", games_per_worker=2,
                   arms=[{"name": "literal", "agents": {"listener": "colors_literal_listener"}},
                         {"name": "pragmatic", "agents": {"listener": "colors_pragmatic_listener"}}])
    people = [Participant.objects.create(batch=b, platform="lab", worker_id=f"p{i}") for i in range(6)]
    for i, p in enumerate(people):   # each person plays both arms: paired comparisons exist
        for arm, correct in (("literal", 1 + i % 3), ("pragmatic", 2 + i % 2)):
            add_match(b, arm, p, correct)
    return b


def add_match(b, arm, p, correct, played=3):
    m = Match.objects.create(batch=b, game_id="colors_v1", seed=1, content={}, state={}, arm=arm,
                             status=Match.Status.FINISHED, outcome={"played": played, "correct": correct})
    Seat.objects.create(match=m, role="speaker", kind=Seat.Kind.HUMAN, participant=p)
    Seat.objects.create(match=m, role="listener", kind=Seat.Kind.AGENT, agent_name="colors_literal_listener")
    return m


def plain(x):
    return json.loads(json.dumps(x))


def test_the_json_carries_research_arms_numbers(staff):
    b = two_arm_batch()
    d = staff.get(f"/research/batches/{b.slug}/?format=json").json()
    expected = plain(arms.batch_arm_statistics(batch=b))
    assert d["arms"]["arms"] == ["literal", "pragmatic"] and d["arms"]["has_arms"] is True
    assert d["arms"]["metrics"] == expected["metrics"]
    first = d["arms"]["metrics"][0]
    assert [a["n"] for a in first["arms"]] == [18, 18]
    assert first["paired"]["pairs"][0]["pairs"] == 6 and first["pairwise"]["pairs"][0]["p_holm"] is not None
    assert first["plan"]["delta"] == 0.05
    assert d["costs"]["arms"][0]["arm"] == "literal" and d["costs"]["arms"][0]["completed"] == 6
    assert d["cannot_run"] == []


def test_the_planner_takes_its_difference_from_the_query(staff):
    b = two_arm_batch("arms-delta")
    d = staff.get(f"/research/batches/{b.slug}/?format=json&delta=0.2").json()
    metric = arms.metrics("colors_v1")[0]
    expected = plain(arms.plan(metric, arms.batch_arm_matches(batch=b), ["literal", "pragmatic"], delta=0.2))
    assert d["arms"]["metrics"][0]["plan"] == expected and expected["status"] == "ok" and expected["delta"] == 0.2
    default = staff.get(f"/research/batches/{b.slug}/?format=json").json()["arms"]["metrics"][0]["plan"]
    assert default["per_arm"] > expected["per_arm"]      # a smaller difference needs more matches
    for bad in ("-1", "0", "abc", "nan"):
        r = staff.get(f"/research/batches/{b.slug}/?format=json&delta={bad}")
        assert r.status_code == 400 and "difference to detect" in r.json()["error"]


def test_a_batch_without_arms_is_one_arm_all_matches(staff):
    b = make_batch(slug="arms-none", game_id="colors_v1")
    p = Participant.objects.create(batch=b, platform="lab", worker_id="x")
    add_match(b, "", p, 2)
    d = staff.get(f"/research/batches/{b.slug}/?format=json").json()["arms"]
    assert d["arms"] == [arms.ONE_ARM] and d["has_arms"] is False
    assert d["metrics"][0]["arms"][0]["value"] == pytest.approx(2 / 3)


def test_statistics_are_computed_again_only_when_an_ended_match_changes(monkeypatch):
    b = two_arm_batch("arms-cache")
    calls = []
    real = arms.game_arm_statistics
    monkeypatch.setattr(arms, "game_arm_statistics", lambda *a, **k: calls.append(1) or real(*a, **k))
    first = arm_monitor.batch_arms(batch=b)
    again = arm_monitor.batch_arms(batch=b)
    arm_monitor.batch_arms(batch=b, delta=0.3)            # only the planner, from the cached matches
    assert len(calls) == 1 and again["metrics"] == first["metrics"]
    add_match(b, "literal", Participant.objects.filter(batch=b).first(), 3)
    after = arm_monitor.batch_arms(batch=b)
    assert len(calls) == 2 and after["metrics"][0]["arms"][0]["n"] == 21


def test_a_batch_whose_agent_has_no_worker_shows_it_cannot_run(staff, monkeypatch):
    b = make_batch(slug="arms-dead", title="dead agent", game_id="colors_v1", pairing="human-agent",
                   human_roles=["speaker"], agents={"listener": "colors_literal_listener"})
    ok = make_batch(slug="arms-alive", title="all fine", game_id="colors_v1")
    monkeypatch.setattr(live_batches.agent_seats, "dead_queues", lambda queues: list(queues))
    home = html.unescape(staff.get("/research/").content.decode())
    row = home.split('data-batch="arms-dead"')[1].split("</tr>")[0]
    assert "cannot run:" in row and "No worker is running for agent 'colors_literal_listener'" in row
    assert "cannot run" not in home.split(f'data-batch="{ok.slug}"')[1].split("</tr>")[0]
    page = html.unescape(staff.get(f"/research/batches/{b.slug}/").content.decode())
    banner = page.split('id="cannot-run"')[1].split("</div>")[0]
    assert " hidden" not in banner.split(">")[0] and "No worker is running" in banner
    assert staff.get(f"/research/batches/{b.slug}/?format=json").json()["cannot_run"][0].startswith("No worker")
    fine = staff.get(f"/research/batches/{ok.slug}/").content.decode()
    assert fine.split('id="cannot-run"')[1].split(">")[0].endswith(" hidden")


def test_the_compare_page_compares_arms_and_says_when_batches_confound(staff):
    b = two_arm_batch("arms-cmp")
    page = staff.get("/research/compare/", {"game": "colors_v1", "arm_batch": b.slug}).content.decode()
    data = json.loads(html.unescape(page.split('id="arms-data" type="application/json">')[1].split("</script>")[0]))
    assert data["metrics"] == plain(arms.batch_arm_statistics(batch=b))["metrics"]
    other = make_batch(slug="arms-cmp-2", game_id="colors_v1")
    p = Participant.objects.create(batch=other, platform="lab", worker_id="o")
    for m in Match.objects.filter(batch=b)[:3]:
        Seat.objects.filter(match=m, role="listener").update(agent_name="colors_pragmatic_listener")
    add_match(other, "", p, 1)
    q = {"game": "colors_v1", "role": "listener", "play": "all", "a": "colors_literal_listener",
         "b": "colors_pragmatic_listener", "compare": "1"}
    both = staff.get("/research/compare/", q).content.decode()
    assert 'id="confounded"' in both and "2 batches (arms-cmp, arms-cmp-2)" in both
    one = staff.get("/research/compare/", {**q, "batch": b.slug}).content.decode()
    assert 'id="compare-result"' in one and 'id="confounded"' not in one
    assert staff.get("/research/compare/", {"game": "colors_v1", "arm_batch": b.slug, "delta": "-2"}).status_code == 400


def add_answers(b):
    """Each of the six people prefers 'pragmatic' to play again (the last two say no preference) and
    takes the literal arm's partner for a person once, the pragmatic one's four times."""
    from crowd.models import PartnerKindAnswer, PreferenceAnswer
    for i, p in enumerate(Participant.objects.filter(batch=b).order_by("id")):
        lit, prag = (Match.objects.get(batch=b, arm=a, seats__participant=p) for a in ("literal", "pragmatic"))
        PreferenceAnswer.objects.create(participant=p, batch=b, match_a=lit, match_b=prag, arm_a="literal",
                                        arm_b="pragmatic", question="play_again", choice="b" if i < 4 else "none")
        PartnerKindAnswer.objects.create(participant=p, batch=b, match=lit, arm="literal", said_person=i < 1, confidence=2)
        PartnerKindAnswer.objects.create(participant=p, batch=b, match=prag, arm="pragmatic", said_person=i < 4,
                                         confidence=4)


def test_the_json_carries_preferences_and_taken_for_person(staff):
    b = two_arm_batch("arms-prefs")
    before = staff.get(f"/research/batches/{b.slug}/?format=json").json()["arms"]
    assert before["preferences"] is None and before["taken_for_person"] is None
    add_answers(b)                     # answers alone (no match ended) refresh the cached statistics
    d = staff.get(f"/research/batches/{b.slug}/?format=json").json()["arms"]
    expected = plain(arms.batch_arm_statistics(batch=b))
    q = d["preferences"]["questions"]["play_again"]
    assert q["text"] == "Which partner would you rather play with again?"
    assert {k: v for k, v in q.items() if k != "text"} == expected["preferences"]["questions"]["play_again"]
    assert q["pairs"][0]["wins_b"] == 4 and q["pairs"][0]["no_preference"] == 2 and q["pairs"][0]["win_rate"] == 0
    assert [r["arm"] for r in q["ranking"]] == ["pragmatic", "literal"] and q["ranking"][0]["ci95"][0] is not None
    t = d["taken_for_person"]
    assert t == expected["taken_for_person"]
    assert [(r["arm"], r["said_person"], r["answers"], r["mean_confidence"]) for r in t["arms"]] == [
        ("literal", 1, 6, 2.0), ("pragmatic", 4, 6, 4.0)]
    assert t["arms"][0]["ci95"][0] < t["arms"][0]["rate"] < t["arms"][0]["ci95"][1]
