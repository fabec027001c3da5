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
    speaker, the CoDraw drawer or teller). :func:`outcomes_by_role` is the grouping
    ``guesswhich_report`` prints.

Human-played vs agent-only
    A match is *human-played* when any seat is a person. People and agents ask, describe and
    draw differently, so a difference between a group of human-played matches and a group of
    agent-agent ones is not the compared agent's alone: :func:`compare_groups` refuses such a
    pair (:class:`CompareRefused`, with the reason) instead of testing it. Filtering by ``play``
    ("human" or "agent") makes comparable groups.

Statistics (each game's own, from its spec)
    A game's ``monitor`` module (:class:`games.spec.GameSpec`) gives its batch scores
    (``scores``), one match's outcome and events in words, the replay's board, the images of
    its staff page and the test between two groups (``compare_test``); ``GameSpec.compare_roles``
    are the roles a comparison may group by. The helpers they share are :mod:`games.stats`.
    A game without a monitor module shows its match counts and generic summaries.

Replay
    :func:`match_log` replays the match's logged actions through its rules (pure functions, as
    :func:`live.services.match_replay` does) and records, after every event, a *board*: what an
    observer would see of the game at that point. The last board comes from the same replay that
    is checked against the stored snapshot (``replay_matches``).
"""
from __future__ import annotations

import json
import threading
from collections import defaultdict
from dataclasses import dataclass
from uuid import UUID

from django.db.models import Count, Max
from django.template.defaultfilters import floatformat

from live import selectors
from research import agent_calls
from games.stats import mean as _mean, mean_ci, num as _num, proportion   # noqa: F401 - the monitor's helpers
from live.models import Batch, Match, MatchEvent, Seat
from games.records import outcome_summary
from games.registry import GAMES, get_game

ENDED = (Match.Status.FINISHED, Match.Status.TIMED_OUT)
HUMAN = "human"
PLAY_CHOICES = {"all": "all ended matches", "human": "with a human seat", "agent": "agent-only"}


def compare_roles() -> dict[str, tuple[str, ...]]:
    """The roles a comparison may group by, per game (first: the default; ``GameSpec.compare_roles``);
    games without a score to compare are absent."""
    return {spec.id: tuple(spec.compare_roles) for spec in GAMES.values() if spec.compare_roles}


def _monitor(game_id: str):
    """The game's monitor module (``GameSpec.monitor``), or None (unknown game, or none)."""
    spec = GAMES.get(game_id)
    return spec.monitor if spec is not None else None


def _hook(game_id: str, name: str):
    return getattr(_monitor(game_id), name, None)


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


def outcomes_by_role(game_id: str, role: str, batches, *, statuses=(Match.Status.FINISHED,),
                     play: str = "all") -> dict[str, list[dict]]:
    """The game's outcomes grouped by one role's seat: its agent (e.g. the ALICE version of
    GuessWhich's answerer) or "human" (``guesswhich_report``)."""
    played = filter_play(played_matches(game_id=game_id, batches=batches, statuses=statuses), play)
    return {k: [p.outcome for p in v] for k, v in group_by_role(played, role).items()}


def play_kinds(played: list[Played]) -> dict:
    human = sum(1 for p in played if p.human)
    return {"human": human, "agent": len(played) - human}


# ----------------------------------------------------------------------------------- the numbers
def game_scores(game_id: str, outcomes) -> dict:
    """The game's scores of these outcomes (its monitor's ``scores``; else the count)."""
    scorer = _hook(game_id, "scores")
    outcomes = list(outcomes)
    return scorer(outcomes) if scorer else {"matches": len(outcomes)}


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
    each recent match's seats and outcome in words, the batch's scores, and its LLM agents' calls
    (:func:`research.agent_calls.batch_call_stats`: tokens, money, repairs, fallbacks, errors, times)."""
    data = selectors.batch_progress(batch)
    roles = get_game(batch.game_id).roles if _known(batch.game_id) else None
    seats = seats_of(m["id"] for m in data["recent"])
    for m in data["recent"]:
        m["seats"] = seat_label(seats.get(UUID(m["id"]), {}), roles)
        m["summary"] = outcome_summary(batch.game_id, m["outcome"])
    data["participants_total"] = sum(data["participants"].values())
    data["scores"] = batch_scores(batch=batch)
    data["llm_calls"] = agent_calls.batch_call_stats(batch=batch)
    return data


# ----------------------------------------------------------------------------------- comparison
class CompareRefused(Exception):
    """Two groups that must not be compared, or nothing to compare; the message says why."""


def comparison_options(*, game_id: str, batches) -> dict:
    """The groups a comparison may pick from: per role, each seat value with its match counts."""
    played = played_matches(game_id=game_id, batches=batches)
    return {role: {value: play_kinds(group) for value, group in sorted(group_by_role(played, role).items())}
            for role in compare_roles().get(game_id, ())}


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
    roles = compare_roles()
    if game_id not in roles:
        raise CompareRefused(f"{game_id} has no score to compare groups on.")
    if role not in roles[game_id]:
        raise CompareRefused(f"Group {game_id} matches by {' or '.join(roles[game_id])}, not {role!r}.")
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
    # matches from several batches: run at different times, by different people (who came when)
    spanned = sorted({p.batch or "" for g in (a, b) for p in grouped[g]})
    result = {"game_id": game_id, "role": role, "play": play, "batches": spanned,
              "groups": [{"label": g, "matches": len(grouped[g]), **kinds[g],
                          "scores": game_scores(game_id, outcomes[g])} for g in (a, b)]}
    result["test"] = _test(game_id, outcomes[a], outcomes[b], result["groups"][0]["scores"],
                           result["groups"][1]["scores"])
    return result


def _cell(value, fmt, empty: str) -> str:
    """One cell of the test table as the page shows it: ``"percent"`` (a whole percentage) or a
    number of decimals (Django's ``floatformat``); ``empty`` when there is no value."""
    if value is None:
        return empty
    if fmt == "percent":
        return f"{round(value * 100)} %"
    return floatformat(value, fmt) or empty


def _test(game_id: str, outcomes_a, outcomes_b, scores_a: dict, scores_b: dict) -> dict:
    """The game's test between two groups (its monitor's ``compare_test``), each row with the
    page's cells: ``what``, ``n A``, ``n B``, the game's columns, then ``p``."""
    test = _hook(game_id, "compare_test")(outcomes_a, outcomes_b, scores_a, scores_b)
    columns = [tuple(c) for c in test.get("columns", ())]
    test["headers"] = [c[0] for c in columns]
    for row in test["rows"]:
        row["cells"] = [_cell(row.get(key), fmt, empty) for _, key, fmt, empty in columns]
    return test


# ----------------------------------------------------------------------------------- one match
def _quote(text) -> str:
    return f"“{text}”"


def event_summary(game_id: str, event: dict) -> str:
    """One logged event in words (observer's view, private parts included)."""
    t, p, actor = event["type"], event.get("payload") or {}, event["actor"]
    if t == "match_started":
        seats = ", ".join(f"{r} {k}" for r, k in (p.get("seats") or {}).items())
        return f"Match started ({seats})."
    if t == "match_aborted":
        return f"Match aborted: {p.get('reason')} (by {p.get('by')})."
    if t in ("message_sent", "question_asked", "answer_given"):
        return f"{p.get('role') or actor}: {_quote(p.get('text', ''))}"
    summary = _hook(game_id, "event_summary")
    text = summary(event) if summary is not None else None
    if text is not None:
        return text
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
    game_board = _hook(game_id, "board")
    if game_board is None:
        return common
    return {**common, **game_board(state, rules, match_id=match_id, seq=seq)}


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
    """The images a staff page shows (the game monitor's ``match_images``: GuessWhich's pool with
    its secret, visual dialog's image); {} for a game without images."""
    images = _hook(match.game_id, "match_images")
    return images(match) if images is not None else {}


def image_scene(match: Match, image_id: str) -> dict | None:
    """The scene of one image of the match's content (staff: every image of it; the game monitor's
    ``image_scene``), else None."""
    scene = _hook(match.game_id, "image_scene")
    return scene(match, image_id) if scene is not None else None


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
