from django.apps import AppConfig


class AgentsConfig(AppConfig):
    name = "agents"
    verbose_name = "Agents"

    def ready(self):
        # A bad model configuration file (models/models.toml or GT_MODELS_FILE) stops every process
        # at start-up with the file, entry and field named (agents/serving/config.py).
        from agents.serving.config import check_at_startup

        check_at_startup()
