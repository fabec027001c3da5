"""What each way out of a study earns (issue 11, item 2).

Every exit reason the lobby, the match service and the watchdog write on a ``Participant`` maps
to one *outcome*; a batch sets per outcome whether the worker gets full pay, a partial pay (cents)
or none (``Batch.exit_pay``; ``DEFAULT_PAY`` for an outcome it does not name). The outcome, the pay
and its cents are recorded on the participant when its part ends (``participant_record_outcome``),
so the review and the payments read them from the server, never from the browser.

exit reason (``Participant.exit_reason``) -> outcome:

==================== ================ ==========================================================
exit reason          outcome          when
==================== ================ ==========================================================
completed            completed        every game of the batch played to its end
time_up              time_up          the last game ended by its clock (CoDraw's 20 minutes)
timed_out            timed_out        did not take their turn within the batch's turn limit (stalled)
no_partner           no_partner       waited the batch's ``max_wait_s`` and nobody came
partner_left         partner_left     the partner's browser was gone and this worker ended the game
partner_inactive     partner_left     the game waited on the partner until the inactivity limit
partner_timed_out    partner_left     the partner did not take their turn in time (this worker waited)
partner_never_joined partner_left     the partner never opened the game and the batch ends it (live/presence.py)
agent_failed         agent_failed     the agent could not act (its fallback failed) or is not installed
left_waiting         returned_early   pressed "stop waiting and leave"
left_match           returned_early   left the game; the partner ended it after the grace period
match_inactive       returned_early   the game waited on this worker until the inactivity limit
never_joined         returned_early   paired, but never opened the game within GT_SEAT_GRACE_S
declined             no_consent       did not consent
failed_onboarding    screened_out     did not pass the batch's onboarding quiz (crowd/onboarding.py)
==================== ================ ==========================================================
"""
from __future__ import annotations

from dataclasses import dataclass

from django.utils import timezone

from crowd.entry import ENTRY_KINDS

OUTCOMES = ("completed", "time_up", "timed_out", "no_partner", "partner_left", "agent_failed", "returned_early", "no_consent",
            "screened_out")

OUTCOME_OF_REASON = {
    "completed": "completed",
    "time_up": "time_up",
    "timed_out": "timed_out",
    "no_partner": "no_partner",
    "partner_left": "partner_left",
    "partner_inactive": "partner_left",
    "partner_timed_out": "partner_left",
    "partner_never_joined": "partner_left",
    "agent_failed": "agent_failed",
    "left_waiting": "returned_early",
    "left_match": "returned_early",
    "match_inactive": "returned_early",
    "never_joined": "returned_early",
    "declined": "no_consent",
    "failed_onboarding": "screened_out",
}

FULL, PARTIAL, NONE = "full", "partial", "none"
PAY_KINDS = (FULL, PARTIAL, NONE)

# The defaults (docs/crowd.md says why): whoever did what was asked of them is paid in full, also
# when the partner or the agent let them down or nobody came within the wait the batch asked for;
# a worker who left on their own, or let the game wait on them until the inactivity limit, or did
# not take their turn within the turn limit (stalled), gets nothing; not consenting ends the study
# before it starts.
DEFAULT_PAY = {
    "completed": FULL,
    "time_up": FULL,
    "timed_out": NONE,
    "no_partner": FULL,
    "partner_left": FULL,
    "agent_failed": FULL,
    "returned_early": NONE,
    "no_consent": NONE,
    # a screen-out before any game: nothing by default (the worker spent a minute or two on the
    # instructions and the quiz); a batch may set {"screened_out": {"pay": "partial", "cents": N}}
    "screened_out": NONE,
}

# What the worker reads on the last page, in plain words (the reason, then the pay below it).
REASON_TEXT = {
    "completed": "You finished the study.",
    "time_up": "The time for the game ran out. Thank you for playing to the end.",
    "timed_out": "You did not take your turn in time, so the game ended.",
    "no_partner": "No partner arrived in time.",
    "partner_left": "Your partner left the game, so it ended early. This is not your fault.",
    "agent_failed": "The computer partner stopped working, so the game ended early. This is not your fault.",
    "returned_early": "You left the study before it was finished.",
    "no_consent": "You chose not to take part.",
    "screened_out": "You did not pass the quiz on the instructions, so you cannot play in this study. "
                         "Thank you for your time.",
}

# Where an exit reason says more than its outcome's text.
REASON_TEXT_OF_EXIT = {
    "partner_timed_out": "Your partner did not take their turn in time, so the game ended early. "
                         "This is not your fault.",
    "partner_never_joined": "Your partner did not join the game, so it could not start. This is not your fault.",
    "never_joined": "You were paired with a partner but did not open the game, so your part ended.",
}


def reason_text(exit_reason: str, outcome: str) -> str:
    """What the last page says about why the study ended."""
    return REASON_TEXT_OF_EXIT.get(exit_reason) or REASON_TEXT.get(outcome, "")


PROLIFIC_COMPLETE_URL = "https://app.prolific.com/submissions/complete?cc="


@dataclass(frozen=True)
class Pay:
    kind: str      # full, partial or none
    cents: int     # base pay for the outcome (the game bonus is on top, Participant.bonus_cents)


def outcome_for(exit_reason: str) -> str:
    """The outcome of an exit reason; an unknown reason (none is written today) counts as
    returned_early, the outcome that pays least by default, and the docs table above is checked
    against every reason the code writes by tests/crowd/test_outcomes.py."""
    return OUTCOME_OF_REASON.get(exit_reason, "returned_early")


def pay_for(batch, outcome: str) -> Pay:
    """What ``batch`` pays for ``outcome`` (its ``exit_pay`` over ``DEFAULT_PAY``)."""
    return pay_rule(batch.exit_pay, batch.pay_cents, outcome)


def pay_rule(exit_pay: dict | None, pay_cents: int, outcome: str) -> Pay:
    rule = (exit_pay or {}).get(outcome)
    if rule is None:
        kind, cents = DEFAULT_PAY.get(outcome, NONE), None
    elif isinstance(rule, str):
        kind, cents = rule, None
    else:
        kind, cents = rule.get("pay", NONE), rule.get("cents")
    if kind == FULL:
        return Pay(FULL, pay_cents)
    if kind == PARTIAL:
        return Pay(PARTIAL, int(cents) if cents is not None else pay_cents // 2)
    return Pay(NONE, 0)


def exit_pay_problems(exit_pay, pay_cents: int) -> list[str]:
    """Why a batch's ``exit_pay`` is not usable (empty: it is)."""
    if not isinstance(exit_pay, dict):
        return ['exit_pay must be a JSON object {outcome: {"pay": "full" | "partial" | "none", "cents": N}}.']
    out = []
    for outcome, rule in exit_pay.items():
        if outcome not in OUTCOMES:
            out.append(f"{outcome!r} is not an outcome; the outcomes are: {', '.join(OUTCOMES)}.")
            continue
        kind = rule if isinstance(rule, str) else rule.get("pay") if isinstance(rule, dict) else None
        if kind not in PAY_KINDS:
            out.append(f'{outcome}: "pay" must be one of {", ".join(PAY_KINDS)}.')
            continue
        cents = rule.get("cents") if isinstance(rule, dict) else None
        if kind == PARTIAL and cents is not None and (
                isinstance(cents, bool) or not isinstance(cents, int) or not 0 <= cents <= pay_cents):
            out.append(f"{outcome}: a partial pay's cents must be a whole number from 0 to the batch's pay "
                       f"({pay_cents}).")
    return out


def prolific_code_problems(*, entry_kinds, prolific_codes, exit_pay, pay_cents: int) -> list[str]:
    """A batch that accepts Prolific needs Prolific's completion code for every outcome that pays."""
    if not isinstance(prolific_codes, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in prolific_codes.items()):
        return ['prolific_codes must be a JSON object {outcome: "CODE"}.']
    out = [f"{k!r} is not an outcome; the outcomes are: {', '.join(OUTCOMES)}."
           for k in prolific_codes if k not in OUTCOMES]
    out += [f"The Prolific code for {k} must be 1 to 32 letters or digits." for k, v in prolific_codes.items()
            if not (v.isascii() and v.isalnum() and 0 < len(v) <= 32)]
    if "prolific" in (entry_kinds or []) and isinstance(exit_pay, dict):
        missing = [o for o in OUTCOMES
                   if pay_rule(exit_pay, pay_cents, o).kind != NONE and not prolific_codes.get(o)]
        if missing:
            out.append("This batch accepts Prolific: enter Prolific's completion code for every outcome that pays "
                       f"(missing: {', '.join(missing)}).")
    return out


def participant_record_outcome(p) -> None:
    """Set ``p.outcome``, ``p.pay`` and ``p.pay_cents`` from its exit reason (the caller saves;
    ``OUTCOME_FIELDS`` are the fields to save)."""
    p.outcome = outcome_for(p.exit_reason)
    pay = pay_for(p.batch, p.outcome)
    p.pay, p.pay_cents = pay.kind, pay.cents


OUTCOME_FIELDS = ["outcome", "pay", "pay_cents"]


def pay_text(pay_kind: str, cents: int | None) -> str:
    """The pay in plain words."""
    amount = f"${(cents or 0) / 100:.2f}"
    if pay_kind == FULL:
        return f"You will receive the full payment ({amount})." if cents else "You will receive the full payment."
    if pay_kind == PARTIAL:
        return f"You will receive a partial payment of {amount}."
    return "There is no payment for this."


def prolific_code(batch, outcome: str) -> str:
    return (batch.prolific_codes or {}).get(outcome, "")


def participant_exit(p, reason: str) -> list[str]:
    """End ``p``'s part with ``reason``, recording the outcome and pay; returns the fields to
    save. The caller holds the participant's row lock and has checked it was not done yet."""
    p.state = "done"
    p.exit_reason = reason
    p.finished_at = timezone.now()
    participant_record_outcome(p)
    return ["state", "exit_reason", "finished_at", *OUTCOME_FIELDS]


def crowd_problems(*, entry_kinds, exit_pay, prolific_codes, pay_cents: int) -> list[tuple[str, str]]:
    """(field, message) for each problem with a batch's entry kinds, pay per outcome and Prolific
    codes (the admin's batch form shows them)."""
    out = []
    if not isinstance(entry_kinds, list) or not all(k in ENTRY_KINDS for k in entry_kinds):
        out.append(("entry_kinds", f"Entry kinds are some of: {', '.join(ENTRY_KINDS)}."))
    out += [("exit_pay", m) for m in exit_pay_problems(exit_pay if exit_pay is not None else {}, pay_cents)]
    out += [("prolific_codes", m) for m in prolific_code_problems(
        entry_kinds=entry_kinds if isinstance(entry_kinds, list) else [],
        prolific_codes=prolific_codes if prolific_codes is not None else {},
        exit_pay=exit_pay if exit_pay is not None else {}, pay_cents=pay_cents)]
    return out
