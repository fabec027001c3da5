"""The researcher's live monitor: scores per batch, group comparisons, a match's readable log and
its step-by-step replay (selectors: read only; the pages are research/views.py).

Which matches count
    Scores are over *ended* matches: ``finished`` and ``timed_out`` (CoDraw's clock ended the
    game by its rules, the score stands). Active matches are still changing and aborted ones
    stopped for reasons outside the game, so neither counts; the counts show them.

Groups
    A match's *seats* are ``{role: agent name or "human"}``. The batch monitor groups a batch's
    matches by their whole seat configuration; the comparison groups by one role's seat (the
    GuessWhich answerer's ALICE version as ``guesswhich_report`` does, the colors listener or
    speaker, the CoDraw drawer or teller). :func:`outcomes_by_version` is the grouping
    ``guesswhich_report`` prints.

Human-played vs agent-only
    A match is *human-played* when any seat is a person. People and agents ask, describe and
    draw differently, so a difference between a group of human-played matches and a group of
    agent-agent ones is not the compared agent's alone: :func:`compare_groups` refuses such a
    pair (:class:`CompareRefused`, with the reason) instead of testing it. Filtering by ``play``
    ("human" or "agent") makes comparable groups.

Statistics (the existing metrics, not new ones)
    * colors: accuracy over rounds with a Wilson 95 % interval (:func:`scipy.stats.binomtest`),
      overall and per condition (far, split, close); groups are compared per condition and
      overall with Fisher's exact test on correct/incorrect (:func:`scipy.stats.fisher_exact`).
      Rounds are treated as independent trials, as in Monroe et al. (2017).
    * CoDraw: mean similarity score with a bootstrap 95 % CI (:func:`clevr.metrics.bootstrap_ci`),
      a histogram over the metric's range [0, 5] and the mean score after each round; groups by
      Mann-Whitney U on the final scores.
    * GuessWhich: :func:`games.guesswhich.agents.summary` (mean rank and MRR with bootstrap CIs,
      the per-round coarse-rank curve); groups by :func:`clevr.metrics.compare_versions`
      (Mann-Whitney U on the secret's rank), exactly as ``guesswhich_report --compare``.
    * visual dialog: what its outcome holds (rounds answered, complete dialogs, words per
      question and answer).

Replay
    :func:`match_log` replays the match's logged actions through its rules (pure functions, as
    :func:`live.services.match_replay` does) and records, after every event, a *board*: what an
    observer would see of the game at that point. The last board comes from the same replay that
    is checked against the stored snapshot (``replay_matches``).
"""
from __future__ import annotations

import json
import math
import threading
from collections import defaultdict
from dataclasses import dataclass
from uuid import UUID

import numpy as np
from django.db.models import Count, Max
from scipy import stats

from live import selectors
from games.base import SYSTEM
from clevr.metrics import bootstrap_ci, compare_versions
from live.models import Batch, Match, MatchEvent, Seat
from games.registry import get_game

ENDED = (Match.Status.FINISHED, Match.Status.TIMED_OUT)
HUMAN = "human"
#: the roles a comparison may group by, per game (first: the default); visual dialog has no score
COMPARE_ROLES = {"guesswhich_v1": ("answerer", "questioner"), "colors_v1": ("listener", "speaker"),
                 "codraw_v1": ("drawer", "teller")}
PLAY_CHOICES = {"all": "all ended matches", "human": "with a human seat", "agent": "agent-only"}
CODRAW_MAX = 5.0
CODRAW_BINS = 10


# ----------------------------------------------------------------------------------- the matches
@dataclass(frozen=True)
class Played:
    """One ended match as the statistics see it."""

    match_id: str
    batch: str | None
    seats: dict            # role -> agent name or "human"
    outcome: dict

    @property
    def human(self) -> bool:
        return HUMAN in self.seats.values()


def seats_of(match_ids) -> dict:
    """match id -> {role: agent name or "human"} (one query)."""
    out: dict = defaultdict(dict)
    for seat in Seat.objects.filter(match_id__in=list(match_ids)).only("match_id", "role", "kind", "agent_name"):
        out[seat.match_id][seat.role] = HUMAN if seat.kind == Seat.Kind.HUMAN else (seat.agent_name or "agent")
    return out


def played_matches(*, game_id: str, batches=None, statuses=ENDED) -> list[Played]:
    """The matches of ``game_id`` with one of ``statuses`` (in ``batches``: slugs, or Batch rows;
    None: every batch), oldest first."""
    # a worker's practice round (crowd/onboarding.py) is no game of any study: never counted
    matches = Match.objects.filter(game_id=game_id, status__in=list(statuses), practice__isnull=True)
    if batches:
        slugs = [b.slug if isinstance(b, Batch) else b for b in batches]
        matches = matches.filter(batch__slug__in=slugs)
    rows = list(matches.order_by("created_at", "id").values_list("id", "batch__slug", "outcome"))
    seats = seats_of(r[0] for r in rows)
    return [Played(str(mid), slug, dict(seats.get(mid, {})), outcome or {}) for mid, slug, outcome in rows]


def seat_label(seats: dict, roles=None) -> str:
    """``"speaker: human · listener: colors_literal_listener"`` in the game's role order."""
    order = list(roles or sorted(seats))
    return " · ".join(f"{role}: {seats[role]}" for role in order if role in seats)


def group_by_role(played: list[Played], role: str) -> dict[str, list[Played]]:
    grouped: dict[str, list[Played]] = defaultdict(list)
    for p in played:
        grouped[p.seats.get(role, "unknown")].append(p)
    return dict(grouped)


def filter_play(played: list[Played], play: str) -> list[Played]:
    if play == "human":
        return [p for p in played if p.human]
    if play == "agent":
        return [p for p in played if not p.human]
    return list(played)


def outcomes_by_version(batches, *, statuses=(Match.Status.FINISHED,), play: str = "all") -> dict[str, list[dict]]:
    """GuessWhich outcomes grouped by the answerer seat: its agent (ALICE version) or "human"
    (``guesswhich_report``)."""
    played = filter_play(played_matches(game_id="guesswhich_v1", batches=batches, statuses=statuses), play)
    return {k: [p.outcome for p in v] for k, v in group_by_role(played, "answerer").items()}


def play_kinds(played: list[Played]) -> dict:
    human = sum(1 for p in played if p.human)
    return {"human": human, "agent": len(played) - human}


# ----------------------------------------------------------------------------------- the numbers
def _num(x):
    """JSON-safe float: NaN and infinities become None."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def proportion(correct: int, n: int) -> dict:
    """A proportion with its Wilson 95 % interval (None when n is 0)."""
    if n <= 0:
        return {"n": 0, "correct": 0, "value": None, "ci95": [None, None]}
    ci = stats.binomtest(int(correct), int(n)).proportion_ci(confidence_level=0.95, method="wilson")
    return {"n": int(n), "correct": int(correct), "value": correct / n, "ci95": [_num(ci.low), _num(ci.high)]}


def mean_ci(values) -> dict:
    v = [float(x) for x in values if x is not None]
    lo, hi = bootstrap_ci(v)
    return {"n": len(v), "value": _num(np.mean(v)) if v else None, "ci95": [_num(lo), _num(hi)]}


def _mean(values):
    v = [float(x) for x in values if x is not None]
    return float(np.mean(v)) if v else None


def colors_scores(outcomes) -> dict:
    from games.colors.rules import CONDITIONS

    outcomes = [o for o in outcomes if o]
    by_condition = {}
    for condition in CONDITIONS:
        n = sum((o.get("by_condition") or {}).get(condition, {}).get("played", 0) for o in outcomes)
        k = sum((o.get("by_condition") or {}).get(condition, {}).get("correct", 0) for o in outcomes)
        by_condition[condition] = proportion(k, n)
    return {
        "matches": len(outcomes),
        "accuracy": proportion(sum(o.get("correct", 0) for o in outcomes), sum(o.get("played", 0) for o in outcomes)),
        "by_condition": by_condition,
        "mean_response_ms": _mean(o.get("mean_response_ms") for o in outcomes),
        "mean_speaker_words": _mean(o.get("mean_speaker_words") for o in outcomes),
    }


def codraw_scores(outcomes) -> dict:
    outcomes = [o for o in outcomes if o]
    scores = [o["score"] for o in outcomes if o.get("score") is not None]
    counts, edges = np.histogram(np.clip(scores, 0.0, CODRAW_MAX), bins=CODRAW_BINS, range=(0.0, CODRAW_MAX))
    rounds = max((len(o.get("round_scores") or []) for o in outcomes), default=0)
    per_round = []
    for k in range(rounds):
        vals = [o["round_scores"][k] for o in outcomes if k < len(o.get("round_scores") or [])]
        per_round.append({"round": k + 1, "n": len(vals), "mean": _mean(vals)})
    return {
        "matches": len(outcomes),
        "score": mean_ci(scores),
        "max_score": CODRAW_MAX,
        "histogram": {"edges": [float(e) for e in edges], "counts": [int(c) for c in counts]},
        "mean_rounds": _mean(o.get("rounds") for o in outcomes),
        "peeked": sum(1 for o in outcomes if o.get("peeked")),
        "per_round_mean_score": per_round,
    }


def guesswhich_scores(outcomes) -> dict:
    from games.guesswhich.agents import summary

    s = summary(outcomes)
    return {**s,
            "mean_rank": {"value": _num(s["mean_rank"]["value"]), "ci95": [_num(x) for x in s["mean_rank"]["ci95"]]},
            "mrr": {"value": _num(s["mrr"]["value"]), "ci95": [_num(x) for x in s["mrr"]["ci95"]]}}


def visdial_scores(outcomes) -> dict:
    outcomes = [o for o in outcomes if o]
    return {
        "matches": len(outcomes),
        "complete": proportion(sum(1 for o in outcomes if o.get("complete")), len(outcomes)),
        "mean_rounds_completed": _mean(o.get("rounds_completed") for o in outcomes),
        "mean_question_words": _mean(o.get("mean_question_words") for o in outcomes),
        "mean_answer_words": _mean(o.get("mean_answer_words") for o in outcomes),
    }


SCORERS = {"colors_v1": colors_scores, "codraw_v1": codraw_scores, "guesswhich_v1": guesswhich_scores,
           "visdial_v1": visdial_scores}


def game_scores(game_id: str, outcomes) -> dict:
    scorer = SCORERS.get(game_id)
    return scorer(list(outcomes)) if scorer else {"matches": len(list(outcomes))}


def _f(x, digits: int = 2) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def outcome_summary(game_id: str, outcome: dict | None) -> str:
    """One match's outcome in words (the monitor's match list)."""
    o = outcome or {}
    if not o:
        return ""
    if game_id == "colors_v1":
        parts = [f"{c} {v.get('correct', 0)}/{v.get('played', 0)}" for c, v in (o.get("by_condition") or {}).items()
                 if v.get("played")]
        return f"{o.get('correct', 0)}/{o.get('played', 0)} correct" + (f" ({', '.join(parts)})" if parts else "")
    if game_id == "codraw_v1":
        text = f"score {_f(o.get('score'))} of 5 after {o.get('rounds', 0)} rounds"
        return text + (", peeked" if o.get("peeked") else "")
    if game_id == "guesswhich_v1":
        played = f"{o.get('rounds_played', 0)}/{o.get('rounds', 0)} rounds"
        if o.get("found"):
            return f"secret found at rank {o.get('rank')} of {o.get('pool_size')}; {played}; bonus {o.get('bonus')}"
        return f"secret not found yet; {played}"
    if game_id == "visdial_v1":
        return f"{o.get('rounds_completed', 0)}/{o.get('rounds', 0)} rounds answered" + \
            (", complete" if o.get("complete") else "")
    return ", ".join(f"{k}: {v}" for k, v in o.items() if not isinstance(v, (dict, list)))


# ----------------------------------------------------------------------------------- the batch
_cache: dict = {}
_cache_lock = threading.Lock()
_CACHE_SIZE = 64


def batch_scores(*, batch: Batch) -> dict:
    """Scores of a batch's ended matches, overall and per seat configuration. Recomputed only
    when the set of ended matches changed (their count or latest update): the monitor polls."""
    fingerprint = tuple(batch.matches.filter(status__in=ENDED).aggregate(n=Count("id"), last=Max("updated_at")).values())
    key = (batch.pk, batch.game_id)
    with _cache_lock:
        hit = _cache.get(key)
    if hit and hit[0] == fingerprint:
        return hit[1]
    played = played_matches(game_id=batch.game_id, batches=[batch])
    roles = get_game(batch.game_id).roles if _known(batch.game_id) else None
    grouped: dict[str, list[Played]] = defaultdict(list)
    for p in played:
        grouped[seat_label(p.seats, roles)].append(p)
    scores = {
        "ended": len(played),
        "all": game_scores(batch.game_id, [p.outcome for p in played]),
        "groups": [{"label": label, "seats": group[0].seats, "human": group[0].human, "matches": len(group),
                    "scores": game_scores(batch.game_id, [p.outcome for p in group])}
                   for label, group in sorted(grouped.items())],
    }
    with _cache_lock:
        if len(_cache) >= _CACHE_SIZE:
            _cache.clear()
        _cache[key] = (fingerprint, scores)
    return scores


def _known(game_id: str) -> bool:
    try:
        get_game(game_id)
    except KeyError:
        return False
    return True


def batch_monitor(*, batch: Batch) -> dict:
    """The monitor's poll: :func:`live.selectors.batch_progress` (counts, recent matches) with
    each recent match's seats and outcome in words, and the batch's scores."""
    data = selectors.batch_progress(batch)
    roles = get_game(batch.game_id).roles if _known(batch.game_id) else None
    seats = seats_of(m["id"] for m in data["recent"])
    for m in data["recent"]:
        m["seats"] = seat_label(seats.get(UUID(m["id"]), {}), roles)
        m["summary"] = outcome_summary(batch.game_id, m["outcome"])
    data["participants_total"] = sum(data["participants"].values())
    data["scores"] = batch_scores(batch=batch)
    return data


# ----------------------------------------------------------------------------------- comparison
class CompareRefused(Exception):
    """Two groups that must not be compared, or nothing to compare; the message says why."""


def comparison_options(*, game_id: str, batches) -> dict:
    """The groups a comparison may pick from: per role, each seat value with its match counts."""
    played = played_matches(game_id=game_id, batches=batches)
    return {role: {value: play_kinds(group) for value, group in sorted(group_by_role(played, role).items())}
            for role in COMPARE_ROLES.get(game_id, ())}


def _describe(label: str, kinds: dict) -> str:
    parts = []
    if kinds["human"]:
        parts.append(f"{kinds['human']} with a human seat")
    if kinds["agent"]:
        parts.append(f"{kinds['agent']} agent-only")
    return f"{label} ({' and '.join(parts) or 'no matches'})"


def compare_groups(*, game_id: str, batches, role: str, a: str, b: str, play: str = "all",
                   statuses=ENDED) -> dict:
    """Each group's scores and the test between them; :class:`CompareRefused` when the groups
    cannot be compared (see the module docstring)."""
    if game_id not in COMPARE_ROLES:
        raise CompareRefused(f"{game_id} has no score to compare groups on.")
    if role not in COMPARE_ROLES[game_id]:
        raise CompareRefused(f"Group {game_id} matches by {' or '.join(COMPARE_ROLES[game_id])}, not {role!r}.")
    if play not in PLAY_CHOICES:
        raise CompareRefused(f"Matches must be one of {', '.join(PLAY_CHOICES)}.")
    if a == b:
        raise CompareRefused("Pick two different groups.")
    grouped = group_by_role(filter_play(played_matches(game_id=game_id, batches=batches, statuses=statuses), play),
                            role)
    missing = [g for g in (a, b) if not grouped.get(g)]
    if missing:
        have = ", ".join(sorted(grouped)) or "none"
        raise CompareRefused(f"No ended matches with {role} {' or '.join(missing)} in these batches "
                             f"(groups here: {have}).")
    kinds = {g: play_kinds(grouped[g]) for g in (a, b)}
    if any(k["human"] for k in kinds.values()) and any(k["agent"] for k in kinds.values()):
        raise CompareRefused(
            f"Group A, {_describe(f'{role} {a}', kinds[a])}, and group B, {_describe(f'{role} {b}', kinds[b])}, "
            "mix human-played matches with agent-only ones. A person in the other seat plays differently "
            "from an agent, so a difference would not be the compared agent's alone. Choose "
            f"“{PLAY_CHOICES['human']}” or “{PLAY_CHOICES['agent']}” under Matches to compare like with like.")
    outcomes = {g: [p.outcome for p in grouped[g]] for g in (a, b)}
    result = {"game_id": game_id, "role": role, "play": play,
              "groups": [{"label": g, "matches": len(grouped[g]), **kinds[g],
                          "scores": game_scores(game_id, outcomes[g])} for g in (a, b)]}
    if game_id == "guesswhich_v1":
        test = compare_versions(*([o["rank"] for o in outcomes[g] if o.get("found")] for g in (a, b)))
        result["test"] = {"name": "Mann-Whitney U on the secret's rank (two-sided)",
                          "rows": [{"what": "rank", **{k: _jsonable(v) for k, v in test.items()}}]}
    elif game_id == "codraw_v1":
        sa, sb = ([o["score"] for o in outcomes[g] if o.get("score") is not None] for g in (a, b))
        test = stats.mannwhitneyu(sa, sb, alternative="two-sided")
        result["test"] = {"name": "Mann-Whitney U on the final similarity score (two-sided)",
                          "rows": [{"what": "score", "n_a": len(sa), "n_b": len(sb), "u": _num(test.statistic),
                                    "p_value": _num(test.pvalue), "mean_a": _mean(sa), "mean_b": _mean(sb)}]}
    else:
        result["test"] = {"name": "Fisher's exact test on correct/incorrect rounds (two-sided)",
                          "rows": _colors_tests(result["groups"][0]["scores"], result["groups"][1]["scores"])}
    return result


def _jsonable(v):
    return _num(v) if isinstance(v, float) else v


def _fisher(pa: dict, pb: dict) -> dict:
    row = {"n_a": pa["n"], "n_b": pb["n"], "accuracy_a": pa["value"], "accuracy_b": pb["value"]}
    if not pa["n"] or not pb["n"]:
        return {**row, "odds_ratio": None, "p_value": None}
    table = [[pa["correct"], pa["n"] - pa["correct"]], [pb["correct"], pb["n"] - pb["correct"]]]
    res = stats.fisher_exact(table, alternative="two-sided")
    return {**row, "odds_ratio": _num(res.statistic), "p_value": _num(res.pvalue)}


def _colors_tests(sa: dict, sb: dict) -> list[dict]:
    rows = [{"what": "all rounds", **_fisher(sa["accuracy"], sb["accuracy"])}]
    for condition in sa["by_condition"]:
        rows.append({"what": condition, **_fisher(sa["by_condition"][condition], sb["by_condition"][condition])})
    return rows


# ----------------------------------------------------------------------------------- one match
def _piece_name(idx) -> str:
    from games.codraw import clipart as ca

    try:
        return ca.CLIPARTS[int(idx)].name
    except (TypeError, ValueError, IndexError):
        return f"piece {idx}"


def _quote(text) -> str:
    return f"“{text}”"


def event_summary(game_id: str, event: dict) -> str:
    """One logged event in words (observer's view, private parts included)."""
    t, p, actor = event["type"], event.get("payload") or {}, event["actor"]
    private = event.get("private") or {}
    if t == "match_started":
        seats = ", ".join(f"{r} {k}" for r, k in (p.get("seats") or {}).items())
        return f"Match started ({seats})."
    if t == "match_aborted":
        return f"Match aborted: {p.get('reason')} (by {p.get('by')})."
    if t in ("message_sent", "question_asked", "answer_given"):
        return f"{p.get('role') or actor}: {_quote(p.get('text', ''))}"
    if game_id == "colors_v1":
        if t == "round_started":
            return f"Round {p.get('round')} of {p.get('rounds')} started."
        if t == "color_clicked":
            which = "the target" if p.get("status") == "target" else f"a distractor ({p.get('status')})"
            return f"Round {p.get('round')}: the listener clicked {which}."
        if t == "round_ended":
            return f"Round {p.get('round')} ({p.get('condition')}): {p.get('outcome')}; score {p.get('score', {}).get('correct')}/{p.get('score', {}).get('played')}."
        if t == "game_ended":
            return f"Game over: {p.get('correct')}/{p.get('played')} correct."
    if game_id == "codraw_v1":
        if t == "game_started":
            return f"Game started: {p.get('time_limit_s')} s on the clock, messages up to {p.get('max_message_len')} characters."
        if t == "canvas_changed":
            d = private.get("drawer") or {}
            verb = {"place": "placed", "update": "moved or changed", "remove": "removed"}.get(d.get("op"), d.get("op"))
            return f"Round {p.get('round')}: the Drawer {verb} the {_piece_name(d.get('idx'))}."
        if t == "round_recorded":
            score = (private.get(SYSTEM) or {}).get("score")
            return (f"Round {p.get('round')} recorded" + (" (after the peek)" if p.get("peeked") else "")
                    + (f": similarity {score:.2f}" if isinstance(score, (int, float)) else "") + ".")
        if t == "peek_opened":
            return f"Round {p.get('round')}: the Teller peeked at the Drawer's canvas."
        if t == "peek_closed":
            return f"Round {p.get('round')}: the Teller closed the peek."
        if t == "game_ended":
            return f"Game ended by {p.get('ended_by')}: score {_f(p.get('score'))} of 5 after {p.get('rounds')} rounds."
    if game_id in ("guesswhich_v1", "visdial_v1"):
        if t == "game_started":
            pool = f" pool of {p['pool_size']}," if p.get("pool_size") else ""
            return f"Game started:{pool} {p.get('rounds')} rounds; caption {_quote(p.get('caption', ''))}."
        if t == "guess_made":
            return f"Round {p.get('round')}: the questioner's best guess is image {p.get('image_id')}."
        if t == "dialog_ended":
            return f"Dialog over after {p.get('rounds')} rounds; the questioner now clicks until the secret is found."
        if t == "dialog_completed":
            return f"Dialog complete after {p.get('rounds')} rounds."
        if t == "image_clicked":
            return f"Final guess {p.get('click')}: image {p.get('image_id')} is {'the secret' if p.get('correct') else 'wrong'}."
        if t == "secret_found":
            return f"Secret {p.get('secret_id')} found at rank {p.get('rank')}."
        if t == "feedback_given":
            ratings = ", ".join(f"{k} {v}" for k, v in (p.get("ratings") or {}).items())
            return f"Feedback: {ratings}" + (f"; {_quote(p['comment'])}" if p.get("comment") else "") + "."
        if t == "feedback_skipped":
            return f"Feedback skipped (by {p.get('by')})."
        if t == "game_finished":
            return f"Finished: rank {p.get('rank')}, bonus {p.get('bonus')}."
    simple = ", ".join(f"{k} {v}" for k, v in p.items() if not isinstance(v, (dict, list)))
    return f"{t.replace('_', ' ').capitalize()}" + (f": {simple}" if simple else "") + "."


def _chat_line(event: dict) -> dict | None:
    if event["type"] in ("message_sent", "question_asked", "answer_given"):
        p = event.get("payload") or {}
        who = p.get("role") or event["actor"]
        return {"who": who, "text": p.get("text", "")}
    return None


def board(game_id: str, state: dict, rules, *, match_id: str, seq: int) -> dict:
    """What an observer sees of ``state`` (the replay's panel)."""
    common = {"to_act": list(rules.to_act(state))}
    if game_id == "colors_v1":
        over = rules.is_over(state)
        last = None
        if state["history"]:
            h = state["history"][-1]
            colors = state["rounds"][h["round"] - 1]["colors"]
            last = {"round": h["round"], "condition": h["condition"], "correct": h["correct"],
                    "chosen": h["chosen"], "colors": [list(c) for c in colors]}
        current = None if over else state["rounds"][state["round"]]
        return {**common, "round": min(state["round"] + 1, len(state["rounds"])), "rounds": len(state["rounds"]),
                "over": over, "correct": state["correct"], "played": len(state["history"]),
                "condition": current["condition"] if current else None,
                "colors": [list(c) for c in current["colors"]] if current else [],   # index 0: the target
                "messages": [{"who": m["role"], "text": m["text"]} for m in state["messages"]],
                "last": last}
    if game_id == "codraw_v1":
        return {**common, "phase": state["phase"], "round": state["round"],
                "chat": [{"who": m["role"], "text": m["text"]} for m in state["chat"]],
                "pieces": len(state["canvas"]), "score": _num(rules.score(state)),
                "peek": bool(state["peek"]["used"]),
                "canvas_svg": f"/research/matches/{match_id}/replay/{seq}.svg"}
    if game_id == "guesswhich_v1":
        return {**common, "phase": state["phase"], "round": state["round"], "rounds": state["rounds"],
                "dialog": [{"round": d["round"], "question": d["question"], "answer": d.get("answer"),
                            "guess": d.get("guess")} for d in state["dialog"]],
                "final_clicks": [c["image_id"] for c in state["final_clicks"]],
                "bonus": rules.bonus(state)["total"]}
    if game_id == "visdial_v1":
        return {**common, "phase": state["phase"], "round": state["round"], "rounds": state["rounds"],
                "dialog": [{"round": d["round"], "question": d["question"], "answer": d.get("answer")}
                           for d in state["dialog"]]}
    return common


def _replay_states(match: Match):
    """(rules, final state, [(row, state after it)], error): the log replayed through the rules. A
    log the rules refuse (a stored match from an older version of a game, a damaged row) stops the
    replay there: later rows keep the last good state and ``error`` says where and why."""
    rules = get_game(match.game_id).rules
    error = None
    try:
        state = rules.initial_state(match.content, match.seed, match.config)
    except Exception as exc:  # noqa: BLE001 - shown on the page instead of a server error
        state, error = None, f"the initial state cannot be built from the match's content: {exc}"
    out = []
    for row in MatchEvent.objects.filter(match=match).order_by("seq"):
        if row.action is not None and error is None:
            try:
                state, _ = rules.apply(state, row.actor, row.action)
            except Exception as exc:  # noqa: BLE001
                error = f"the rules refuse the action of event {row.seq} ({row.actor}): {exc}"
        out.append((row, state))
    return rules, state, out, error


def state_at(*, match: Match, seq: int) -> dict:
    """The match's state after event ``seq`` (replayed)."""
    spec = get_game(match.game_id)
    state = spec.rules.initial_state(match.content, match.seed, match.config)
    for row in match.events.filter(seq__lte=seq).exclude(action=None).order_by("seq").only("actor", "action"):
        state, _ = spec.rules.apply(state, row.actor, row.action)
    return state


def _same(a, b) -> bool:
    return json.loads(json.dumps(a, sort_keys=True)) == json.loads(json.dumps(b, sort_keys=True))


def match_images(match: Match) -> dict:
    """The images a staff page shows: GuessWhich's pool with its secret, visual dialog's image."""
    content = match.content if isinstance(match.content, dict) else {}
    if match.game_id == "guesswhich_v1":
        return {"pool": [str(item["id"]) for item in content.get("pool") or []],
                "secret": str(content.get("secret_id"))}
    if match.game_id == "visdial_v1" and content.get("image_id") is not None:
        return {"image": str(content["image_id"])}
    return {}


def image_scene(match: Match, image_id: str) -> dict | None:
    """The scene of one image of the match's content (staff: every image of it), else None."""
    content = match.content if isinstance(match.content, dict) else {}
    for item in content.get("pool") or []:
        if str(item.get("id")) == image_id:
            return item.get("scene") or {}
    if str(content.get("image_id")) == image_id:
        return content.get("scene") or {}
    return None


def match_log(*, match: Match) -> dict:
    """The match's events in words with their raw payloads, the board after each, and whether the
    replay reproduces the stored snapshot."""
    roles = get_game(match.game_id).roles
    seats = {s.role: s for s in Seat.objects.filter(match=match)}
    rules, final, rows, error = _replay_states(match)
    steps = []
    boards: list[dict] = []   # one copy of each board; steps point at theirs by index
    last = object()
    for row, state in rows:
        if state is not last:
            boards.append(board(match.game_id, state, rules, match_id=str(match.id), seq=row.seq)
                          if state is not None else {"unavailable": error})
            last = state
        wire = {"seq": row.seq, "type": row.type, "actor": row.actor, "payload": row.payload,
                "private": row.private, "t": row.t}
        steps.append({"seq": row.seq, "type": row.type, "actor": row.actor, "t": row.t,
                      "summary": event_summary(match.game_id, wire), "chat": _chat_line(wire),
                      "payload": row.payload, "private": row.private, "action": row.action,
                      "board": len(boards) - 1})
    t0 = steps[0]["t"] if steps else 0
    for step in steps:
        step["at_s"] = round((step["t"] - t0) / 1000.0, 1)
    return {
        "match_id": str(match.id), "game_id": match.game_id, "status": match.status,
        "seats": {r: {"kind": seats[r].kind, "agent": seats[r].agent_name or None} for r in roles if r in seats},
        "steps": steps, "boards": boards,
        "replay_matches": error is None and _same(final, match.state),
        "replay_error": error,
        "images": match_images(match),
        "outcome_summary": outcome_summary(match.game_id, match.outcome),
    }
