from django.apps import AppConfig


class AgentsConfig(AppConfig):
    name = "agents"
    verbose_name = "Agents"

    def ready(self):
        # A bad model configuration file (models/models.toml or GT_MODELS_FILE) stops every process
        # at start-up with the file, entry and field named (agents/model_config.py).
        from agents.registry import check_at_startup
        # Imported here, not at the top: they import models, which need the app registry ready.
        from agents import for_live
        from agents.dispatch import wake_on_commit
        from live import agent_seats
        from live.services import agent_turns_due

        check_at_startup()
        # Agent seats are woken once an action is committed (live/services.py sends the signal).
        agent_turns_due.connect(wake_on_commit, dispatch_uid="agents.wake_on_commit")
        # What live asks of the agents (live/agent_seats.py): specs, the watchdog's fallback, workers.
        agent_seats.register(for_live)
