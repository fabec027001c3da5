"""The staff export page, /research/export/: a thin view over ``research.exports`` (the same export as
``manage.py export``), streamed as a download; ``?count=1`` answers how many matches it selects."""
from __future__ import annotations

from datetime import datetime, time, timezone

from django import forms
from django.core.handlers.asgi import ASGIRequest
from django.http import JsonResponse, StreamingHttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from crowd.staff import RESEARCH, staff_permission
from games.codraw.exports import DEFAULT_RATIOS, DEFAULT_SPLIT, SPLIT_MODES, parse_ratios
from research.exports import (DEFAULT_STATUS, STATUSES, ExportStream, export_formats, export_selection, format_file,
                              format_options_of)
from live.models import Batch


def _aware(day) -> datetime | None:
    return datetime.combine(day, time.min, tzinfo=timezone.utc) if day else None


class ExportForm(forms.Form):
    format = forms.ChoiceField(choices=())
    batch = forms.ChoiceField(choices=(), initial="all")
    status = forms.ChoiceField(choices=[(s, s) for s in STATUSES], initial=DEFAULT_STATUS,
                               help_text="finished matches make a dataset; active ones are never exported")
    since = forms.DateField(required=False, label="Created on or after",
                            widget=forms.DateInput(attrs={"type": "date"}))
    until = forms.DateField(required=False, label="Created before",
                            widget=forms.DateInput(attrs={"type": "date"}))
    pseudonymise = forms.BooleanField(required=False, initial=True, label="Pseudonymise worker ids")
    codraw_split = forms.ChoiceField(
        choices=[(m, m) for m in SPLIT_MODES], initial=DEFAULT_SPLIT, required=False, label="CoDraw split",
        help_text="codraw and codraw-keys: the split in the keys (train_00000, val_00000, test_00000) the "
                  "authors' code selects by: hash of the match id, all train, val or test, or original "
                  "(the recorded keys). Download codraw-keys with the same choices for the key -> match file.")
    codraw_ratios = forms.CharField(initial="80,10,10", required=False, label="CoDraw split ratios",
                                    help_text="hash split: train,val,test shares")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        formats = export_formats()
        self.fields["format"].choices = [
            (name, f"{name} ({game or 'all games'})") for name, (game, _) in formats.items()]
        self.fields["batch"].choices = [("all", "all batches")] + [
            (b.slug, f"{b.slug} ({b.game_id})") for b in Batch.objects.order_by("slug")]

    def clean(self):
        data = super().clean()
        since, until = data.get("since"), data.get("until")
        if since and until and until <= since:
            self.add_error("until", "Must be after the first date.")
        try:
            data["codraw_ratios"] = parse_ratios(data.get("codraw_ratios") or "80,10,10")
        except ValueError as exc:
            self.add_error("codraw_ratios", str(exc))
        data["codraw_split"] = data.get("codraw_split") or DEFAULT_SPLIT
        return data

    def format_options(self) -> dict:
        d = self.cleaned_data
        return {"codraw_split": d["codraw_split"], "codraw_ratios": d["codraw_ratios"]}

    def options(self) -> dict:
        d = self.cleaned_data
        return dict(batch=None if d["batch"] == "all" else d["batch"], since=_aware(d.get("since")),
                    until=_aware(d.get("until")), status=d["status"])


def _filename(d: dict) -> str:
    ext, _ = format_file(d["format"])
    parts = ["groundtalk", d["format"], d["batch"], d["status"]]
    if d.get("since"):
        parts.append(f"from{d['since'].isoformat()}")
    if d.get("until"):
        parts.append(f"before{d['until'].isoformat()}")
    ratios = d.get("codraw_ratios") or DEFAULT_RATIOS
    if "codraw_split" in format_options_of(d["format"]) and (d["codraw_split"], ratios) != (DEFAULT_SPLIT, DEFAULT_RATIOS):
        parts.append(f"split{d['codraw_split']}" + ("".join(f"-{r:g}" for r in ratios)
                                                      if d["codraw_split"] == "hash" else ""))
    return "-".join(parts) + "." + ext


def empty_warning(d: dict, matches: int) -> str:
    """Why the download would be an empty file, in words ("" when it would not be empty): a format
    of another game than the chosen batch's (the format's game decides which matches it writes),
    or filters that select nothing."""
    if matches:
        return ""
    game = export_formats()[d["format"]][0]
    batch = Batch.objects.filter(slug=d["batch"]).only("game_id").first() if d["batch"] != "all" else None
    if game and batch is not None and batch.game_id != game:
        fits = [name for name, (g, _) in export_formats().items() if g in (batch.game_id, None)]
        return (f"The file would be empty: the {d['format']} format exports {game} matches, and batch {batch.slug} "
                f"plays {batch.game_id}. Formats for this batch: {', '.join(fits)}.")
    return "The file would be empty: no match fits these filters."


@staff_permission(RESEARCH)
@require_GET
def research_export(request):
    """GET with no ``format``: the empty form. With the form's fields: ``count=1`` -> JSON count;
    ``preview`` -> the form and the count; otherwise the download (or the form with its errors, 400)."""
    if "format" not in request.GET:
        return render(request, "research/export.html", {"form": ExportForm()})
    form = ExportForm(request.GET)
    if not form.is_valid():
        if request.GET.get("count"):
            return JsonResponse({"errors": form.errors}, status=400)
        return render(request, "research/export.html", {"form": form}, status=400)
    d = form.cleaned_data
    options = form.options()
    matches = export_selection(d["format"], **options).count()
    warning = empty_warning(d, matches)
    if request.GET.get("count"):
        return JsonResponse({"matches": matches, "filename": _filename(d), "warning": warning})
    if "preview" in request.GET:
        return render(request, "research/export.html", {"form": form, "matches": matches, "warning": warning})
    stream = ExportStream(d["format"], pseudonymise=d["pseudonymise"], format_options=form.format_options(), **options)
    _, content_type = format_file(d["format"])
    content = stream.asynchronous() if isinstance(request, ASGIRequest) else iter(stream)
    response = StreamingHttpResponse(content, content_type=f"{content_type}; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{_filename(d)}"'
    response["X-Export-Matches"] = str(matches)
    response["Cache-Control"] = "no-store"
    return response
