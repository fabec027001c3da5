"""The record of an LLM agent's calls (:class:`agents.models.AgentCall`): one row per request, the
first and the repair, written when the turn ends with the turn's outcome; and the call's cost."""
from __future__ import annotations

import logging
from dataclasses import dataclass

from agents.models import AgentCall

log = logging.getLogger(__name__)


@dataclass
class Call:
    """One request and what came of it (the agent fills it in as the call goes)."""

    attempt: int
    request: dict                    # the body sent, images replaced by their sha256
    text: str = ""
    model_reported: str = ""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    retries: int = 0
    queue_ms: float = 0.0
    ttft_ms: float | None = None
    total_ms: float | None = None
    decision: dict | None = None
    error: str = ""
    reason: str = ""                 # a transport failure's fallback reason (timeout, busy, error)
    pacing_ms: float | None = None
    actions: list | None = None      # the action(s) the answer became, in order, when legal

    @property
    def answered(self) -> bool:
        return not self.reason


def cost_usd(config, call: Call) -> float | None:
    """The call's cost from the agent's ``price_in`` / ``price_out`` (USD per million tokens); None
    without prices or without the server's token counts."""
    if config.price_in is None and config.price_out is None:
        return None
    if call.prompt_tokens is None and call.completion_tokens is None:
        return None
    return ((call.prompt_tokens or 0) * (config.price_in or 0.0)
            + (call.completion_tokens or 0) * (config.price_out or 0.0)) / 1_000_000


def write(*, turn, config, adapter_version: str, prompt_sha256: str, params: dict, calls: list[Call],
          outcome: str) -> None:
    """One :class:`AgentCall` per call of the turn (never raises: a record that cannot be written
    is logged, and the turn goes on)."""
    rows = [AgentCall(
        match_id=turn.match_id, role=turn.role, seq=turn.expected_seq, agent=config.name, attempt=call.attempt,
        model_reported=call.model_reported[:200], params=params, prompt_sha256=prompt_sha256,
        adapter_version=adapter_version, request=call.request, response_text=call.text, decision=call.decision,
        error=call.error, prompt_tokens=call.prompt_tokens, completion_tokens=call.completion_tokens,
        retries=call.retries, queue_ms=call.queue_ms, ttft_ms=call.ttft_ms, total_ms=call.total_ms,
        pacing_ms=call.pacing_ms, cost_usd=cost_usd(config, call), actions=call.actions or [],
        outcome=outcome) for call in calls]
    try:
        AgentCall.objects.bulk_create(rows)
    except Exception:
        log.exception("the calls of agent %s in match %s (%s at seq %s) could not be recorded",
                      config.name, turn.match_id, turn.role, turn.expected_seq)


def mark(*, turn, agent: str, outcome: str) -> None:
    """The turn's answer was not used after all (``stale``: the game had moved on; ``fallback``)."""
    try:
        AgentCall.objects.filter(match_id=turn.match_id, role=turn.role, seq=turn.expected_seq,
                                 agent=agent).update(outcome=outcome)
    except Exception:
        log.exception("the calls of agent %s in match %s could not be marked %s", agent, turn.match_id, outcome)
