"""CoDraw's own HTTP views: the clip-art configuration the game page loads, the original
Abstract Scenes PNGs when a researcher has them (``GT_CODRAW_ART_DIR``), and staff-only SVG
snapshots of a match's canvases (target, after each round, final).

URLs (groundtalk_web/urls.py):

* ``/codraw/art-config.js`` sets ``window.GT_CODRAW_ART`` for static/games/codraw/codraw.js:
  where the art is (``/static/codraw/art/<idx>_<subtype>.svg``, or ``/codraw/art/<png>`` with
  the PNGs), the PNG file name of every piece, and the kids' face boxes for the expression picker;
* ``/codraw/art/<name>`` serves one file of ``GT_CODRAW_ART_DIR``: only the 128 clip-art PNG
  names of the library (``s_0s.png`` ... ``t_14s.png``) and ``background.png``, nothing else;
  404 when the setting is empty or the file is missing;
* ``/research/matches/<id>/codraw/target.svg``, ``.../codraw/round/<n>.svg`` (the Drawer's canvas
  after round ``n``, numbered from 0 like ``seq_d`` in the CoDraw data, from the match's
  ``round_recorded`` events; ``?before=1`` for the canvas before the Drawer's changes) and
  ``.../codraw/final.svg`` (from ``game_ended``); staff only.
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from django.conf import settings
from django.http import FileResponse, Http404, HttpResponse
from django.shortcuts import get_object_or_404
from django.views.decorators.http import require_GET, require_safe

from crowd.staff import RESEARCH, staff_permission
from games.codraw import art as svg_art
from games.codraw import clipart as ca
from games.codraw.render import scene_svg
from games.codraw import rules
from games.codraw.rules import OFF_CANVAS_MARGIN
from live.models import Match, MatchEvent

GAME_ID = "codraw_v1"
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


# ------------------------------------------------------------------------------ research views
def _codraw_match(match_id) -> Match:
    match = get_object_or_404(Match, pk=match_id)
    if match.game_id != GAME_ID:
        raise Http404("Not a CoDraw match.")
    return match


def _svg_response(svg: str, filename: str) -> HttpResponse:
    response = HttpResponse(svg, content_type="image/svg+xml; charset=utf-8")
    response["Content-Disposition"] = f'inline; filename="{filename}"'
    response["X-Content-Type-Options"] = "nosniff"
    # its own policy, kept by groundtalk_web/csp.py: the SVG's inline styles, nothing else, framed by nobody
    response["Content-Security-Policy"] = "default-src 'none'; style-src 'unsafe-inline'; sandbox; frame-ancestors 'none'"
    return response


def _scale(request) -> float:
    try:
        scale = float(request.GET.get("scale", "1"))
    except ValueError:
        return 1.0
    return min(max(scale, 0.1), 4.0)


@staff_permission(RESEARCH)
@require_GET
def target_svg(request, match_id):
    match = _codraw_match(match_id)
    abs_t = match.content.get("abs_t") if isinstance(match.content, dict) else None
    if not abs_t:
        raise Http404("This match has no target scene.")
    return _svg_response(scene_svg(abs_t, scale=_scale(request), title=f"target of {match.id}"),
                         f"codraw-{match.id}-target.svg")


@staff_permission(RESEARCH)
@require_GET
def round_svg(request, match_id, round_no: int):
    """The Drawer's canvas after round ``round_no`` (0-based), from the logged round_recorded."""
    match = _codraw_match(match_id)
    key = "abs_b" if request.GET.get("before") in ("1", "true", "yes") else "abs_d"
    for event in MatchEvent.objects.filter(match=match, type="round_recorded").order_by("seq"):
        if (event.payload or {}).get("round") == round_no:
            canvas = ((event.private or {}).get("drawer") or {}).get(key)
            if canvas is None:
                break
            which = "before" if key == "abs_b" else "after"
            return _svg_response(scene_svg(canvas, scale=_scale(request),
                                           title=f"{match.id}: Drawer's canvas {which} round {round_no}"),
                                 f"codraw-{match.id}-round{round_no}{'-before' if key == 'abs_b' else ''}.svg")
    raise Http404(f"No recorded round {round_no} in this match.")


@staff_permission(RESEARCH)
@require_GET
def final_svg(request, match_id):
    match = _codraw_match(match_id)
    event = MatchEvent.objects.filter(match=match, type="game_ended").order_by("-seq").first()
    if event is None:
        raise Http404("This game has not ended.")
    return _svg_response(scene_svg(event.payload["abs_d"], scale=_scale(request),
                                   title=f"{match.id}: final canvas"), f"codraw-{match.id}-final.svg")


@staff_permission(RESEARCH)
@require_safe
def replay_svg(request, match_id, seq: int):
    """The Drawer's canvas after event ``seq``, replayed from the log (the research replay's board)."""
    match = _codraw_match(match_id)
    if not 1 <= seq <= match.seq:
        raise Http404(f"This match has events 1 to {match.seq}.")
    state = rules.initial_state(match.content, match.seed, match.config)
    for row in match.events.filter(seq__lte=seq).exclude(action=None).order_by("seq").only("actor", "action"):
        state, _ = rules.apply(state, row.actor, row.action)
    return _svg_response(scene_svg(rules.canvas_scene(state), scale=_scale(request),
                                   title=f"{match.id}: the Drawer's canvas after event {seq}"),
                         f"codraw-{match.id}-step{seq}.svg")
