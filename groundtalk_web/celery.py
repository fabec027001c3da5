"""The Celery app. Model workers consume one queue per agent (``agent.<name>``); the ``control``
queue carries agent watchdogs and sweeps. GPU workers run with ``--pool solo`` (one per GPU) and
load their model after start, never in a forked child."""
import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "groundtalk_web.settings")

app = Celery("groundtalk")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["agents", "games"])
