"""The pages a person reaches: the home page, the entry links, the participant's page and its
status poll (the lobby: crowd/lobby.py), and a seat's game page with its calls (partner gone, the
turn clock). HTTP views: thin (parse, call one service or selector, render)."""
from __future__ import annotations

import secrets
import time
from urllib.parse import urlencode

from django.conf import settings
from django.http import Http404, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from crowd import costs as crowd_costs, entry as crowd_entry, identity, lobby, quality_views as crowd_quality_views, views as crowd_views
from crowd.onboarding import practice_next_url
from live import arms as batch_arms, ratelimit, selectors
from crowd.models import Participant
from live.models import Batch, Match
from games.registry import get_game
from groundtalk_web.csp import allow_form_action
from groundtalk_web.errors import error_response
from live.batches import runnable
from games.actions import action_json_schema
from crowd.outcomes import pay_for, pay_text
from live.services import match_end_stalled as end_stalled_match, stall_offer


@require_GET
def home(request):
    # Demo batches only, and only where demo links open (embedded, or GT_DEMO=1 on loopback for a
    # browser on this machine): a live study is never listed (issue 11).
    demo = _demo_open_for(request)
    batches = []
    if demo:
        batches = [b for b in runnable(Batch.objects.filter(status=Batch.Status.OPEN).order_by("slug"))
                   if "demo" in (b.entry_kinds or [])]   # only those that can run
    return render(request, "home.html", {"batches": batches, "embedded": settings.EMBEDDED, "demo": demo,
                                         "two_people": any(b.pairing == Batch.Pairing.HUMAN_HUMAN for b in batches)})


def _demo_open_for(request) -> bool:
    if not crowd_entry.demo_entry_open():
        return False
    try:
        crowd_entry.check_demo_client(request)
    except crowd_entry.EntryRefused:
        return False
    return True


@never_cache
@require_GET
def demo_entry(request, slug: str):
    """A new demo person at every visit: a fresh ``?worker=demo-…`` name, then the batch's entry
    link. So one browser plays both seats of a human-human demo batch, one tab each: each tab's
    participant is a different one, and the browser's session holds both owner keys
    (crowd/identity.py). Only for batches that take demo links, where demo links open."""
    batch = get_object_or_404(Batch, slug=slug)
    try:
        crowd_entry.check_kind(batch, "demo")
        crowd_entry.check_demo_client(request)
    except crowd_entry.EntryRefused as exc:
        return render(request, "lobby/entry_error.html", {"batch": batch, "error": str(exc)}, status=403)
    query = urlencode({"worker": f"demo-{secrets.token_hex(4)}"})
    return redirect(f"{reverse('batch_entry', kwargs={'slug': batch.slug})}?{query}")


def _unavailable(request, batch):
    return render(request, "lobby/entry_error.html", {"batch": batch, "error": lobby.UNAVAILABLE}, status=503)


def _already_in(batch, params) -> bool:
    """This link's worker has a participant in the batch already (a full batch lets them back in)."""
    if params.is_preview:
        return False
    try:
        worker_id = crowd_entry.lab_person(batch, params.lab_token) if params.platform == "lab" else params.worker_id
    except crowd_entry.EntryRefused:
        return False
    return Participant.objects.filter(batch=batch, platform=params.platform, worker_id=worker_id).exists()


@require_GET
def batch_entry(request, slug: str):
    """The link a crowd platform opens (MTurk, Prolific, a signed lab link ?lab=TOKEN, or in the
    embedded demo ?worker=NAME); each batch takes the kinds it lists (crowd/entry.py). The
    participant is bound to this browser (crowd/identity.py)."""
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
    if crowd_costs.budget_full(batch) and not _already_in(batch, params):   # issue 24: the budget is spent
        return render(request, "lobby/entry_error.html", {"batch": batch, "error": crowd_costs.FULL,
                                                          "heading": "This study is full"}, status=403)
    try:
        if params.is_preview:
            crowd_entry.check_kind(batch, "mturk")
            return render(request, "lobby/preview.html", {
                "batch": batch, "game": get_game(batch.game_id), "pay": f"${batch.pay_cents / 100:.2f}",
                "bonus": f"${batch.bonus_cents / 100:.2f}" if batch.bonus_cents else ""})
        if params.platform == "demo":
            crowd_entry.check_demo_client(request)
        participant = lobby.participant_enter(batch=batch, params=params, session=request.session,
                                              client_addr=request.META.get("REMOTE_ADDR", ""))
    except lobby.OtherBrowser as exc:
        return crowd_views.other_browser(request, exc.participant)
    except crowd_entry.EntryRefused as exc:
        return render(request, "lobby/entry_error.html", {"batch": batch, "error": str(exc)}, status=403)
    except lobby.EntryError as exc:
        return render(request, "lobby/entry_error.html", {"batch": batch, "error": str(exc)}, status=400)
    return redirect("participant", token=participant.token)


@require_http_methods(["GET", "HEAD", "POST"])
def participant_page(request, token: str):
    """One address per worker; what it shows follows the worker's state."""
    if request.method == "POST" and (limited := ratelimit.http_limited(request, "step")):
        return limited
    p = crowd_views.participant_or_404(token)
    if not identity.participant_claim(session=request.session, participant=p):
        return crowd_views.other_browser(request, p)
    if request.method == "POST":
        step = request.POST.get("step")
        if step == "consent":
            lobby.participant_consent(participant_id=p.pk, agree=request.POST.get("agree") == "yes")
        elif step == "ready":
            lobby.participant_ready(participant_id=p.pk)
        elif step == "leave":
            lobby.participant_leave(participant_id=p.pk)
        elif step == "present":   # "are you still there?" answered on the waiting page
            lobby.participant_present(participant_id=p.pk)
        elif step == "quiz":
            return crowd_quality_views.quiz_post(request, p)
        elif step == "practice":
            return crowd_quality_views.practice_post(request, p)
        elif step == "questionnaire":
            return crowd_quality_views.questionnaire_post(request, p)
        elif step == "end_questions":
            return crowd_quality_views.end_questions_post(request, p)
        else:
            return error_response(400)
        return redirect("participant", token=p.token)
    if p.state in (Participant.State.CONSENT, Participant.State.INSTRUCTIONS, Participant.State.ONBOARDING,
                   Participant.State.WAITING):
        try:
            lobby.check_runnable(p.batch)
        except lobby.BatchCannotRun:
            return _unavailable(request, p.batch)
    game = get_game(p.batch.game_id)
    if p.state in (Participant.State.CONSENT, Participant.State.INSTRUCTIONS, Participant.State.ONBOARDING):
        game.warm_up_soon()   # loaded while the person reads, before the lobby pairs them (crowd/lobby.py)
    # blind: arms with people beside arms with agents (live/arms.py): the instructions say nothing
    # of the partner that only an agent arm would (e.g. GuessWhich's "ALICE")
    ctx = {"p": p, "batch": p.batch, "game": game, "terms": crowd_views.terms(p.batch),
           "blind": batch_arms.is_blind(p.batch)}
    if p.state == Participant.State.CONSENT:
        return render(request, "lobby/consent.html", ctx)
    if p.state == Participant.State.INSTRUCTIONS:
        return render(request, game.instructions_template, ctx)
    if p.state == Participant.State.ONBOARDING:
        return crowd_quality_views.onboarding_page(request, p, ctx)
    if crowd_quality_views.end_questions_due(p) is not None:   # after a match, before the next or the code
        return crowd_quality_views.end_questions_page(request, p, ctx)
    if crowd_quality_views.questionnaire_pending(p):   # after the last game, before the code
        return crowd_quality_views.questionnaire_page(request, p, ctx)
    if p.state in (Participant.State.WAITING, Participant.State.PLAYING):
        if limited := ratelimit.http_limited(request, "poll", participant_token=token):  # lobby_poll locks
            return limited
        status = lobby.lobby_poll(participant_id=p.pk)
        if status.seat_token:
            return redirect(f"/m/{status.match_id}/?seat={status.seat_token}")
        p.refresh_from_db()
        if p.state == Participant.State.WAITING:
            return render(request, "lobby/waiting.html", {**ctx, "away": status.away})
    if p.state == Participant.State.DECLINED:
        return render(request, "lobby/declined.html", {**ctx, **crowd_views.done_context(p)})
    done = crowd_views.done_context(p)
    response = render(request, "lobby/done.html", {**ctx, **done})
    if done["submit_url"]:   # MTurk's submit form posts there; MTurk then sends the worker back to its site
        allow_form_action(response, done["submit_url"], *settings.GT_FRAME_ANCESTORS)
    return response


def _gap_s(value: str | None) -> float | None:
    """The waiting page's ``gap`` (milliseconds it waited since its previous answer, server-asked
    back-offs excluded), in seconds; None when absent or not a small whole number."""
    if not value or not value.isdigit() or len(value) > 9:
        return None
    return int(value) / 1000


@require_GET
def participant_status(request, token: str):
    """Polled by the waiting page (rate-limited per address and per participant: lobby_poll may
    take the batch row lock)."""
    if limited := ratelimit.http_limited(request, "poll", participant_token=token, as_json=True):
        return limited
    p = crowd_views.participant_or_404(token)
    if not identity.participant_claim(session=request.session, participant=p):
        return crowd_views.other_browser(request, p, as_json=True)
    try:
        status = lobby.lobby_poll(participant_id=p.pk, gap_s=_gap_s(request.GET.get("gap")))
    except lobby.BatchCannotRun as exc:
        return JsonResponse({"state": "unavailable", "error": str(exc), "next_url": f"/p/{p.token}/"}, status=503)
    data = {"state": status.state, "waited_s": round(status.waited_s, 1), "max_wait_s": status.max_wait_s,
            "games_played": status.games_played, "games_per_worker": status.games_per_worker,
            "away": status.away}
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
    if not identity.seat_allowed(request.session, seat):
        return crowd_views.other_browser(request, seat.participant)
    game = get_game(seat.match.game_id)
    next_url = f"/p/{seat.participant.token}/" if seat.participant else practice_next_url(seat.match) or "/"
    if game.prewarm:   # e.g. CLEVR images: rendered before the page asks for them
        game.resolve(game.prewarm)(seat.match, seat.role)
    return render(request, game.play_template, {
        "seat": seat, "match": seat.match, "game": game, "next_url": next_url,
        "ws_path": f"/ws/match/{seat.match_id}/", "partner_gone_s": settings.GT_PARTNER_GONE_S,
        "text_max": seat_text_max(seat.match.game_id, seat.role),
        "seat_config": seat_config(seat, next_url),
    })


def seat_config(seat, next_url: str) -> dict:
    """What the game page's script knows of its seat: ``window.GT_SEAT`` (static/gt/seat.js reads it
    from the page's ``json_script`` block ``gt-seat``; no inline script, groundtalk_web/csp.py)."""
    match = seat.match
    # an arm-blind batch (human-human arms beside arms with agents, live/arms.py): the page says
    # the same of a person partner and of an agent partner
    agents = {} if match.batch_id and batch_arms.is_blind(match.batch) else (match.agent_seats or {})
    return {
        "matchId": str(match.id), "token": seat.token, "role": seat.role, "wsPath": f"/ws/match/{match.id}/",
        "nextUrl": next_url, "partnerGoneS": settings.GT_PARTNER_GONE_S,
        "imgBase": f"/m/{match.id}/img/",                                   # the CLEVR games' images
        "partnerIsAgent": bool(agents),                                      # VisDial's partner notice
        "partnerName": "ALICE" if agents.get("answerer") else "your partner",   # GuessWhich's answerer
        "serverNowMs": round(time.time() * 1000),                           # CoDraw's clock against the server's
    }


def seat_text_max(game_id: str, role: str) -> int | None:
    """The longest text this role may send, from the game's action schema (the ``text`` field of
    the role's actions; the page's character counter shows it). None when the role sends no text."""
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
    if not identity.seat_allowed(request.session, seat):
        return JsonResponse({"ended": False, "message": "This study is open in another browser."}, status=403)
    ended = lobby.match_partner_gone(seat=seat, gone_after_s=settings.GT_PARTNER_GONE_S)
    if not ended:
        return JsonResponse({"ended": False, "message": "Your partner is still connected or left only just now."},
                            status=409)
    return JsonResponse({"ended": True})


def _seat_for(request, match_id, token: str):
    """The seat of ``token`` in this match, or an answer that refuses (404, or 403 for another browser)."""
    seat = selectors.seat_by_token(token)
    if seat is None or str(seat.match_id) != str(match_id):
        raise Http404("No such seat in this match.")
    if not identity.seat_allowed(request.session, seat):
        return None, JsonResponse({"ended": False, "message": "This study is open in another browser."}, status=403)
    return seat, None


@never_cache
@require_GET
def match_turn(request, match_id):
    """The turn clock as this seat may act on it (static/gt/stall.js): whether its partner has not
    taken their turn within the limit (``offer``: this seat may end the game), or whether this seat
    has not (``stalled``), with what ending the game would pay each, in plain words."""
    seat, refused = _seat_for(request, match_id, request.GET.get("seat", ""))
    if refused:
        return refused
    match = Match.objects.get(pk=seat.match_id)
    offer = stall_offer(match=match, role=seat.role)
    stalled = (match.status == Match.Status.ACTIVE and match.stalled_role == seat.role)
    limit_s = int(match.turn_limit.total_seconds()) if match.turn_limit else None
    data = {"offer": bool(offer), "stalled": stalled, "limit_s": limit_s, "pay_text": "", "pay_kind": ""}
    batch = match.batch
    if batch is not None and (offer or stalled):
        pay = pay_for(batch, "partner_left" if offer else "timed_out")
        data["pay_text"], data["pay_kind"] = pay_text(pay.kind, pay.cents), pay.kind
    return JsonResponse(data)


@require_POST
def match_end_stalled(request, match_id):
    """The partner who waited ends the game: the other seat did not take its turn in time."""
    seat, refused = _seat_for(request, match_id, request.POST.get("seat", ""))
    if refused:
        return refused
    if not end_stalled_match(match_id=seat.match_id, role=seat.role):
        return JsonResponse({"ended": False, "message": "Your partner has taken their turn, or the game is over: "
                                                        "the game goes on."}, status=409)
    return JsonResponse({"ended": True})
