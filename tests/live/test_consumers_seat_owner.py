"""The seat websocket serves only the browser its participant is bound to (issue 11, item 1):
the seat token alone, or another browser's session cookie, joins nothing; a move to another
device closes the first browser's open socket."""
from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import Client

from crowd import identity
from crowd.models import Participant
from live.models import Batch, Seat
from groundtalk_web.asgi import application

from tests.support.factories import batch as make_batch
from tests.support.factories import lab_url

pytestmark = [pytest.mark.django_db(transaction=True),
              pytest.mark.usefixtures("agent_queues_served")]   # human-agent batches are runnable


def seated_browser(allow_device_change=False):
    """A browser (test client) that entered a human-agent batch and was given a seat."""
    b = make_batch(pairing=Batch.Pairing.HUMAN_AGENT, human_roles=["listener"],
                   agents={"speaker": "colors_lexicon_speaker"}, allow_device_change=allow_device_change)
    c = Client()
    url = c.get(lab_url(b, "ann")).url
    c.post(url, {"step": "consent", "agree": "yes"})
    c.post(url, {"step": "ready"})
    r = c.get(url)
    seat = Seat.objects.get(token=r.url.split("seat=")[1])
    return b, c, seat


async def join(seat: Seat, cookie: str | None):
    headers = [(b"origin", b"http://localhost")]
    if cookie is not None:
        headers.append((b"cookie", f"sessionid={cookie}".encode()))
    comm = WebsocketCommunicator(application, f"/ws/match/{seat.match_id}/", headers=headers)
    ok, _ = await comm.connect()
    assert ok
    await comm.send_json_to({"type": "join", "token": seat.token, "last_seq": None})
    return comm, await comm.receive_json_from(timeout=5)


async def test_only_the_owning_browser_joins_the_seat():
    b, owner, seat = await sync_to_async(seated_browser)()
    other = Client()
    await sync_to_async(other.get)("/")          # a browser with a session of its own
    await sync_to_async(other.get)(lab_url(b, "bob"))
    for cookie in (None, "not-a-session", other.cookies["sessionid"].value):
        comm, reply = await join(seat, cookie)
        assert reply == {"type": "error", "code": "other_browser",
                         "message": "This study is open in another browser."}, cookie
        await comm.send_json_to({"type": "action", "id": "x", "action": {"type": "chat", "text": "hi"}})
        assert (await comm.receive_json_from(timeout=5))["code"] == "not_joined"
        await comm.disconnect()
    comm, reply = await join(seat, owner.cookies["sessionid"].value)
    assert reply["type"] == "joined" and reply["role"] == "listener"
    await comm.disconnect()


async def test_moving_to_another_device_closes_the_first_browsers_socket():
    b, first, seat = await sync_to_async(seated_browser)(allow_device_change=True)
    comm, reply = await join(seat, first.cookies["sessionid"].value)
    assert reply["type"] == "joined"
    p = await sync_to_async(Participant.objects.get)(pk=seat.participant_id)
    code = (await sync_to_async(identity.transfer_start)(participant_id=p.pk)).transfer_code
    second = Client()
    r = await sync_to_async(second.post)("/continue/", {"ticket": identity.transfer_ticket(p), "code": code})
    assert r.status_code == 302
    while True:   # the first browser is told, then closed
        msg = await comm.receive_json_from(timeout=5)
        if msg["type"] == "error":
            break
    assert msg["code"] == "other_browser"
    assert (await comm.receive_output(timeout=5))["type"] == "websocket.close"
    comm2, reply = await join(seat, second.cookies["sessionid"].value)
    assert reply["type"] == "joined"
    await comm2.disconnect()
