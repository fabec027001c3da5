from django.apps import AppConfig


class ResearchConfig(AppConfig):
    """The researcher's side: batches, the live monitor, comparisons, replay, exports, the admin."""

    name = "research"
    verbose_name = "Research"
    default_auto_field = "django.db.models.BigAutoField"
