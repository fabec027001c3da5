"""live's own HTTP view: a game's actions as JSON Schema. (The pages a person reaches, the game
page included, are the crowd's: crowd/pages.py.)"""
from __future__ import annotations

from django.http import Http404, JsonResponse
from django.views.decorators.http import require_GET

from games.registry import get_game


@require_GET
def action_schema(request, game_id: str):
    """A game's actions as JSON Schema (games/actions.py; docs/schemas/<game_id>.json is a copy)."""
    try:
        schema = get_game(game_id).actions.json_schema()
    except KeyError:   # games.registry.UnknownGame
        raise Http404("No such game.") from None
    return JsonResponse(schema, content_type="application/schema+json",
                        json_dumps_params={"indent": 2, "ensure_ascii": False})
