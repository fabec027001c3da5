"""The admin's read-only view of launches and payment actions (the audit), the bonus rule (its
bounds and budget are the model's validation: crowd/models.py), and the staff's roles: the user
list shows each account's groups ("researcher", "payer": crowd/staff.py), and Groups lists what
each role may do."""
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.urls import reverse
from django.utils.html import format_html

from crowd.models import BonusRule, Launch, PayAction


@admin.register(BonusRule)
class BonusRuleAdmin(admin.ModelAdmin):
    list_display = ("batch", "kind", "cents_per_unit", "cap_cents", "budget_cents")


User = get_user_model()
if admin.site.is_registered(User):
    admin.site.unregister(User)


@admin.register(User)
class StaffUserAdmin(UserAdmin):
    """Django's user admin, with each account's roles in the list (a superuser has every power)."""
    list_display = ("username", "email", "is_staff", "is_superuser", "roles", "is_active", "last_login")

    @admin.display(description="roles (groups)")
    def roles(self, obj):
        if obj.is_superuser:
            return "superuser: every permission"
        return ", ".join(g.name for g in obj.groups.all()) or "none: no staff page opens"

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("groups")


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
