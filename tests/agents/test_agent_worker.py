"""``manage.py agent_worker``: the threads a CPU worker starts with (agents/management/commands/agent_worker.py)."""
from __future__ import annotations

from dataclasses import replace

from agents.base import AgentSpec
from agents.management.commands.agent_worker import LLM_THREADS, MAX_THREADS, THREADS, default_threads
from agents.model_config import ModelAgentConfig


def llm(name: str, base_url: str, model: str, max_concurrency: int) -> AgentSpec:
    config = ModelAgentConfig(name=name, kind="openai", game_id="colors_v1", role="listener", timeout_s=10,
                              fallback="colors_literal_listener", version="1", base_url=base_url, model=model,
                              max_concurrency=max_concurrency)
    return AgentSpec(name, "colors_v1", "listener", dict, model=config)


RULE = AgentSpec("rule", "colors_v1", "listener", dict)


def test_rule_agents_get_the_small_pool():
    assert default_threads([RULE]) == THREADS == 4


def test_llm_agents_get_their_endpoints_concurrency_together():
    a = llm("a", "http://gpu-1:8000/v1", "m", 8)
    assert default_threads([RULE, a]) == LLM_THREADS   # at least 32
    b = llm("b", "http://gpu-2:8000/v1", "m", 100)
    c = llm("c", "http://gpu-3:8000/v1", "m", 28)
    assert default_threads([a, b, c]) == 136
    # two agents of one model at one endpoint share its slots: counted once
    assert default_threads([b, replace(b, name="b2")]) == 100


def test_an_endpoint_without_a_limit_or_a_huge_one_gets_the_most():
    assert default_threads([llm("a", "http://x/v1", "m", 0)]) == MAX_THREADS
    assert default_threads([llm("a", "http://x/v1", "m", 1000)]) == MAX_THREADS
