"""Crowd pages: the "open in another browser" refusal, moving to another device, the staff page
that makes lab links, and the last page's outcome (thin: parse, call crowd/, render)."""
from __future__ import annotations

from django.conf import settings
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from crowd import entry, identity, outcomes
from crowd.staff import RESEARCH, staff_permission
from live import ratelimit
from crowd.models import Participant
from live.models import Batch
from games.registry import get_game
from live.services import batch_turn_limit


def participant_or_404(token: str) -> Participant:
    """The participant of a worker's address (``/p/<token>/``), with its batch; 404 for no such token."""
    if not token or len(token) > 64 or "\x00" in token:  # tokens are 32 URL-safe characters
        raise Http404("No such participant.")
    p = Participant.objects.select_related("batch").filter(token=token).first()
    if p is None:
        raise Http404("No such participant.")
    return p


def other_browser(request, participant: Participant | None, *, as_json: bool = False):
    """The refusal (403) for a browser that does not own the participant: no token, no seat;
    with the code form when the batch lets workers move to another device."""
    if as_json:
        # next_url: the waiting page goes there and shows the refusal (the poller named that token itself)
        return JsonResponse({"state": "other_browser", "error": "This study is open in another browser.",
                             "next_url": f"/p/{participant.token}/"}, status=403)
    batch = participant.batch if participant is not None else None
    ctx = {"batch": batch,
           "ticket": identity.transfer_ticket(participant) if batch and batch.allow_device_change else "",
           # no session cookie came with the request: perhaps the browser blocks this site's cookies
           "no_cookie": settings.SESSION_COOKIE_NAME not in request.COOKIES}
    return render(request, "lobby/other_browser.html", ctx, status=403)


@require_http_methods(["GET", "POST"])
def device_start(request, token: str):
    """On the browser that has the study: a one-time code to continue on another device."""
    p = participant_or_404(token)
    if not identity.participant_claim(session=request.session, participant=p):
        return other_browser(request, p)
    if not p.batch.allow_device_change:
        return render(request, "lobby/device.html", {"p": p, "batch": p.batch, "allowed": False}, status=403)
    code = ""
    if request.method == "POST":
        if limited := ratelimit.http_limited(request, "step"):
            return limited
        code = identity.transfer_start(participant_id=p.pk).transfer_code
    return render(request, "lobby/device.html", {"p": p, "batch": p.batch, "allowed": True, "code": code,
                                                 "minutes": int(identity.TRANSFER_TTL.total_seconds() // 60)})


@require_POST
def device_finish(request):
    """On the new device: the code typed into the refusal page's form."""
    if limited := ratelimit.http_limited(request, "step"):
        return limited
    p = identity.transfer_participant(request.POST.get("ticket", ""))
    if p is None:
        return render(request, "lobby/entry_error.html",
                      {"error": "This form is too old. Open the study's link again on this device."}, status=400)
    try:
        identity.transfer_finish(session=request.session, participant_id=p.pk, code=request.POST.get("code", ""))
    except identity.TransferError as exc:
        return render(request, "lobby/other_browser.html",
                      {"batch": p.batch, "ticket": identity.transfer_ticket(p), "error": str(exc)}, status=403)
    return redirect("participant", token=p.token)


@staff_permission(RESEARCH)
@require_http_methods(["GET", "POST"])
def lab_links(request, slug: str):
    """Staff: signed per-person lab links for a batch, as a CSV download (name, link)."""
    batch = get_object_or_404(Batch, slug=slug)
    error = ""
    if request.method == "POST":
        try:
            count = int(request.POST.get("count") or 0)
        except ValueError:
            count = -1
        try:
            names = entry.lab_names(names_text=request.POST.get("names", ""), count=count,
                                    prefix=request.POST.get("prefix", "P").strip())
        except ValueError as exc:
            error = str(exc)
        else:
            base = request.build_absolute_uri(reverse("batch_entry", kwargs={"slug": batch.slug}))
            body = entry.lab_links_csv(entry.lab_links(batch, names, base))
            response = HttpResponse(body, content_type="text/csv; charset=utf-8")
            response["Content-Disposition"] = f'attachment; filename="{batch.slug}-lab-links.csv"'
            response["Cache-Control"] = "no-store"
            return response
    return render(request, "research/lab_links.html",
                  {"batch": batch, "error": error, "accepts_lab": "lab" in (batch.entry_kinds or []),
                   "max_links": entry.MAX_LAB_LINKS}, status=400 if error else 200)


def done_context(p: Participant) -> dict:
    """What the last page shows: the reason and the pay in plain words, the code (only when the
    outcome pays), and the platform's way to finish (MTurk's submit form, Prolific's URL)."""
    outcome = p.outcome or outcomes.outcome_for(p.exit_reason)
    pay_kind = p.pay or outcomes.pay_for(p.batch, outcome).kind
    cents = p.pay_cents if p.pay_cents is not None else outcomes.pay_for(p.batch, outcome).cents
    paid = pay_kind != outcomes.NONE
    ctx = {"outcome": outcome, "reason_text": outcomes.reason_text(p.exit_reason, outcome),
           "pay_text": outcomes.pay_text(pay_kind, cents), "paid": paid, "pay_kind": pay_kind,
           "show_code": paid and p.platform != "prolific", "submit_url": "", "prolific_url": "",
           "bonus_text": f"${p.bonus_cents / 100:.2f}" if paid and p.bonus_cents > 0 else ""}
    if p.platform == "mturk" and p.submit_to and paid:
        ctx["submit_url"] = p.submit_to.rstrip("/") + "/mturk/externalSubmit"
    if p.platform == "prolific":
        code = outcomes.prolific_code(p.batch, outcome)
        if code:
            ctx["prolific_url"] = outcomes.PROLIFIC_COMPLETE_URL + code
    return ctx


def terms(batch) -> dict:
    """What the consent and waiting pages tell the worker each way out earns, in plain words."""
    def say(outcome):
        pay = outcomes.pay_for(batch, outcome)
        amount = f"${pay.cents / 100:.2f}"
        return {outcomes.FULL: f"the full payment ({amount})" if pay.cents else "the full payment",
                outcomes.PARTIAL: f"a partial payment of {amount}", outcomes.NONE: "no payment"}[pay.kind]
    out = {o: say(o) for o in outcomes.OUTCOMES}
    out["turn_limit"] = turn_limit_text(batch)
    return out


def turn_limit_text(batch) -> str:
    """The batch's turn limit in words ("2 minutes"), or "" when it has none (docs/crowd.md)."""
    try:
        limit = batch_turn_limit(batch, get_game(batch.game_id))
    except KeyError:   # an unknown game: the page that needs the terms refuses the batch anyway
        return ""
    if limit is None:
        return ""
    seconds = int(limit.total_seconds())
    if seconds % 60 == 0 and seconds >= 120:
        return f"{seconds // 60} minutes"
    return f"{seconds} seconds"
