"""Several model workers in one process (``manage.py model_workers``): the full stack's CPU
families together, one thread each, instead of one process (and one copy of torch, Django and the
game registries) per family.

Each family is a :class:`agents.serving.worker.ModelWorker` as ``model_worker --family`` runs it:
loaded and warmed up before it consumes its queue ``model.<family_key>`` and heartbeats, its own
broker connection, batches and transactions (Django's database connections are per thread). They
run in threads of one process: torch releases the GIL in its operators, and a CPU family's batch is
milliseconds. A family that cannot load (its checkpoint, its hash, its module) is reported by name
on stderr and not served (its queue has no heartbeat: its batches show as "cannot run"); the others
are. GPU families keep a process each (``model_worker --family K``: one per GPU).
"""
from __future__ import annotations

import signal
import sys
import threading

from agents.model_config import ModelConfigError
from agents.serving.worker import ModelWorker


def serve_group(family_keys: list[str], *, timings_path: str | None = None) -> int:
    """Load each family, then serve every one that loaded, each in its own thread, until SIGTERM
    or SIGINT. Returns how many families could not load (none served at all: a
    :class:`ModelConfigError`)."""
    workers: list[ModelWorker] = []
    failed = 0
    for key in family_keys:
        try:
            worker = ModelWorker(key, timings_path=f"{timings_path}.{key}" if timings_path else None)
            worker.load()
        except Exception as exc:
            failed += 1
            print(f"model workers: family {key} cannot load: {exc}", file=sys.stderr, flush=True)
            continue
        workers.append(worker)
    if not workers:
        raise ModelConfigError(f"none of the families {', '.join(family_keys)} could be loaded (see above).")

    def stop(*_args) -> None:
        for worker in workers:
            worker.stop()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    threads = [threading.Thread(target=w.run, name=f"model-{w.family_key}") for w in workers]
    for thread in threads:
        thread.start()
    print(f"model workers: serving {', '.join(w.family_key for w in workers)}", file=sys.stderr, flush=True)
    for thread in threads:
        thread.join()
    return failed
