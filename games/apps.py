from django.apps import AppConfig


class GamesConfig(AppConfig):
    name = "games"
    verbose_name = "Games and matches"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from django.core.signals import request_started

        from groundtalk_web.resilience import check_connection_at_request_start

        # After Django's own close_old_connections: a kept connection that died is replaced.
        request_started.connect(check_connection_at_request_start, dispatch_uid="gt_check_connection")
