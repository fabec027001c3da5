"""Export formats: ``jsonl`` (every match, every event, scores) here, game formats declared by each
game's spec (``GameSpec.exports``: name -> writer and file type); a writer is ``writer(records, out)`` over
an iterator of match records (see ``research.records.match_record``) and a text stream."""
from __future__ import annotations

import inspect
import json
from typing import Callable, Iterator, TextIO
import queue
import threading
import asyncio

from django.db import connections

from games.registry import GAMES
from live.selectors import export_matches
from research.records import match_records, write_questionnaire_csv

Writer = Callable[[Iterator[dict], TextIO], int]


def write_jsonl(records: Iterator[dict], out: TextIO) -> int:
    n = 0
    for record in records:
        out.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
        out.write("\n")
        n += 1
    return n


def export_formats() -> dict[str, tuple[str | None, Writer]]:
    """Format name -> (the game id it belongs to, or None for all games; writer)."""
    formats: dict[str, tuple[str | None, Writer]] = {"jsonl": (None, write_jsonl),
                                                     "questionnaire-csv": (None, write_questionnaire_csv)}
    for game in GAMES.values():
        for name, writer in game.export_writers().items():
            formats[name] = (game.id, writer)
    return formats


# ---------------------------------------------------------------------------------------------
# One export, for ``manage.py export`` and the staff page (/research/export/)
# ---------------------------------------------------------------------------------------------
# A dataset is finished matches unless asked otherwise: active matches are never exported
# (their dialogs are still being written); aborted ones only with ``status=aborted`` or ``all``;
# ``timed_out``, matches that the game's own clock ended (CoDraw's 20 minutes), are complete
# records of what was said and drawn, kept apart so a study chooses whether to use them.
STATUSES = ("finished", "timed_out", "aborted", "all")
DEFAULT_STATUS = "finished"

# The platform's formats -> (file extension, content type) of what their writers write; a game's
# come from its spec (GameSpec.exports).
FORMAT_FILES = {"jsonl": ("jsonl", "application/x-ndjson"), "questionnaire-csv": ("csv", "text/csv")}


def format_file(fmt: str) -> tuple[str, str]:
    """(file extension, content type) of the export format ``fmt`` (``txt``, plain text if unknown)."""
    if fmt in FORMAT_FILES:
        return FORMAT_FILES[fmt]
    for game in GAMES.values():
        if fmt in game.exports:
            return game.exports[fmt].extension, game.exports[fmt].content_type
    return "txt", "text/plain"


class ExportError(ValueError):
    """A bad format, game or status (the command turns it into a CommandError, the page into a form error)."""


def _resolve(fmt: str, game: str | None, status: str) -> tuple[str | None, Writer]:
    formats = export_formats()
    if fmt not in formats:
        raise ExportError(f"Unknown format {fmt!r}; known: {', '.join(sorted(formats))}")
    if status not in STATUSES:
        raise ExportError(f"Unknown status {status!r}; known: {', '.join(STATUSES)}")
    game_id, writer = formats[fmt]
    if game and game_id and game != game_id:
        raise ExportError(f"{fmt} is a {game_id} format")
    return game or game_id, writer


def export_selection(fmt: str, *, batch: str | None = None, game: str | None = None, since=None, until=None,
                     status: str = DEFAULT_STATUS):
    """The matches an export of ``fmt`` reads (a queryset: ``.count()`` for the page's preview)."""
    game_id, _ = _resolve(fmt, game, status)
    return export_matches(game_id=game_id, batch_slug=batch, since=since, until=until, status=status)


def format_options_of(fmt: str) -> set[str]:
    """The keyword options the writer of ``fmt`` takes beyond ``(records, out)`` (e.g. the codraw
    format's ``codraw_split``, ``codraw_ratios`` and ``keys_out``); empty for an unknown format."""
    writer = export_formats().get(fmt, (None, None))[1]
    if writer is None:
        return set()
    return {name for name, p in inspect.signature(writer).parameters.items() if p.kind is p.KEYWORD_ONLY}


def run_export(fmt: str, out: TextIO, *, batch: str | None = None, game: str | None = None, since=None,
               until=None, status: str = DEFAULT_STATUS, pseudonymise: bool = True,
               format_options: dict | None = None) -> int:
    """Write the export of ``fmt`` to the text stream ``out``; returns the writer's count.
    ``format_options``: options for the format's writer; those it does not take are left out
    (the command and the page offer every format's options, each writer reads its own)."""
    game_id, writer = _resolve(fmt, game, status)
    records = match_records(game_id=game_id, batch_slug=batch, since=since, until=until, status=status,
                            pseudonymise=pseudonymise)
    accepted = format_options_of(fmt)
    options = {k: v for k, v in (format_options or {}).items() if k in accepted}
    return writer(records, out, **options)


class _Cancelled(Exception):
    pass


class _End:
    def __init__(self, error: BaseException | None = None):
        self.error = error


class _ChunkOut:
    """A text stream that hands UTF-8 chunks of about ``size`` bytes to a bounded queue."""

    def __init__(self, q, cancel, size: int):
        self.q, self.cancel, self.size = q, cancel, size
        self.parts: list[str] = []
        self.n = 0
        self.notify = None   # called after each put (the async reader's wake-up)

    def write(self, text: str) -> int:
        if self.cancel.is_set():
            raise _Cancelled
        self.parts.append(text)
        self.n += len(text)
        if self.n >= self.size:
            self.flush()
        return len(text)

    def flush(self) -> None:
        if self.parts:
            chunk = "".join(self.parts).encode("utf-8")
            self.parts, self.n = [], 0
            self.put(chunk)

    def put(self, item) -> None:
        while True:
            if self.cancel.is_set():
                raise _Cancelled
            try:
                self.q.put(item, timeout=0.5)
                break
            except queue.Full:
                continue
        if self.notify is not None:
            self.notify()


class ExportStream:
    """The export as a stream of byte chunks, for a ``StreamingHttpResponse``: the command's writer
    runs in a thread of its own (its own database connection, closed when done) and hands chunks to
    a queue of at most ``depth`` chunks, so memory stays bounded whatever the export's size (the
    JSON-document formats, codraw and visdial, still build their document before writing it).
    Iterate it (WSGI, the test client) or ``async for`` it (ASGI); a client that goes away cancels
    the writer at its next write."""

    def __init__(self, fmt: str, *, chunk_bytes: int = 64 * 1024, depth: int = 8, **options):
        _resolve(fmt, options.get("game"), options.get("status", DEFAULT_STATUS))
        self.fmt, self.options, self.chunk_bytes = fmt, options, chunk_bytes
        self.q = queue.Queue(maxsize=depth)
        self.cancel = threading.Event()
        self.thread: threading.Thread | None = None
        self.count: int | None = None
        self.notify = None

    def _work(self) -> None:
        out = _ChunkOut(self.q, self.cancel, self.chunk_bytes)
        out.notify = self.notify
        try:
            self.count = run_export(self.fmt, out, **self.options)
            out.flush()
            out.put(_End())
        except _Cancelled:
            pass
        except BaseException as exc:  # noqa: BLE001 - re-raised in the consumer
            try:
                out.put(_End(exc))
            except _Cancelled:
                pass
        finally:
            connections.close_all()

    def _start(self) -> None:
        if self.thread is None:
            self.thread = threading.Thread(target=self._work, name=f"export-{self.fmt}", daemon=True)
            self.thread.start()

    def _get(self):
        while True:
            try:
                return self.q.get(timeout=0.5)
            except queue.Empty:
                if self.thread is not None and not self.thread.is_alive() and self.q.empty():
                    return _End(RuntimeError("export thread ended without a result"))

    @staticmethod
    def _chunk(item):
        if isinstance(item, _End):
            if item.error is not None:
                raise item.error
            return None
        return item

    def __iter__(self):
        self._start()
        try:
            while (chunk := self._chunk(self._get())) is not None:
                yield chunk
        finally:
            self.cancel.set()

    async def _aiter(self):
        # No executor thread waits on the queue (the loop's default executor serves the consumers'
        # database calls): the writer wakes this coroutine through the loop after each chunk.
        loop = asyncio.get_running_loop()
        ready = asyncio.Event()

        def notify():
            try:
                loop.call_soon_threadsafe(ready.set)
            except RuntimeError:   # the loop has closed: the reader is gone
                pass

        self.notify = notify
        self._start()
        try:
            while True:
                try:
                    item = self.q.get_nowait()
                except queue.Empty:
                    ready.clear()
                    if not self.q.empty():
                        continue
                    try:
                        await asyncio.wait_for(ready.wait(), timeout=1.0)
                        continue
                    except asyncio.TimeoutError:
                        if self.thread.is_alive() or not self.q.empty():
                            continue
                        item = _End(RuntimeError("export thread ended without a result"))
                chunk = self._chunk(item)
                if chunk is None:
                    return
                yield chunk
        finally:
            self.cancel.set()

    def asynchronous(self):
        """An async iterator over the chunks (ASGI: a sync one would be read whole before sending)."""
        return self._aiter()
