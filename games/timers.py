"""Game clocks: a match whose config has ``time_limit_s`` gets a ``time_up`` system action when
the limit passes (the rules also refuse late actions on their own, so a missed timer loses
nothing). Celery's ``control`` queue carries it on the full stack, a timer thread when embedded.
The action's client id is fixed (``time_up``), so a timer that fires twice acts once."""
from __future__ import annotations

import threading

from django.conf import settings


def schedule_time_up(*, match_id, delay_s: float) -> None:
    from games import services, tasks

    if settings.GT_AGENT_MODE == "celery":
        tasks.match_time_up.apply_async((str(match_id),), queue="control", countdown=delay_s)
    else:
        timer = threading.Timer(delay_s, services.match_time_up, kwargs={"match_id": str(match_id)})
        timer.daemon = True
        timer.start()
