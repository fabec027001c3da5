from django.apps import AppConfig


class CrowdConfig(AppConfig):
    name = "crowd"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        # Imported here, not at the top: they import models, which need the app registry ready.
        from crowd.after_match import participants_after_match
        from crowd.identity import seat_allowed
        from live import seat_owners
        from live.services import match_finished

        # A match's workers go on inside the transaction that ends it (live/services.py sends it).
        match_finished.connect(participants_after_match, dispatch_uid="crowd.participants_after_match")
        # Whose browser may use a seat (live/seat_owners.py asks it of the game page, socket, images).
        seat_owners.register(seat_allowed)
