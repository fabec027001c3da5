"""The LLM agent against a REAL OpenAI-compatible server: ``transformers serve`` with a tiny chat model
built on this machine (tests/support/real_openai_server.py). The real protocol end to end: the
request the library sends is accepted, the answer streams with its usage, the server names its
model. The random model's answer is not the decision asked for (this server does not enforce a
json_schema), so each turn takes the repair request and then the fallback: that path, for real."""
from __future__ import annotations

import pytest

from agents.models import AgentCall
from agents.services import agent_take_turn
from live.models import MatchEvent, Seat
from live.services import SeatSpec, match_create

from tests.support.llm_agents import openai_entry, reset_registry, write_models_file


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.django_db
def test_a_turn_against_transformers_serve(stream, tmp_path, monkeypatch, real_openai_server):
    entry = openai_entry(real_openai_server.base_url, model=real_openai_server.model, timeout_s=90,
                         extra=f"stream = {'true' if stream else 'false'}\nmax_tokens = 12\ntemperature = 0\n"
                               f"seed = 1\nprice_in = 1.0\nprice_out = 2.0")
    write_models_file(tmp_path, monkeypatch, entry.replace('prompt = "speaker.txt"\n', ""))   # the game's prompt
    try:
        seats = {"speaker": SeatSpec(Seat.Kind.AGENT, agent_name="llm_speaker"), "listener": SeatSpec(Seat.Kind.HUMAN)}
        match = match_create(game_id="colors_v1", seats=seats, seed=5, config={"rounds": 2})
        result = agent_take_turn(match_id=match.id, role="speaker", expected_seq=match.seq)
    finally:
        reset_registry()
    calls = list(AgentCall.objects.filter(match=match).order_by("attempt"))
    if result == "acted":   # the random model happened to write the decision: one call, played
        assert [c.outcome for c in calls] == ["acted"]
    else:
        assert result == "fallback" and [c.attempt for c in calls] == [1, 2]
        assert {c.outcome for c in calls} == {"fallback"} and all(c.error for c in calls)
        notice = MatchEvent.objects.filter(match=match, seq__gt=match.seq).order_by("seq").first()
        assert notice.type == "agent_timed_out" and notice.payload["reason"] == "illegal"
        assert calls[1].request["messages"][-2] == {"role": "assistant", "content": calls[0].response_text}
    for call in calls:
        assert call.model_reported and call.ttft_ms is not None and call.total_ms >= call.ttft_ms
        assert call.prompt_tokens > 0 and 0 < call.completion_tokens <= 12 and call.cost_usd > 0
        assert call.request["stream"] is True if stream else "stream" not in call.request
