from django.apps import AppConfig


class GamesConfig(AppConfig):
    """The game SDK (contract, registry, action schemas, hidden-information declarations) and the
    game packages."""

    name = "games"
    verbose_name = "Games and matches"
    default_auto_field = "django.db.models.BigAutoField"
