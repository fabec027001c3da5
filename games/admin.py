from django.contrib import admin

from games.models import Batch, Content, Match, MatchEvent, Participant, Seat


@admin.register(Batch)
class BatchAdmin(admin.ModelAdmin):
    list_display = ("slug", "title", "game_id", "pairing", "games_per_worker", "status", "created_at")
    list_filter = ("game_id", "pairing", "status")
    prepopulated_fields = {"slug": ("title",)}


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
