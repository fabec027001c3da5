"""ASGI entry point: HTTP through Django, websockets through Channels, wrapped by
:class:`GroundTalkASGI`, which bounds the database connections a server process can hold and
starts the process's watchdog.

Why the HTTP wrapper exists (docs/operations.md, "Database connections"): Django's ASGI handler
runs each request's synchronous code (views, middleware) on a thread of its own, made for that
request (``asgiref.sync.ThreadSensitiveContext``) and dropped after it. Django keeps one database
connection per thread, and with persistent connections (``CONN_MAX_AGE``) a request's connection
stays open after its thread has gone, until the garbage collector happens to free it: hundreds of
requests left ~100 connections behind and a crowd arriving at once exhausted PostgreSQL's
``max_connections``. Here every HTTP request runs on one of ``GT_HTTP_THREADS`` long-lived
threads instead (a request waits for a free one), so their connections are reused, never
abandoned, and never more than ``GT_HTTP_THREADS``. Consumers' database calls run on the event
loop's default executor, which is set to ``GT_DB_THREADS`` threads. Per process, at most
``GT_HTTP_THREADS + GT_DB_THREADS + 1 + GT_ASYNC_PG_POOL`` connections.
"""
import asyncio
import logging
import os
from concurrent.futures import ThreadPoolExecutor

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "groundtalk_web.settings")
django_asgi_app = get_asgi_application()

from groundtalk_web import logredact  # noqa: E402

logredact.install()   # no participant or seat token, no worker id in the access log (docs/crowd.md)

from asgiref.sync import ThreadSensitiveContext  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402
from django.conf import settings  # noqa: E402

from live import watchdog  # noqa: E402
from live.routing import websocket_urlpatterns  # noqa: E402

log = logging.getLogger(__name__)


class _ThreadSlots:
    """``size`` single-thread executors, each lent to one HTTP request at a time."""

    def __init__(self, size: int):
        self.size = size
        self.free: asyncio.Queue | None = None

    async def take(self) -> ThreadPoolExecutor:
        if self.free is None:   # created on the server's loop, on first use
            self.free = asyncio.Queue()
            for n in range(self.size):
                self.free.put_nowait(ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"http{n}"))
        return await self.free.get()

    def give_back(self, executor: ThreadPoolExecutor) -> None:
        self.free.put_nowait(executor)


class GroundTalkASGI:
    """The protocol router, plus: HTTP requests on a fixed set of threads, the loop's default
    executor of a fixed size, and the watchdog, started with the server (the ASGI lifespan
    startup event, which uvicorn sends; an in-process test application has none)."""

    def __init__(self, router):
        self.router = router
        self.http_slots = _ThreadSlots(settings.GT_HTTP_THREADS)
        self.started_loop = None
        self.watchdog = None

    def _start(self) -> None:
        loop = asyncio.get_running_loop()
        if self.started_loop is loop:
            return
        self.started_loop = loop
        loop.set_default_executor(ThreadPoolExecutor(max_workers=settings.GT_DB_THREADS, thread_name_prefix="db"))

    def _start_watchdog(self) -> None:
        if settings.GT_WATCHDOG_S > 0 and self.watchdog is None:
            self.watchdog = watchdog.start(asyncio.get_running_loop(), settings.GT_WATCHDOG_S)

    async def __call__(self, scope, receive, send):
        if scope["type"] == "lifespan":
            return await self._lifespan(receive, send)
        self._start()
        if scope["type"] != "http":
            return await self.router(scope, receive, send)
        executor = await self.http_slots.take()
        try:
            async with ThreadSensitiveContext(executor=executor):
                await self.router(scope, receive, send)
        finally:
            self.http_slots.give_back(executor)

    async def _lifespan(self, receive, send):
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                self._start()
                self._start_watchdog()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                if self.watchdog is not None:
                    self.watchdog.cancel()
                await send({"type": "lifespan.shutdown.complete"})
                return


application = GroundTalkASGI(ProtocolTypeRouter({
    "http": django_asgi_app,
    "websocket": AllowedHostsOriginValidator(URLRouter(websocket_urlpatterns)),
}))

import live.consumers  # noqa: E402,F401  (loaded now, so the freeze below covers it)
from groundtalk_web import gc_tuning  # noqa: E402

log.info(gc_tuning.apply())
