"""The monitor's numbers (research/monitor.py) and its staff views (research/views.py)."""
from __future__ import annotations

import io
import math
import re

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from scipy import stats

from research import monitor
from games.codraw import monitor as codraw_monitor
from games.colors import monitor as colors_monitor
from games.guesswhich import monitor as guesswhich_monitor
from games.visdial import monitor as visdial_monitor
from clevr.metrics import bootstrap_ci, compare_versions
from games.guesswhich.agents import summary
from live.models import Match, Seat

from tests.support.factories import batch as make_batch
from tests.support import play
from tests.support.staff_users import staff_user

pytestmark = pytest.mark.django_db

Z = stats.norm.ppf(0.975)


def wilson(k, n):
    p = k / n
    centre = (p + Z * Z / (2 * n)) / (1 + Z * Z / n)
    half = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n)) / (1 + Z * Z / n)
    return centre - half, centre + half


def ended(batch, game_id, outcome, seats, status=Match.Status.FINISHED) -> Match:
    """A match row with a given outcome and seats (``{role: "human" or agent name}``)."""
    m = Match.objects.create(batch=batch, game_id=game_id, seed=1, content={}, state={}, outcome=outcome,
                             status=status)
    for role, who in seats.items():
        Seat.objects.create(match=m, role=role, kind=Seat.Kind.HUMAN if who == "human" else Seat.Kind.AGENT,
                            agent_name="" if who == "human" else who)
    return m


def colors_outcome(far=(0, 0), split=(0, 0), close=(0, 0)):
    by = {c: {"played": n, "correct": k, "accuracy": k / n if n else None}
          for c, (k, n) in (("far", far), ("split", split), ("close", close))}
    return {"played": sum(v["played"] for v in by.values()), "correct": sum(v["correct"] for v in by.values()),
            "by_condition": by, "mean_response_ms": 2000.0, "mean_speaker_words": 3.0}


def gw_outcome(rank, curve=(3, 2)):
    return {"found": rank is not None, "rank": rank, "reciprocal_rank": 1 / rank if rank else None, "pool_size": 20,
            "bonus": 100, "round_guess_correct": [False] * len(curve), "coarse_ranks": list(curve)}


# ----------------------------------------------------------------------------------- numbers
def test_proportion_is_the_wilson_interval():
    p = monitor.proportion(7, 10)
    assert p["value"] == 0.7 and p["n"] == 10 and p["correct"] == 7
    assert p["ci95"] == pytest.approx(wilson(7, 10), abs=1e-9)
    assert monitor.proportion(0, 0) == {"n": 0, "correct": 0, "value": None, "ci95": [None, None]}


def test_colors_scores_sum_rounds_per_condition():
    s = colors_monitor.scores([colors_outcome(far=(3, 3), split=(1, 2)), colors_outcome(far=(1, 2), close=(0, 4))])
    assert s["matches"] == 2
    assert (s["accuracy"]["correct"], s["accuracy"]["n"]) == (5, 11)
    assert s["accuracy"]["ci95"] == pytest.approx(wilson(5, 11))
    assert {c: (v["correct"], v["n"]) for c, v in s["by_condition"].items()} == \
        {"far": (4, 5), "split": (1, 2), "close": (0, 4)}
    assert s["by_condition"]["close"]["value"] == 0.0
    assert s["mean_response_ms"] == 2000.0


def test_codraw_scores_mean_ci_histogram_and_rounds():
    outcomes = [{"score": s, "rounds": r, "round_scores": rs, "peeked": pk}
                for s, r, rs, pk in [(1.0, 2, [0.5, 1.0], False), (4.2, 1, [4.2], True), (2.5, 2, [2.0, 2.5], False),
                                     (5.0, 3, [1, 3, 5.0], False)]]
    s = codraw_monitor.scores(outcomes)
    assert s["score"]["value"] == pytest.approx(np.mean([1.0, 4.2, 2.5, 5.0]))
    assert s["score"]["ci95"] == pytest.approx(list(bootstrap_ci([1.0, 4.2, 2.5, 5.0])))
    assert s["histogram"]["edges"][0] == 0.0 and s["histogram"]["edges"][-1] == 5.0
    assert s["histogram"]["counts"] == [0, 0, 1, 0, 0, 1, 0, 0, 1, 1]   # 5.0 falls in the last bin
    assert [r["mean"] for r in s["per_round_mean_score"]] == pytest.approx([(0.5 + 4.2 + 2.0 + 1) / 4, (1.0 + 2.5 + 3) / 3, 5.0])
    assert [r["n"] for r in s["per_round_mean_score"]] == [4, 3, 1]
    assert s["peeked"] == 1 and s["mean_rounds"] == 2.0


def test_guesswhich_scores_are_the_agents_summary():
    outcomes = [gw_outcome(1, (1, 1)), gw_outcome(4, (5, 2)), gw_outcome(None, (6, 4, 3))]
    s, ref = guesswhich_monitor.scores(outcomes), summary(outcomes)
    assert s["mean_rank"]["value"] == ref["mean_rank"]["value"] == 2.5
    assert s["mean_rank"]["ci95"] == pytest.approx(ref["mean_rank"]["ci95"])
    assert s["per_round_mean_coarse_rank"] == ref["per_round_mean_coarse_rank"] == [4.0, 7 / 3, 3.0]
    assert s["found"] == 2
    # no finite value leaks as NaN into the JSON
    empty = guesswhich_monitor.scores([gw_outcome(None)])
    assert empty["mean_rank"]["value"] is None and empty["mrr"]["ci95"] == [None, None]


def test_visdial_scores_what_the_outcome_holds():
    s = visdial_monitor.scores([{"rounds": 10, "rounds_completed": 10, "complete": True, "mean_question_words": 4,
                                 "mean_answer_words": 2},
                                {"rounds": 10, "rounds_completed": 3, "complete": False, "mean_question_words": 6,
                                 "mean_answer_words": None}])
    assert (s["complete"]["correct"], s["complete"]["n"]) == (1, 2)
    assert s["mean_rounds_completed"] == 6.5 and s["mean_question_words"] == 5 and s["mean_answer_words"] == 2


# ----------------------------------------------------------------------------------- batch
def test_batch_scores_group_by_seats_and_count_only_ended_matches():
    b = make_batch(slug="mon-colors", game_id="colors_v1")
    lit = {"speaker": "human", "listener": "colors_literal_listener"}
    prag = {"speaker": "human", "listener": "colors_pragmatic_listener"}
    ended(b, "colors_v1", colors_outcome(far=(2, 2), close=(1, 2)), lit)
    ended(b, "colors_v1", colors_outcome(split=(0, 1)), lit, status=Match.Status.TIMED_OUT)
    ended(b, "colors_v1", colors_outcome(far=(1, 1)), prag)
    ended(b, "colors_v1", colors_outcome(far=(0, 5)), prag, status=Match.Status.ABORTED)
    ended(b, "colors_v1", colors_outcome(far=(0, 5)), prag, status=Match.Status.ACTIVE)
    data = monitor.batch_monitor(batch=b)
    assert data["matches"] == {"active": 1, "finished": 2, "timed_out": 1, "aborted": 1}
    s = data["scores"]
    assert s["ended"] == 3
    assert (s["all"]["accuracy"]["correct"], s["all"]["accuracy"]["n"]) == (4, 6)
    groups = {g["label"]: g for g in s["groups"]}
    assert set(groups) == {"speaker: human · listener: colors_literal_listener",
                           "speaker: human · listener: colors_pragmatic_listener"}
    literal = groups["speaker: human · listener: colors_literal_listener"]
    assert literal["matches"] == 2 and literal["human"] is True
    assert (literal["scores"]["accuracy"]["correct"], literal["scores"]["accuracy"]["n"]) == (3, 5)
    recent = {m["status"]: m for m in data["recent"]}
    assert recent["finished"]["summary"] in ("3/4 correct (far 2/2, close 1/2)", "1/1 correct (far 1/1)")
    assert "listener: colors_" in recent["aborted"]["seats"]


def test_batch_scores_follow_a_match_that_ends():
    b = make_batch(slug="mon-live", game_id="colors_v1", config={"rounds": 2})
    play.colors(b, hits=(True, True))
    assert monitor.batch_monitor(batch=b)["scores"]["all"]["accuracy"]["n"] == 2
    m = play.colors(b, hits=(False, True), finish=False, seed=8)
    assert monitor.batch_monitor(batch=b)["scores"]["ended"] == 1     # still active
    play.act(m, "speaker", {"type": "chat", "text": "last one"})
    m.refresh_from_db()
    target = m.state["rounds"][m.state["round"]]["positions"]["listener"][0]
    play.act(m, "listener", {"type": "click", "round": 2, "position": target})
    data = monitor.batch_monitor(batch=b)
    assert data["scores"]["ended"] == 2
    assert (data["scores"]["all"]["accuracy"]["correct"], data["scores"]["all"]["accuracy"]["n"]) == (3, 4)


# ----------------------------------------------------------------------------------- comparison
def test_guesswhich_comparison_is_the_reports_mann_whitney():
    b = make_batch(slug="mon-gw", game_id="guesswhich_v1")
    for rank in (1, 2, 2, 5):
        ended(b, "guesswhich_v1", gw_outcome(rank), {"questioner": "qbot", "answerer": "alice_exact"})
    for rank in (4, 6, 9, None):
        ended(b, "guesswhich_v1", gw_outcome(rank), {"questioner": "qbot", "answerer": "alice_weak"})
    r = monitor.compare_groups(game_id="guesswhich_v1", batches=["mon-gw"], role="answerer", a="alice_exact",
                               b="alice_weak")
    ref = compare_versions([1, 2, 2, 5], [4, 6, 9])
    row = r["test"]["rows"][0]
    assert row["u"] == ref["u"] and row["p_value"] == pytest.approx(ref["p_value"]) and (row["n_a"], row["n_b"]) == (4, 3)
    assert [g["matches"] for g in r["groups"]] == [4, 4] and r["groups"][0]["agent"] == 4
    # the command's grouping is this module's
    assert {k: len(v) for k, v in monitor.outcomes_by_role("guesswhich_v1", "answerer", ["mon-gw"]).items()} == {"alice_exact": 4, "alice_weak": 4}


def test_human_played_and_agent_only_groups_are_refused():
    b = make_batch(slug="mon-gw-mixed", game_id="guesswhich_v1")
    for rank in (1, 3):
        ended(b, "guesswhich_v1", gw_outcome(rank), {"questioner": "human", "answerer": "human"})
        ended(b, "guesswhich_v1", gw_outcome(rank + 1), {"questioner": "human", "answerer": "alice_exact"})
    for rank in (2, 7):
        ended(b, "guesswhich_v1", gw_outcome(rank), {"questioner": "qbot", "answerer": "alice_noisy"})
    with pytest.raises(monitor.CompareRefused, match="mix human-played matches with agent-only ones"):
        monitor.compare_groups(game_id="guesswhich_v1", batches=None, role="answerer", a="human", b="alice_noisy")
    # human answerers against ALICE with human questioners: both human-played, compared
    r = monitor.compare_groups(game_id="guesswhich_v1", batches=None, role="answerer", a="human", b="alice_exact")
    assert r["test"]["rows"][0]["n_a"] == 2
    # a group of both kinds is refused too, unless one kind is chosen
    ended(b, "guesswhich_v1", gw_outcome(2), {"questioner": "qbot", "answerer": "alice_exact"})
    with pytest.raises(monitor.CompareRefused, match="alice_exact \\(2 with a human seat and 1 agent-only\\)"):
        monitor.compare_groups(game_id="guesswhich_v1", batches=None, role="answerer", a="human", b="alice_exact")
    r = monitor.compare_groups(game_id="guesswhich_v1", batches=None, role="answerer", a="alice_noisy",
                               b="alice_exact", play="agent")
    assert [g["matches"] for g in r["groups"]] == [2, 1]
    with pytest.raises(monitor.CompareRefused, match="No ended matches with answerer alice_weak"):
        monitor.compare_groups(game_id="guesswhich_v1", batches=None, role="answerer", a="human", b="alice_weak")
    # the command refuses as well
    with pytest.raises(CommandError, match="mix human-played"):
        call_command("guesswhich_report", "--compare", "human", "alice_noisy", stdout=io.StringIO())
    out = io.StringIO()
    call_command("guesswhich_report", "--compare", "alice_noisy", "alice_exact", "--play", "agent", stdout=out)
    assert "Mann-Whitney U, ranks of alice_noisy vs alice_exact: n_a 2, n_b 1" in out.getvalue()


def test_colors_comparison_is_fisher_per_condition():
    b = make_batch(slug="mon-cmp", game_id="colors_v1")
    ended(b, "colors_v1", colors_outcome(far=(9, 10), split=(6, 10), close=(3, 10)),
          {"speaker": "colors_lexicon_speaker", "listener": "colors_pragmatic_listener"})
    ended(b, "colors_v1", colors_outcome(far=(8, 10), split=(4, 10), close=(1, 10)),
          {"speaker": "colors_lexicon_speaker", "listener": "colors_literal_listener"})
    r = monitor.compare_groups(game_id="colors_v1", batches=["mon-cmp"], role="listener",
                               a="colors_pragmatic_listener", b="colors_literal_listener")
    rows = {row["what"]: row for row in r["test"]["rows"]}
    assert rows["close"]["p_value"] == pytest.approx(stats.fisher_exact([[3, 7], [1, 9]]).pvalue)
    assert rows["all rounds"]["p_value"] == pytest.approx(stats.fisher_exact([[18, 12], [13, 17]]).pvalue)
    assert rows["far"]["accuracy_a"] == 0.9 and rows["far"]["odds_ratio"] == pytest.approx(9 * 2 / (1 * 8))
    with pytest.raises(monitor.CompareRefused, match="two different groups"):
        monitor.compare_groups(game_id="colors_v1", batches=None, role="listener", a="x", b="x")
    with pytest.raises(monitor.CompareRefused, match="no score to compare"):
        monitor.compare_groups(game_id="visdial_v1", batches=None, role="answerer", a="x", b="y")


# ----------------------------------------------------------------------------------- one match
def test_match_log_replays_a_colors_match_step_by_step():
    m = play.colors(hits=(True, False))
    log = monitor.match_log(match=m)
    assert log["replay_matches"] is True
    assert [s["seq"] for s in log["steps"]] == list(range(1, m.seq + 1))
    texts = [s["summary"] for s in log["steps"]]
    assert "speaker: “the color number 1”" in texts
    assert "Round 1: the listener clicked the target." in texts
    assert any(t.startswith("Round 2: the listener clicked a distractor") for t in texts)
    assert texts[-1] == "Game over: 1/2 correct."
    boards = [log["boards"][s["board"]] for s in log["steps"]]
    assert boards[0]["round"] == 1 and boards[0]["played"] == 0 and boards[0]["to_act"] == ["speaker"]
    first_chat = next(i for i, s in enumerate(log["steps"]) if s["chat"])
    assert boards[first_chat]["messages"] == [{"who": "speaker", "text": "the color number 1"}]
    assert boards[first_chat]["to_act"] == ["listener"]
    assert boards[-1]["over"] is True and (boards[-1]["correct"], boards[-1]["played"]) == (1, 2)
    assert boards[-1]["last"]["correct"] is False
    # the initial board's colors are the first round's (index 0: the target)
    assert boards[0]["colors"] == [list(c) for c in m.state["rounds"][0]["colors"]]


def test_match_log_of_guesswhich_and_a_tampered_snapshot():
    m = play.guesswhich(wrong_first=1)
    log = monitor.match_log(match=m)
    assert log["replay_matches"] is True
    assert log["images"]["secret"] == m.content["secret_id"] and len(log["images"]["pool"]) == 6
    last = log["boards"][-1]
    assert last["final_clicks"][-1] == m.content["secret_id"] and len(last["final_clicks"]) == 2
    assert [d["guess"] for d in last["dialog"]][:2] == [p["id"] for p in m.content["pool"]
                                                       if p["id"] != m.content["secret_id"]][:2]
    assert any(s["summary"] == f"Secret {m.content['secret_id']} found at rank 2." for s in log["steps"])
    assert monitor.outcome_summary("guesswhich_v1", m.outcome).startswith("secret found at rank 2 of 6")
    Match.objects.filter(pk=m.pk).update(state={**m.state, "round": 99})
    assert monitor.match_log(match=Match.objects.get(pk=m.pk))["replay_matches"] is False


def test_a_log_the_rules_refuse_stops_the_replay_with_the_reason(staff):
    m = play.colors(hits=(True, True))
    from live.models import MatchEvent

    click = MatchEvent.objects.filter(match=m, type="color_clicked").order_by("seq").first()
    MatchEvent.objects.filter(pk=click.pk).update(action={**click.action, "position": 7})
    log = monitor.match_log(match=Match.objects.get(pk=m.pk))
    assert log["replay_matches"] is False
    assert log["replay_error"].startswith(f"the rules refuse the action of event {click.seq} (listener): ")
    # later steps keep the last good state: round 1, nothing clicked yet
    assert log["boards"][log["steps"][-1]["board"]]["played"] == 0
    page = staff.get(f"/research/matches/{m.id}/")
    assert page.status_code == 200 and "The replay stops" in page.content.decode()


# ----------------------------------------------------------------------------------- views
@pytest.fixture
def staff(client):
    user = staff_user("mon-staff", "pw")
    client.force_login(user)
    return client


def test_pages_are_staff_only(client):
    m = play.visdial()
    for url in ("/research/", "/research/compare/", f"/research/matches/{m.id}/",
                f"/research/matches/{m.id}/img/{m.content['image_id']}.png"):
        r = client.get(url)
        assert r.status_code == 302 and "/admin/login/" in r["Location"], url


def test_staff_see_the_images_of_a_match(staff):
    m = play.guesswhich()
    secret = m.content["secret_id"]
    r = staff.get(f"/research/matches/{m.id}/img/{secret}.png?size=thumb")
    assert r.status_code == 200 and r["Content-Type"] == "image/png" and r.content[:4] == b"\x89PNG"
    assert staff.get(f"/research/matches/{m.id}/img/nope.png").status_code == 404
    assert staff.get(f"/research/matches/{m.id}/img/{secret}.png?size=huge").status_code == 404
    page = staff.get(f"/research/matches/{m.id}/").content.decode()
    assert f"/research/matches/{m.id}/img/{secret}.png?size=thumb" in page and "secret" in page
    v = play.visdial()
    r = staff.get(f"/research/matches/{v.id}/img/{v.content['image_id']}.png?size=full")
    assert r.status_code == 200 and r.content[:4] == b"\x89PNG"


def test_codraw_replay_canvas_svg(staff):
    m = play.codraw(pieces=2)
    log = monitor.match_log(match=m)
    assert log["replay_matches"] is True
    placed = [s for s in log["steps"] if s["type"] == "canvas_changed"]
    assert len(placed) == 2 and placed[0]["summary"].startswith("Round 0: the Drawer placed the ")
    before, after = (staff.get(f"/research/matches/{m.id}/replay/{seq}.svg") for seq in (1, placed[1]["seq"]))
    assert before.status_code == after.status_code == 200 and before["Content-Type"].startswith("image/svg+xml")
    untitled = lambda r: re.sub(rb"<title>.*?</title>", b"", r.content)  # noqa: E731
    # after the second placement the canvas is the one the round recorded (the Drawer then only chats)
    assert untitled(after) == untitled(staff.get(f"/research/matches/{m.id}/codraw/round/0.svg"))
    assert untitled(before) != untitled(after)
    assert staff.get(f"/research/matches/{m.id}/replay/{m.seq + 1}.svg").status_code == 404
    assert log["boards"][-1]["score"] == pytest.approx(m.outcome["score"])


def test_batch_json_keeps_the_progress_keys(staff):
    b = make_batch(slug="mon-json", game_id="visdial_v1", config={"rounds": 2})
    play.visdial(b)
    d = staff.get("/research/batches/mon-json/?format=json").json()
    assert {"batch", "game_id", "participants", "matches", "recent", "scores"} <= set(d)
    assert d["scores"]["all"]["complete"]["value"] == 1.0 and d["recent"][0]["summary"] == "2/2 rounds answered, complete"


def test_compare_page_shows_a_refusal_and_a_result(staff):
    b = make_batch(slug="mon-page", game_id="colors_v1")
    ended(b, "colors_v1", colors_outcome(far=(2, 3)), {"speaker": "human", "listener": "colors_literal_listener"})
    ended(b, "colors_v1", colors_outcome(far=(1, 3)), {"speaker": "colors_lexicon_speaker",
                                                      "listener": "colors_pragmatic_listener"})
    ended(b, "colors_v1", colors_outcome(far=(3, 3)), {"speaker": "human", "listener": "colors_pragmatic_listener"})
    base = "/research/compare/?game=colors_v1&batch=mon-page&role=listener&compare=1"
    page = staff.get(base + "&a=colors_literal_listener&b=colors_pragmatic_listener").content.decode()
    assert 'id="compare-refused"' in page and "mix human-played matches with agent-only ones" in page
    r = staff.get(base + "&a=colors_literal_listener&b=colors_pragmatic_listener&play=human")
    assert r.status_code == 200 and 'id="compare-result"' in r.content.decode()
    bad = staff.get(base + "&a=nobody&b=colors_pragmatic_listener")
    assert bad.status_code == 400
