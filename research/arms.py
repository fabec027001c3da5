"""Statistics of an experiment's arms (issue 24, items 3 and 4): pure functions over plain data.

The inputs are plain rows: :class:`ArmMatch` (one ended match: its arm, its outcome, the people who
played it), :class:`Preference` (one pairwise answer in the style of ACUTE-Eval) and
:class:`Judgement` (one "was your partner a person?" answer). The statistics query nothing;
:func:`batch_arm_matches` is the selector of a batch's ended matches with their arm (``Match.arm``),
:func:`batch_preferences` and :func:`batch_judgements` of the answers people gave at the end of their
matches (crowd/end_questions.py), and :func:`batch_arm_statistics` runs everything on them.

What is compared comes from the game: its monitor module's ``METRICS`` (:class:`games.stats.Metric`,
the first one the game's *primary* metric): colors accuracy over rounds (a proportion), CoDraw's
similarity score (a mean), GuessWhich's rank, reciprocal rank and feedback rating (ordinal), the
visual-dialog chat's completed dialogs and rounds answered. Per metric:

* :func:`arm_table`: each arm's matches, the metric and its 95 % interval, as the monitor computes it
  (Wilson for a proportion, :func:`games.stats.mean_ci`'s bootstrap for a mean or ordinal metric).
* :func:`pairwise`: every pair of arms: the difference with its 95 % interval, the test (Fisher's
  exact test for a proportion, with Newcombe's hybrid score interval of the difference; Welch's t
  for a mean, with the Welch interval; Mann-Whitney U for an ordinal metric, with a bootstrap
  interval of the difference of means), the raw p and the Holm-corrected p over all pairs.
* :func:`paired_by_person`: within subjects, the people who played both arms: each person's value
  per arm (their matches pooled), the paired t-test and the Wilcoxon signed-rank test on the
  differences, with Holm over all pairs of arms for each test.
* :func:`plan`: how many more matches each arm needs to detect a difference of ``delta`` with 80 %
  power at a two-sided alpha of 0.05, from the variance seen so far.

:func:`preferences` summarises pairwise preferences (win rates per pair and per arm, a
Bradley-Terry ranking with bootstrap intervals over people) and :func:`taken_for_person` the "was
it a person?" answers per arm. docs/monitor.md ("Arms: statistics") describes each method.
"""
from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from itertools import combinations

import numpy as np
from django.db.models import F

from games.registry import GAMES
from games.stats import Metric, mean_ci, num, proportion
from crowd.models import PartnerKindAnswer, PreferenceAnswer
from live.models import Batch, Match, Seat
from research.monitor import ENDED   # finished and timed out: the matches the monitor counts

ALPHA = 0.05
POWER = 0.80
MIN_N = 5             # values per arm before the planner answers
N_BOOT = 1000         # bootstrap resamples of the Bradley-Terry ranking
BT_PRIOR = 1.0        # virtual tied comparisons per pair of arms that met (Bradley-Terry)
ARE_MANN_WHITNEY = 3 / math.pi   # Mann-Whitney's efficiency relative to the t-test under normality
NOT_ENOUGH = "not enough data yet"


def _stats():
    """scipy.stats, imported on first use: importing it costs about 1.3 s of CPU, and every Django
    process imports this module (the game registry, the research pages) without testing anything."""
    from scipy import stats

    return stats


@dataclass(frozen=True)
class ArmMatch:
    """One ended match: its arm, its outcome (the game's ``outcome`` dict) and the participant ids
    of the people who played it (none: agent-only)."""

    arm: str
    outcome: dict
    persons: tuple = ()
    match_id: str = ""


@dataclass(frozen=True)
class Preference:
    """One pairwise answer: ``person`` preferred ``winner`` (``arm_a`` or ``arm_b``; None: no
    preference) on ``question`` ("which partner would you rather play with again?")."""

    person: str
    arm_a: str
    arm_b: str
    winner: str | None
    question: str = ""

    def __post_init__(self):
        if self.arm_a == self.arm_b:
            raise ValueError(f"A preference of {self.person!r} compares arm {self.arm_a!r} with itself.")
        if self.winner is not None and self.winner not in (self.arm_a, self.arm_b):
            raise ValueError(f"A preference of {self.person!r} names winner {self.winner!r}, "
                             f"neither {self.arm_a!r} nor {self.arm_b!r}.")


@dataclass(frozen=True)
class Judgement:
    """One "was your partner a person or an AI?" answer about a match of ``arm``."""

    person: str
    arm: str
    said_person: bool
    confidence: float | None = None


ONE_ARM = "all matches"


def batch_arm_names(batch: Batch) -> list[str]:
    """The batch's arms in its own order (``Batch.arms``); a batch without arms has one."""
    return [str(a.get("name")) for a in batch.arms or [] if a.get("name")] or [ONE_ARM]


def batch_arm_matches(*, batch: Batch) -> list[ArmMatch]:
    """The selector: the batch's ended matches (practice rounds never) as :class:`ArmMatch` rows,
    oldest first, with their ``Match.arm`` and the participants of their human seats (two
    queries). In a batch with arms, a match outside the randomisation (no arm recorded: e.g.
    ``on_timeout``'s agent) belongs to no arm and is left out; a batch without arms is one arm,
    :data:`ONE_ARM`."""
    with_arms = bool(batch.arms)
    matches = Match.objects.filter(batch=batch, status__in=list(ENDED), practice__isnull=True)
    if with_arms:
        matches = matches.exclude(arm="")
    rows = list(matches.order_by("created_at", "id").values_list("id", "arm", "outcome"))
    persons: dict = defaultdict(list)
    seats = (Seat.objects.filter(match__in=matches, kind=Seat.Kind.HUMAN, participant__isnull=False)
             .order_by("role").values_list("match_id", "participant_id"))
    for match_id, participant_id in seats:
        persons[match_id].append(str(participant_id))
    return [ArmMatch(arm if with_arms else ONE_ARM, outcome or {}, tuple(persons.get(mid, ())), str(mid))
            for mid, arm, outcome in rows]


def batch_preferences(*, batch: Batch) -> list[Preference]:
    """The selector of the pairwise answers people gave in the batch (``crowd.models.PreferenceAnswer``,
    crowd/end_questions.py) as :class:`Preference` rows, oldest first: ``winner`` the arm of the
    partner chosen, None for no preference. Pairs of one arm (a batch's arms renamed since) are
    left out."""
    rows = (PreferenceAnswer.objects.filter(batch=batch).exclude(arm_a=F("arm_b"))
            .order_by("created", "id").values_list("participant_id", "arm_a", "arm_b", "choice", "question"))
    return [Preference(str(person), a, b, {"a": a, "b": b}.get(choice), question)
            for person, a, b, choice, question in rows]


def batch_judgements(*, batch: Batch) -> list[Judgement]:
    """The selector of the batch's "was your partner a person or an AI?" answers
    (``crowd.models.PartnerKindAnswer``) as :class:`Judgement` rows, oldest first; in a batch with
    arms, answers about matches outside the randomisation (no arm) are left out."""
    rows = PartnerKindAnswer.objects.filter(batch=batch)
    if batch.arms:
        rows = rows.exclude(arm="")
    return [Judgement(str(person), arm if batch.arms else ONE_ARM, said, confidence)
            for person, arm, said, confidence in rows.order_by("created", "id").values_list(
                "participant_id", "arm", "said_person", "confidence")]


def batch_arm_statistics(*, batch: Batch, deltas: dict | None = None) -> dict:
    """:func:`game_arm_statistics` of the batch's ended matches, its arms in its own order, with
    the people's pairwise ``preferences`` and the rates at which each arm's partner was
    ``taken_for_person`` (None where the batch has no such answers)."""
    names = batch_arm_names(batch)
    out = game_arm_statistics(batch.game_id, batch_arm_matches(batch=batch), names, deltas=deltas)
    answers, judgements = batch_preferences(batch=batch), batch_judgements(batch=batch)
    out["preferences"] = preferences(answers, names) if answers else None
    out["taken_for_person"] = taken_for_person(judgements, names) if judgements else None
    return out


def metrics(game_id: str) -> tuple[Metric, ...]:
    """The game's metrics (its monitor's ``METRICS``; the first is the primary one); () when the
    game declares none or is unknown."""
    spec = GAMES.get(game_id)
    monitor = spec.monitor if spec is not None else None
    return tuple(getattr(monitor, "METRICS", ()))


def arm_names(matches, arms=None) -> list[str]:
    """``arms`` (the batch's order) followed by any other arm the matches name, in order of appearance."""
    names = list(arms or [])
    for m in matches:
        if m.arm not in names:
            names.append(m.arm)
    return names


def _by_arm(matches, names) -> dict[str, list[ArmMatch]]:
    out: dict[str, list[ArmMatch]] = {name: [] for name in names}
    for m in matches:
        out.setdefault(m.arm, []).append(m)
    return out


def _counts(metric: Metric, matches) -> tuple[int, int, int]:
    """A proportion's (successes, trials, matches with trials) over ``matches``."""
    k = n = used = 0
    for m in matches:
        st = metric.trials(m.outcome) if m.outcome else None
        if st and st[1]:
            k, n, used = k + int(st[0]), n + int(st[1]), used + 1
    return k, n, used


def _values(metric: Metric, matches) -> list[float]:
    return [v for v in (metric.of(m.outcome) for m in matches) if v is not None]


def _metric_info(metric: Metric) -> dict:
    return {"key": metric.key, "label": metric.label, "kind": metric.kind,
            "higher_is_better": metric.higher_is_better, "delta": metric.delta, "unit": metric.unit}


# ----------------------------------------------------------------------------------- per arm
def arm_table(metric: Metric, matches, arms=None) -> list[dict]:
    """Per arm: its matches, how many have a value (``n``: a proportion's trials), the value and
    its 95 % interval; a proportion also ``successes``, a mean or ordinal metric its ``sd``."""
    names = arm_names(matches, arms)
    rows = []
    for name, group in _by_arm(matches, names).items():
        if metric.kind == "proportion":
            k, n, used = _counts(metric, group)
            p = proportion(k, n)
            rows.append({"arm": name, "matches": len(group), "with_value": used, "n": p["n"],
                         "successes": p["correct"], "value": p["value"], "ci95": p["ci95"]})
        else:
            values = _values(metric, group)
            ci = mean_ci(values)
            rows.append({"arm": name, "matches": len(group), "with_value": len(values), "n": len(values),
                         "value": ci["value"], "ci95": ci["ci95"],
                         "sd": num(np.std(values, ddof=1)) if len(values) > 1 else None})
    return rows


# ----------------------------------------------------------------------------------- Holm
def holm(pvalues) -> list[float | None]:
    """Holm's step-down adjustment of ``pvalues`` (None stays None and is not counted): the i-th
    smallest of m p-values is multiplied by m - i + 1, made monotone, capped at 1."""
    idx = [i for i, p in enumerate(pvalues) if p is not None]
    order = sorted(idx, key=lambda i: pvalues[i])
    m = len(order)
    out: list[float | None] = [None] * len(pvalues)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * float(pvalues[i])))
        out[i] = running
    return out


# ----------------------------------------------------------------------------------- pairs
def newcombe_interval(k1: int, n1: int, k2: int, n2: int) -> tuple[float, float]:
    """Newcombe's hybrid score 95 % interval of p1 - p2 (his method 10, from the Wilson intervals)."""
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = proportion(k1, n1)["ci95"]
    l2, u2 = proportion(k2, n2)["ci95"]
    d = p1 - p2
    return (d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2), d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2))


def _diff_of_means(x, y, axis=-1):
    return np.mean(x, axis=axis) - np.mean(y, axis=axis)


def bootstrap_difference(a, b, *, seed: int = 0, n_resamples: int = 10000) -> tuple[float | None, float | None]:
    """A 95 % interval of mean(a) - mean(b), each sample resampled on its own (BCa, seeded; the
    percentile interval where BCa fails on a degenerate sample)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.size < 2 or b.size < 2:
        return (None, None)
    if np.all(a == a[0]) and np.all(b == b[0]):
        d = float(a[0] - b[0])
        return (d, d)
    for method in ("BCa", "percentile"):
        res = _stats().bootstrap((a, b), _diff_of_means, confidence_level=0.95, n_resamples=n_resamples,
                              method=method, vectorized=True, rng=np.random.default_rng(seed))
        lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
        if math.isfinite(lo) and math.isfinite(hi):
            return (lo, hi)
    return (None, None)


TESTS = {"proportion": "Fisher's exact test (two-sided); difference: Newcombe's hybrid score interval",
         "mean": "Welch's t-test (two-sided); difference: Welch interval",
         "ordinal": "Mann-Whitney U (two-sided); difference of means: bootstrap interval (BCa)"}


def _pair(metric: Metric, a: str, ga, b: str, gb) -> dict:
    row = {"a": a, "b": b, "test": TESTS[metric.kind].split(";")[0]}
    if metric.kind == "proportion":
        (ka, na, _), (kb, nb, _) = _counts(metric, ga), _counts(metric, gb)
        row.update(n_a=na, n_b=nb, value_a=ka / na if na else None, value_b=kb / nb if nb else None)
        if not na or not nb:
            return {**row, "difference": None, "ci95": [None, None], "statistic": None, "p_value": None,
                    "reason": NOT_ENOUGH}
        res = _stats().fisher_exact([[ka, na - ka], [kb, nb - kb]], alternative="two-sided")
        lo, hi = newcombe_interval(ka, na, kb, nb)
        return {**row, "difference": ka / na - kb / nb, "ci95": [num(lo), num(hi)],
                "statistic": num(res.statistic), "statistic_name": "odds ratio", "p_value": num(res.pvalue)}
    va, vb = _values(metric, ga), _values(metric, gb)
    row.update(n_a=len(va), n_b=len(vb), value_a=num(np.mean(va)) if va else None,
               value_b=num(np.mean(vb)) if vb else None)
    if metric.kind == "mean":
        if len(va) < 2 or len(vb) < 2:
            return {**row, "difference": None, "ci95": [None, None], "statistic": None, "p_value": None,
                    "reason": NOT_ENOUGH}
        res = _stats().ttest_ind(va, vb, equal_var=False)
        ci = res.confidence_interval(0.95)
        return {**row, "difference": row["value_a"] - row["value_b"], "ci95": [num(ci.low), num(ci.high)],
                "statistic": num(res.statistic), "statistic_name": "t", "df": num(res.df),
                "p_value": num(res.pvalue)}
    if not va or not vb:
        return {**row, "difference": None, "ci95": [None, None], "statistic": None, "p_value": None,
                "reason": NOT_ENOUGH}
    res = _stats().mannwhitneyu(va, vb, alternative="two-sided")
    lo, hi = bootstrap_difference(va, vb)
    return {**row, "difference": row["value_a"] - row["value_b"], "ci95": [num(lo), num(hi)],
            "statistic": num(res.statistic), "statistic_name": "U", "p_value": num(res.pvalue),
            # the probability that a match of arm a scores above one of arm b (ties count half)
            "p_superiority": num(res.statistic / (len(va) * len(vb)))}


def _better(metric: Metric, row: dict) -> str | None:
    """The arm the difference favours when its Holm-corrected p is below alpha, else None."""
    if row.get("p_holm") is None or row["p_holm"] >= ALPHA or not row.get("difference"):
        return None
    a_higher = row["difference"] > 0
    return row["a"] if a_higher == metric.higher_is_better else row["b"]


def pairwise(metric: Metric, matches, arms=None) -> dict:
    """Every pair of arms (in arm order, a before b): the difference a - b with its 95 % interval,
    the test, the raw p and the Holm-corrected p over all pairs (``p_holm``), and ``better``: the
    arm the difference favours when ``p_holm`` < 0.05."""
    names = arm_names(matches, arms)
    grouped = _by_arm(matches, names)
    rows = [_pair(metric, a, grouped[a], b, grouped[b]) for a, b in combinations(names, 2)]
    for row, p in zip(rows, holm([r["p_value"] for r in rows])):
        row["p_holm"] = p
        row["better"] = _better(metric, row)
    return {"test": TESTS[metric.kind], "correction": "Holm over all pairs of arms", "pairs": rows}


# ----------------------------------------------------------------------------------- within subjects
def person_values(metric: Metric, matches) -> dict[str, dict[str, float]]:
    """person -> arm -> the person's value in that arm (a proportion: their successes over their
    trials; otherwise the mean over their matches)."""
    sums: dict = defaultdict(lambda: defaultdict(lambda: [0.0, 0.0]))
    for m in matches:
        if metric.kind == "proportion":
            st = metric.trials(m.outcome) if m.outcome else None
            if not st or not st[1]:
                continue
            add = (float(st[0]), float(st[1]))
        else:
            v = metric.of(m.outcome)
            if v is None:
                continue
            add = (v, 1.0)
        for person in m.persons:
            acc = sums[person][m.arm]
            acc[0] += add[0]
            acc[1] += add[1]
    return {p: {arm: s / n for arm, (s, n) in arms.items()} for p, arms in sums.items()}


def _paired_pair(values: dict, a: str, b: str) -> dict:
    people = sorted(p for p, v in values.items() if a in v and b in v)
    xa = np.array([values[p][a] for p in people], dtype=float)
    xb = np.array([values[p][b] for p in people], dtype=float)
    row = {"a": a, "b": b, "pairs": len(people),
           "mean_a": num(xa.mean()) if people else None, "mean_b": num(xb.mean()) if people else None,
           "mean_difference": num((xa - xb).mean()) if people else None,
           "ci95": [None, None], "t": None, "t_p_value": None, "w": None, "wilcoxon_p_value": None}
    if len(people) < 2:
        return {**row, "reason": NOT_ENOUGH}
    diffs = xa - xb
    if np.all(diffs == diffs[0]):
        # no spread in the differences: neither test is defined (every person moved the same way)
        return {**row, "ci95": [row["mean_difference"]] * 2, "reason": "every person's difference is the same"}
    t = _stats().ttest_rel(xa, xb)
    ci = t.confidence_interval(0.95)
    row.update(t=num(t.statistic), df=num(t.df), t_p_value=num(t.pvalue), ci95=[num(ci.low), num(ci.high)])
    if np.any(diffs != 0):
        w = _stats().wilcoxon(xa, xb, alternative="two-sided")
        row.update(w=num(w.statistic), wilcoxon_p_value=num(w.pvalue))
    return row


def paired_by_person(metric: Metric, matches, arms=None) -> dict:
    """Within subjects: for every pair of arms, the people who played both (``pairs``), the mean
    of their differences a - b with its 95 % interval, the paired t-test and the Wilcoxon
    signed-rank test (zero differences dropped, SciPy's default), each with Holm over all pairs."""
    names = arm_names(matches, arms)
    values = person_values(metric, matches)
    rows = [_paired_pair(values, a, b) for a, b in combinations(names, 2)]
    for key in ("t_p_value", "wilcoxon_p_value"):
        for row, p in zip(rows, holm([r[key] for r in rows])):
            row[key.replace("_p_value", "_p_holm")] = p
    return {"tests": "paired t-test and Wilcoxon signed-rank (two-sided) on each person's differences",
            "correction": "Holm over all pairs of arms, per test", "pairs": rows}


# ----------------------------------------------------------------------------------- planner
def t_test_n(d: float, *, alpha: float = ALPHA, power: float = POWER) -> int:
    """Matches per arm for a two-sided two-sample t-test to detect a standardised difference ``d``
    with ``power`` (equal arms; exact, through the noncentral t distribution)."""
    if d <= 0:
        raise ValueError("The difference to detect must be positive.")
    z = _stats().norm.ppf(1 - alpha / 2) + _stats().norm.ppf(power)
    n = max(2, int(math.floor(2 * (z / d) ** 2)))   # the normal approximation, from just below

    def achieved(n):
        df = 2 * n - 2
        crit = _stats().t.ppf(1 - alpha / 2, df)
        nc = d * math.sqrt(n / 2)
        return _stats().nct.sf(crit, df, nc) + _stats().nct.cdf(-crit, df, nc)

    while n > 2 and achieved(n - 1) >= power:
        n -= 1
    while achieved(n) < power:
        n += 1
    return n


def two_proportion_n(p1: float, p2: float, *, alpha: float = ALPHA, power: float = POWER) -> int:
    """Trials per arm to tell ``p1`` from ``p2`` with a two-sided test (Fleiss's normal
    approximation, without continuity correction)."""
    if p1 == p2:
        raise ValueError("The two proportions must differ.")
    za, zb = _stats().norm.ppf(1 - alpha / 2), _stats().norm.ppf(power)
    pbar = (p1 + p2) / 2
    n = (za * math.sqrt(2 * pbar * (1 - pbar)) + zb * math.sqrt(p1 * (1 - p1) + p2 * (1 - p2))) ** 2 / (p1 - p2) ** 2
    return int(math.ceil(n - 1e-9))


def plan(metric: Metric, matches, arms=None, *, delta: float | None = None, alpha: float = ALPHA,
         power: float = POWER, min_n: int = MIN_N) -> dict:
    """How many more matches each arm needs so that a difference of ``delta`` (the metric's own
    default when None) between two arms is detected with ``power`` at two-sided ``alpha``, from
    the spread seen so far: the pooled SD of all arms (a mean; an ordinal metric's n is divided
    by Mann-Whitney's efficiency 3/pi), or the pooled proportion (moved by ``delta`` towards 0.5,
    the larger variance; trials turned into matches by the mean trials per match). ``more`` is
    never negative. Below ``min_n`` values in any arm: ``status`` is "not enough data yet"."""
    delta = float(metric.delta if delta is None else delta)
    names = arm_names(matches, arms)
    grouped = _by_arm(matches, names)
    out = {"metric": metric.key, "delta": delta, "alpha": alpha, "power": power, "min_n": min_n,
           "per_arm": None, "arms": []}
    if not delta > 0:
        raise ValueError("The difference to detect must be positive.")
    if metric.kind == "proportion":
        counts = {a: _counts(metric, g) for a, g in grouped.items()}
        have = {a: c[2] for a, c in counts.items()}
    else:
        values = {a: _values(metric, g) for a, g in grouped.items()}
        have = {a: len(v) for a, v in values.items()}
    short = [a for a in names if have[a] < min_n]
    if len(names) < 2 or short:
        why = (f"{', '.join(short)}: fewer than {min_n} matches with a value" if short
               else "an experiment needs two arms")
        return {**out, "status": NOT_ENOUGH, "reason": why,
                "arms": [{"arm": a, "have": have[a], "more": None} for a in names]}
    if metric.kind == "proportion":
        k = sum(c[0] for c in counts.values())
        n = sum(c[1] for c in counts.values())
        p1 = k / n
        p2 = p1 + delta if p1 <= 0.5 else p1 - delta
        if not 0 <= p2 <= 1:
            return {**out, "status": "difference too large", "pooled_proportion": p1,
                    "reason": f"a difference of {delta:g} from {p1:.2f} leaves the range 0 to 1",
                    "arms": [{"arm": a, "have": have[a], "more": None} for a in names]}
        trials = two_proportion_n(p1, p2, alpha=alpha, power=power)
        per_match = n / sum(c[2] for c in counts.values())
        per_arm = int(math.ceil(trials / per_match - 1e-9))
        out.update(method="two proportions, normal approximation (Fleiss)", pooled_proportion=p1,
                   compared_with=p2, trials_per_arm=trials, trials_per_match=per_match)
    else:
        groups = [np.asarray(v, dtype=float) for v in values.values()]
        dof = sum(len(g) - 1 for g in groups)
        sd = math.sqrt(sum(((g - g.mean()) ** 2).sum() for g in groups) / dof)
        if sd == 0:
            return {**out, "status": NOT_ENOUGH, "reason": "no spread in the values seen so far", "pooled_sd": 0.0,
                    "arms": [{"arm": a, "have": have[a], "more": None} for a in names]}
        per_arm = t_test_n(delta / sd, alpha=alpha, power=power)
        method = "two-sample t-test, noncentral t (exact for normal data), pooled SD"
        if metric.kind == "ordinal":
            per_arm = int(math.ceil(per_arm / ARE_MANN_WHITNEY))
            method += ", divided by Mann-Whitney's efficiency 3/pi"
        out.update(method=method, pooled_sd=sd, effect_size=delta / sd)
    return {**out, "status": "ok", "per_arm": per_arm,
            "arms": [{"arm": a, "have": have[a], "more": max(0, per_arm - have[a])} for a in names]}


# ----------------------------------------------------------------------------------- all of it
def arm_statistics(metric: Metric, matches, arms=None, *, delta: float | None = None) -> dict:
    """One metric's per-arm table, pairwise differences, within-subject pairs and planner."""
    matches = list(matches)
    return {"metric": _metric_info(metric), "arms": arm_table(metric, matches, arms),
            "pairwise": pairwise(metric, matches, arms), "paired": paired_by_person(metric, matches, arms),
            "plan": plan(metric, matches, arms, delta=delta)}


def game_arm_statistics(game_id: str, matches, arms=None, *, deltas: dict | None = None) -> dict:
    """:func:`arm_statistics` for each of the game's metrics (primary first)."""
    matches = list(matches)
    deltas = deltas or {}
    return {"game_id": game_id, "arms": arm_names(matches, arms), "matches": len(matches),
            "metrics": [arm_statistics(m, matches, arms, delta=deltas.get(m.key)) for m in metrics(game_id)]}


# ----------------------------------------------------------------------------------- preferences
def _wins(answers, index: dict) -> np.ndarray:
    """W[i, j]: how often arm i was preferred to arm j (no preference: half to each)."""
    k = len(index)
    w = np.zeros((k, k))
    for ans in answers:
        i, j = index[ans.arm_a], index[ans.arm_b]
        if ans.winner is None:
            w[i, j] += 0.5
            w[j, i] += 0.5
        elif ans.winner == ans.arm_a:
            w[i, j] += 1
        else:
            w[j, i] += 1
    return w


def _connected(n_ij: np.ndarray) -> bool:
    k = len(n_ij)
    seen, todo = {0}, [0]
    while todo:
        i = todo.pop()
        for j in np.nonzero(n_ij[i] > 0)[0]:
            if int(j) not in seen:
                seen.add(int(j))
                todo.append(int(j))
    return len(seen) == k


def _with_prior(wins: np.ndarray, prior: float) -> np.ndarray:
    met = (wins + np.swapaxes(wins, -1, -2)) > 0
    return wins + (prior / 2) * met


def _fittable(wins: np.ndarray) -> str | None:
    """Why a (prior-added) win matrix has no finite Bradley-Terry estimate, else None."""
    if not _connected(wins + wins.T):
        return "Some arms were never compared with the others, directly or through others."
    if np.any(wins.sum(axis=1) <= 0):
        return "An arm never won a comparison: its strength has no finite estimate (use a prior)."
    return None


def _mm(wins: np.ndarray, *, tol: float = 1e-10, max_iter: int = 100000) -> np.ndarray:
    """Hunter's MM iterations on a stack of win matrices (B x k x k) at once: log-strengths, mean 0."""
    n_ij = wins + np.swapaxes(wins, -1, -2)
    w = wins.sum(axis=-1)
    log_s = np.zeros(w.shape)
    for _ in range(max_iter):
        s = np.exp(log_s)
        denom = (n_ij / (s[..., :, None] + s[..., None, :])).sum(axis=-1)
        new = np.log(w / denom)
        new -= new.mean(axis=-1, keepdims=True)
        done = np.max(np.abs(new - log_s)) < tol
        log_s = new
        if done:
            break
    return log_s


def bradley_terry(wins: np.ndarray, *, prior: float = BT_PRIOR) -> np.ndarray:
    """Log-strengths (mean 0) of the Bradley-Terry model P(i beats j) = s_i / (s_i + s_j) fitted to
    the win matrix by Hunter's (2004) MM algorithm, with ``prior`` virtual tied comparisons (half a
    win each way) added to every pair that met, so that an arm that always won still has a finite
    strength (``prior=0``: the plain maximum likelihood, which needs every arm to have won and lost).
    Raises ValueError when the arms do not all meet, directly or through others."""
    wins = _with_prior(np.asarray(wins, dtype=float), prior)
    why = _fittable(wins)
    if why:
        raise ValueError(why)
    return _mm(wins[None])[0]


def _win_row(wins_x: float, wins_y: float) -> dict:
    """A win rate over the decisive answers with its Wilson interval and a two-sided binomial test
    against 0.5."""
    n = int(round(wins_x + wins_y))
    p = proportion(int(round(wins_x)), n)
    test = _stats().binomtest(int(round(wins_x)), n, 0.5) if n else None
    return {"decisive": n, "win_rate": p["value"], "ci95": p["ci95"], "p_value": num(test.pvalue) if test else None}


def _question_summary(answers, names, *, n_boot: int, seed: int, prior: float) -> dict:
    index = {a: i for i, a in enumerate(names)}
    decisive = _wins([a for a in answers if a.winner is not None], index)
    ties = defaultdict(int)
    for a in answers:
        if a.winner is None:
            ties[frozenset((a.arm_a, a.arm_b))] += 1
    pairs = []
    for x, y in combinations(names, 2):
        i, j = index[x], index[y]
        n = int(decisive[i, j] + decisive[j, i]) + ties[frozenset((x, y))]
        if not n:
            continue
        pairs.append({"a": x, "b": y, "answers": n, "wins_a": int(decisive[i, j]), "wins_b": int(decisive[j, i]),
                      "no_preference": ties[frozenset((x, y))], **_win_row(decisive[i, j], decisive[j, i])})
    for row, p in zip(pairs, holm([r["p_value"] for r in pairs])):
        row["p_holm"] = p
    per_arm = [{"arm": a, **_win_row(decisive[index[a]].sum(), decisive[:, index[a]].sum())} for a in names]
    out = {"answers": len(answers), "people": len({a.person for a in answers}), "pairs": pairs, "arms": per_arm}
    met = [a for a in names if (decisive[index[a]].sum() + decisive[:, index[a]].sum()
                                + sum(v for k, v in ties.items() if a in k)) > 0]
    if len(met) < 2:
        return {**out, "ranking": None, "reason": NOT_ENOUGH}
    idx = {a: i for i, a in enumerate(met)}
    people = sorted({a.person for a in answers})
    per_person = np.zeros((len(people), len(met), len(met)))
    pindex = {p: i for i, p in enumerate(people)}
    for ans in answers:
        if ans.arm_a in idx and ans.arm_b in idx:
            per_person[pindex[ans.person]] += _wins([ans], idx)
    try:
        est = bradley_terry(per_person.sum(axis=0), prior=prior)
    except ValueError as exc:
        return {**out, "ranking": None, "reason": str(exc)}
    rng = np.random.default_rng(seed)
    counts = np.stack([np.bincount(rng.integers(0, len(people), len(people)), minlength=len(people))
                       for _ in range(n_boot)]) if n_boot else np.zeros((0, len(people)))
    resampled = _with_prior(np.tensordot(counts, per_person, axes=1), prior)
    # a resample in which some arms never met (or one never won, without a prior) has no ranking
    resampled = resampled[[_fittable(w) is None for w in resampled]]
    boots = _mm(resampled) if len(resampled) else np.zeros((0, len(met)))
    ranks = (-boots).argsort(axis=1).argsort(axis=1) + 1 if len(boots) else None
    order = np.argsort(-est)
    ranking = []
    for place, i in enumerate(order, start=1):
        lo, hi = (np.percentile(boots[:, i], [2.5, 97.5]) if len(boots) else (None, None))
        r_lo, r_hi = (np.percentile(ranks[:, i], [2.5, 97.5]) if ranks is not None else (None, None))
        ranking.append({"arm": met[i], "rank": place, "log_strength": num(est[i]), "ci95": [num(lo), num(hi)],
                        # against an arm of average (geometric mean) strength
                        "p_beats_average": num(1 / (1 + math.exp(-est[i]))),
                        "rank_ci95": [int(math.floor(r_lo)) if r_lo is not None else None,
                                      int(math.ceil(r_hi)) if r_hi is not None else None]})
    return {**out, "ranking": ranking, "bootstrap": {"resamples": len(boots), "of": n_boot, "seed": seed,
                                                      "unit": "people", "prior": prior}}


def preferences(answers, arms=None, *, n_boot: int = N_BOOT, seed: int = 0, prior: float = BT_PRIOR) -> dict:
    """Pairwise preferences per question: for each pair of arms, the answers, each arm's wins, the
    answers with no preference, the win rate of ``a`` over the decisive answers with its Wilson
    interval, a two-sided binomial test against 0.5 and its Holm-corrected p over the pairs; per
    arm, its win rate over all its decisive answers; a Bradley-Terry ranking (:func:`bradley_terry`)
    with 95 % percentile intervals of each log-strength and rank from ``n_boot`` bootstrap
    resamples of the people (seeded), so that one person's several answers stay together."""
    answers = list(answers)
    names = list(arms or [])
    for a in answers:
        for arm in (a.arm_a, a.arm_b):
            if arm not in names:
                names.append(arm)
    by_question: dict[str, list[Preference]] = defaultdict(list)
    for a in answers:
        by_question[a.question].append(a)
    return {"questions": {q: _question_summary(group, names, n_boot=n_boot, seed=seed, prior=prior)
                          for q, group in by_question.items()}}


def taken_for_person(judgements, arms=None) -> dict:
    """Per arm, how often its partner was taken for a person (a Wilson interval), the mean
    confidence, and every pair of arms compared by Fisher's exact test with Holm's correction."""
    judgements = list(judgements)
    names = list(arms or [])
    for j in judgements:
        if j.arm not in names:
            names.append(j.arm)
    rows = []
    for name in names:
        mine = [j for j in judgements if j.arm == name]
        p = proportion(sum(1 for j in mine if j.said_person), len(mine))
        conf = [float(j.confidence) for j in mine if j.confidence is not None]
        rows.append({"arm": name, "answers": p["n"], "said_person": p["correct"], "rate": p["value"],
                     "ci95": p["ci95"], "mean_confidence": num(np.mean(conf)) if conf else None})
    said = Metric("said_person", "taken for a person", "proportion",
                  trials=lambda o: (1 if o["said_person"] else 0, 1))
    as_matches = [ArmMatch(j.arm, {"said_person": j.said_person}, (j.person,)) for j in judgements]
    return {"arms": rows, "pairwise": pairwise(said, as_matches, names)}
