from contextvars import ContextVar

from django import forms
from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from games.batches import batch_problems, problems
from games.models import Batch, Content, Match, MatchEvent, Participant, Seat
from games.registry import GAMES

_request: ContextVar = ContextVar("batch_admin_request", default=None)


def _agent_help() -> str:
    from agents.registry import all_agents

    by_game: dict[str, list[str]] = {}
    for name, spec in sorted(all_agents().items()):
        by_game.setdefault(spec.game_id, []).append(f"{spec.role}: {name}")
    return "; ".join(f"{g} [{', '.join(v)}]" for g, v in sorted(by_game.items()))


class BatchForm(forms.ModelForm):
    """The batch builder: the game from the registered games, and a batch that cannot run
    (roles, agents, pairing or settings that do not fit the game) is refused with the reason."""

    game_id = forms.ChoiceField(label="Game")

    class Meta:
        model = Batch
        fields = "__all__"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["game_id"].choices = [(g.id, f"{g.id} — {g.title}") for g in GAMES.values()]
        self.fields["human_roles"].help_text = (
            "JSON list of the roles people take (empty: all). Roles: "
            + "; ".join(f"{g.id}: {', '.join(g.roles)}" for g in GAMES.values()))
        self.fields["agents"].help_text = "JSON {role: agent}. Registered agents: " + _agent_help()
        self.fields["config"].help_text = "JSON game settings. Defaults: " + "; ".join(
            f"{g.id}: {g.default_config}" for g in GAMES.values())

    def clean(self):
        data = super().clean()
        if self.errors.get("game_id"):
            return data
        field_names = {"game_id", "pairing", "human_roles", "agents", "on_timeout", "config"}
        if any(f in self.errors for f in field_names):
            return data
        for field, msg in problems(game_id=data.get("game_id"), pairing=data.get("pairing"),
                                   human_roles=data.get("human_roles") or [], agents=data.get("agents") or {},
                                   on_timeout=data.get("on_timeout"), config=data.get("config") or {}):
            self.add_error(field if field in self.fields else None, msg)
        return data


@admin.register(Batch)
class BatchAdmin(admin.ModelAdmin):
    form = BatchForm
    list_display = ("slug", "title", "game_id", "pairing", "games_per_worker", "status", "can_run", "problem",
                    "created_at")
    list_filter = ("game_id", "pairing", "status")
    prepopulated_fields = {"slug": ("title",)}
    readonly_fields = ("entry_links",)

    @admin.display(boolean=True, description="can run")
    def can_run(self, obj):
        return not batch_problems(obj)

    @admin.display(description="problem")
    def problem(self, obj):
        return " ".join(batch_problems(obj))

    @admin.display(description="Entry links")
    def entry_links(self, obj):
        if obj is None or not obj.pk:
            return "Shown once the batch is saved."
        request = _request.get()
        path = reverse("batch_entry", kwargs={"slug": obj.slug})
        base = request.build_absolute_uri(path) if request is not None else path
        links = [
            ("MTurk (ExternalQuestion URL; MTurk appends workerId, assignmentId, hitId, turkSubmitTo)", base),
            ("Prolific (study URL)",
             base + "?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"),
            ("Lab (replace NAME)", base + "?worker=NAME"),
        ]
        rows = format_html_join(
            "", '<p><b>{}</b><br><input type="text" readonly value="{}" size="110" onclick="this.select()"></p>',
            links)
        problems_now = batch_problems(obj)
        if problems_now:
            return format_html('<p style="color:#ba2121">This batch cannot run and is not served: {}</p>{}',
                               " ".join(problems_now), rows)
        return rows

    def changeform_view(self, request, *args, **kwargs):
        token = _request.set(request)  # for entry_links' absolute URLs (per request, not per admin)
        try:
            response = super().changeform_view(request, *args, **kwargs)
            if hasattr(response, "render"):
                response.render()  # a TemplateResponse renders later, after the reset below
            return response
        finally:
            _request.reset(token)


@admin.register(Participant)
class ParticipantAdmin(admin.ModelAdmin):
    list_display = ("worker_id", "platform", "batch", "state", "games_played", "exit_reason", "completion_code")
    list_filter = ("batch", "platform", "state", "exit_reason")
    search_fields = ("worker_id", "assignment_id", "completion_code")


class SeatInline(admin.TabularInline):
    model = Seat
    extra = 0
    readonly_fields = ("role", "kind", "participant", "agent_name", "connected", "last_seen_at", "left_at")
    exclude = ("token",)


@admin.register(Match)
class MatchAdmin(admin.ModelAdmin):
    list_display = ("id", "game_id", "batch", "status", "seq", "created_at", "finished_at")
    list_filter = ("game_id", "status", "batch")
    readonly_fields = ("seq", "state", "outcome", "content", "seed", "config", "agent_seats")
    inlines = [SeatInline]


@admin.register(MatchEvent)
class MatchEventAdmin(admin.ModelAdmin):
    list_display = ("match", "seq", "type", "actor", "t")
    list_filter = ("type",)

    def has_change_permission(self, request, obj=None):
        return False  # the log is append-only


@admin.register(Content)
class ContentAdmin(admin.ModelAdmin):
    list_display = ("game_id", "key", "created_at")
    list_filter = ("game_id",)
