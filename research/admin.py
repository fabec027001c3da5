from contextvars import ContextVar

from django import forms
from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from crowd import entry as crowd_entry
from crowd.onboarding import onboarding_problems
from crowd.outcomes import crowd_problems
from crowd.questionnaire import questionnaire_problems
from research.batch_builder import GameFields, arms_widget_attrs, fieldsets_for_games
from live.batches import batch_problems, problems
from crowd.models import Participant, Study
from live.models import Batch, Content, Match, MatchEvent, Seat
from games.registry import GAMES

_request: ContextVar = ContextVar("batch_admin_request", default=None)


BLIND_WAIT_FIELDS = ("blind_wait_min_s", "blind_wait_max_s")
# The experiment's fields (issue 24), one fieldset after the game's: the arms (a JSON field, edited
# through the table static/gt/batch_builder.js draws), how people are assigned, the budget, the end
# questions and the blind wait.
EXPERIMENT_FIELDS = ("arms", "assignment", "arm_seed", "budget_usd", "ask_partner_kind", "ask_preference",
                     *BLIND_WAIT_FIELDS)


class BatchForm(GameFields, forms.ModelForm):
    """The batch builder: the game from the registered games; its roles, agents and settings as
    choices and typed fields (research/batch_builder.py); a batch that cannot run (roles, agents,
    pairing or settings that do not fit the game) is refused with the reason beside the field."""

    game_id = forms.ChoiceField(label="Game")
    entry_kinds = forms.MultipleChoiceField(
        choices=[(k, crowd_entry.KIND_LABELS[k]) for k in crowd_entry.ENTRY_KINDS], required=False,
        widget=forms.CheckboxSelectMultiple, label="Entry kinds",
        help_text="Who may enter (docs/crowd.md). Lab: signed per-person links from the batch's lab links page. "
                  "Demo: any ?worker=NAME, and only while the server runs embedded (or on the full stack "
                  "started with GT_DEMO=1 on a loopback HOST, from that machine).")

    class Meta:
        model = Batch
        exclude = ["human_roles", "agents", "config"]   # from the chosen game's fields (GameFields)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["game_id"].choices = [(g.id, f"{g.id} — {g.title}") for g in GAMES.values()]
        if "assignment" in self.fields:   # left out of a form's data: between subjects, as before arms
            self.fields["assignment"].required = False
        for name in BLIND_WAIT_FIELDS:   # left out of a form's data: the model's defaults
            if name in self.fields:
                self.fields[name].required = False
        if "arms" in self.fields:   # the script's table edits the JSON; the JSON stays what is saved
            self.fields["arms"].widget.attrs.update(arms_widget_attrs())

    def clean_assignment(self):
        return self.cleaned_data.get("assignment") or Batch.Assignment.BETWEEN

    def clean_blind_wait_min_s(self):
        value = self.cleaned_data.get("blind_wait_min_s")
        return Batch._meta.get_field("blind_wait_min_s").default if value is None else value

    def clean_blind_wait_max_s(self):
        value = self.cleaned_data.get("blind_wait_max_s")
        return Batch._meta.get_field("blind_wait_max_s").default if value is None else value

    def clean(self):
        data = super().clean()
        if self.errors.get("game_id"):
            return data
        if any(f in self.errors for f in ("pairing", "on_timeout")) or \
                any(f.startswith(f"{data.get('game_id')}__") for f in self.errors):
            return data
        for field, msg in problems(game_id=data.get("game_id"), pairing=data.get("pairing"),
                                   human_roles=data.get("human_roles") or [], agents=data.get("agents") or {},
                                   on_timeout=data.get("on_timeout"), config=data.get("config") or {},
                                   arms=data.get("arms") or [], assignment=data.get("assignment") or "between",
                                   games_per_worker=data.get("games_per_worker") or 1):
            if field.startswith("arms") or field == "assignment":   # the arms' JSON: the message names the arm
                self.add_error(field.split("[")[0], msg)
            else:
                self.place_problem(field, msg)
        for field, msg in crowd_problems(entry_kinds=data.get("entry_kinds"), exit_pay=data.get("exit_pay"),
                                         prolific_codes=data.get("prolific_codes"),
                                         pay_cents=data.get("pay_cents") or 0):
            self.add_error(field, msg)
        for msg in onboarding_problems(game_id=data.get("game_id"), kind=data.get("onboarding") or ""):
            self.add_error("onboarding", msg)
        for msg in questionnaire_problems(data.get("questionnaire")):
            self.add_error("questionnaire", msg)
        lo, hi = data.get("blind_wait_min_s"), data.get("blind_wait_max_s")
        if lo is not None and hi is not None and lo > hi:
            self.add_error("blind_wait_max_s", f"The blind wait's maximum ({hi} s) is below its minimum ({lo} s).")
        return data


@admin.register(Batch)
class BatchAdmin(admin.ModelAdmin):
    form = BatchForm
    list_display = ("slug", "title", "game_id", "pairing", "games_per_worker", "status", "can_run", "can_enter",
                    "problem", "created_at")
    list_filter = ("game_id", "pairing", "status")
    prepopulated_fields = {"slug": ("title",)}
    readonly_fields = ("entry_links",)

    class Media:   # no inline script or style (the Content-Security-Policy allows neither: groundtalk_web/csp.py)
        js = ("gt/batch_builder.js",)   # shows only the chosen game's fieldset; selects an entry link on a click
        css = {"all": ("gt/admin.css",)}

    def get_fieldsets(self, request, obj=None):
        games = fieldsets_for_games()
        per_game = {name for _, opts in games for name in opts["fields"]}
        fields = self.get_fields(request, obj)
        experiment = [f for f in EXPERIMENT_FIELDS if f in fields]
        main = [f for f in fields if f not in per_game and f not in experiment and f != "entry_links"]
        at = main.index("pairing") + 1 if "pairing" in main else len(main)
        return [(None, {"fields": main[:at]}), *games,
                ("Experiment: arms, assignment, budget, end questions", {"fields": experiment, "classes": ["gt-experiment"]}),
                ("Study", {"fields": main[at:]}), ("Entry links", {"fields": ["entry_links"]})]

    @admin.display(boolean=True, description="can run")
    def can_run(self, obj):
        return not batch_problems(obj)

    @admin.display(boolean=True, description="can be entered")
    def can_enter(self, obj):
        return not crowd_entry.entry_problems(obj)

    @admin.display(description="problem")
    def problem(self, obj):
        return " ".join(batch_problems(obj) + crowd_entry.entry_problems(obj))

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
        ]
        rows = format_html_join(
            "", '<p><b>{}</b><br><input type="text" class="gt-entry-link" readonly value="{}" size="110"></p>',
            links)
        rows += format_html('<p><b>Launch, review and pay</b><br><a href="{}">launch on MTurk or Prolific</a> · '
                            '<a href="{}">review and pay</a></p>',
                            reverse("crowd_launch", kwargs={"slug": obj.slug}),
                            reverse("crowd_review", kwargs={"slug": obj.slug}))
        rows += format_html('<p><b>Lab</b><br>one signed link per person: <a href="{}">make lab links (CSV)</a>'
                            '</p><p><b>Accepted now</b>: {}</p>',
                            reverse("lab_links", kwargs={"slug": obj.slug}),
                            ", ".join(crowd_entry.KIND_LABELS.get(k, k) for k in obj.entry_kinds or []) or "nothing")
        problems_now = batch_problems(obj)
        if problems_now:
            rows = format_html('<p class="gt-problem">This batch cannot run and is not served: {}</p>{}',
                               " ".join(problems_now), rows)
        if entry_problems := crowd_entry.entry_problems(obj):
            rows = format_html('<p class="gt-problem" id="entry-problem">{}</p>{}', " ".join(entry_problems), rows)
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
    list_display = ("worker_id", "platform", "verification", "batch", "state", "games_played", "exit_reason",
                    "outcome", "pay", "pay_cents", "completion_code")
    list_filter = ("batch", "platform", "verification", "state", "exit_reason", "outcome", "pay")
    search_fields = ("worker_id", "assignment_id", "completion_code")
    exclude = ("owner_key", "transfer_code")   # the browser binding's secrets (crowd/identity.py)


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


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    """A group of batches; a batch's "excluded studies" refuses their workers (crowd/studies.py)."""
    list_display = ("name", "created_at")
    search_fields = ("name",)
    filter_horizontal = ("batches",)
