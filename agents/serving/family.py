"""Loading a model family in a worker (or in ``simulate``): the only place, with the families'
own modules, where torch is imported.

A family is the class a torch agent's ``family`` names (docs/agents.md, "Model agents"):

* ``Family.load(checkpoint: str, device: str, **options) -> instance``: loads the weights (with
  ``torch.load(..., weights_only=True)`` where it can) onto ``device``;
* ``instance.act_batch(views: list[dict]) -> list[dict | None]``: for each view (exactly the seat's
  ``rules.view_for(state, role)``) the action a person in that seat would send, or None; one
  forward pass for the whole list;
* optionally ``instance.warmup()``; without it the worker runs ``act_batch`` on views the game
  itself produces (:func:`warmup_views`).
"""
from __future__ import annotations

import importlib
import logging
import threading
import time
from dataclasses import dataclass

from agents.checkpoints import file_sha256
from agents.model_config import ModelAgentConfig, ModelConfigError
from games.registry import get_game

log = logging.getLogger(__name__)


def family_class(cfg: ModelAgentConfig):
    """The class ``cfg.family`` names, checked for the contract's methods."""
    module_name, _, class_name = cfg.family.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ModelConfigError(f"agent {cfg.name}: family {cfg.family!r} cannot be imported: {exc}") from exc
    cls = getattr(module, class_name, None)
    if cls is None:
        raise ModelConfigError(f"agent {cfg.name}: module {module_name} has no class {class_name!r}.")
    for method in ("load", "act_batch"):
        if not callable(getattr(cls, method, None)):
            raise ModelConfigError(f"agent {cfg.name}: {cfg.family} has no {method}() (docs/agents.md, "
                                   f"'Model agents').")
    return cls


@dataclass
class LoadedFamily:
    """One loaded model: its instance, the checkpoint's hash and what loading took."""

    config: ModelAgentConfig
    instance: object
    sha256: str
    load_s: float

    def seat_record(self) -> dict:
        """The config's record, the checkpoint's sha256 and, when the family says so (an instance's
        ``data_sha256``: the training data file's hash), the data's."""
        record = {**self.config.seat_record(), "checkpoint_sha256": self.sha256}
        data = getattr(self.instance, "data_sha256", "")
        if data:
            record["data_sha256"] = data
        return record


def load_family(cfg: ModelAgentConfig) -> LoadedFamily:
    """Import the family, hash the checkpoint (refusing one that differs from a pinned ``sha256``)
    and load it on the configured device."""
    cls = family_class(cfg)
    try:
        sha = file_sha256(cfg.checkpoint)
    except OSError as exc:
        raise ModelConfigError(f"agent {cfg.name}: checkpoint {cfg.checkpoint} cannot be read: {exc}") from exc
    if cfg.sha256 and sha != cfg.sha256:
        raise ModelConfigError(f"agent {cfg.name}: checkpoint {cfg.checkpoint} has sha256 {sha}, but the "
                               f"configuration pins {cfg.sha256}.")
    if cfg.device.startswith("cuda"):
        import torch   # here: torch is the optional `models` extra, imported only where a model loads

        if not torch.cuda.is_available():
            raise ModelConfigError(f"agent {cfg.name}: device {cfg.device!r} is configured but torch sees no CUDA "
                                   f"device on this machine (torch {torch.__version__}).")
    if cfg.threads:
        import torch   # (as above)

        torch.set_num_threads(cfg.threads)   # a CPU worker beside the web, PostgreSQL and Redis
    started = time.monotonic()
    instance = cls.load(cfg.checkpoint, cfg.device, **cfg.options)
    return LoadedFamily(cfg, instance, sha, time.monotonic() - started)


def warmup_views(configs: list[ModelAgentConfig]) -> list[dict]:
    """Views a game produces for the family's seats: each agent's role at the start of a match."""
    views = []
    for cfg in configs:
        game = get_game(cfg.game_id)
        config = dict(game.default_config)
        content = game.content.generate(0, config)
        state = game.rules.initial_state(content, 0, config)
        views.append(game.rules.view_for(state, cfg.role))
    return views


def warm_up(family: LoadedFamily, configs: list[ModelAgentConfig]) -> float:
    """The warm-up pass (the family's ``warmup()``, else ``act_batch`` on game views); seconds taken."""
    started = time.monotonic()
    warm = getattr(family.instance, "warmup", None)
    if callable(warm):
        warm()
    else:
        views = warmup_views(configs)
        answers = family.instance.act_batch(views)
        if not isinstance(answers, list) or len(answers) != len(views):
            raise ModelConfigError(f"family {family.config.family}: act_batch returned {type(answers).__name__} "
                                   f"of length {len(answers) if isinstance(answers, list) else '?'} for "
                                   f"{len(views)} views; it must return one answer per view.")
    return time.monotonic() - started


# ------------------------------------------------------------------------ one agent, outside a worker
_loaded: dict[str, LoadedFamily] = {}
_lock = threading.Lock()


class LocalModelAgent:
    """A torch model agent as a plain ``act(view)`` agent, for ``simulate`` and the tests: loads its
    family once per process (shared by the agents of one family key) and calls ``act_batch`` with
    one view. The model worker does not use this: it batches (agents/serving/worker.py)."""

    def __init__(self, config: ModelAgentConfig):
        self.config = config
        with _lock:
            if config.family_key not in _loaded:
                _loaded[config.family_key] = load_family(config)
        self.family = _loaded[config.family_key]

    def act(self, view: dict) -> dict | None:
        return self.family.instance.act_batch([view])[0]

    def seat_record(self) -> dict:
        """What ``agents.services.agent_take_turn`` records on the seat after this agent acted."""
        return self.family.seat_record()
