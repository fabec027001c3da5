"""A game's declaration: :class:`GameSpec`, the one place where a game tells the platform what it has.

A game is one package ``games/<name>/`` (or any importable package) whose ``__init__.py`` defines
``SPEC = GameSpec(...)``; :mod:`games.registry` lists the packages, one line each. Nothing outside
the package names the game: the platform reads everything it needs from the spec.

This module imports nothing from Django or from the games, so a package's ``__init__`` (imported
when the settings list the game packages as Django apps) stays cheap. The modules a spec points
at (``rules``, ``content``, ...) are imported on first use.
"""
from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from functools import cached_property
from importlib import import_module
from types import ModuleType
from typing import Any, Callable


@dataclass(frozen=True)
class ExportFormat:
    """One dataset format of a game (``manage.py export --format <name>``, the export page).

    ``writer``: ``"module:function"``, the module relative to the game's package when it starts with
    a dot (``".exports:write_csv"``); the function is ``writer(records, out) -> int`` over an
    iterator of match records (:func:`research.records.match_record`) and a text stream, returning
    how many items it wrote. ``extension`` and ``content_type``: the downloaded file's.
    """

    writer: str
    extension: str = "json"
    content_type: str = "application/json"


@dataclass(frozen=True)
class BonusKind:
    """A way to pay a bonus from a game's outcomes (the admin's bonus rule, crowd/payments.py).

    A worker's units are the sum over their ended matches of ``float(outcome[outcome_key] or 0)``;
    the bonus is units x the rule's cents per unit, capped. ``label`` is what the admin shows.
    The value (the key of :attr:`GameSpec.bonus_kinds`) is stored in ``BonusRule.kind``: at most
    24 characters, and never renamed once a batch uses it."""

    label: str
    outcome_key: str


def _resolve(ref: str, package: str) -> Any:
    """``"module:attr"`` -> the object; a module starting with "." is relative to ``package``."""
    module, _, attr = ref.partition(":")
    obj = import_module(module, package=package if module.startswith(".") else None)
    for part in attr.split(".") if attr else ():
        obj = getattr(obj, part)
    return obj


def _optional_module(name: str) -> ModuleType | None:
    try:
        return import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name == name:   # the module itself is absent (not something it imports)
            return None
        raise


# the games whose warm_up this process has started (GameSpec.warm_up_soon)
_warming: set[str] = set()
_warming_lock = threading.Lock()


@dataclass(frozen=True)
class GameSpec:
    """Everything the platform needs to know about one game.

    Required
      ``id``            versioned id stored on every Match, e.g. ``"colors_v1"`` (equal to
                        ``rules.GAME_ID``).
      ``title``         human name: admin, batch builder, research pages.
      ``package``       the game's import path, e.g. ``"games.colors"``. The settings list it in
                        ``INSTALLED_APPS`` (through :data:`games.registry.GAME_PACKAGES`), so its
                        ``templates/`` and ``static/`` folders are found by Django's app loaders
                        (``collectstatic`` and WhiteNoise included) and its ``management/commands``
                        are commands.

    Modules of the package (by convention, imported on first use)
      ``rules``         required: the pure game (:mod:`games.base`): ROLES, initial_state, apply, ...
      ``content``       required: ``generate(seed, config) -> dict``.
      ``actions``       required: ``SCHEMA`` (:class:`games.actions.ActionSchema`); ``spec.actions``
                        is that schema.
      ``agents``        required: ``AGENTS``, a list of :class:`agents.base.AgentSpec`.
      ``hidden``        required: what each role must not know (:mod:`games.hidden`).
      ``exports``       optional: the writers that :attr:`exports` points at.
      ``monitor``       optional: the research pages' view of the game (``spec.monitor``; None when
                        absent). Any of: ``scores(outcomes) -> dict`` (a batch's scores; default
                        ``{"matches": n}``), ``outcome_summary(outcome) -> str`` (one match in
                        words), ``event_summary(event) -> str | None`` (one logged event in words;
                        None: the platform's generic line), ``board(state, rules, *, match_id, seq)
                        -> dict`` (what an observer sees at a replay step, beside ``to_act``),
                        ``match_images(match) -> dict`` (images the staff match page shows),
                        ``image_scene(match, image_id) -> dict | None`` (the scene the staff image
                        endpoint draws for one of them),
                        ``PICTURES`` (the staff pages' SVG pictures of a match: URL name ->
                        ``(route under research/matches/<id>/, draw)``, ``draw(match, events, *,
                        scale, query, **route) -> (svg, file name)`` over the match and its logged
                        events as plain dicts, raising LookupError for a 404),
                        ``replay_svg(state, *, match_id, seq, scale) -> (svg, file name)`` (the
                        replay's picture after event ``seq``; research/pictures.py serves both),
                        ``compare_test(outcomes_a, outcomes_b, scores_a, scores_b) -> dict``
                        (the test between two groups; required when :attr:`compare_roles` is
                        not empty): ``{"name", "columns", "rows"}``, each row with ``what``,
                        ``n_a``, ``n_b``, ``p_value`` and the values its ``columns`` name, each
                        column ``(header, key, decimals or "percent", text when None)``.
                        :mod:`games.stats` has the shared helpers (proportions with Wilson
                        intervals, bootstrap means, Fisher and Mann-Whitney rows).
                        ``METRICS``: a tuple of :class:`games.stats.Metric`, the per-match numbers
                        the arms of an experiment are compared on (research/arms.py), the first
                        the game's *primary* metric: a key and label, a ``kind`` (``"proportion"``
                        with ``trials(outcome) -> (successes, trials)``, ``"mean"`` or
                        ``"ordinal"`` with ``value(outcome) -> float | None``), whether higher is
                        better and the planner's default difference ``delta``. Absent: no arm
                        statistics.
      ``llm``           optional: how a language model plays each role (``ROLES``: role ->
                        :class:`games.llm.LlmRole`; ``spec.llm_role(role)``), for LLM agents.
      ``onboarding``    optional: the practice round and quiz (``crowd/onboarding.py`` reads
                        ``QUIZ``, ``practice_config`` ...); ``spec.onboarding`` is None when absent.

    Optional declarations (defaults: the game has none)
      ``default_config``  the settings a batch may set, with their defaults; each key's type is
                          the default's type.
      ``extra_config``    further settings, without default: name -> accepted Python types, e.g.
                          ``{"scenes": (list,)}`` (live/batches.py checks them, the batch builder
                          shows them).
      ``config_choices``  settings that take one of a few values: name -> values.
      ``exports``         dataset formats: format name -> :class:`ExportFormat`. Format names are
                          global across games (``jsonl`` and ``questionnaire-csv`` are the
                          platform's).
      ``compare_roles``   the roles the research comparison may group matches by (first: the
                          default); empty: the game has no score to compare.
      ``bonus_kinds``     bonus rules a batch of this game may use: kind value -> :class:`BonusKind`.
      ``doc_page``        the game's page under docs/ whose agent table ``manage.py agent_docs``
                          generates (between ``<!-- agents:<id> begin ... -->`` markers).
      ``play_template``   the game page (default ``"<name>/play.html"``, in the package's
                          ``templates/``); rendered with ``seat``, ``match``, ``game``, ``next_url``,
                          ``ws_path``, ``seat_config`` ... (crowd/pages.py ``match_play``).
      ``instructions_template``  the lobby's instructions page (default
                          ``"<name>/instructions.html"``).
      ``research_template``  optional partial included on the staff match page (research/match.html)
                          with ``match`` and ``log``: pictures of the match (None: none).
      ``monitor_script``  optional static path of a script the research pages load after
                          static/gt/monitor.js: it sets ``GTMonitor.GAME_CHARTS[<id>] = {head,
                          row(group), charts, draw(prefix, groups), board(b)}`` (the score table's
                          columns, the charts, the replay board's drawing). Without it the pages
                          show the counts and the raw board.
      ``prewarm``         optional ``"module:function"`` called as ``fn(match, role)`` before the
                          game page renders (e.g. render the images the page will ask for).
      ``warm_up``         optional ``"module:function"`` called as ``fn()`` by a process that is about to
                          play the game's rounds (the agent worker, at start-up, for the games of
                          the agents it serves: agents/registry.py ``warm_up_for_worker``; a web
                          process, in the background, when it first serves a participant of a batch
                          of the game: :meth:`GameSpec.warm_up_soon`, crowd/lobby.py): what the
                          game imports on first use rather than at import (colour: colour-science,
                          about 1.5 s of CPU, games/colors/content.py) is then loaded before the first
                          turn, or the pairing that makes the match's content, rather than inside it.
      ``urls``            optional module (``".urls"``) whose ``urlpatterns`` the site includes at
                          its root: the game's own endpoints.
      ``demo_batches``    batches ``manage.py gt_demo`` creates so a newcomer can play at once: each
                          a dict of Batch fields (``slug``, ``title``, ``pairing``, ``agents``,
                          ``human_roles``, ``config``, ...; the game id is added), created only
                          when its agents are registered.
    """

    id: str
    title: str
    package: str
    default_config: dict = field(default_factory=dict)
    extra_config: dict = field(default_factory=dict)
    config_choices: dict = field(default_factory=dict)
    exports: dict = field(default_factory=dict)
    compare_roles: tuple = ()
    bonus_kinds: dict = field(default_factory=dict)
    doc_page: str | None = None
    play_template: str | None = None
    instructions_template: str | None = None
    research_template: str | None = None
    monitor_script: str | None = None
    prewarm: str | None = None
    warm_up: str | None = None
    urls: str | None = None
    demo_batches: tuple = ()

    def __post_init__(self):
        name = self.name
        if self.play_template is None:
            object.__setattr__(self, "play_template", f"{name}/play.html")
        if self.instructions_template is None:
            object.__setattr__(self, "instructions_template", f"{name}/instructions.html")

    @property
    def name(self) -> str:
        """The package's last name (``"colors"``): its template and static folder."""
        return self.package.rsplit(".", 1)[-1]

    def resolve(self, ref: str) -> Any:
        """``"module:attr"`` of this spec (a leading dot: inside the game's package)."""
        return _resolve(ref, self.package)

    def warm_up_soon(self) -> threading.Thread | None:
        """Run the game's ``warm_up`` in a background thread of this process, once per process
        (the first call starts it; later calls, and a game without one, return None at once). A web
        process calls it when it serves a participant of a batch of this game (crowd/lobby.py), so
        the pairing that makes the match's content (colour: colour-science, about 1.5 s of CPU,
        under the batch row's lock) does not pay the import: a person waits in the lobby seconds
        before a partner comes. A computation that needs the module before the thread is done waits
        on Python's import lock, as it would have waited for its own import."""
        if not self.warm_up:
            return None
        with _warming_lock:
            if self.package in _warming:
                return None
            _warming.add(self.package)

        def run() -> None:
            try:
                self.resolve(self.warm_up)()
            except Exception:   # left to the first use, which raises where it matters
                logging.getLogger(__name__).exception("game %s could not be warmed up", self.package)

        thread = threading.Thread(target=run, name=f"gt-warm-up-{self.name}", daemon=True)
        thread.start()
        return thread

    # ------------------------------------------------------------------ the package's modules
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

    @cached_property
    def monitor(self) -> ModuleType | None:
        return _optional_module(f"{self.package}.monitor")

    @cached_property
    def onboarding(self) -> ModuleType | None:
        return _optional_module(f"{self.package}.onboarding")

    @cached_property
    def llm(self) -> ModuleType | None:
        """How a language model plays the game's roles (``ROLES``: role -> :class:`games.llm.LlmRole`
        of ``<package>.llm``); None when the game has no LLM adapter."""
        return _optional_module(f"{self.package}.llm")

    def llm_role(self, role: str):
        """The :class:`games.llm.LlmRole` of ``role``, or None."""
        return getattr(self.llm, "ROLES", {}).get(role) if self.llm is not None else None

    @property
    def roles(self) -> tuple[str, ...]:
        return tuple(self.rules.ROLES)

    # ------------------------------------------------------------------ declared hooks
    def export_writers(self) -> dict[str, Callable]:
        """Format name -> writer function (imported)."""
        return {name: self.resolve(fmt.writer) for name, fmt in self.exports.items()}

    def config_schema(self) -> dict[str, tuple[type, ...]]:
        """The settings a batch of this game accepts, with their types (``default_config``'s keys
        typed by their defaults, then ``extra_config``)."""
        schema: dict[str, tuple[type, ...]] = {}
        for key, value in self.default_config.items():
            schema[key] = (bool,) if isinstance(value, bool) else (int,) if isinstance(value, int) else (type(value),)
        schema.update(self.extra_config)
        return schema
