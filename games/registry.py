"""Every game GroundTalk serves: one line per game package.

A game is a package whose ``__init__.py`` defines ``SPEC``, a :class:`games.spec.GameSpec` that
declares everything the platform needs (rules, content, actions, agents, hidden, exports, monitor
scorers and comparisons, settings, bonus kinds, onboarding, templates, static files, docs page);
see :mod:`games.spec` and docs/adding-a-game.md. Adding a game: its package and one line in
:data:`GAME_PACKAGES` (the settings make each listed package a Django app, for its templates,
static files and commands).
"""
from __future__ import annotations

import os
from importlib import import_module

from games.spec import BonusKind, ExportFormat, GameSpec

__all__ = ["GAME_PACKAGES", "GAMES", "BonusKind", "ExportFormat", "GameSpec", "UnknownGame", "bonus_kinds",
           "game_named", "get_game", "register"]

GAME_PACKAGES: list[str] = [
    "games.colors",
    "games.guesswhich",
    "games.visdial",
    "games.codraw",
    # new games: add one line here
]

GAMES: dict[str, GameSpec] = {}


def register(package: str) -> GameSpec:
    """Add the game of ``package`` (its ``SPEC``) to :data:`GAMES`; returns the spec. The product's
    games are registered from :data:`GAME_PACKAGES` at import; a test's fixture game can call this
    (and must also be an installed app for its templates and static files)."""
    spec = import_module(package).SPEC
    if not isinstance(spec, GameSpec):
        raise TypeError(f"{package}.SPEC is not a GameSpec")
    if spec.package != package:
        raise ValueError(f"{package}.SPEC names the package {spec.package!r}")
    other = GAMES.get(spec.id)
    if other is not None and other.package != package:
        raise ValueError(f"game id {spec.id!r} is taken by {other.package}")
    GAMES[spec.id] = spec
    if package not in GAME_PACKAGES:
        GAME_PACKAGES.append(package)
    return spec


#: Game packages a process adds from its environment: ``GT_GAME_PACKAGES``, comma-separated import
#: paths, registered after the product's. For a game that is no part of the product: the test
#: suite's fixture game (tests/fixtures/, whose tests start their server and worker with it) or a
#: game under development. Read here, not in the settings, because the settings
#: take their INSTALLED_APPS from :data:`GAME_PACKAGES`: every process started with the variable
#: (web server, agent workers, commands) serves the game and finds its templates and static files.
EXTRA_GAME_PACKAGES: list[str] = [p.strip() for p in os.environ.get("GT_GAME_PACKAGES", "").split(",")
                                  if p.strip()]

for _package in [*GAME_PACKAGES, *EXTRA_GAME_PACKAGES]:
    register(_package)


class UnknownGame(KeyError):
    pass


def get_game(game_id: str) -> GameSpec:
    try:
        return GAMES[game_id]
    except KeyError:
        raise UnknownGame(f"Unknown game {game_id!r}; known: {', '.join(sorted(GAMES))}") from None


def game_named(name: str) -> GameSpec:
    """A game by its id or by its package's last name (``colors``), for the commands' ``--game``."""
    if name in GAMES:
        return GAMES[name]
    for spec in GAMES.values():
        if spec.package.rsplit(".", 1)[-1] == name:
            return spec
    raise UnknownGame(f"Unknown game {name!r}; known: {', '.join(sorted(GAMES))}")


def bonus_kinds() -> dict[str, BonusKind]:
    """Every registered game's bonus kinds (``GameSpec.bonus_kinds``): kind value -> :class:`BonusKind`."""
    return {kind: bonus for spec in GAMES.values() for kind, bonus in spec.bonus_kinds.items()}
