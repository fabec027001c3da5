"""``match.typing`` notices (an LLM partner writing, agents/llm/): the consumer forwards them to the
other seats' sockets only, as ``typing`` frames, and they never enter the match's log."""
from __future__ import annotations

import asyncio

import pytest
from channels.db import database_sync_to_async

from live.broadcast import publish_notice
from live.models import MatchEvent

from tests.live.test_consumers import connect, make_match

pytestmark = pytest.mark.django_db(transaction=True)


async def _next_but_presence(comm) -> dict:
    """The next frame that is not the speaker's presence. The speaker announced it before the
    listener joined; it reaches the listener only when the channel layer delivers it after the
    listener's group_add (a race: a test that waited for it failed by chance under load)."""
    while True:
        frame = await comm.receive_json_from(timeout=5)
        if frame != {"type": "presence", "role": "speaker", "connected": True}:
            return frame


async def test_a_typing_notice_reaches_the_other_seats_only():
    match, seats = await make_match()
    speaker, _ = await connect(match.id, seats["speaker"].token)
    listener, _ = await connect(match.id, seats["listener"].token)
    for retry in (True, False):
        publish_notice(match_id=match.id, retry=retry,
                       message={"type": "match.typing", "role": "speaker", "text": "the blu"})
        got = await _next_but_presence(listener)
        assert got == {"type": "typing", "role": "speaker", "text": "the blu"}
    seen = []   # never to the seat that is writing (it gets its partner's presence)
    while not await speaker.receive_nothing(timeout=0.5):
        seen.append((await speaker.receive_json_from())["type"])
    assert "typing" not in seen and seen == ["presence"]
    events = await database_sync_to_async(lambda: list(MatchEvent.objects.filter(match=match).values_list("type", flat=True)))()
    assert "typing" not in " ".join(events)
    await asyncio.gather(speaker.disconnect(), listener.disconnect())
