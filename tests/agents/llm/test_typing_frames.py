"""What the partner sees while an LLM agent writes (agents/llm/typing_frames.py): the stream field's
text read from a partial JSON answer, the pacing drawn per turn, and, end to end, a person's socket
getting ``typing`` frames of the reply as it streams, paced, before the message itself."""
from __future__ import annotations

import asyncio
import json
import time

import pytest
from channels.db import database_sync_to_async

from agents.llm.typing_frames import Pacing, partial_field
from agents.models import AgentCall
from agents.services import agent_take_turn
from live.models import Match

from tests.live.test_consumers import connect
from tests.support.factories import colors_match
from tests.support.llm_agents import openai_entry, reset_registry, use_tiny_roles, write_models_file


@pytest.mark.parametrize("raw, text", [
    ("", None),
    ('{"mess', None),
    ('{"message": "', ""),
    ('{"message": "the bl', "the bl"),
    ('{"message": "say \\"hi\\" to', 'say "hi" to'),
    ('{"other": "x", "message": "done"}', "done"),
    ('```json\n{"message": "fenced', "fenced"),
    ('{"message": 3', None),
    ("not json", None),
])
def test_the_stream_field_of_a_partial_answer(raw, text):
    assert partial_field(raw, "message") == text


def test_the_pacing_of_a_turn_is_drawn_from_the_turn():
    config = {"min_s": 2.0, "chars_per_s": 5.0, "jitter": 0.3}
    first, again, other = (Pacing.draw(config, seed) for seed in ("m:speaker:3:a", "m:speaker:3:a", "m:speaker:5:a"))
    assert first == again and first != other and 0.7 <= first.factor <= 1.3
    assert first.delay_s(0) == pytest.approx(2.0 * first.factor)            # a short reply: the minimum
    assert first.delay_s(100) == pytest.approx(100 / 5.0 * first.factor)     # a long one: the typing
    assert Pacing.draw({**config, "max_s": 4.0}, "m:speaker:3:a").delay_s(100) == 4.0
    assert first.visible(1.0, 100) == int(5.0 / first.factor) and first.visible(100, 10) == 10
    assert Pacing.draw({}, "x") is None


MESSAGE = "the deep blue one, darker than the sky"


async def _paced_turn(tmp_path, monkeypatch, standin, *, min_s: float, chunk_delay_s: float, arms=None):
    """One turn of an LLM speaker (streamed, paced: ``min_s``, 30 chars/s, jitter 0.2) on the stand-in
    answering MESSAGE, with the listener's socket open (the match in a human-agent batch of ``arms``
    when given): the typing frames the socket got (time received, frame), the ``message_sent`` event,
    when the agent was due (epoch s), the turn's AgentCall and the batch (None without ``arms``)."""
    from tests.support.factories import batch as make_batch

    use_tiny_roles(monkeypatch)
    write_models_file(tmp_path, monkeypatch, openai_entry(
        standin.base_url, timeout_s=15,
        extra=f"stream = true\nreply_pacing = {{ min_s = {min_s}, chars_per_s = 30, jitter = 0.2 }}"))
    b = None
    try:
        standin.script({"content": json.dumps({"message": MESSAGE}), "chunk_delay_s": chunk_delay_s})
        if arms is not None:
            b = await database_sync_to_async(make_batch)(pairing="human-agent", human_roles=["listener"],
                                                         agents={"speaker": "llm_speaker"}, arms=arms)
        match, seats = await database_sync_to_async(colors_match)(rounds=2, agents={"speaker": "llm_speaker"})
        if b is not None:
            await database_sync_to_async(Match.objects.filter(pk=match.id).update)(batch=b, arm="model")
        listener, _ = await connect(match.id, seats["listener"].token)
        due = (await database_sync_to_async(Match.objects.get)(pk=match.id)).agent_due_since.timestamp()
        turn = asyncio.ensure_future(database_sync_to_async(agent_take_turn, thread_sensitive=False)(
            match_id=str(match.id), role="speaker", expected_seq=match.seq))
        frames, said = [], None
        while said is None:
            got = await listener.receive_json_from(timeout=15)
            if got["type"] == "typing":
                frames.append((time.time(), got))
            elif got["type"] == "events":
                said = next((e for e in got["events"] if e["type"] == "message_sent"), None)
        assert await turn == "acted"
        await listener.disconnect()
    finally:
        reset_registry()
    call = await database_sync_to_async(AgentCall.objects.get)(match_id=match.id)
    return frames, said, due, call, b


@pytest.mark.django_db(transaction=True)
async def test_the_partner_sees_the_reply_as_it_is_written_then_the_message(tmp_path, monkeypatch, openai_standin):
    frames, said, due, call, _ = await _paced_turn(tmp_path, monkeypatch, openai_standin, min_s=4, chunk_delay_s=0.08)
    texts = [f["text"] for _, f in frames]
    assert all(f["role"] == "speaker" and set(f) == {"type", "role", "text"} for _, f in frames)
    assert texts[0] == "" and len(set(texts)) >= 4, texts          # typing, then the words as they come
    assert all(MESSAGE.startswith(t) for t in texts) and texts == sorted(texts, key=len)
    assert said["payload"]["text"] == MESSAGE
    # the drawn delay (4 s x 0.8-1.2; the message is shorter than 2 s of typing) is recorded and kept
    assert 3200 <= call.pacing_ms <= 4800 and call.outcome == "acted" and call.params["stream"] is True
    assert said["t"] / 1000 >= due + call.pacing_ms / 1000 - 0.05
    # the words appear no faster than the drawn typing speed (30 chars/s, at most 1.2 times faster)
    for at, frame in frames:
        assert len(frame["text"]) <= (at - due) * 30 / 0.8 + 1, (at - due, frame["text"])
    # the answer streamed in about 0.7 s; the frames typed all of it out at the drawn speed before it was sent
    assert texts[-1] == MESSAGE and said["t"] / 1000 > frames[-1][0] - 0.05


BLIND_ARMS = [{"name": "person", "agents": {}}, {"name": "model", "agents": {"speaker": "llm_speaker"}}]
OPEN_ARMS = [{"name": "model", "agents": {"speaker": "llm_speaker"}},
             {"name": "rule", "agents": {"speaker": "colors_literal_speaker"}}]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("arms, blind", [(BLIND_ARMS, True), (OPEN_ARMS, False)], ids=["blind", "not-blind"])
async def test_a_blind_batchs_seat_gets_no_typing_frame_and_the_reply_is_still_paced(
        tmp_path, monkeypatch, openai_standin, arms, blind):
    """A person partner's typing sends no frames, so in a blind batch (human-human arms beside agent
    arms) an agent's would give it away: its seat's socket gets the message only, as late as the
    drawn pacing says; in a batch whose arms all have agents the frames come as usual."""
    from live.arms import is_blind

    frames, said, due, call, b = await _paced_turn(tmp_path, monkeypatch, openai_standin, min_s=1.5,
                                                   chunk_delay_s=0.02, arms=arms)
    assert is_blind(b) is blind
    assert said["payload"]["text"] == MESSAGE
    assert (frames == []) is blind, frames
    assert 1200 <= call.pacing_ms <= 1800 and said["t"] / 1000 >= due + call.pacing_ms / 1000 - 0.05
