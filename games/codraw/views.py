"""CoDraw's own HTTP views: the clip-art configuration the game page loads and the original
Abstract Scenes PNGs when a researcher has them (``GT_CODRAW_ART_DIR``).

URLs (groundtalk_web/urls.py):

* ``/codraw/art-config.js`` sets ``window.GT_CODRAW_ART`` for static/games/codraw/codraw.js:
  where the art is (``/static/codraw/art/<idx>_<subtype>.svg``, or ``/codraw/art/<png>`` with
  the PNGs), the PNG file name of every piece, and the kids' face boxes for the expression picker;
* ``/codraw/art/<name>`` serves one file of ``GT_CODRAW_ART_DIR``: only the 128 clip-art PNG
  names of the library (``s_0s.png`` ... ``t_14s.png``) and ``background.png``, nothing else;
  404 when the setting is empty or the file is missing.

The staff pages' SVG snapshots of a match (``/research/matches/<id>/codraw/target.svg``,
``.../codraw/round/<n>.svg`` (the Drawer's canvas after round ``n``, numbered from 0 like ``seq_d``
in the CoDraw data, from the match's ``round_recorded`` events; ``?before=1`` for the canvas before
the Drawer's changes), ``.../codraw/final.svg`` (from ``game_ended``) and the replay's
``/research/matches/<id>/replay/<seq>.svg``) are drawn by monitor.py and served by
research/pictures.py; this module imports no platform app.
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from django.conf import settings
from django.http import FileResponse, Http404, HttpResponse
from django.views.decorators.http import require_GET

from games.codraw import art as svg_art
from games.codraw import clipart as ca
from games.codraw.rules import OFF_CANVAS_MARGIN

BACKGROUND_PNG = "background.png"
PNG_NAMES = frozenset(ca.ALL_PNGS) | {BACKGROUND_PNG}
SVG_BASE = "/static/codraw/art/"
PNG_BASE = "/codraw/art/"


def png_dir() -> Path | None:
    """The folder of original Abstract Scenes PNGs, or None when not configured."""
    folder = (getattr(settings, "GT_CODRAW_ART_DIR", "") or "").strip()
    return Path(folder) if folder else None


@lru_cache(maxsize=1)
def _library_config() -> dict:
    """The parts of the page's art configuration that never change (png names, face boxes)."""
    names = {idx: [ca.png_name(idx, sub) for sub in range(ca.N_SUBTYPES if ca.is_human(idx) else 1)]
             for idx in range(ca.N_CLIPARTS)}
    faces = {}
    for idx in ca.HUMAN_IDXS:
        for sub in range(ca.N_SUBTYPES):
            info = svg_art.art_info(idx, sub)
            ex, ey = info["anchors"].get("eyes", (info["width"] / 2, 40))
            faces[f"{idx}_{sub}"] = [ex, ey, info["width"], info["height"]]
    return {
        "svg_base": SVG_BASE,
        "png_base": PNG_BASE,
        "png_names": names,
        "faces": faces,
        "head_radius": svg_art.HEAD_RADIUS,
        "depth_scales": list(ca.DEPTH_SCALES),
        "depth_names": list(ca.DEPTH_NAMES),
        "poses": list(ca.POSES),
        "expressions": list(ca.EXPRESSIONS),
        "canvas": [ca.CANVAS_W, ca.CANVAS_H],
        "off_canvas_margin": OFF_CANVAS_MARGIN,
    }


def art_config() -> dict:
    """What the game page needs to draw pieces (see the module docstring)."""
    folder = png_dir()
    png = folder is not None and folder.is_dir()
    return {**_library_config(), "mode": "png" if png else "svg",
            "background": PNG_BASE + BACKGROUND_PNG if png else SVG_BASE + "background.svg"}


@require_GET
def art_config_js(request):
    body = "window.GT_CODRAW_ART = " + json.dumps(art_config(), separators=(",", ":")) + ";\n"
    response = HttpResponse(body, content_type="text/javascript; charset=utf-8")
    response["Cache-Control"] = "no-cache"
    return response


@require_GET
def art_file(request, name: str):
    """One original clip-art PNG from ``GT_CODRAW_ART_DIR`` (whitelisted names only)."""
    folder = png_dir()
    if folder is None or name not in PNG_NAMES:
        raise Http404("No such clip-art file.")
    path = folder / name                      # name is one of a fixed set: no separators, no ".."
    if not path.is_file():
        raise Http404("No such clip-art file.")
    response = FileResponse(path.open("rb"), content_type="image/png")
    response["Cache-Control"] = "public, max-age=86400"
    response["X-Content-Type-Options"] = "nosniff"
    return response
