"""The arms' statistics (research/arms.py), every number checked against SciPy on fixed data, Holm
against a hand-worked example, the planner against textbook values, Bradley-Terry against known
strengths and against a direct maximisation of its likelihood."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import optimize, stats

from research import arms
from research.arms import ArmMatch, Judgement, Preference
from games.codraw import monitor as codraw_monitor
from games.colors import monitor as colors_monitor
from games.guesswhich import monitor as guesswhich_monitor
from games.stats import Metric, mean_ci
from games.visdial import monitor as visdial_monitor

SCORE = codraw_monitor.METRICS[0]          # mean
ACCURACY = colors_monitor.METRICS[0]       # proportion over rounds
RANK = guesswhich_monitor.METRICS[0]       # ordinal, lower is better
COMPLETE = visdial_monitor.METRICS[0]      # proportion, one trial per match


def score_matches(arm, values, persons=None):
    return [ArmMatch(arm, {"score": v}, (persons[i],) if persons else ()) for i, v in enumerate(values)]


A = [2.1, 3.4, 1.9, 4.2, 3.3, 2.8, 3.9, 2.2]
B = [1.2, 2.0, 1.7, 2.9, 1.1, 2.4, 1.8]
C = [3.1, 2.5, 3.6, 2.9, 4.4, 3.8]


# ----------------------------------------------------------------------------------- the games' metrics
def test_each_game_declares_its_primary_metric_first():
    assert [m.key for m in arms.metrics("colors_v1")] == ["accuracy"]
    assert [m.key for m in arms.metrics("codraw_v1")] == ["score"]
    assert [m.key for m in arms.metrics("guesswhich_v1")] == ["rank", "reciprocal_rank", "rating"]
    assert [m.key for m in arms.metrics("visdial_v1")] == ["complete", "rounds_completed"]
    assert arms.metrics("no_such_game") == ()


def test_metric_values_of_outcomes():
    assert ACCURACY.of({"correct": 7, "played": 10}) == 0.7
    assert ACCURACY.of({"correct": 0, "played": 0}) is None
    assert RANK.of({"found": True, "rank": 3, "reciprocal_rank": 1 / 3}) == 3
    assert RANK.of({"found": False, "rank": None}) is None
    assert guesswhich_monitor.METRICS[1].of({"found": True, "rank": 4, "reciprocal_rank": 0.25}) == 0.25
    rating = guesswhich_monitor.METRICS[2]
    assert rating.of({"feedback": {"ratings": {"fluency": 4, "detail": 2}, "comment": ""}}) == 3
    assert rating.of({"feedback": {"skipped": True, "by": "system"}}) is None
    assert rating.of({"feedback": None}) is None
    assert COMPLETE.of({"complete": True}) == 1.0 and COMPLETE.of({"complete": False}) == 0.0
    assert SCORE.of({"score": None}) is None and SCORE.of({}) is None


def test_a_metric_is_checked_when_declared():
    with pytest.raises(ValueError, match="kind"):
        Metric("x", "x", "median", value=lambda o: 1)
    with pytest.raises(ValueError, match="trials"):
        Metric("x", "x", "proportion")
    with pytest.raises(ValueError, match="value"):
        Metric("x", "x", "mean")
    with pytest.raises(ValueError, match="delta"):
        Metric("x", "x", "mean", value=lambda o: 1, delta=0)


# ----------------------------------------------------------------------------------- per arm
def test_arm_table_of_a_mean_is_the_monitors_bootstrap_interval():
    matches = score_matches("a", A) + score_matches("b", B) + [ArmMatch("b", {"score": None})]
    rows = arms.arm_table(SCORE, matches, ["b", "a", "empty"])
    assert [r["arm"] for r in rows] == ["b", "a", "empty"]
    b, a, empty = rows
    assert (a["matches"], a["n"], b["matches"], b["n"]) == (8, 8, 8, 7)
    assert a["value"] == pytest.approx(np.mean(A)) and a["ci95"] == mean_ci(A)["ci95"]
    assert a["sd"] == pytest.approx(np.std(A, ddof=1))
    assert empty["matches"] == 0 and empty["value"] is None and empty["ci95"] == [None, None]


def test_arm_table_of_a_proportion_pools_rounds_with_a_wilson_interval():
    matches = [ArmMatch("x", {"correct": 7, "played": 10}), ArmMatch("x", {"correct": 9, "played": 10}),
               ArmMatch("x", {"correct": 0, "played": 0}), ArmMatch("y", {"correct": 3, "played": 10})]
    x, y = arms.arm_table(ACCURACY, matches)
    ci = stats.binomtest(16, 20).proportion_ci(0.95, method="wilson")
    assert (x["matches"], x["with_value"], x["n"], x["successes"]) == (3, 2, 20, 16)
    assert x["value"] == 0.8 and x["ci95"] == pytest.approx([ci.low, ci.high])
    assert y["value"] == 0.3


# ----------------------------------------------------------------------------------- Holm
def test_holm_against_a_hand_worked_example():
    # sorted: 0.005 x 4 = 0.02, 0.01 x 3 = 0.03, 0.03 x 2 = 0.06, 0.04 x 1 = 0.04 -> monotone 0.06
    assert arms.holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert arms.holm([0.5, None, 0.2]) == [pytest.approx(0.5), None, pytest.approx(0.4)]
    assert arms.holm([0.6, 0.7]) == [1.0, 1.0]
    assert arms.holm([]) == []


# ----------------------------------------------------------------------------------- pairs
def test_pairwise_means_are_welch_t_tests_with_holm_over_all_pairs():
    matches = score_matches("a", A) + score_matches("b", B) + score_matches("c", C)
    result = arms.pairwise(SCORE, matches, ["a", "b", "c"])
    rows = {(r["a"], r["b"]): r for r in result["pairs"]}
    assert list(rows) == [("a", "b"), ("a", "c"), ("b", "c")]
    data = {"a": A, "b": B, "c": C}
    raw = []
    for (x, y), row in rows.items():
        ref = stats.ttest_ind(data[x], data[y], equal_var=False)
        ci = ref.confidence_interval(0.95)
        assert row["test"] == "Welch's t-test (two-sided)"
        assert row["difference"] == pytest.approx(np.mean(data[x]) - np.mean(data[y]))
        assert row["statistic"] == pytest.approx(ref.statistic) and row["p_value"] == pytest.approx(ref.pvalue)
        assert row["ci95"] == pytest.approx([ci.low, ci.high])
        # the Welch interval by hand: difference +- t(df) x the unpooled standard error
        va, vb = np.var(data[x], ddof=1) / len(data[x]), np.var(data[y], ddof=1) / len(data[y])
        df = (va + vb) ** 2 / (va ** 2 / (len(data[x]) - 1) + vb ** 2 / (len(data[y]) - 1))
        half = stats.t.ppf(0.975, df) * math.sqrt(va + vb)
        assert row["df"] == pytest.approx(df)
        assert row["ci95"] == pytest.approx([row["difference"] - half, row["difference"] + half])
        raw.append(ref.pvalue)
    order = np.argsort(raw)
    by_hand = [0.0] * 3
    running = 0.0
    for i, k in enumerate(order):
        running = max(running, min(1.0, (3 - i) * raw[k]))
        by_hand[k] = running
    assert [r["p_holm"] for r in rows.values()] == pytest.approx(by_hand)
    assert rows[("a", "b")]["p_holm"] < 0.05 and rows[("a", "b")]["better"] == "a"
    assert rows[("b", "c")]["better"] == "c"
    assert rows[("a", "c")]["better"] is None   # not significant


def test_pairwise_proportions_are_fisher_tests_with_newcombes_interval():
    matches = ([ArmMatch("x", {"correct": 8, "played": 10})] * 7 + [ArmMatch("y", {"correct": 6, "played": 10})] * 8)
    row = arms.pairwise(ACCURACY, matches)["pairs"][0]
    ref = stats.fisher_exact([[56, 14], [48, 32]], alternative="two-sided")
    assert (row["n_a"], row["n_b"]) == (70, 80)
    assert row["statistic"] == pytest.approx(ref.statistic) and row["p_value"] == pytest.approx(ref.pvalue)
    assert row["p_holm"] == row["p_value"]   # one pair
    # Newcombe (1998), Statistics in Medicine 17:873, example (a): 56/70 - 48/80 = 0.2, 95 % 0.0524 to 0.3339
    assert row["difference"] == pytest.approx(0.2)
    assert row["ci95"] == pytest.approx([0.0524, 0.3339], abs=1e-4)


def test_pairwise_ordinal_is_mann_whitney_with_a_bootstrap_interval():
    ra, rb = [1, 2, 1, 3, 5, 2, 1, 4, 2], [3, 6, 4, 2, 7, 5, 8, 3]
    matches = ([ArmMatch("a", {"found": True, "rank": r}) for r in ra]
               + [ArmMatch("b", {"found": True, "rank": r}) for r in rb]
               + [ArmMatch("b", {"found": False, "rank": None})])
    row = arms.pairwise(RANK, matches)["pairs"][0]
    ref = stats.mannwhitneyu(ra, rb, alternative="two-sided")
    assert (row["n_a"], row["n_b"]) == (9, 8)
    assert row["statistic"] == pytest.approx(ref.statistic) and row["p_value"] == pytest.approx(ref.pvalue)
    assert row["p_superiority"] == pytest.approx(ref.statistic / 72)
    assert row["difference"] == pytest.approx(np.mean(ra) - np.mean(rb))
    lo, hi = row["ci95"]
    assert lo < row["difference"] < hi < 0
    assert row["ci95"] == arms.pairwise(RANK, matches)["pairs"][0]["ci95"]   # seeded
    assert row["better"] == "a"   # the lower rank


def test_pairwise_with_too_little_data_says_so():
    matches = score_matches("a", A) + score_matches("b", [2.0])
    row = arms.pairwise(SCORE, matches)["pairs"][0]
    assert row["p_value"] is None and row["p_holm"] is None and row["reason"] == arms.NOT_ENOUGH


# ----------------------------------------------------------------------------------- within subjects
def test_paired_by_person_against_ttest_rel_and_wilcoxon():
    people = [f"p{i}" for i in range(9)]
    xa = [3.1, 2.4, 4.0, 3.3, 2.9, 3.8, 2.2, 3.5, 3.0]
    xb = [2.5, 2.6, 3.1, 2.1, 2.8, 3.0, 1.9, 2.7, 3.4]
    matches = score_matches("a", xa, people) + score_matches("b", xb, people)
    # a person who played arm a twice counts once, with the mean of their two matches
    matches += [ArmMatch("a", {"score": 5.0}, ("p0",))]
    xa_mean = [(3.1 + 5.0) / 2] + xa[1:]
    # someone who played one arm only, and an agent-only match, are no pair
    matches += [ArmMatch("b", {"score": 4.0}, ("lonely",)), ArmMatch("a", {"score": 1.0})]
    row = arms.paired_by_person(SCORE, matches, ["a", "b"])["pairs"][0]
    t, w = stats.ttest_rel(xa_mean, xb), stats.wilcoxon(xa_mean, xb)
    ci = t.confidence_interval(0.95)
    assert row["pairs"] == 9
    assert row["mean_difference"] == pytest.approx(np.mean(np.subtract(xa_mean, xb)))
    assert row["t"] == pytest.approx(t.statistic) and row["t_p_value"] == pytest.approx(t.pvalue)
    assert row["ci95"] == pytest.approx([ci.low, ci.high])
    assert row["w"] == pytest.approx(w.statistic) and row["wilcoxon_p_value"] == pytest.approx(w.pvalue)
    assert row["t_p_holm"] == row["t_p_value"]


def test_paired_proportions_pool_each_persons_rounds_and_a_human_human_match_counts_for_both():
    matches = [ArmMatch("h", {"correct": 6, "played": 10}, ("p1", "p2")),
               ArmMatch("m", {"correct": 9, "played": 10}, ("p1",)),
               ArmMatch("m", {"correct": 7, "played": 10}, ("p1",)),
               ArmMatch("m", {"correct": 5, "played": 10}, ("p2",))]
    values = arms.person_values(ACCURACY, matches)
    assert values == {"p1": {"h": 0.6, "m": 0.8}, "p2": {"h": 0.6, "m": 0.5}}
    row = arms.paired_by_person(ACCURACY, matches)["pairs"][0]
    t = stats.ttest_rel([0.6, 0.6], [0.8, 0.5])
    assert row["pairs"] == 2 and row["t_p_value"] == pytest.approx(t.pvalue)


def test_paired_without_spread_or_pairs_says_why():
    same = score_matches("a", [3, 4, 5], ["p", "q", "r"]) + score_matches("b", [2, 3, 4], ["p", "q", "r"])
    row = arms.paired_by_person(SCORE, same)["pairs"][0]
    assert row["t_p_value"] is None and row["mean_difference"] == 1.0 and "same" in row["reason"]
    none = score_matches("a", [3, 4], ["p", "q"]) + score_matches("b", [2, 3], ["x", "y"])
    row = arms.paired_by_person(SCORE, none)["pairs"][0]
    assert row["pairs"] == 0 and row["reason"] == arms.NOT_ENOUGH


# ----------------------------------------------------------------------------------- planner
def test_t_test_sample_sizes_are_cohens():
    # Cohen (1988), table 2.4.1: two-sided alpha 0.05, power 0.80: 64 for d = 0.5, 26 for d = 0.8
    assert arms.t_test_n(0.5) == 64
    assert arms.t_test_n(0.8) == 26
    # Cohen's table says 393 for d = 0.2 (an approximation); the noncentral t gives power 0.7996 at
    # 393 and 0.8006 at 394, G*Power's 394 per group
    assert arms.t_test_n(0.2) == 394


def test_two_proportion_sample_size_is_fleiss():
    # 0.4 against 0.6: (1.96 sqrt(2 x .5 x .5) + 0.8416 sqrt(.24 + .24))^2 / 0.2^2 = 96.9 -> 97
    assert arms.two_proportion_n(0.4, 0.6) == 97
    assert arms.two_proportion_n(0.6, 0.4) == 97


def _with_sd(mean, sd, n):
    z = np.linspace(-1, 1, n)
    return list(mean + sd * (z - z.mean()) / z.std(ddof=1))


def test_plan_for_a_mean_from_the_pooled_sd():
    matches = score_matches("a", _with_sd(2.0, 2.0, 20)) + score_matches("b", _with_sd(3.0, 2.0, 70))
    result = arms.plan(SCORE, matches, delta=1.0)   # 1.0 / SD 2.0 = d 0.5 -> 64 per arm
    assert result["status"] == "ok" and result["pooled_sd"] == pytest.approx(2.0)
    assert result["per_arm"] == 64
    assert result["arms"] == [{"arm": "a", "have": 20, "more": 44}, {"arm": "b", "have": 70, "more": 0}]
    assert arms.plan(SCORE, matches)["delta"] == SCORE.delta == 0.5   # the game's default


def test_plan_for_an_ordinal_metric_allows_for_mann_whitneys_efficiency():
    ranks = [ArmMatch(arm, {"found": True, "rank": r}) for arm, values in
             (("a", _with_sd(3.0, 2.0, 10)), ("b", _with_sd(4.0, 2.0, 10))) for r in values]
    result = arms.plan(RANK, ranks, delta=1.0)
    assert result["per_arm"] == math.ceil(64 / (3 / math.pi)) == 68


def test_plan_for_a_proportion_counts_matches():
    # visual dialog: one trial per match, 40 % complete in both arms; 0.4 against 0.6 -> 97 matches
    matches = ([ArmMatch("a", {"complete": i < 4}) for i in range(10)]
               + [ArmMatch("b", {"complete": i < 8}) for i in range(20)])
    result = arms.plan(COMPLETE, matches, delta=0.2)
    assert result["pooled_proportion"] == pytest.approx(0.4) and result["compared_with"] == pytest.approx(0.6)
    assert result["per_arm"] == 97 and [a["more"] for a in result["arms"]] == [87, 77]
    # colors: 10 rounds a match, 70 % right: moved towards 0.5, 0.7 against 0.5 -> 93 rounds -> 10 matches
    colors = [ArmMatch(arm, {"correct": 7, "played": 10}) for arm in ("a", "b") for _ in range(6)]
    result = arms.plan(ACCURACY, colors, delta=0.2)
    # (1.96 sqrt(2 x .6 x .4) + 0.8416 sqrt(.21 + .25))^2 / 0.2^2 = 92.998 -> 93
    assert result["trials_per_arm"] == arms.two_proportion_n(0.7, 0.5) == 93
    assert result["per_arm"] == 10 and [a["more"] for a in result["arms"]] == [4, 4]


def test_plan_says_not_enough_data_yet():
    matches = score_matches("a", A) + score_matches("b", [1.0, 2.0])
    result = arms.plan(SCORE, matches)
    assert result["status"] == "not enough data yet" and "b" in result["reason"]
    assert [a["more"] for a in result["arms"]] == [None, None]
    assert arms.plan(SCORE, score_matches("a", A))["status"] == arms.NOT_ENOUGH   # one arm
    half = [ArmMatch(arm, {"complete": i % 2 == 0}) for arm in "ab" for i in range(10)]
    result = arms.plan(COMPLETE, half, delta=0.6)
    assert result["status"] == "difference too large" and result["per_arm"] is None
    flat = score_matches("a", [2.0] * 6) + score_matches("b", [2.0] * 6)
    assert arms.plan(SCORE, flat)["reason"] == "no spread in the values seen so far"


# ----------------------------------------------------------------------------------- all together
def test_game_arm_statistics_covers_every_metric():
    matches = [ArmMatch(arm, {"found": True, "rank": r, "reciprocal_rank": 1 / r,
                              "feedback": {"ratings": {"fluency": 1 + (r % 5)}}}, (f"p{r}",))
               for arm, base in (("sl", 1), ("rl", 2)) for r in range(base, base + 12)]
    result = arms.game_arm_statistics("guesswhich_v1", matches, ["sl", "rl"], deltas={"rank": 2.0})
    assert result["arms"] == ["sl", "rl"] and result["matches"] == 24
    assert [m["metric"]["key"] for m in result["metrics"]] == ["rank", "reciprocal_rank", "rating"]
    rank = result["metrics"][0]
    assert rank["plan"]["delta"] == 2.0 and rank["plan"]["status"] == "ok"
    assert rank["pairwise"]["pairs"][0]["test"] == "Mann-Whitney U (two-sided)"
    assert [a["n"] for a in rank["arms"]] == [12, 12]
    json.dumps(result, allow_nan=False)   # what the monitor's JSON carries
    json.dumps(arms.preferences(_simulate({"a": 0.5, "b": 0.0}, 10, 2, 0), n_boot=20), allow_nan=False)


# ----------------------------------------------------------------------------------- preferences
def _simulate(strengths: dict, people: int, per_person: int, seed: int):
    rng = np.random.default_rng(seed)
    names = list(strengths)
    out = []
    for p in range(people):
        for _ in range(per_person):
            i, j = rng.choice(len(names), 2, replace=False)
            a, b = names[i], names[j]
            p_a = 1 / (1 + math.exp(strengths[b] - strengths[a]))
            out.append(Preference(f"p{p}", a, b, a if rng.random() < p_a else b, "again"))
    return out


def _neg_log_likelihood(theta, wins):
    diff = theta[:, None] - theta[None, :]
    return -(wins * -np.logaddexp(0, -diff)).sum()


def test_bradley_terry_mm_is_the_maximum_likelihood():
    wins = np.array([[0, 7, 9, 4], [3, 0, 6, 2], [1, 4, 0, 1], [6, 8, 9, 0]], dtype=float)
    est = arms.bradley_terry(wins, prior=0)
    ref = optimize.minimize(_neg_log_likelihood, np.zeros(4), args=(wins,), method="BFGS", options={"gtol": 1e-10})
    assert est == pytest.approx(ref.x - ref.x.mean(), abs=1e-5)
    assert np.argsort(-est).tolist() == [3, 0, 1, 2]
    with pytest.raises(ValueError, match="never won"):
        arms.bradley_terry(np.array([[0, 3], [0, 0]]), prior=0)
    assert arms.bradley_terry(np.array([[0, 3], [0, 0]]))[0] > 0   # the prior keeps it finite
    with pytest.raises(ValueError, match="never compared"):
        arms.bradley_terry(np.array([[0, 1, 0], [1, 0, 0], [0, 0, 0]]))


def test_bradley_terry_recovers_known_strengths_with_bootstrap_intervals():
    truth = {"w": 1.0, "x": 0.4, "y": -0.3, "z": -1.1}   # mean 0
    answers = _simulate(truth, people=150, per_person=6, seed=1)
    result = arms.preferences(answers, n_boot=200, seed=3)["questions"]["again"]
    ranking = result["ranking"]
    assert [r["arm"] for r in ranking] == ["w", "x", "y", "z"]
    assert [r["rank"] for r in ranking] == [1, 2, 3, 4]
    for r in ranking:
        assert r["log_strength"] == pytest.approx(truth[r["arm"]], abs=0.25)
        assert r["ci95"][0] < truth[r["arm"]] < r["ci95"][1]
        assert r["ci95"][1] - r["ci95"][0] < 1.0
    assert ranking[0]["rank_ci95"] == [1, 1] and ranking[-1]["rank_ci95"] == [4, 4]
    assert result["bootstrap"] == {"resamples": 200, "of": 200, "seed": 3, "unit": "people", "prior": 1.0}
    again = arms.preferences(answers, n_boot=200, seed=3)["questions"]["again"]["ranking"]
    assert again == ranking   # seeded


def test_win_rates_per_pair_and_per_arm():
    answers = ([Preference(f"p{i}", "a", "b", "a", "again") for i in range(7)]
               + [Preference(f"q{i}", "b", "a", "b", "again") for i in range(3)]
               + [Preference("r", "a", "b", None, "again")]
               + [Preference(f"s{i}", "a", "c", "c", "again") for i in range(4)]
               + [Preference("t", "a", "b", "b", "understood")])
    result = arms.preferences(answers, n_boot=50)
    assert set(result["questions"]) == {"again", "understood"}
    q = result["questions"]["again"]
    assert q["answers"] == 15 and q["people"] == 15
    ab, ac = q["pairs"]
    assert (ab["a"], ab["b"], ab["answers"], ab["wins_a"], ab["wins_b"], ab["no_preference"]) == ("a", "b", 11, 7, 3, 1)
    ref = stats.binomtest(7, 10, 0.5)
    ci = ref.proportion_ci(0.95, method="wilson")
    assert ab["win_rate"] == 0.7 and ab["ci95"] == pytest.approx([ci.low, ci.high])
    assert ab["p_value"] == pytest.approx(ref.pvalue)
    p_ac = stats.binomtest(0, 4, 0.5).pvalue
    assert (ac["wins_a"], ac["wins_b"], ac["win_rate"]) == (0, 4, 0.0)
    assert [ab["p_holm"], ac["p_holm"]] == pytest.approx(arms.holm([ref.pvalue, p_ac]))
    per_arm = {r["arm"]: r for r in q["arms"]}
    assert (per_arm["a"]["decisive"], per_arm["a"]["win_rate"]) == (14, 0.5)
    assert (per_arm["b"]["decisive"], per_arm["b"]["win_rate"]) == (10, 0.3)
    assert (per_arm["c"]["decisive"], per_arm["c"]["win_rate"]) == (4, 1.0)
    assert [r["arm"] for r in q["ranking"]][0] == "c"
    assert result["questions"]["understood"]["ranking"][0]["arm"] == "b"


def test_preferences_are_checked():
    with pytest.raises(ValueError, match="itself"):
        Preference("p", "a", "a", "a")
    with pytest.raises(ValueError, match="neither"):
        Preference("p", "a", "b", "c")


def test_taken_for_a_person_per_arm():
    judgements = ([Judgement(f"p{i}", "human", i < 8, confidence=4) for i in range(10)]
                  + [Judgement(f"q{i}", "llm", i < 3, confidence=2 + i % 2) for i in range(12)])
    result = arms.taken_for_person(judgements)
    human, llm = result["arms"]
    ci = stats.binomtest(8, 10).proportion_ci(0.95, method="wilson")
    assert (human["answers"], human["said_person"], human["rate"]) == (10, 8, 0.8)
    assert human["ci95"] == pytest.approx([ci.low, ci.high]) and human["mean_confidence"] == 4
    assert (llm["rate"], llm["mean_confidence"]) == (0.25, 2.5)
    row = result["pairwise"]["pairs"][0]
    assert row["p_value"] == pytest.approx(stats.fisher_exact([[8, 2], [3, 9]]).pvalue)


# ----------------------------------------------------------------------------------- the selector
@pytest.mark.django_db
def test_batch_arm_matches_reads_ended_matches_by_arm_with_their_people():
    from live.models import Match, Seat
    from tests.support.factories import batch as make_batch, participant

    b = make_batch(game_id="codraw_v1", arms=[{"name": "rl", "agents": {"drawer": "x"}},
                                              {"name": "sl", "agents": {"drawer": "y"}}])
    people = [participant(b) for _ in range(3)]

    def match(arm, score, who, status=Match.Status.FINISHED):
        m = Match.objects.create(batch=b, game_id="codraw_v1", seed=1, content={}, state={}, status=status,
                                 outcome={"score": score}, arm=arm)
        Seat.objects.create(match=m, role="teller", kind=Seat.Kind.HUMAN, participant=who)
        Seat.objects.create(match=m, role="drawer", kind=Seat.Kind.AGENT, agent_name="x")
        return m

    first = match("sl", 3.0, people[0])
    match("rl", 2.0, people[0])
    match("rl", 4.0, people[1], status=Match.Status.TIMED_OUT)
    match("rl", 1.0, people[2], status=Match.Status.ACTIVE)    # not ended
    match("rl", 1.5, people[2], status=Match.Status.ABORTED)   # stopped outside the game
    match("", 0.5, people[2])                                 # outside the randomisation
    rows = arms.batch_arm_matches(batch=b)
    assert [(r.arm, r.outcome["score"], r.persons) for r in rows] == [
        ("sl", 3.0, (str(people[0].pk),)), ("rl", 2.0, (str(people[0].pk),)), ("rl", 4.0, (str(people[1].pk),))]
    assert rows[0].match_id == str(first.id)
    result = arms.batch_arm_statistics(batch=b)
    assert result["arms"] == ["rl", "sl"] and [a["n"] for a in result["metrics"][0]["arms"]] == [2, 1]
    assert result["metrics"][0]["paired"]["pairs"][0]["pairs"] == 1

    plain = make_batch(game_id="codraw_v1")
    Match.objects.create(batch=plain, game_id="codraw_v1", seed=1, content={}, state={},
                         status=Match.Status.FINISHED, outcome={"score": 2.5})
    assert [(r.arm, r.persons) for r in arms.batch_arm_matches(batch=plain)] == [(arms.ONE_ARM, ())]
    assert arms.batch_arm_names(plain) == [arms.ONE_ARM]
