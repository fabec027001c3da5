"""HTTP views: thin (parse, call one service or selector, render)."""
from __future__ import annotations

from django.conf import settings
from django.contrib.admin.views.decorators import staff_member_required
from django.http import Http404, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from games import lobby, ratelimit, selectors
from games.models import Batch, Match, MatchEvent, Participant, Seat
from games.registry import get_game
from groundtalk_web.errors import error_response


@require_GET
def home(request):
    from games.batches import runnable

    batches = runnable(Batch.objects.filter(status=Batch.Status.OPEN).order_by("slug"))  # only those that can run
    return render(request, "home.html", {"batches": batches, "embedded": settings.EMBEDDED})


def _unavailable(request, batch):
    return render(request, "lobby/entry_error.html", {"batch": batch, "error": lobby.UNAVAILABLE}, status=503)


@require_GET
def batch_entry(request, slug: str):
    """The link a crowd platform opens (MTurk, Prolific, or a lab link with ?worker=NAME)."""
    if limited := ratelimit.http_limited(request, "entry"):
        return limited
    batch = get_object_or_404(Batch, slug=slug)
    try:
        lobby.check_runnable(batch)
    except lobby.BatchCannotRun:
        return _unavailable(request, batch)
    try:
        params = lobby.parse_entry(request.GET)
    except lobby.EntryError as exc:
        return render(request, "lobby/entry_error.html", {"batch": batch, "error": str(exc)}, status=400)
    if params.is_preview:
        return render(request, "lobby/preview.html", {"batch": batch, "game": get_game(batch.game_id)})
    try:
        participant = lobby.participant_enter(batch=batch, params=params)
    except lobby.EntryError as exc:
        return render(request, "lobby/entry_error.html", {"batch": batch, "error": str(exc)}, status=400)
    return redirect("participant", token=participant.token)


def _participant(token: str) -> Participant:
    if not token or len(token) > 64 or "\x00" in token:  # tokens are 32 URL-safe characters
        raise Http404("No such participant.")
    p = Participant.objects.select_related("batch").filter(token=token).first()
    if p is None:
        raise Http404("No such participant.")
    return p


@require_http_methods(["GET", "HEAD", "POST"])
def participant_page(request, token: str):
    """One address per worker; what it shows follows the worker's state."""
    if request.method == "POST" and (limited := ratelimit.http_limited(request, "step")):
        return limited
    p = _participant(token)
    if request.method == "POST":
        step = request.POST.get("step")
        if step == "consent":
            lobby.participant_consent(participant_id=p.pk, agree=request.POST.get("agree") == "yes")
        elif step == "ready":
            lobby.participant_ready(participant_id=p.pk)
        elif step == "leave":
            lobby.participant_leave(participant_id=p.pk)
        else:
            return error_response(400)
        return redirect("participant", token=p.token)
    if p.state in (Participant.State.CONSENT, Participant.State.INSTRUCTIONS, Participant.State.WAITING):
        try:
            lobby.check_runnable(p.batch)
        except lobby.BatchCannotRun:
            return _unavailable(request, p.batch)
    game = get_game(p.batch.game_id)
    ctx = {"p": p, "batch": p.batch, "game": game}
    if p.state == Participant.State.CONSENT:
        return render(request, "lobby/consent.html", ctx)
    if p.state == Participant.State.INSTRUCTIONS:
        return render(request, f"lobby/instructions_{game.package.split('.')[-1]}.html", ctx)
    if p.state in (Participant.State.WAITING, Participant.State.PLAYING):
        if limited := ratelimit.http_limited(request, "poll", participant_token=token):  # lobby_poll locks
            return limited
        status = lobby.lobby_poll(participant_id=p.pk)
        if status.seat_token:
            return redirect(f"/m/{status.match_id}/?seat={status.seat_token}")
        p.refresh_from_db()
        if p.state == Participant.State.WAITING:
            return render(request, "lobby/waiting.html", ctx)
    if p.state == Participant.State.DECLINED:
        return render(request, "lobby/declined.html", ctx)
    submit_url = ""
    if p.platform == "mturk" and p.submit_to:
        submit_url = p.submit_to.rstrip("/") + "/mturk/externalSubmit"
    return render(request, "lobby/done.html", {**ctx, "submit_url": submit_url})


@require_GET
def participant_status(request, token: str):
    """Polled by the waiting page (rate-limited per address and per participant: lobby_poll may
    take the batch row lock)."""
    if limited := ratelimit.http_limited(request, "poll", participant_token=token, as_json=True):
        return limited
    p = _participant(token)
    try:
        status = lobby.lobby_poll(participant_id=p.pk)
    except lobby.BatchCannotRun as exc:
        return JsonResponse({"state": "unavailable", "error": str(exc), "next_url": f"/p/{p.token}/"}, status=503)
    data = {"state": status.state, "waited_s": round(status.waited_s, 1), "max_wait_s": status.max_wait_s,
            "games_played": status.games_played, "games_per_worker": status.games_per_worker}
    if status.seat_token:
        data["play_url"] = f"/m/{status.match_id}/?seat={status.seat_token}"
    elif status.state != Participant.State.WAITING:
        data["next_url"] = f"/p/{p.token}/"
    return JsonResponse(data)


@require_GET
def match_play(request, match_id):
    token = request.GET.get("seat", "")
    seat = selectors.seat_by_token(token)
    if seat is None or str(seat.match_id) != str(match_id):
        raise Http404("No such seat in this match.")
    game = get_game(seat.match.game_id)
    next_url = f"/p/{seat.participant.token}/" if seat.participant else "/"
    if seat.match.game_id in ("guesswhich_v1", "visdial_v1"):   # CLEVR images: render them before they are asked for
        from games.clevr.views import prewarm

        prewarm(seat.match, seat.role)
    return render(request, game.template, {
        "seat": seat, "match": seat.match, "game": game, "next_url": next_url,
        "ws_path": f"/ws/match/{seat.match_id}/", "partner_gone_s": settings.GT_PARTNER_GONE_S,
        "text_max": seat_text_max(seat.match.game_id, seat.role),
    })


def seat_text_max(game_id: str, role: str) -> int | None:
    """The longest text this role may send, from the game's action schema (the ``text`` field of
    the role's actions; the page's character counter shows it). None when the role sends no text."""
    from games.actions import action_json_schema

    limits = [model["properties"]["text"].get("x-maxTrimmedLength") or model["properties"]["text"].get("maxLength")
              for model in action_json_schema(game_id).get("$defs", {}).values()
              if role in model.get("x-roles", ()) and "text" in model.get("properties", {})]
    limits = [n for n in limits if n]
    return min(limits) if limits else None


@require_POST
def match_partner_gone(request, match_id):
    seat = selectors.seat_by_token(request.POST.get("seat", ""))
    if seat is None or str(seat.match_id) != str(match_id):
        raise Http404("No such seat in this match.")
    ended = lobby.match_partner_gone(seat=seat, gone_after_s=settings.GT_PARTNER_GONE_S)
    if not ended:
        return JsonResponse({"ended": False, "message": "Your partner is still connected or left only just now."},
                            status=409)
    return JsonResponse({"ended": True})


@staff_member_required
def research_home(request):
    batches = Batch.objects.order_by("-created_at")
    return render(request, "research/home.html", {"batches": batches})


@staff_member_required
def research_batch(request, slug: str):
    batch = get_object_or_404(Batch, slug=slug)
    if request.GET.get("format") == "json":
        return JsonResponse(selectors.batch_progress(batch))
    return render(request, "research/batch.html", {"batch": batch})


@staff_member_required
def research_match(request, match_id):
    match = get_object_or_404(Match, pk=match_id)
    events = MatchEvent.objects.filter(match=match).order_by("seq")
    seats = Seat.objects.filter(match=match)
    return render(request, "research/match.html", {"match": match, "events": events, "seats": seats})


@require_GET
def action_schema(request, game_id: str):
    """A game's actions as JSON Schema (games/actions.py; docs/schemas/<game_id>.json is a copy)."""
    try:
        schema = get_game(game_id).actions.json_schema()
    except KeyError:   # games.registry.UnknownGame
        raise Http404("No such game.") from None
    return JsonResponse(schema, content_type="application/schema+json",
                        json_dumps_params={"indent": 2, "ensure_ascii": False})
