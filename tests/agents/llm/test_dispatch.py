"""The embedded mode (agents/dispatch.py): an LLM agent's turns run in the web process, in a thread
pool of their own, so a slow endpoint never holds up the rule agents' pool; its slots are counted
in the process (no Redis)."""
from __future__ import annotations

import time

import pytest

from agents import dispatch
from agents.models import AgentCall

from tests.support.factories import colors_match
from tests.support.llm_agents import openai_entry, reset_registry, write_models_file


@pytest.mark.django_db(transaction=True)
def test_an_llm_turn_runs_in_its_own_pool_in_the_embedded_mode(tmp_path, monkeypatch, openai_standin, settings):
    settings.GT_AGENT_MODE = "inprocess"
    settings.REDIS_URL = ""
    entry = openai_entry(openai_standin.base_url, timeout_s=20, extra="max_concurrency = 1")
    write_models_file(tmp_path, monkeypatch, entry.replace('prompt = "speaker.txt"\n', ""))
    openai_standin.script({"latency_s": 1.0})
    pools = []
    submit = dispatch.ThreadPoolExecutor.submit

    def spy(pool, fn, *args, **kwargs):
        pools.append(pool._thread_name_prefix)
        return submit(pool, fn, *args, **kwargs)

    monkeypatch.setattr(dispatch.ThreadPoolExecutor, "submit", spy)
    try:
        match, _ = colors_match(rounds=2, agents={"speaker": "llm_speaker"})   # woken on commit
        created_seq = match.seq
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and match.seq == created_seq:
            time.sleep(0.1)
            match.refresh_from_db()
    finally:
        reset_registry()
    assert pools == ["llm"] and dispatch._pools["llm"]._max_workers == 32
    assert AgentCall.objects.get(match=match).outcome == "acted"
    assert [m["role"] for m in match.state["messages"]] == ["speaker"]
