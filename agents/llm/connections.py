"""The PostgreSQL connection of a thread whose LLM turn waits on the network (agents/llm/agent.py).

Apart from agent.py so that agents/tasks.py, which every process that sends or runs agent turns
imports, does not import the ``openai`` library (about 0.7 s of CPU, docs/testing.md "Where the
time goes"): only a process that builds an LLM agent does (the registry imports
``agents.llm.agent:LlmAgent`` when it builds one; the agent worker at start-up).
"""
from __future__ import annotations

import threading

from django.db import connection

_network_turn = threading.local()


def release_connection() -> None:
    """Give this thread's PostgreSQL connection back: it is about to wait on the network for
    seconds, or an LLM turn of this thread has just ended (:func:`release_after_turn`). A worker of
    128 threads would otherwise hold 128 connections idle; the next query opens one again (a few
    ms). The benchmark found the connections the limit once the threads were not (docs/bench.md,
    "Issue 23: LLM agents")."""
    if connection.vendor == "postgresql" and not connection.in_atomic_block:
        connection.close()
        _network_turn.active = True


def release_after_turn() -> None:
    """At the end of an agent task (agents/tasks.py): if the turn waited on an LLM endpoint, the
    connection it opened again to apply the answer goes back too."""
    if getattr(_network_turn, "active", False):
        _network_turn.active = False
        release_connection()
        _network_turn.active = False
