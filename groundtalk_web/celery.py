"""The Celery app. Model workers consume one queue per agent (``agent.<name>``); the ``control``
queue carries agent watchdogs and sweeps. GPU workers run with ``--pool solo`` (one per GPU) and
load their model after start, never in a forked child."""
import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "groundtalk_web.settings")

app = Celery("groundtalk")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["agents", "games"])


def _connect_liveness() -> None:
    """Heartbeats per consumed queue, so batches can tell when an agent's worker is gone
    (agents/liveness.py)."""
    # Imported here: groundtalk_web/__init__.py loads this module before Django's settings and apps.
    from celery.signals import worker_ready, worker_shutdown

    from agents import liveness

    worker_ready.connect(lambda sender=None, **_: liveness.start_for_worker(sender), weak=False)
    worker_shutdown.connect(liveness.stop_for_worker, weak=False)


def _connect_warm_up() -> None:
    """Build the worker's in-process agents when it starts, not in their first turn (the CoDraw
    nearest-neighbour agents' database: agents.registry.warm_up_for_worker)."""
    from celery.signals import worker_ready

    def warm(sender=None, **_):
        from agents.registry import warm_up_for_worker

        warm_up_for_worker(sender)

    worker_ready.connect(warm, weak=False)


_connect_liveness()
_connect_warm_up()
