"""Colour-game matches whose speaker is an LLM agent (tests/support/llm_agents.py) played through the
real agent against the stand-in server (tests/support/openai_standin.py), so that their
:class:`agents.models.AgentCall` rows are the ones the agent records: for the pages, the monitor,
the export and ``llm_replay``."""
from __future__ import annotations

from agents.services import agent_take_turn
from live.models import Match, Seat
from live.services import SeatSpec, match_apply_action, match_create


def llm_colors_match(batch=None, *, agent: str = "llm_speaker", rounds: int = 1, seed: int = 7,
                     finish: bool = True) -> Match:
    """A colour match: the LLM ``agent`` speaks each round (its turn played here, as the agent worker
    would), a person listens and clicks the target; ended (finished) when ``finish``."""
    seats = {"speaker": SeatSpec(Seat.Kind.AGENT, agent_name=agent), "listener": SeatSpec(Seat.Kind.HUMAN)}
    # the agent's turns are due (Match.agent_seats); in a test's transaction no worker is woken
    match = match_create(game_id="colors_v1", seats=seats, batch=batch, seed=seed, config={"rounds": rounds})
    for k in range(rounds if finish else rounds - 1):
        match.refresh_from_db()
        result = agent_take_turn(match_id=match.id, role="speaker", expected_seq=match.seq)
        assert result in ("acted", "fallback"), result
        match.refresh_from_db()
        positions = match.state["rounds"][match.state["round"]]["positions"]["listener"]
        match_apply_action(match_id=match.id, role="listener",
                           action={"type": "click", "round": k + 1, "position": positions[0]})
    match.refresh_from_db()
    return match
