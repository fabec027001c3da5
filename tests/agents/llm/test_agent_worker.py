"""The full stack: ``manage.py agent_worker`` (a real Celery worker process, threads pool) plays an
LLM speaker against the stand-in; the person's socket (through the Redis channel layer) gets the
typing frames the worker publishes, then the message."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
from channels.db import database_sync_to_async

from agents.models import AgentCall
from live.models import Seat

from tests.conftest import ROOT, child_env, var_log
from tests.live.test_consumers import connect
from tests.support.factories import colors_match
from tests.support.llm_agents import openai_entry, reset_registry, write_models_file

MESSAGE = "the pale green one on the far side"


@pytest.mark.celery
@pytest.mark.django_db(transaction=True)
async def test_an_agent_worker_plays_an_llm_partner_the_person_sees_it_typing(tmp_path, monkeypatch, openai_standin,
                                                                              settings):
    if settings.GT_AGENT_MODE != "celery":
        pytest.skip("needs REDIS_URL and DATABASE_URL (the full stack)")
    entry = openai_entry(openai_standin.base_url, timeout_s=60, extra="stream = true\nmax_concurrency = 2")
    write_models_file(tmp_path, monkeypatch, entry.replace('prompt = "speaker.txt"\n', ""))   # the game's prompt
    openai_standin.script({"content": json.dumps({"message": MESSAGE}), "chunk_delay_s": 0.1})
    worker = None
    try:
        # the match is created first: its turn waits in the agent's queue until the worker is up
        match, seats = await database_sync_to_async(colors_match)(rounds=2, agents={"speaker": "llm_speaker"})
        listener, joined = await connect(match.id, seats["listener"].token)
        env = await database_sync_to_async(child_env)()
        worker = subprocess.Popen([sys.executable, "manage.py", "agent_worker", "--agents", "llm_speaker",
                                   "--no-control", "--no-supervise", "--loglevel", "info"],
                                  cwd=ROOT, env=env, stdout=var_log("test-llm-worker.log"), stderr=subprocess.STDOUT)
        frames, said = [], None
        while said is None:
            got = await listener.receive_json_from(timeout=90)
            if got["type"] == "typing":
                frames.append(got["text"])
            elif got["type"] == "events":
                said = next((e for e in got["events"] if e["type"] == "message_sent"), None)
        await listener.disconnect()
    finally:
        if worker is not None:
            worker.terminate()
            try:
                worker.wait(20)
            except subprocess.TimeoutExpired:
                worker.kill()
        reset_registry()
    assert said["actor"] == "speaker" and said["payload"]["text"] == MESSAGE
    assert frames[0] == "" and any(f and MESSAGE.startswith(f) for f in frames), frames
    call = await database_sync_to_async(AgentCall.objects.get)(match_id=match.id)
    assert call.outcome == "acted" and call.params["stream"] is True and call.completion_tokens > 0
    seat = await database_sync_to_async(Seat.objects.get)(match_id=match.id, role="speaker")
    assert seat.agent_model["kind"] == "openai" and seat.agent_model["adapter_version"] == "colors-llm/1"
