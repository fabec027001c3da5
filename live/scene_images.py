"""Images of the CLEVR scenes a seat may see (GuessWhich pool and secret, visual-dialog image), drawn by
the CLEVR library (clevr/render.py).

URL (groundtalk_web/urls.py)::

    /m/<match_id>/img/<image_id>.png?seat=<seat token>&size=thumb|full|large

* The seat token must belong to the match, and ``image_id`` must be an image that seat's own view
  shows (``rules.view_for(state, role)``: the ``pool`` items' ids for the GuessWhich questioner,
  ``image.id`` for an answerer). Anything else is a 404 with the same message whether the image
  exists elsewhere or not ("No such image for this seat."), so ids cannot be probed.
* Sizes are per role: the questioner may ask for ``thumb`` (240x160) and ``full`` (480x320), an
  answerer only for ``large`` (720x480). An answerer's request therefore never warms a cache entry
  a questioner can ask for: the secret image is not faster to fetch than any other pool image.
  Every pool image has the same URL scheme and the same response headers (``Cache-Control``,
  an ``ETag`` that is a hash of the rendered scene and size, ``X-Content-Type-Options``).
* The seat and match are read in a worker thread (``database_sync_to_async``, not Django's one
  shared thread for sync code), and PNGs are rendered with :func:`clevr.render.render_png`
  in a small thread pool (the view is async: a render never blocks other requests of the server
  process) and cached on disk under
  ``MEDIA_ROOT/clevr/<hh>/<sha256>.png``, keyed by a hash of the scene's objects, the size and
  :data:`RENDER_VERSION`, written atomically (temp file + ``os.replace``). Identical scenes in
  different matches share one file. Serving a seat's game page (``crowd.pages.match_play``) queues
  :func:`prewarm`: every image of its view at its role's sizes, smallest first, on one background
  thread, so the page's requests and its first hover preview find the files ready.
* Real images (items of :func:`clevr.scenes.load_image_folder`, which carry
  ``image_path``; or ``content["sources"][id]["image_path"]`` for content that keeps the path out
  of the players' views) are served as the file itself, at every size, with the same headers.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import mimetypes
import os
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from channels.db import database_sync_to_async
from django.conf import settings
from django.http import HttpResponse, HttpResponseNotFound, HttpResponseNotModified
from django.views.decorators.http import require_safe

from live import selectors
from live.models import Match
from games.registry import get_game
from clevr.render import render_png
from live.seat_owners import seat_allowed

#: name -> (width, height, supersample)
SIZES = {"thumb": (240, 160, 2), "full": (480, 320, 2), "large": (720, 480, 2)}
#: which sizes each role may fetch (see the module docstring for why they do not overlap)
ROLE_SIZES = {"questioner": ("thumb", "full"), "answerer": ("large",)}
RENDER_VERSION = "clevr-render/1"
CACHE_CONTROL = "private, max-age=86400, immutable"
IMAGE_SUFFIXES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp",
                  ".gif": "image/gif", ".bmp": "image/bmp"}
NO_SEAT = "No such seat in this match."
NO_IMAGE = "No such image for this seat."

_executor = ThreadPoolExecutor(max_workers=max(2, min(4, os.cpu_count() or 2)), thread_name_prefix="clevr-render")
# one thread for warm-ups, apart from the requests' pool: a page's own requests never queue behind them
_warm_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="clevr-prewarm")
_locks = [threading.Lock() for _ in range(64)]  # striped: one render per cache key at a time


class NotFound(Exception):
    """A 404 whose message is sent as plain text (Django's production 404 page drops it)."""


def _not_found(message: str) -> HttpResponseNotFound:
    response = HttpResponseNotFound(message + "\n", content_type="text/plain; charset=utf-8")
    response["Cache-Control"] = "no-store"
    response["X-Content-Type-Options"] = "nosniff"
    return response


def cache_dir() -> Path:
    return Path(settings.MEDIA_ROOT) / "clevr"


def scene_key(scene: dict, size: str) -> str:
    """The cache key: a hash of what the renderer draws (the objects), the size and the renderer
    version. Ids, file names and positions do not enter it."""
    w, h, ss = SIZES[size]
    blob = json.dumps({"v": RENDER_VERSION, "objects": scene.get("objects") or [], "w": w, "h": h, "ss": ss},
                      sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".png")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def cached_png(scene: dict, size: str) -> tuple[bytes, str]:
    """(PNG bytes, key) for ``scene`` at ``size``, rendered once and then read from disk."""
    key = scene_key(scene, size)
    path = cache_dir() / key[:2] / f"{key}.png"
    try:
        return path.read_bytes(), key
    except FileNotFoundError:
        pass
    with _locks[int(key[:4], 16) % len(_locks)]:
        try:
            return path.read_bytes(), key
        except FileNotFoundError:
            pass
        w, h, ss = SIZES[size]
        data = render_png(scene, w, h, supersample=ss)
        _write_atomic(path, data)
        return data, key


def prewarm(match: Match, role: str) -> None:
    """Render into the disk cache, in the background, every image this seat's view shows at the
    sizes its role may fetch (smallest first: the questioner's thumbnails, then the hover
    previews), so the page's requests and its first hover find them ready. Called when a seat's
    game page is served; errors are ignored (the image view renders on demand anyway)."""
    sizes = ROLE_SIZES.get(role, ())
    if not sizes:
        return
    try:
        view = get_game(match.game_id).rules.view_for(match.state, role)
    except Exception:  # noqa: BLE001 - a best-effort warm-up
        return
    scenes = [scene for scene in _images_in_view(view).values()
              if isinstance(scene.get("objects"), list) and not scene.get("image_path")]
    for size in sizes:
        for scene in scenes:
            _warm_executor.submit(_quiet_render, scene, size)


def _quiet_render(scene: dict, size: str) -> None:
    try:
        cached_png(scene, size)
    except Exception:  # noqa: BLE001
        pass


def _images_in_view(view: dict) -> dict[str, dict]:
    """image id -> scene, for every image this seat's view shows."""
    out: dict[str, dict] = {}
    for item in view.get("pool") or []:
        if isinstance(item, dict) and "id" in item:
            out[str(item["id"])] = item.get("scene") or {}
    image = view.get("image")
    if isinstance(image, dict) and "id" in image:
        out[str(image["id"])] = image.get("scene") or {}
    return out


def _real_image_path(match: Match, image_id: str, scene: dict) -> Path | None:
    """The file of a real-image item, or None for a CLEVR scene to render."""
    content = match.content if isinstance(match.content, dict) else {}
    source = (content.get("sources") or {}).get(image_id) or {}
    raw = scene.get("image_path") or (source.get("image_path") if isinstance(source, dict) else None)
    if not raw and str(content.get("image_id")) == image_id:  # visual dialog: one image
        raw = content.get("image_path") or (content.get("scene") or {}).get("image_path")
    if not raw:
        return None
    path = Path(str(raw))
    if path.suffix.lower() not in IMAGE_SUFFIXES or not path.is_file():
        raise NotFound("The image file of this item is missing.")
    return path


def _lookup(match_id, token: str, image_id: str, size: str, session=None):
    """Authorise and find the image: (scene, real file or None), or NotFound (runs in a worker thread).
    A seat's images go only to the browser its participant is bound to (live/seat_owners.py asks crowd/identity.py)."""
    seat = selectors.seat_by_token(token)
    if seat is None or str(seat.match_id) != str(match_id) or not seat_allowed(session, seat, claim=False):
        raise NotFound(NO_SEAT)
    match = seat.match
    spec = get_game(match.game_id)
    view = spec.rules.view_for(match.state, seat.role)
    scene = _images_in_view(view).get(image_id)
    if scene is None:
        raise NotFound(NO_IMAGE)
    if size not in ROLE_SIZES.get(seat.role, ()):
        raise NotFound(f"Size {size[:20]!r} is not available to this seat; "
                      f"use {' or '.join(ROLE_SIZES.get(seat.role, ())) or 'none'}.")
    return scene, _real_image_path(match, image_id, scene)


def _file_bytes(path: Path) -> tuple[bytes, str, str]:
    data = path.read_bytes()
    return data, hashlib.sha256(data).hexdigest(), IMAGE_SUFFIXES.get(path.suffix.lower()) or \
        mimetypes.guess_type(path.name)[0] or "application/octet-stream"


def _response(request, data: bytes, etag_hex: str, content_type: str):
    etag = f'"{etag_hex[:32]}"'
    if etag in [t.strip() for t in request.headers.get("If-None-Match", "").split(",")]:
        response = HttpResponseNotModified()
    else:
        response = HttpResponse(data if request.method == "GET" else b"", content_type=content_type)
        response["Content-Length"] = str(len(data))
    response["ETag"] = etag
    response["Cache-Control"] = CACHE_CONTROL
    response["X-Content-Type-Options"] = "nosniff"
    response["Referrer-Policy"] = "no-referrer"
    return response


@require_safe
async def scene_image(request, match_id, image_id: str):
    """One image a seat may see (see the module docstring)."""
    token = request.GET.get("seat", "")
    size = request.GET.get("size", "thumb")
    try:
        if size not in SIZES:
            raise NotFound(f"Unknown size; use one of {', '.join(SIZES)}.")
        scene, path = await database_sync_to_async(_lookup, thread_sensitive=False)(
            match_id, token, image_id, size, getattr(request, "session", None))
        loop = asyncio.get_running_loop()
        if path is not None:
            data, etag, ctype = await loop.run_in_executor(_executor, _file_bytes, path)
            return _response(request, data, etag, ctype)
        if not isinstance(scene.get("objects"), list):
            raise NotFound("This item has neither a scene nor an image file.")
    except NotFound as exc:
        return _not_found(str(exc))
    data, key = await loop.run_in_executor(_executor, cached_png, scene, size)
    return _response(request, data, key, "image/png")
