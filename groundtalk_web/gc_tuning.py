"""Garbage-collector settings for the long-running server processes (docs/bench.md).

CPython's cycle collector stops every thread while it runs. In a server holding hundreds of live
matches, a full (generation 2) collection walks every object in the process, Django's own and each
match's snapshot included, and took 200-360 ms under load: a stall of every seat of the process,
a dozen times a minute, which was the whole of the p99 at 200 matches. Two standard remedies:

* ``gc.freeze()`` once the application is loaded: what exists then (modules, Django, URL
  patterns, settings) lives as long as the process, so no collection needs to walk it again;
* a larger first threshold (``GT_GC_THRESHOLD``, default ``50000,20,10``): far fewer collections.
  Almost everything is freed by reference counting the moment it is dropped; the collector only
  finds reference cycles, and those wait a little longer.

``GT_GC_THRESHOLD=default`` keeps CPython's settings (700,10,10) and skips the freeze.
"""
from __future__ import annotations

import gc

from groundtalk_web import env


def apply() -> str:
    """Tune the collector for this process; returns what was set, for the startup log. A bad
    ``GT_GC_THRESHOLD`` raises ImproperlyConfigured (groundtalk_web/env.py)."""
    thresholds = env.load().GT_GC_THRESHOLD
    if thresholds is None:
        return "gc: CPython defaults"
    gc.collect()
    gc.freeze()
    gc.set_threshold(*thresholds)
    return f"gc: frozen {gc.get_freeze_count()} startup objects, thresholds {thresholds}"
