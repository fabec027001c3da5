"""Celery tasks: thin wrappers named after their services. Queues: ``agent.<name>`` per agent
(GPU agents on workers started with ``--pool solo``), ``control`` for watchdogs."""
from celery import shared_task

from agents import services


@shared_task(name="agents.agent_take_turn", acks_late=True, ignore_result=True)
def agent_take_turn(match_id: str, role: str, expected_seq: int) -> str:
    return services.agent_take_turn(match_id=match_id, role=role, expected_seq=expected_seq)


@shared_task(name="agents.agent_fallback_turn", acks_late=True, ignore_result=True)
def agent_fallback_turn(match_id: str, role: str, expected_seq: int) -> str:
    return services.agent_fallback_turn(match_id=match_id, role=role, expected_seq=expected_seq)
