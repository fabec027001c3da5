"""What staff see of an LLM agent's recorded calls (:class:`agents.models.AgentCall`, one row per
request, agents/llm/record.py): the match page's table per seat (:func:`match_calls`), the batch
monitor's numbers per agent (:func:`batch_call_stats`) and a call as the jsonl export writes it
(:func:`call_record`). Read only."""
from __future__ import annotations

import json
import math

from django.db import connection
from django.db.models import Aggregate, Avg, Count, FloatField, Q, Sum

from agents.models import AgentCall
from live.models import Seat

#: the fields of a call in the export (every field of the row but its id and match; no key is in any)
EXPORT_FIELDS = ("role", "seq", "agent", "attempt", "model_reported", "params", "prompt_sha256", "adapter_version",
                 "request", "response_text", "decision", "error", "prompt_tokens", "completion_tokens", "retries",
                 "queue_ms", "ttft_ms", "total_ms", "pacing_ms", "cost_usd", "actions", "outcome")


# ----------------------------------------------------------------------------------- numbers in words
def tokens(n) -> str:
    """``12,345``; ``–`` when the server reported none."""
    return "–" if n is None else f"{int(n):,}"


def duration(ms) -> str:
    """``840 ms`` under a second, ``1.25 s`` under a minute, ``2 min 5 s`` beyond; ``–`` for none."""
    if ms is None:
        return "–"
    if ms < 1000:
        return f"{ms:.0f} ms"
    if ms < 60_000:
        return f"{ms / 1000:.2f} s"
    minutes, seconds = divmod(round(ms / 1000), 60)
    return f"{minutes} min {seconds} s"


def money(usd) -> str:
    """US dollars: cents from $10 (``$12.34``), three significant digits below (``$0.0153``,
    ``$0.000123``); ``–`` without prices."""
    if usd is None:
        return "–"
    if usd == 0:
        return "$0"
    if usd >= 10:
        return f"${usd:,.2f}"
    if usd < 0.000001:
        return "<$0.000001"
    return f"${usd:.3g}" if usd >= 0.0001 else f"${usd:.6f}".rstrip("0")


# ----------------------------------------------------------------------------------- the match page
def match_calls(match) -> list[dict]:
    """One section per LLM seat of the match (a role with recorded calls, or whose seat an
    ``openai`` agent plays): its calls in turn order with the numbers in words, the request and
    the raw answer, and its totals. [] for a match without LLM seats."""
    rows = list(AgentCall.objects.filter(match=match).order_by("seq", "role", "attempt", "id"))
    seats = {s.role: s for s in Seat.objects.filter(match=match)}
    roles = sorted({r.role for r in rows} | {role for role, s in seats.items()
                                             if (s.agent_model or {}).get("kind") == "openai"})
    sections = []
    for role in roles:
        calls = [r for r in rows if r.role == role]
        seat = seats.get(role)
        model = (seat.agent_model or {}) if seat is not None else {}
        prompt = sum(c.prompt_tokens or 0 for c in calls)
        completion = sum(c.completion_tokens or 0 for c in calls)
        costs = [c.cost_usd for c in calls if c.cost_usd is not None]
        sections.append({
            "role": role,
            "agent": (seat.agent_name if seat is not None else "") or ", ".join(sorted({c.agent for c in calls})),
            "model": model.get("model") or "", "base_url": model.get("base_url") or "",
            "turns": len({c.seq for c in calls}), "calls": [_row(c) for c in calls],
            "totals": {"calls": len(calls), "prompt_tokens": tokens(prompt), "completion_tokens": tokens(completion),
                       "tokens": tokens(prompt + completion),
                       "cost": money(sum(costs)) if costs else "–",
                       "outcomes": _outcomes(calls)},
        })
    return sections


def _outcomes(calls) -> str:
    """The turns' outcomes counted (a turn's first call carries it): ``3 acted, 1 repaired``."""
    counts: dict[str, int] = {}
    for c in calls:
        if c.attempt == 1:
            counts[c.outcome] = counts.get(c.outcome, 0) + 1
    return ", ".join(f"{n} {outcome}" for outcome, n in counts.items())


def _row(c: AgentCall) -> dict:
    return {"id": c.pk, "seq": c.seq, "attempt": c.attempt, "repair": c.attempt > 1, "agent": c.agent,
            "model": c.model_reported or "–",
            "prompt_tokens": tokens(c.prompt_tokens), "completion_tokens": tokens(c.completion_tokens),
            "ttft": duration(c.ttft_ms), "total": duration(c.total_ms), "pacing": duration(c.pacing_ms),
            "queue": duration(c.queue_ms) if c.queue_ms else "", "retries": c.retries,
            "cost": money(c.cost_usd), "outcome": c.outcome, "error": c.error,
            "params": ", ".join(f"{k} {v}" for k, v in (c.params or {}).items() if v is not None),
            "request": json.dumps(c.request, indent=1, ensure_ascii=False),
            "response": c.response_text,
            "decision": json.dumps(c.decision, ensure_ascii=False) if c.decision is not None else "",
            "prompt_sha256": c.prompt_sha256, "adapter_version": c.adapter_version}


# ----------------------------------------------------------------------------------- the batch monitor
class _Percentile(Aggregate):
    """PostgreSQL's ``percentile_cont(fraction) WITHIN GROUP (ORDER BY x)`` (nulls ignored)."""

    function = "PERCENTILE_CONT"
    template = "%(function)s(%(fraction)s) WITHIN GROUP (ORDER BY %(expressions)s)"
    output_field = FloatField()

    def __init__(self, expression, fraction: float, **extra):
        super().__init__(expression, fraction=float(fraction), **extra)


def _turns(outcome: str) -> Count:
    return Count("id", filter=Q(attempt=1, outcome=outcome))


def batch_call_stats(*, batch) -> dict:
    """The batch's LLM calls per agent: calls, turns, repairs (repair requests), fallbacks and
    errors (turns that ended so: no usable answer, or no answer from the endpoint), stale turns,
    prompt and completion tokens, money, and the mean and 95th percentile of the time to first
    token and of the total time; and the totals over agents. Every match of the batch counts
    (money was spent on each). One query (PostgreSQL aggregates it; another database gets the
    rows' numbers and this function aggregates them)."""
    calls = AgentCall.objects.filter(match__batch=batch)
    if connection.vendor == "postgresql":
        rows = list(calls.values("agent").annotate(
            calls=Count("id"), turns=Count("id", filter=Q(attempt=1)), repairs=Count("id", filter=Q(attempt__gt=1)),
            acted=_turns("acted"), repaired=_turns("repaired"), fallbacks=_turns("fallback"), errors=_turns("error"),
            stale=_turns("stale"), prompt_tokens=Sum("prompt_tokens"), completion_tokens=Sum("completion_tokens"),
            cost_usd=Sum("cost_usd"), ttft_mean=Avg("ttft_ms"), ttft_p95=_Percentile("ttft_ms", 0.95),
            total_mean=Avg("total_ms"), total_p95=_Percentile("total_ms", 0.95)).order_by("agent"))
    else:
        rows = aggregate_rows(calls.values_list("agent", "attempt", "outcome", "prompt_tokens", "completion_tokens",
                                                "cost_usd", "ttft_ms", "total_ms"))
    agents = [{"agent": r["agent"], "calls": r["calls"], "turns": r["turns"], "repairs": r["repairs"],
               "acted": r["acted"], "repaired": r["repaired"], "fallbacks": r["fallbacks"], "errors": r["errors"],
               "stale": r["stale"], "prompt_tokens": r["prompt_tokens"] or 0,
               "completion_tokens": r["completion_tokens"] or 0, "cost_usd": r["cost_usd"],
               "ttft_ms": {"mean": r["ttft_mean"], "p95": r["ttft_p95"]},
               "total_ms": {"mean": r["total_mean"], "p95": r["total_p95"]}} for r in rows]
    costs = [a["cost_usd"] for a in agents if a["cost_usd"] is not None]
    totals = {key: sum(a[key] for a in agents) for key in ("calls", "turns", "repairs", "fallbacks", "errors",
                                                           "stale", "prompt_tokens", "completion_tokens")}
    totals["cost_usd"] = sum(costs) if costs else None
    return {"agents": agents, "totals": totals}


def percentile(values: list[float], fraction: float) -> float | None:
    """``percentile_cont``: linear interpolation between the closest ranks; None without values."""
    values = sorted(values)
    if not values:
        return None
    pos = fraction * (len(values) - 1)
    low, high = math.floor(pos), math.ceil(pos)
    return values[low] + (values[high] - values[low]) * (pos - low)


def aggregate_rows(values) -> list[dict]:
    """:func:`batch_call_stats`'s aggregate over ``(agent, attempt, outcome, prompt_tokens,
    completion_tokens, cost_usd, ttft_ms, total_ms)`` tuples, computed here."""
    by_agent: dict[str, list] = {}
    for row in values:
        by_agent.setdefault(row[0], []).append(row)
    out = []
    for agent in sorted(by_agent):
        rows = by_agent[agent]
        firsts = [r for r in rows if r[1] == 1]

        def total(i):
            got = [r[i] for r in rows if r[i] is not None]
            return sum(got) if got else None

        ttft = [r[6] for r in rows if r[6] is not None]
        whole = [r[7] for r in rows if r[7] is not None]
        out.append({"agent": agent, "calls": len(rows), "turns": len(firsts), "repairs": len(rows) - len(firsts),
                    "acted": sum(r[2] == "acted" for r in firsts), "repaired": sum(r[2] == "repaired" for r in firsts),
                    "fallbacks": sum(r[2] == "fallback" for r in firsts), "errors": sum(r[2] == "error" for r in firsts),
                    "stale": sum(r[2] == "stale" for r in firsts), "prompt_tokens": total(3),
                    "completion_tokens": total(4), "cost_usd": total(5),
                    "ttft_mean": sum(ttft) / len(ttft) if ttft else None, "ttft_p95": percentile(ttft, 0.95),
                    "total_mean": sum(whole) / len(whole) if whole else None, "total_p95": percentile(whole, 0.95)})
    return out


# ----------------------------------------------------------------------------------- the export
def call_record(c: AgentCall) -> dict:
    """One call as the jsonl export writes it (docs/exports.md, ``agent_calls``)."""
    record = {name: getattr(c, name) for name in EXPORT_FIELDS}
    record["created_at"] = c.created_at.isoformat()
    return record


def match_call_records(match) -> list[dict]:
    """The match's calls in turn order (the export's ``agent_calls``)."""
    return [call_record(c) for c in AgentCall.objects.filter(match=match).order_by("seq", "role", "attempt", "id")]
