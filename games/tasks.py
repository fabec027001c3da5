"""Celery tasks of the match layer (thin: each calls one service)."""
from celery import shared_task

from games import services


@shared_task(name="games.match_time_up", acks_late=True, ignore_result=True)
def match_time_up(match_id: str) -> str:
    return services.match_time_up(match_id=match_id)
