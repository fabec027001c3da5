from django.apps import AppConfig
from django.core.signals import request_started

from groundtalk_web.resilience import check_connection_at_request_start


class LiveConfig(AppConfig):
    """Live matches: the match service, its store and transport, the lobby and the watchdog."""

    name = "live"
    verbose_name = "Live matches"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        # After Django's own close_old_connections: a kept connection that died is replaced.
        request_started.connect(check_connection_at_request_start, dispatch_uid="gt_check_connection")
