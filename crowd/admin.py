"""The admin's read-only view of launches and payment actions (the audit), and the bonus rule."""
from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html

from crowd.models import BonusRule, Launch, PayAction


@admin.register(BonusRule)
class BonusRuleAdmin(admin.ModelAdmin):
    list_display = ("batch", "kind", "cents_per_unit", "cap_cents")


class ReadOnly(admin.ModelAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Launch)
class LaunchAdmin(ReadOnly):
    list_display = ("created_at", "batch", "platform", "live", "hit_id", "study_id", "status", "by", "pages")
    list_filter = ("platform", "live", "status")

    @admin.display(description="pages")
    def pages(self, obj):
        return format_html('<a href="{}">launch</a> · <a href="{}">review</a>',
                           reverse("crowd_launch", args=[obj.batch.slug]), reverse("crowd_review", args=[obj.batch.slug]))


@admin.register(PayAction)
class PayActionAdmin(ReadOnly):
    list_display = ("created_at", "participant", "kind", "amount_cents", "status", "attempts", "by", "sent_at", "key")
    list_filter = ("kind", "status")
    search_fields = ("participant__worker_id", "key")
