"""Celery tasks: thin wrappers named after their services. Queues: ``agent.<name>`` per agent
(GPU agents on workers started with ``--pool solo``). The agents' watchdog is not a task: it
runs in every web process (live/watchdog.py), so it fires even when no worker is left."""
from celery import shared_task

from agents import services
from agents.llm.connections import release_after_turn


@shared_task(name="agents.agent_take_turn", acks_late=True, ignore_result=True)
def agent_take_turn(match_id: str, role: str, expected_seq: int) -> str:
    try:
        return services.agent_take_turn(match_id=match_id, role=role, expected_seq=expected_seq)
    finally:   # an LLM turn's thread holds no connection while it waits for its next task
        release_after_turn()
