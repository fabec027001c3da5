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

    # agents.liveness itself is imported when a worker signals, not here: every process imports this
    # module first (groundtalk_web/__init__.py), and agents.liveness imports the models file's
    # modules, which import groundtalk_web (a circle when a script imports agents.* before Django).
    def ready(sender=None, **_):
        from agents import liveness

        liveness.start_for_worker(sender)

    def shutdown(**kwargs):
        from agents import liveness

        liveness.stop_for_worker(**kwargs)

    worker_ready.connect(ready, weak=False)
    worker_shutdown.connect(shutdown, weak=False)


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
