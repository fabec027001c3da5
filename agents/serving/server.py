"""The model server: the embedded mode's torch agents (``manage.py model_server``, started and
supervised by ``run.sh`` when the models file has torch agents and torch is installed).

The embedded mode has no Redis, so no model worker (agents/serving/worker.py) can take turns from a
queue; and the web process never imports torch. So one process of its own loads every torch family
of the models file (or those ``--family`` names), warms each up (agents/serving/family.py, as the
worker does) and answers on ``127.0.0.1`` only, with the HTTP bridge's protocol (agents/bridge.py,
``groundtalk-agent/1``):

* ``POST /act`` with ``{"protocol", "agent", "game_id", "role", "version", "view"}`` answers ``200``
  ``{"action": {...} | null, "model": <the seat's record>}``: the record is the family's
  (``LoadedFamily.seat_record``: the configuration's, the checkpoint's sha256 and the training
  data's), so the seat records the model exactly as a model worker's seats do. An unknown agent
  is ``404``, a request that is not the protocol's ``400``, a family still loading or that could
  not load ``503``, a model that raises (or answers the wrong number of actions) ``500``: the web
  side's client (agents/model_client.py) then lets the fallback act at once and the person is
  told, as the bridge does.
* ``GET /health`` answers ``{"protocol", "pid", "families": {key: {"state": "loading" | "ready" |
  "error", "error", "agents", "model", "load_s", "warmup_s"}}}``. ``agents.liveness`` reads it: a
  queue ``model.<key>`` is served while its family is ``ready``; otherwise its batches show as
  "cannot run" with the reason.

Batching: the requests of one family are gathered as the model worker gathers turns: the first
opens a window of the family's ``wait_ms`` (counted from when it arrived); when it closes, those
already waiting join, up to ``batch_size``, and ONE ``act_batch`` call answers them all. The call
runs on one thread per family (torch's own threads do the parallel work), so requests that arrive
while a batch runs form the next batch at once.

Loading runs in a thread after the server starts listening: ``/health`` says ``loading`` meanwhile
(run.sh does not wait for it). A family that cannot load (its module, its checkpoint, its hash, a
CUDA device torch does not see, a warm-up that fails) is written to stderr by name, answered as
``error`` with the reason by ``/health``, and the others are served.

Why Starlette and uvicorn: both are already dependencies (uvicorn serves the web process; Starlette
is FastAPI's base, a small ASGI toolkit), and an asyncio server holds any number of waiting requests
without a thread each, which is what gathering a batch needs.
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from agents.bridge import PROTOCOL
from agents.model_config import ModelAgentConfig, ModelConfigError
from agents.registry import all_agents

log = logging.getLogger(__name__)
MAX_REQUEST_BYTES = 8 << 20   # a view with a scene's image is well under this


def torch_families(keys: list[str] | None = None) -> dict[str, list[ModelAgentConfig]]:
    """The torch agents of the models file by family key (those of ``keys`` only, when given: an
    unknown key is a :class:`ModelConfigError`)."""
    families: dict[str, list[ModelAgentConfig]] = {}
    for spec in all_agents().values():
        if spec.model is not None and spec.model.kind == "torch":
            families.setdefault(spec.model.family_key, []).append(spec.model)
    if keys:
        unknown = sorted(set(keys) - set(families))
        if unknown:
            raise ModelConfigError(f"No torch agent of family {', '.join(map(repr, unknown))} in the models file; "
                                   f"families: {', '.join(sorted(families)) or '(none)'}.")
        families = {k: families[k] for k in keys}
    return families


def family_keys(device: str | None = None) -> list[str]:
    """The models file's torch family keys, sorted: all, or only those on the CPU (``"cpu"``) or on
    a CUDA device (``"gpu"``), as run.sh starts them (``manage.py model_families``, ``prepare_run``)."""
    return [key for key, configs in sorted(torch_families().items())
            if device is None or (device == "cpu") == (configs[0].device == "cpu")]


@dataclass
class Family:
    """One family's state in the server: its agents, its loaded model once ready, its batcher."""

    key: str
    configs: list[ModelAgentConfig]
    state: str = "loading"
    error: str = ""
    loaded: object = None          # agents.serving.family.LoadedFamily
    record: dict | None = None
    load_s: float | None = None
    warmup_s: float | None = None
    batches: int = 0
    queue: asyncio.Queue | None = None
    executor: ThreadPoolExecutor = field(default=None)

    @property
    def batch_size(self) -> int:
        return self.configs[0].batch_size

    @property
    def wait_s(self) -> float:
        return self.configs[0].wait_ms / 1000.0

    def health(self) -> dict:
        return {"state": self.state, "error": self.error, "agents": [c.name for c in self.configs],
                "model": self.record, "load_s": self.load_s, "warmup_s": self.warmup_s, "batches": self.batches}


class ModelServer:
    """The families, the loader and the batchers; :meth:`app` is the ASGI application."""

    def __init__(self, families: dict[str, list[ModelAgentConfig]], *, loader=None):
        self.families = {key: Family(key, configs) for key, configs in families.items()}
        self.by_agent = {cfg.name: fam for fam in self.families.values() for cfg in fam.configs}
        self._load = loader or self._load_family
        self.loaded = threading.Event()     # every family tried (ready or error)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._tasks: list[asyncio.Task] = []

    # ------------------------------------------------------------------------------ loading
    @staticmethod
    def _load_family(fam: Family) -> None:
        from agents.serving.family import load_family, warm_up   # torch: here, in this process only

        fam.loaded = load_family(fam.configs[0])
        fam.load_s = round(fam.loaded.load_s, 4)
        fam.warmup_s = round(warm_up(fam.loaded, fam.configs), 4)
        fam.record = fam.loaded.seat_record()

    def load_all(self) -> None:
        """Load and warm up each family in turn; one that fails is named on stderr and left in
        ``error``, the others are served."""
        for fam in self.families.values():
            try:
                self._load(fam)
            except Exception as exc:
                fam.error = f"{type(exc).__name__}: {exc}" if not isinstance(exc, ModelConfigError) else str(exc)
                fam.state = "error"
                agents = ", ".join(c.name for c in fam.configs)
                print(f"model server: family {fam.key} (agents {agents}) cannot load: {fam.error}",
                      file=sys.stderr, flush=True)
                log.debug("family %s failed to load", fam.key, exc_info=True)
                continue
            fam.state = "ready"
            print(f"model server: family {fam.key} ready ({fam.configs[0].family}, sha256 "
                  f"{(fam.record or {}).get('checkpoint_sha256', '?')[:12]}, load {fam.load_s} s, "
                  f"warm-up {fam.warmup_s} s; agents {', '.join(c.name for c in fam.configs)})",
                  file=sys.stderr, flush=True)
        self.loaded.set()

    # ------------------------------------------------------------------------------ batching
    def act_batch(self, fam: Family, views: list[dict]) -> list:
        answers = fam.loaded.instance.act_batch(views)
        if not isinstance(answers, list) or len(answers) != len(views):
            raise TypeError(f"act_batch returned {type(answers).__name__} of length "
                            f"{len(answers) if isinstance(answers, list) else '?'} for {len(views)} views")
        return answers

    async def _batcher(self, fam: Family) -> None:
        loop = asyncio.get_running_loop()
        while True:
            first = await fam.queue.get()
            batch = [first]
            deadline = first[2] + fam.wait_s          # the window opens when the first arrived
            while len(batch) < fam.batch_size:
                left = deadline - loop.time()
                if left <= 0:
                    break
                try:
                    batch.append(await asyncio.wait_for(fam.queue.get(), left))
                except asyncio.TimeoutError:
                    break
            while len(batch) < fam.batch_size and not fam.queue.empty():   # already waiting: they join
                batch.append(fam.queue.get_nowait())
            batch = [item for item in batch if not item[1].done()]       # a client that gave up
            if not batch:
                continue
            fam.batches += 1
            try:
                answers = await loop.run_in_executor(fam.executor, self.act_batch, fam, [v for v, _, _ in batch])
            except Exception as exc:
                log.exception("model server: family %s: act_batch failed on %d views", fam.key, len(batch))
                for _, future, _ in batch:
                    if not future.done():
                        future.set_exception(exc)
                continue
            for (_, future, _), answer in zip(batch, answers):
                if not future.done():
                    future.set_result(answer)

    async def startup(self) -> None:
        self._loop = asyncio.get_running_loop()
        for fam in self.families.values():
            fam.queue = asyncio.Queue()
            fam.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"model-{fam.key}")
            self._tasks.append(asyncio.create_task(self._batcher(fam)))
        threading.Thread(target=self.load_all, name="model-server-load", daemon=True).start()

    async def shutdown(self) -> None:
        for task in self._tasks:
            task.cancel()
        for fam in self.families.values():
            if fam.executor is not None:
                fam.executor.shutdown(wait=False, cancel_futures=True)

    # ------------------------------------------------------------------------------ HTTP
    async def health(self, request: Request) -> JSONResponse:
        return JSONResponse({"protocol": PROTOCOL, "pid": os.getpid(),
                             "families": {k: f.health() for k, f in self.families.items()}})

    async def act(self, request: Request) -> JSONResponse:
        body = await request.body()
        if len(body) > MAX_REQUEST_BYTES:
            return JSONResponse({"error": f"request over {MAX_REQUEST_BYTES} bytes"}, status_code=413)
        try:
            data = json.loads(body)
        except ValueError as exc:
            return JSONResponse({"error": f"not JSON: {exc}"}, status_code=400)
        if not isinstance(data, dict) or data.get("protocol") != PROTOCOL or not isinstance(data.get("view"), dict):
            return JSONResponse({"error": f'expected {{"protocol": "{PROTOCOL}", "agent": ..., "view": {{...}}}}'},
                                status_code=400)
        fam = self.by_agent.get(data.get("agent"))
        if fam is None:
            return JSONResponse({"error": f"no torch agent {data.get('agent')!r} here; agents: "
                                          f"{', '.join(sorted(self.by_agent)) or '(none)'}"}, status_code=404)
        cfg = next(c for c in fam.configs if c.name == data["agent"])
        if (data.get("game_id"), data.get("role")) != (cfg.game_id, cfg.role):
            return JSONResponse({"error": f"agent {cfg.name} plays {cfg.game_id}/{cfg.role}, not "
                                          f"{data.get('game_id')}/{data.get('role')}"}, status_code=400)
        if fam.state != "ready":
            why = fam.error if fam.state == "error" else "still loading"
            return JSONResponse({"error": f"family {fam.key} is not ready: {why}", "state": fam.state},
                                status_code=503)
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        await fam.queue.put((data["view"], future, loop.time()))
        try:
            action = await future
        except Exception as exc:
            return JSONResponse({"error": f"family {fam.key}: the model failed: {type(exc).__name__}: {exc}"},
                                status_code=500)
        return JSONResponse({"action": action, "model": fam.record})

    def app(self) -> Starlette:
        @contextlib.asynccontextmanager
        async def lifespan(app):
            await self.startup()
            try:
                yield
            finally:
                await self.shutdown()

        return Starlette(routes=[Route("/health", self.health, methods=["GET"]),
                                 Route("/act", self.act, methods=["POST"])], lifespan=lifespan)


def serve(port: int, keys: list[str] | None = None) -> None:
    """Run the server on 127.0.0.1:``port`` until SIGTERM / SIGINT (uvicorn's handlers)."""
    import uvicorn

    families = torch_families(keys)
    if not families:
        raise ModelConfigError("The models file has no torch agent: the model server has nothing to serve.")
    server = ModelServer(families)
    print(f"model server: http://127.0.0.1:{port}/ families {', '.join(families)} (loading)", file=sys.stderr,
          flush=True)
    uvicorn.run(server.app(), host="127.0.0.1", port=port, log_level="warning", lifespan="on", access_log=False)
