"""Agent turns through the same service as a human's (``live.services.match_apply_action``)."""
from __future__ import annotations

import copy
import logging
import time

from django.db import transaction

from agents.base import TurnContext
from agents.registry import agent_instance, get_agent_spec
from agents.seats import seats_record_model
from games.base import Event, IllegalAction
from live.arms import is_blind
from live.broadcast import publish_notice
from live.models import Match
from games.registry import get_game
from live.services import match_apply_action, now_ms

log = logging.getLogger(__name__)


def _due(match_id, role: str, expected_seq: int):
    """The match if ``role`` still has to act at ``expected_seq``, else None (the turn is stale)."""
    match = Match.objects.only("id", "game_id", "state", "state_static", "seq", "status", "agent_seats",
                               "agent_due_since").filter(pk=match_id).first()
    if match is None or match.status != Match.Status.ACTIVE or match.seq != expected_seq:
        return None
    if role not in get_game(match.game_id).rules.to_act(match.state):
        return None
    return match


def agent_take_turn(*, match_id, role: str, expected_seq: int, agent=None) -> str:
    """Let the agent in ``role`` act on the state at ``expected_seq``. Returns what happened.

    Stale turns do nothing; a retried task is answered by the service's idempotency (the client
    action id is derived from the seq), so a redelivered task never acts twice. ``agent``: the
    object that plays the seat's agent instead of the registry's (the embedded mode's client of
    the model server for a torch agent, agents/model_client.py).
    """
    match = _due(match_id, role, expected_seq)
    if match is None:
        return "stale"
    name = match.agent_seats.get(role)
    spec = get_game(match.game_id)
    view = spec.rules.view_for(match.state, role)
    started = time.monotonic()
    agent = agent if agent is not None else agent_instance(name)
    act_turn = getattr(agent, "act_turn", None)
    turn = _turn_context(match, role, expected_seq) if callable(act_turn) else None
    try:
        action = act_turn(view, turn) if turn is not None else agent.act(view)
    except Exception as exc:
        # A model agent (an HTTP endpoint that failed, a model that raised) has a fallback: it acts
        # now rather than after the timeout. Other agents' errors go to the worker as before.
        if get_agent_spec(name).model is None:
            raise
        log.warning("agent %s failed in %s: %r; its fallback acts", name, match_id, exc)
        return agent_fallback_turn(match_id=match.id, role=role, expected_seq=expected_seq,
                                   reason=getattr(exc, "fallback_reason", "error"))
    if action is None:
        return "idle"
    try:
        _apply_turn(match.id, role, action if isinstance(action, list) else [action], expected_seq)
    except IllegalAction as exc:
        unused = getattr(agent, "turn_unused", None)
        if turn is not None and callable(unused):   # its record of the turn says the answer was not used
            unused(turn, "stale" if exc.code in {"stale", "game_over"} else "fallback")
        if exc.code in {"stale", "game_over"}:
            return "stale"
        log.warning("agent %s made an illegal move in %s: %s", name, match_id, exc)
        if get_agent_spec(name).model is not None:
            return agent_fallback_turn(match_id=match.id, role=role, expected_seq=expected_seq, reason="illegal")
        return f"illegal:{exc.code}"
    record = getattr(agent, "seat_record", None)
    if callable(record):   # a model agent: which model played the seat (Seat.agent_model)
        seats_record_model(turns=[(str(match.id), role)], record=record())
    log.info("agent %s acted in %s after %.0f ms", name, match_id, 1000 * (time.monotonic() - started))
    return "acted"


def _apply_turn(match_id, role: str, actions: list[dict], expected_seq: int) -> None:
    """The turn's actions through the service, one after the other, in ONE transaction: all of
    them or none (an :class:`IllegalAction` of any rolls back those before it). An agent whose one
    decision takes several actions (``act_turn`` returned a list: a CoDraw drawer's canvas changes,
    then its reply) so plays its whole turn from one answer: the agent is woken after each commit
    as usual, but those wake-ups come after the last action, so they find the turn taken
    (``stale``) instead of asking the model again. Each action has the client id
    ``agent:<role>:<seq it acts on>``, so a redelivered turn is a no-op."""
    seq = expected_seq
    with transaction.atomic():
        for action in actions:
            result = match_apply_action(match_id=match_id, role=role, action=action,
                                        client_action_id=f"agent:{role}:{seq}", expected_seq=seq)
            seq = result.last_seq


def _turn_context(match: Match, role: str, expected_seq: int) -> TurnContext:
    """The turn as an agent with ``act_turn`` sees it (agents.base.TurnContext): ``check`` applies
    the game's schema and rules to a copy of the state at ``expected_seq`` (``check_all``: several
    actions in order on one copy); ``publish`` sends an
    ephemeral ``match.typing`` frame to the match's sockets (live/consumers.py forwards it to the
    other seats only; never logged, never retried: a lost frame is overtaken by the next). In a
    blind batch (``live.arms.is_blind``: human-human arms beside agent arms) ``publish`` sends
    nothing: a person partner's typing has no frames, so an agent's would tell the person their
    partner is an AI; the reply's pacing still applies (the agent waits all the same)."""
    spec = get_game(match.game_id)
    state = match.state
    due = match.agent_due_since.timestamp() if match.agent_due_since is not None else time.time()

    def step(current: dict, action: dict) -> tuple[dict, dict]:
        validated = spec.actions.validate(action)
        after, events = spec.rules.apply(current, role, {**validated, "at": now_ms()})
        if not events:
            raise IllegalAction("no_effect", "That action changes nothing.")
        return after, validated

    def check(action: dict) -> dict:
        return step(copy.deepcopy(state), action)[1]

    def check_all(actions: list) -> list:
        current, out = copy.deepcopy(state), []
        for n, action in enumerate(actions, start=1):
            try:
                current, validated = step(current, action)
            except IllegalAction as exc:
                if len(actions) == 1:
                    raise
                kind = action.get("type") if isinstance(action, dict) else None
                raise IllegalAction(exc.code, f"action {n} of {len(actions)} ({kind}): {exc.message}") from None
            out.append(validated)
        return out

    def publish(frame: dict) -> None:
        publish_notice(match_id=match.id, retry=False,
                       message={"type": "match.typing", "role": role, "text": str(frame.get("text") or "")})

    def publish_nothing(frame: dict) -> None:
        return None

    if match.batch_id is not None and is_blind(match.batch):
        publish = publish_nothing

    return TurnContext(match_id=str(match.id), role=role, expected_seq=expected_seq, due_at=due, check=check,
                       publish=publish, check_all=check_all)


# What the person is told when a fallback acts (the agent_timed_out notice; every game's page shows it).
# ``busy``: an LLM agent's endpoint had no free slot (its max_concurrency) within the agent's time.
FALLBACK_MESSAGES = {
    "timeout": "The AI partner did not answer in time; a simple backup answered for it.",
    "error": "The AI partner had a problem; a simple backup answered for it.",
    "illegal": "The AI partner's answer could not be used; a simple backup answered for it.",
    "busy": "The AI partner was too busy to answer in time; a simple backup answered for it.",
}


def agent_fallback_turn(*, match_id, role: str, expected_seq: int, reason: str = "timeout") -> str:
    """The watchdog: if the agent has not acted by now, a fallback acts for it and the human is told.

    The fallback is the agent spec's ``fallback`` (a fast in-process agent; the agent itself when
    none is named). The ``agent_timed_out`` event and the fallback's action are one transaction.
    ``reason``: ``timeout`` (the watchdog), or ``error`` / ``illegal`` when a model agent's worker
    or bridge found its model failing or its answer unusable and lets the fallback act at once
    (an LLM agent, agents/llm/: also ``timeout`` when its endpoint did not answer within its
    ``timeout_s``, ``busy`` when no slot of its ``max_concurrency`` came free in time, and
    ``illegal`` after its repair request failed too).
    """
    match = _due(match_id, role, expected_seq)
    if match is None:
        return "answered"
    name = match.agent_seats.get(role)
    spec = get_agent_spec(name)
    # The watchdog runs this in a web process: a GPU agent without a named fallback is not loaded
    # there (the match is then aborted as ``agent_failed``).
    fallback = spec.fallback or (name if spec.device == "cpu" else None)
    if fallback is None:
        return "no_fallback"
    spec_game = get_game(match.game_id)
    action = agent_instance(fallback).act(spec_game.rules.view_for(match.state, role))
    notice = Event("agent_timed_out", {"role": role, "agent": name, "after_s": spec.timeout_s,
                                       "reason": reason,
                                       "fallback": fallback if action is not None else None,
                                       "message": FALLBACK_MESSAGES.get(reason, FALLBACK_MESSAGES["timeout"])
                                       if action is not None else "The AI partner did not answer in time."})
    if action is None:
        return "no_fallback"
    try:
        # The fallback's move is logged as it is: the agent_timed_out notice written in the same
        # transaction just before it records that a fallback made it (and which one).
        match_apply_action(match_id=match.id, role=role, action=action,
                           client_action_id=f"fallback:{role}:{expected_seq}", expected_seq=expected_seq,
                           notice=notice)
    except IllegalAction as exc:
        return "answered" if exc.code in {"stale", "game_over"} else f"illegal:{exc.code}"
    return "fallback"
