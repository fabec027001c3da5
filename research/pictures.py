"""The staff pages' SVG pictures of a match, drawn by the game (its monitor's ``PICTURES`` and
``replay_svg``, :class:`games.spec.GameSpec`): this module loads the match and its log, checks the
staff permission, answers 404 and sets the headers; the game turns plain data into SVG text.

* ``/research/matches/<id>/replay/<seq>.svg`` (``research_replay_svg``): the board after event
  ``seq``, the match replayed through its rules (the research replay; CoDraw: the Drawer's canvas);
* each route of a game's ``PICTURES`` under ``/research/matches/<id>/``, under its URL name
  (CoDraw: ``codraw/target.svg``, ``codraw/round/<n>.svg``, ``codraw/final.svg``).

``?scale=`` (0.1 to 4, default 1) sizes every picture.
"""
from __future__ import annotations

from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import path
from django.views.decorators.http import require_GET, require_safe

from crowd.staff import RESEARCH, staff_permission
from games.registry import GAMES
from live.models import Match, MatchEvent
from research import monitor

EVENT_FIELDS = ("seq", "type", "actor", "payload", "private", "action")


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


def _plain(match: Match) -> dict:
    return {"id": str(match.id), "content": match.content, "seed": match.seed, "config": match.config,
            "status": match.status, "seq": match.seq}


@staff_permission(RESEARCH)
@require_GET
def match_picture(request, match_id, *, game_id: str, picture: str, **route):
    """One picture of a game's ``PICTURES`` (``game_id`` and ``picture`` come from the route)."""
    match = get_object_or_404(Match, pk=match_id)
    if match.game_id != game_id:
        raise Http404("Not a match of this game.")
    _route, draw = GAMES[game_id].monitor.PICTURES[picture]
    events = list(MatchEvent.objects.filter(match=match).order_by("seq").values(*EVENT_FIELDS))
    try:
        svg, filename = draw(_plain(match), events, scale=_scale(request), query=request.GET.dict(), **route)
    except LookupError as exc:
        raise Http404(str(exc)) from None
    return _svg_response(svg, filename)


@staff_permission(RESEARCH)
@require_safe
def replay_svg(request, match_id, seq: int):
    """The board after event ``seq``, replayed from the log (the research replay's picture)."""
    match = get_object_or_404(Match, pk=match_id)
    spec = GAMES.get(match.game_id)
    draw = getattr(spec.monitor, "replay_svg", None) if spec is not None else None
    if draw is None:
        raise Http404("This game has no replay picture.")
    if not 1 <= seq <= match.seq:
        raise Http404(f"This match has events 1 to {match.seq}.")
    svg, filename = draw(monitor.state_at(match=match, seq=seq), match_id=str(match.id), seq=seq,
                         scale=_scale(request))
    return _svg_response(svg, filename)


def urlpatterns() -> list:
    """The replay picture and every game's ``PICTURES``, at their routes and URL names."""
    out = [path("research/matches/<uuid:match_id>/replay/<int:seq>.svg", replay_svg, name="research_replay_svg")]
    for spec in GAMES.values():
        for name, (route, _draw) in (getattr(spec.monitor, "PICTURES", None) or {}).items():
            out.append(path(f"research/matches/<uuid:match_id>/{route}", match_picture,
                            {"game_id": spec.id, "picture": name}, name=name))
    return out
