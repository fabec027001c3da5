"""What a batch costs, per arm, and its budget (issue 24, item 5). Selectors over the ledger.

Crowd pay
    A participant who came through a paying platform (MTurk, Prolific) costs their base pay (the
    pay their outcome earns, ``Participant.pay_cents``, once they have left or finished; the
    batch's ``pay_cents`` while they are still in the study), their bonus once it is sent or being
    sent (``PayAction`` rows, as crowd/payments.py counts them against the bonus budget), and the
    platform's fee on both (``GT_MTURK_FEE_PERCENT``, ``GT_PROLIFIC_FEE_PERCENT``). Lab and demo
    entries are paid by no platform here and cost nothing.

Per arm
    A participant's pay is split evenly over the matches they were seated in (``Match.arm``): in a
    within-subjects batch a person who played two arms counts half for each. People who were never
    seated (left in the waiting room, declined, no partner) belong to no arm: their pay is its own
    row. Model cost is the ``AgentCall.cost_usd`` of each arm's matches (every call, ended match or
    not: the money was spent). Per completed match: the arm's total over its ended matches.

Budget
    ``Batch.budget_usd``. The money *committed*: every paying participant's pay as above (those in
    progress at the base rate), the bonuses sent or being sent, each with its platform's fee, and
    the model cost so far. A new entry is refused ("the study is full") when the committed money
    plus one more participant at the base rate (with the highest fee of the batch's platforms)
    would pass the budget; a participant already in the batch comes back in as before.
"""
from __future__ import annotations

from collections import defaultdict

from django.db.models import Count, Sum

from agents.models import AgentCall
from crowd.models import PayAction, Participant
from groundtalk_web import env
from live.models import Batch, Match, Seat

ENDED = (Match.Status.FINISHED, Match.Status.TIMED_OUT)
PAYING = ("mturk", "prolific")
IN_PROGRESS = (Participant.State.CONSENT, Participant.State.INSTRUCTIONS, Participant.State.ONBOARDING,
               Participant.State.WAITING, Participant.State.PLAYING)
ONE_ARM = "all matches"          # research/arms.py's name of a batch without arms
NOT_SEATED = "not seated"        # paid people who never played a match of the batch
OUTSIDE = "outside the arms"     # matches of a batch with arms that no arm was drawn for
FULL = ("This study is full: it has all the participants it can pay for. Please do not start it: return the "
        "task (on MTurk or Prolific), or contact the researcher.")


def fee_percent(platform: str) -> float:
    """The platform's fee in percent of what it pays (0: a platform that pays nothing here)."""
    e = env.load()
    return {"mturk": e.GT_MTURK_FEE_PERCENT, "prolific": e.GT_PROLIFIC_FEE_PERCENT}.get(platform, 0.0)


def _with_fee(cents: float, platform: str) -> float:
    return cents * (1 + fee_percent(platform) / 100)


def _bonuses(batch: Batch) -> dict:
    """participant id -> cents of their bonus sent or being sent (failed ones were not paid)."""
    rows = (PayAction.objects.filter(participant__batch=batch, kind=PayAction.Kind.BONUS,
                                     status__in=[PayAction.Status.SENT, PayAction.Status.PENDING])
            .values("participant_id").annotate(cents=Sum("amount_cents")))
    return {r["participant_id"]: int(r["cents"] or 0) for r in rows}


def participant_pay(batch: Batch) -> list[dict]:
    """Each paying participant's base, bonus and fee in cents (two queries)."""
    bonuses = _bonuses(batch)
    out = []
    for pid, platform, state, pay_cents in (Participant.objects.filter(batch=batch, platform__in=PAYING)
                                            .values_list("id", "platform", "state", "pay_cents")):
        base = pay_cents if pay_cents is not None else (batch.pay_cents if state in IN_PROGRESS else 0)
        bonus = bonuses.get(pid, 0)
        fee = _with_fee(base + bonus, platform) - (base + bonus)
        out.append({"id": pid, "platform": platform, "state": state, "base": base, "bonus": bonus, "fee": fee})
    return out


def _arm_of(batch: Batch, arm: str) -> str:
    if not batch.arms:
        return ONE_ARM
    return arm or OUTSIDE


def model_cost(batch: Batch) -> dict:
    """arm -> USD of the LLM calls of its matches (one aggregate query)."""
    out: dict = defaultdict(float)
    for r in (AgentCall.objects.filter(match__batch=batch).values("match__arm")
              .annotate(usd=Sum("cost_usd"))):
        out[_arm_of(batch, r["match__arm"])] += float(r["usd"] or 0)
    return dict(out)


def _arm_order(batch: Batch) -> list[str]:
    return [str(a.get("name")) for a in batch.arms or [] if a.get("name")] or [ONE_ARM]


def batch_costs(*, batch: Batch) -> dict:
    """Per arm (the batch's order, then matches outside the arms, then people never seated) and in
    total: crowd pay (base, bonuses, fees), model cost, their sum, the completed (ended) matches and
    the cost per completed match; and the budget with the money committed against it. USD."""
    pay = participant_pay(batch)
    seated: dict = defaultdict(list)   # participant -> the arms of their matches, one per match
    for pid, arm in (Seat.objects.filter(match__batch=batch, participant__isnull=False, match__practice__isnull=True)
                     .values_list("participant_id", "match__arm")):
        seated[pid].append(_arm_of(batch, arm))
    ended = defaultdict(int)
    for r in (Match.objects.filter(batch=batch, status__in=list(ENDED), practice__isnull=True)
              .values("arm").annotate(n=Count("id"))):
        ended[_arm_of(batch, r["arm"])] += r["n"]
    rows: dict = {}

    def row(arm):
        if arm not in rows:
            rows[arm] = {"arm": arm, "people": 0.0, "base": 0.0, "bonus": 0.0, "fee": 0.0, "model": 0.0}
        return rows[arm]

    for name in _arm_order(batch):
        row(name)
    for p in pay:
        arms = seated.get(p["id"]) or [NOT_SEATED]
        for arm in arms:
            r = row(arm)
            share = 1 / len(arms)
            r["people"] += share
            for k in ("base", "bonus", "fee"):
                r[k] += p[k] * share / 100
    for arm, usd in model_cost(batch).items():
        row(arm)["model"] += usd
    order = _arm_order(batch) + [a for a in (OUTSIDE, NOT_SEATED) if a in rows]
    order += [a for a in rows if a not in order]
    out_rows = []
    for arm in order:
        r = rows[arm]
        crowd = r["base"] + r["bonus"] + r["fee"]
        n = ended.get(arm, 0)
        out_rows.append({**{k: round(v, 6) for k, v in r.items() if k != "arm"}, "arm": arm,
                         "crowd": round(crowd, 6), "total": round(crowd + r["model"], 6),
                         "completed": n, "per_completed": round((crowd + r["model"]) / n, 6) if n else None})
    keys = ("people", "base", "bonus", "fee", "model", "crowd", "total")
    totals = {k: round(sum(r[k] for r in out_rows), 6) for k in keys}
    totals["completed"] = sum(r["completed"] for r in out_rows)
    totals["per_completed"] = round(totals["total"] / totals["completed"], 6) if totals["completed"] else None
    return {"arms": out_rows, "totals": totals, "fees": {p: fee_percent(p) for p in PAYING},
            "budget": budget_state(batch, pay=pay, model_usd=sum(r["model"] for r in out_rows))}


def committed_usd(batch: Batch, *, pay=None, model_usd: float | None = None) -> float:
    """The money committed so far (see the module docstring), USD."""
    pay = participant_pay(batch) if pay is None else pay
    if model_usd is None:
        model_usd = float(AgentCall.objects.filter(match__batch=batch).aggregate(s=Sum("cost_usd"))["s"] or 0)
    return sum(p["base"] + p["bonus"] + p["fee"] for p in pay) / 100 + model_usd


def next_entry_usd(batch: Batch) -> float:
    """One more participant at the base rate with the highest fee of the batch's paying platforms."""
    fees = [fee_percent(k) for k in batch.entry_kinds or [] if k in PAYING]
    if not fees:
        return 0.0
    return batch.pay_cents * (1 + max(fees) / 100) / 100


def budget_state(batch: Batch, *, pay=None, model_usd: float | None = None) -> dict | None:
    """None without a budget; else the budget, the money committed, what is left, the cost of one
    more entry and whether new entries are refused (``full``)."""
    if batch.budget_usd is None:
        return None
    budget = float(batch.budget_usd)
    committed = committed_usd(batch, pay=pay, model_usd=model_usd)
    nxt = next_entry_usd(batch)
    return {"budget": budget, "committed": round(committed, 6), "left": round(budget - committed, 6),
            "next_entry": round(nxt, 6), "full": committed >= budget or committed + nxt > budget + 1e-9}


def budget_full(batch: Batch) -> bool:
    """Whether the batch's budget refuses new entries now (False without a budget)."""
    state = budget_state(batch)
    return bool(state and state["full"])
