"""Every game GroundTalk serves, registered explicitly under a versioned id.

A game is a package ``games/<name>/`` with ``rules.py`` (pure, see :mod:`games.base`),
``content.py`` (``generate(seed, config) -> dict``), ``actions.py`` (``SCHEMA``: the typed actions,
:mod:`games.actions`), ``agents.py`` (``AGENTS``: a list of
:class:`agents.base.AgentSpec`), ``exports.py`` (dataset formats built from the event log) and
``hidden.py`` (what each role must not know, :mod:`games.hidden`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from importlib import import_module
from types import ModuleType


@dataclass(frozen=True)
class GameSpec:
    id: str
    title: str
    package: str
    template: str
    default_config: dict = field(default_factory=dict)

    @cached_property
    def rules(self) -> ModuleType:
        return import_module(f"{self.package}.rules")

    @cached_property
    def content(self) -> ModuleType:
        return import_module(f"{self.package}.content")

    @cached_property
    def agents(self) -> ModuleType:
        return import_module(f"{self.package}.agents")

    @cached_property
    def actions(self):
        """The typed schema of the game's actions (``SCHEMA`` of ``<package>.actions``, a
        :class:`games.actions.ActionSchema`): ``spec.actions.validate(action)``."""
        return import_module(f"{self.package}.actions").SCHEMA

    @cached_property
    def hidden(self) -> ModuleType:
        """What each role must not know (``hidden_from``, ``vary``, ``random_action`` of
        ``<package>.hidden``; :mod:`games.hidden`)."""
        return import_module(f"{self.package}.hidden")

    @property
    def roles(self) -> tuple[str, ...]:
        return tuple(self.rules.ROLES)


GAMES: dict[str, GameSpec] = {
    spec.id: spec
    for spec in [
        GameSpec("colors_v1", "Color reference game", "games.colors", "games/colors.html",
                 {"rounds": 50}),
        GameSpec("guesswhich_v1", "GuessWhich", "games.guesswhich", "games/guesswhich.html", {"pool_size": 20, "rounds": 9, "difficulty": "medium"}),
        GameSpec("visdial_v1", "Visual-dialog chat", "games.visdial", "games/visdial.html", {"rounds": 10}),
        GameSpec("codraw_v1", "CoDraw: collaborative drawing", "games.codraw", "games/codraw.html", {"time_limit_s": 1200}),
        # new games: add one line here
    ]
}


class UnknownGame(KeyError):
    pass


def get_game(game_id: str) -> GameSpec:
    try:
        return GAMES[game_id]
    except KeyError:
        raise UnknownGame(f"Unknown game {game_id!r}; known: {', '.join(sorted(GAMES))}") from None
