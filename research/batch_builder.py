"""The batch builder's game fields: roles, agents and settings as real choices, per game.

The admin's batch form (research/admin.py ``BatchForm``) mixes in :class:`GameFields`. For every
registered game it has
    ``<game>__roles``           checkboxes of the game's roles (the roles people take; none: all),
    ``<game>__agent__<role>``   a choice of the agents registered for that game and role,
    ``<game>__set__<setting>``  one typed field per setting (live.batches.config_schema),
and a small script (static/gt/batch_builder.js) shows only the chosen game's fields. The batch's
``arms`` (issue 24) stay a JSON field, the source of truth; the script draws a table that edits it
(name, weight, an agent per agent seat from the same per-game choices, :func:`arm_agent_choices`,
given to the script as the field's ``data-agents``), kept in sync with it both ways. Only the chosen
game's fields are read: they become the batch's ``human_roles``, ``agents`` and ``config`` (JSON
columns, read by the lobby), and live.batches.problems checks the result; each problem is shown
beside the field it is about. Everything is generated from the registries (games.registry.GAMES,
agents.registry), so a new game or agent appears here without touching this module.
"""
from __future__ import annotations

import json

from django import forms

from live.batches import _POSITIVE_INTS, config_choices, config_schema
from games.registry import GAMES
from agents.registry import all_agents


def roles_field(game_id: str) -> str:
    return f"{game_id}__roles"


def agent_field(game_id: str, role: str) -> str:
    return f"{game_id}__agent__{role}"


def setting_field(game_id: str, key: str) -> str:
    return f"{game_id}__set__{key}"


def _short(text: str, limit: int = 70) -> str:
    first = text.split(". ")[0].strip().rstrip(".")
    return first if len(first) <= limit else first[:limit - 1].rstrip() + "…"


def _agent_choices(game_id: str, role: str) -> list[tuple[str, str]]:
    named = [(name, f"{name} — {_short(spec.description)}" if spec.description else name)
             for name, spec in sorted(all_agents().items()) if spec.game_id == game_id and spec.role == role]
    return [("", "— none (a person, or no agent) —"), *named]


def arm_agent_choices() -> dict:
    """For the arms table: per game, its roles and, per role, the agent choices the batch's own
    agent fields offer (value, label); the first choice ("") is no agent."""
    return {game.id: {"roles": list(game.roles),
                      "agents": {role: [list(c) for c in _agent_choices(game.id, role)] for role in game.roles}}
            for game in GAMES.values()}


def arms_widget_attrs() -> dict:
    """The arms field's textarea: the class the script looks for and the choices it offers."""
    return {"class": "vLargeTextField gt-arms-json", "rows": 6,
            "data-agents": json.dumps(arm_agent_choices(), separators=(",", ":"))}


def _setting(game_id: str, key: str, types: tuple[type, ...], default) -> forms.Field:
    label = key.replace("_", " ")
    help_text = f"default: {json.dumps(default)}" if default is not None else "default: the game's own"
    choices = config_choices(game_id)
    if key in choices:
        return forms.ChoiceField(label=label, required=False, help_text=help_text,
                                 choices=[("", "—"), *((v, v) for v in choices[key])])
    if bool in types:
        return forms.NullBooleanField(label=label, required=False, help_text=help_text,
                                      widget=forms.Select(choices=[("unknown", "default"), ("true", "yes"),
                                                                   ("false", "no")]))
    if int in types:
        return forms.IntegerField(label=label, required=False, help_text=help_text,
                                  min_value=1 if key in _POSITIVE_INTS else None)
    if list in types:
        return forms.JSONField(label=label, required=False, help_text=help_text + " (a JSON list)")
    return forms.CharField(label=label, required=False, help_text=help_text)


def game_fields() -> dict[str, forms.Field]:
    """Every game's role, agent and setting fields, named as in the module docstring."""
    fields: dict[str, forms.Field] = {}
    for game in GAMES.values():
        fields[roles_field(game.id)] = forms.MultipleChoiceField(
            label="People take", required=False, widget=forms.CheckboxSelectMultiple,
            choices=[(r, r) for r in game.roles],
            help_text="The roles workers play (none ticked: every role). The other seats are agents'.")
        for role in game.roles:
            fields[agent_field(game.id, role)] = forms.ChoiceField(
                label=f"Agent as {role}", required=False, choices=_agent_choices(game.id, role),
                help_text=f"Registered agents for {game.id}/{role}.")
        for key, types in config_schema(game.id).items():
            fields[setting_field(game.id, key)] = _setting(game.id, key, types, game.default_config.get(key))
    return fields


def fieldsets_for_games() -> list[tuple[str, dict]]:
    """Admin fieldsets, one per game (classes ``gt-game gt-game-<id>`` for the script)."""
    out = []
    for game in GAMES.values():
        names = [roles_field(game.id), *(agent_field(game.id, r) for r in game.roles),
                 *(setting_field(game.id, k) for k in config_schema(game.id))]
        out.append((f"{game.title}: roles, agents and settings",
                    {"fields": names, "classes": ["gt-game", f"gt-game-{game.id}"]}))
    return out


def initial_for(game_id: str, human_roles, agents, config) -> dict:
    """Field values for a batch's ``human_roles``, ``agents`` and ``config`` (also a form's data)."""
    if game_id not in GAMES:
        return {}
    out: dict = {roles_field(game_id): list(human_roles or [])}
    for role, name in (agents or {}).items():
        out[agent_field(game_id, role)] = name
    for key, value in (config or {}).items():
        out[setting_field(game_id, key)] = value
    return out


def as_form_data(game_id: str, human_roles=(), agents=None, config=None) -> dict:
    """``initial_for`` as POST data (what a browser sends), e.g. for tests and copies of a batch."""
    data: dict = {}
    for name, value in initial_for(game_id, human_roles, agents, config).items():
        if isinstance(value, bool):
            data[name] = "true" if value else "false"
        elif isinstance(value, (list, dict)) and not name.endswith("__roles"):
            data[name] = json.dumps(value)
        else:
            data[name] = value
    return data


class _GameFieldsMethods(forms.Form):

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        instance = getattr(self, "instance", None)
        if instance is not None and instance.pk:
            self.initial.update(initial_for(instance.game_id, instance.human_roles, instance.agents, instance.config))

    def game_values(self, game_id: str) -> tuple[list, dict, dict]:
        data = self.cleaned_data
        game = GAMES[game_id]
        human_roles = [r for r in game.roles if r in (data.get(roles_field(game_id)) or [])]
        agents = {r: data[agent_field(game_id, r)] for r in game.roles if data.get(agent_field(game_id, r))}
        config = {}
        for key in config_schema(game_id):
            value = data.get(setting_field(game_id, key))
            if value is not None and value != "":
                config[key] = value
        return human_roles, agents, config

    def clean(self):
        data = super().clean()
        game_id = data.get("game_id")
        if game_id in GAMES:
            values = self.game_values(game_id)
            data["human_roles"], data["agents"], data["config"] = values
            instance = getattr(self, "instance", None)
            if instance is not None:   # the model form leaves out the JSON columns: set them here
                instance.human_roles, instance.agents, instance.config = values
        return data

    def place_problem(self, field: str, message: str) -> None:
        """Show a live.batches problem beside the field it is about."""
        game_id = self.cleaned_data.get("game_id")
        head, _, tail = field.partition(".")
        name = {"human_roles": roles_field(game_id), "agents": agent_field(game_id, tail),
                "config": setting_field(game_id, tail)}.get(head, field) if tail or head == "human_roles" else field
        self.add_error(name if name in self.fields else None, message)


# The fields are declared on the class (not added per instance) so that the admin lays them out.
GameFields = forms.forms.DeclarativeFieldsMetaclass("GameFields", (_GameFieldsMethods,), {
    "__doc__": """Mixed into the batch form before ``ModelForm``: the JSON columns ``human_roles``,
    ``agents`` and ``config`` are filled from the chosen game's fields.""",
    "__module__": __name__, **game_fields()})
