"""The researcher's staff pages (thin views over :mod:`research.monitor`; docs/monitor.md).

* ``/research/`` – the batches (and whether anyone can enter each now), links to each monitor and to the comparison;
* ``/research/batches/<slug>/`` – a batch's live monitor (``?format=json``: the numbers it polls);
* ``/research/matches/<id>/`` – one match: its log in words, the images, the replay, an LLM seat's
  recorded calls (research/agent_calls.py);
* ``/research/matches/<id>/img/<image_id>.png?size=thumb|full|large`` – any image of the match's
  content (the GuessWhich pool, the visual-dialog image), staff only;
* the SVG pictures of a match (the replay's board, each game's ``PICTURES``): research/pictures.py;
* ``/research/compare/`` – two groups of matches side by side with a test, or the reason why not.
"""
from __future__ import annotations

import json

from django import forms
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_safe

from crowd import entry as crowd_entry
from crowd.staff import RESEARCH, staff_permission
from research import agent_calls, arm_monitor, arm_table, monitor
from live.batches import batch_problems
from live import scene_images
from live.models import Batch, Match
from games.registry import GAMES


@staff_permission(RESEARCH)
@require_safe
def research_home(request):
    batches = list(Batch.objects.order_by("-created_at"))
    for b in batches:   # whether it can run (its agents' workers live), whether anyone can enter it now, and why
        b.cannot_run = batch_problems(b)
        b.entry_blockers = crowd_entry.entry_problems(b)
    return render(request, "research/home.html", {"batches": batches})


@staff_permission(RESEARCH)
@require_safe
def research_batch(request, slug: str):
    batch = get_object_or_404(Batch, slug=slug)
    if request.GET.get("format") == "json":
        try:   # the planner's difference to detect (the primary metric's; empty: its default)
            delta = arm_monitor.parse_delta(request.GET.get("delta"))
        except arm_monitor.BadDelta as exc:
            return JsonResponse({"error": str(exc)}, status=400)
        return JsonResponse({**monitor.batch_monitor(batch=batch), **arm_monitor.batch_experiment(batch=batch, delta=delta),
                             "cannot_run": batch_problems(batch)})
    return render(request, "research/batch.html", {"batch": batch, "game": GAMES.get(batch.game_id),
                                                   "compare_game": batch.game_id in monitor.compare_roles(),
                                                   "cannot_run": batch_problems(batch)})


@staff_permission(RESEARCH)
@require_safe
def research_match(request, match_id):
    match = get_object_or_404(Match, pk=match_id)
    if match.game_id not in GAMES:
        raise Http404("This match's game is not installed.")
    log = monitor.match_log(match=match)
    rows = [{**step, "raw": json.dumps({k: step[k] for k in ("payload", "private", "action") if step[k] is not None},
                                       indent=1, ensure_ascii=False)} for step in log["steps"]]
    replay = {**log, "steps": [{k: step[k] for k in ("seq", "type", "actor", "summary", "board")}
                               for step in log["steps"]]}   # what the page's replay reads
    return render(request, "research/match.html", {"match": match, "log": log, "game": GAMES[match.game_id],
                                                   "rows": rows, "replay": replay,
                                                   "llm_seats": agent_calls.match_calls(match)})


@staff_permission(RESEARCH)
@require_safe
def research_match_image(request, match_id, image_id: str):
    """Any image of the match's content, at any size (staff see the secret too)."""
    size = request.GET.get("size", "thumb")
    if size not in scene_images.SIZES:
        raise Http404("Unknown size.")
    match = get_object_or_404(Match, pk=match_id)
    scene = monitor.image_scene(match, image_id)
    if scene is None:
        raise Http404("No such image in this match.")
    try:
        path = scene_images._real_image_path(match, image_id, scene)
    except scene_images.NotFound:
        raise Http404("The image file of this item is missing.") from None
    if path is not None:
        data, etag, ctype = scene_images._file_bytes(path)
        return scene_images._response(request, data, etag, ctype)
    if not isinstance(scene.get("objects"), list):
        raise Http404("This item has neither a scene nor an image file.")
    data, key = scene_images.cached_png(scene, size)
    return scene_images._response(request, data, key, "image/png")


# ----------------------------------------------------------------------------------- comparison
class CompareForm(forms.Form):
    game = forms.ChoiceField(choices=lambda: [(g, GAMES[g].title) for g in monitor.compare_roles()])
    batch = forms.MultipleChoiceField(required=False, widget=forms.CheckboxSelectMultiple,
                                      help_text="none ticked: every batch of the game")
    role = forms.ChoiceField(required=False, label="Group by")
    play = forms.ChoiceField(choices=list(monitor.PLAY_CHOICES.items()), initial="all", label="Matches")
    a = forms.ChoiceField(required=False, label="Group A")
    b = forms.ChoiceField(required=False, label="Group B")

    def __init__(self, data=None, *, game: str, options: dict):
        super().__init__(data)
        self.fields["batch"].choices = [(b.slug, f"{b.title} ({b.slug})")
                                        for b in Batch.objects.filter(game_id=game).order_by("slug")]
        roles = monitor.compare_roles().get(game, ())
        self.fields["role"].choices = [(r, f"the {r}'s seat") for r in roles]
        role = (data or {}).get("role") or (roles or ("",))[0]
        groups = [(v, f"{v} ({k['human']} with a human seat, {k['agent']} agent-only)")
                  for v, k in options.get(role, {}).items()]
        self.fields["a"].choices = self.fields["b"].choices = [("", "—")] + groups


@staff_permission(RESEARCH)
@require_safe
def research_compare(request):
    """GET: the form (changing game, batches or grouping reloads it with that game's groups);
    with ``compare=1`` and two groups: the comparison, or the reason it is refused."""
    game = request.GET.get("game")
    compare_roles = monitor.compare_roles()
    if game not in compare_roles:   # the game of the latest batch that has a comparison, else the first
        latest = Batch.objects.filter(game_id__in=list(compare_roles)).order_by("-created_at", "-pk").first()
        game = latest.game_id if latest is not None else next(iter(compare_roles))
    batches = [s for s in request.GET.getlist("batch") if s]
    options = monitor.comparison_options(game_id=game, batches=batches)
    data = request.GET.copy()
    data["game"] = game
    data.setdefault("play", "all")
    if data.get("role") not in compare_roles[game]:
        data["role"] = compare_roles[game][0]
    form = CompareForm(data, game=game, options=options)
    result = refused = None
    status = 200
    if request.GET.get("compare"):
        if not form.is_valid():
            status = 400
        elif not (form.cleaned_data["a"] and form.cleaned_data["b"]):
            refused, status = "Pick a group A and a group B.", 400
        else:
            d = form.cleaned_data
            try:
                result = monitor.compare_groups(game_id=game, batches=d["batch"], role=d["role"], a=d["a"],
                                                b=d["b"], play=d["play"])
            except monitor.CompareRefused as exc:
                refused = str(exc)
    # arms within one batch (issue 24): randomised in one study, so not confounded by who came when
    arm_batches = list(Batch.objects.filter(game_id=game).exclude(arms=[]).order_by("-created_at", "-pk"))
    arm_batch = next((b for b in arm_batches if b.slug == request.GET.get("arm_batch")), None)
    arm_stats = arm_error = None
    if arm_batch is not None:
        try:
            arm_stats = arm_monitor.batch_arms(batch=arm_batch, delta=arm_monitor.parse_delta(request.GET.get("delta")))
        except arm_monitor.BadDelta as exc:
            arm_error, status = str(exc), 400
    if request.GET.get("format") == "csv" and arm_batch is not None:
        response = HttpResponse(content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{arm_batch.slug}-arms.csv"'
        arm_table.write_arm_table(arm_batch, response)
        return response
    if request.GET.get("format") == "json":
        return JsonResponse({"result": result, "refused": refused, "errors": form.errors or None, "arms": arm_stats},
                            status=status)
    return render(request, "research/compare.html",
                  {"form": form, "game": game, "spec": GAMES[game], "result": result, "refused": refused,
                   "options": options, "arm_batches": arm_batches, "arm_batch": arm_batch, "arm_stats": arm_stats,
                   "arm_error": arm_error},
                  status=status)

