"""The model-agent configuration file: which model agents exist, read without torch.

The file is TOML (stdlib ``tomllib``): ``models/models.toml`` in the project, or the path in the
``GT_MODELS_FILE`` environment variable. A missing default file means "no model agents"; a
``GT_MODELS_FILE`` that does not exist is an error. Each ``[[agent]]`` table declares one agent
(docs/agents.md, "The configuration file", has the full reference)::

    [[agent]]
    name = "colors_neural_listener"     # unique among all agents; what batches name
    kind = "torch"                      # "torch" (a model family, the default) or "http" (the bridge)
    game_id = "colors_v1"
    role = "listener"
    family = "games.colors.neural.agents:NeuralLiteralListener"   # module:Class with load/act_batch
    family_key = "colors_l0"            # agents with one key share one loaded model and one queue
    checkpoint = "colors/colors_neural_listener.pt"   # relative to this file's folder (or absolute)
    device = "cpu"                      # "cpu", "cuda" or "cuda:N"
    batch_size = 32                     # turns per act_batch call, at most
    wait_ms = 5                         # how long the first turn of a batch waits for more
    threads = 0                         # torch's CPU threads in the worker (0: torch's default)
    timeout_s = 10                      # then the watchdog's fallback acts and the person is told
    fallback = "colors_literal_listener"   # a rule agent of the same game and role (required)
    version = "l0-2026-11-23"           # recorded on every seat the model plays
    description = "..."
    options = {}                        # keyword arguments of the family's load(), passed as they are
    # sha256 = "…"                      # optional: the worker refuses a checkpoint with another hash

    [[agent]]
    name = "colors_remote_listener"
    kind = "http"
    game_id = "colors_v1"
    role = "listener"
    url = "http://127.0.0.1:9000/act"   # the bridge POSTs the seat's view here (agents/bridge.py)
    headers = { Authorization = "Bearer ..." }
    timeout_s = 5
    fallback = "colors_literal_listener"
    version = "remote-1"

    [[agent]]
    name = "colors_llm_listener"
    kind = "openai"                     # a chat model behind an OpenAI-compatible endpoint (agents/llm/)
    game_id = "colors_v1"
    role = "listener"                   # the game must have an LLM adapter for it (games/<game>/llm.py)
    base_url = "http://gpu-box:8000/v1" # vLLM, TGI, Ollama, a hosted API
    model = "Qwen/Qwen2.5-VL-7B-Instruct"   # the model name the server serves
    api_key_env = "VLLM_API_KEY"          # the NAME of the environment variable holding the key; ""
                                        # for an endpoint that needs none (vLLM without --api-key)
    timeout_s = 20                      # the whole turn: waiting for a slot, retries, repair, pacing
    fallback = "colors_literal_listener"
    version = "qwen-vl-7b-2026-11"
    # optional: temperature, top_p, max_tokens, seed, images (bool), stream (bool),
    # max_concurrency (calls in flight to base_url+model, shared by every worker), prompt (a
    # template file, relative to this file), price_in / price_out (USD per million tokens),
    # reply_pacing = { min_s = 2, chars_per_s = 6, jitter = 0.3, max_s = 30 }

Every entry becomes an :class:`agents.base.AgentSpec` in ``agents.registry.all_agents()`` (so the
batch builder, ``simulate``, the agent docs and the lobby see it): a torch agent's queue is
``model.<family_key>`` (served by ``manage.py model_worker --family <family_key>``) and its device
``gpu`` unless it runs on the CPU; an http agent is a CPU agent on its own ``agent.<name>`` queue,
served by ``manage.py agent_worker`` like the rule agents; so is an openai agent (``agent.<name>``;
the worker's thread pool then defaults to its endpoints' ``max_concurrency`` together, 32 to 256
threads: its turns wait on the network). Any problem is a
:class:`ModelConfigError` (an ``ImproperlyConfigured``) naming the file, the entry and the field;
``agents.apps`` checks the file when Django starts, so a bad file stops every process at start-up.

An openai agent's ``api_key_env`` names a variable every process that reads this file must have
(a missing or empty one is an error at start-up, naming the entry, the field and the variable);
its value is read by the agent only (agents/llm/agent.py), never stored in the configuration,
logged, recorded or exported. ``api_key_env = ""`` declares an endpoint that needs no key.

Nothing here imports torch or a family's module (the web process reads this file): the family's
module is only looked up (``importlib.util.find_spec``); the worker imports it.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import tomllib
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

from agents.base import AgentSpec
from games.registry import GAMES
from groundtalk_web import env

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_FILE = ROOT / "models" / "models.toml"
ENV = "GT_MODELS_FILE"
KINDS = ("torch", "http", "openai")
NAME_RE = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
KEY_RE = re.compile(r"^[a-z][a-z0-9_-]{0,63}$")
CLASS_RE = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
DEVICE_RE = re.compile(r"^(cpu|cuda|cuda:\d+)$")
SHA_RE = re.compile(r"^[0-9a-f]{64}$")
ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")

COMMON = {"name", "kind", "game_id", "role", "timeout_s", "fallback", "version", "description"}
TORCH_KEYS = COMMON | {"family", "family_key", "checkpoint", "device", "batch_size", "wait_ms", "threads", "options",
                      "sha256"}
HTTP_KEYS = COMMON | {"url", "headers"}
OPENAI_KEYS = COMMON | {"base_url", "model", "api_key_env", "temperature", "top_p", "max_tokens", "seed", "images",
                        "stream", "max_concurrency", "prompt", "price_in", "price_out", "reply_pacing"}
PACING_KEYS = {"min_s", "chars_per_s", "jitter", "max_s"}
KEYS = {"torch": TORCH_KEYS, "http": HTTP_KEYS, "openai": OPENAI_KEYS}
# What agents sharing one family_key must agree on (one loaded model, one batcher).
SHARED = ("family", "checkpoint", "device", "batch_size", "wait_ms", "threads", "options", "sha256")


class ModelConfigError(ImproperlyConfigured):
    """A bad model configuration file; the message names the file, the entry and the field."""


@dataclass(frozen=True)
class ModelAgentConfig:
    """One ``[[agent]]`` entry, checked. ``checkpoint`` is resolved against the file's folder."""

    name: str
    kind: str
    game_id: str
    role: str
    timeout_s: float
    fallback: str
    version: str
    description: str = ""
    # torch
    family: str = ""
    family_key: str = ""
    checkpoint: str = ""
    device: str = "cpu"
    batch_size: int = 16
    wait_ms: float = 5.0
    threads: int = 0
    options: dict = field(default_factory=dict)
    sha256: str = ""
    # http
    url: str = ""
    headers: dict = field(default_factory=dict)
    # openai (agents/llm/): the endpoint, the model it serves, the NAME of the key's variable
    base_url: str = ""
    model: str = ""
    api_key_env: str = ""
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    images: bool = False
    stream: bool = False
    max_concurrency: int = 0            # 0: no limit
    prompt: str = ""                    # a template file of the agent's own (resolved), else the game's
    price_in: float | None = None       # USD per million prompt tokens
    price_out: float | None = None      # USD per million completion tokens
    reply_pacing: dict = field(default_factory=dict)   # min_s, chars_per_s, jitter, max_s; {}: none

    @property
    def queue(self) -> str | None:
        return f"model.{self.family_key}" if self.kind == "torch" else None

    def llm_role(self):
        """The game's adapter of this agent's role (:class:`games.llm.LlmRole`), or None."""
        return GAMES[self.game_id].llm_role(self.role) if self.game_id in GAMES else None

    @cached_property
    def prompt_text(self) -> str:
        """An openai agent's prompt template: its own ``prompt`` file, else its role's default."""
        override = Path(self.prompt) if self.prompt else None
        return self.llm_role().template_text(override)

    @property
    def prompt_sha256(self) -> str:
        return hashlib.sha256(self.prompt_text.encode("utf-8")).hexdigest()

    @property
    def endpoint(self) -> str:
        """An openai agent's ``base_url`` without its query string (which may carry a key)."""
        parts = urlsplit(self.base_url)
        return f"{parts.scheme}://{parts.netloc}{parts.path}"

    def seat_record(self) -> dict:
        """What a seat this agent plays records at match creation (live.models.Seat.agent_model);
        the worker adds the checkpoint's sha256 it actually loaded when the model acts."""
        if self.kind == "openai":
            return {"kind": "openai", "version": self.version, "base_url": self.endpoint, "model": self.model,
                    "prompt_sha256": self.prompt_sha256, "adapter_version": self.llm_role().version}
        if self.kind == "http":
            parts = urlsplit(self.url)
            # the address without its query string (which may carry a key)
            return {"kind": "http", "version": self.version, "endpoint": f"{parts.scheme}://{parts.netloc}{parts.path}"}
        record = {"kind": "torch", "version": self.version, "family": self.family, "family_key": self.family_key,
                  "checkpoint": self.checkpoint, "device": self.device}
        if self.sha256:
            record["checkpoint_sha256"] = self.sha256
        return record


def models_file() -> tuple[Path, bool]:
    """The configuration file's path and whether it was named explicitly (``GT_MODELS_FILE``)."""
    named = env.load().GT_MODELS_FILE.strip()
    return (Path(named), True) if named else (DEFAULT_FILE, False)


def read_entries(path: Path | None = None) -> tuple[Path, list[dict]]:
    """The raw ``[[agent]]`` tables of the file (none when the default file is absent)."""
    explicit = path is not None
    if path is None:
        path, explicit = models_file()
    if not path.is_file():
        if explicit:
            raise ModelConfigError(f"The model configuration file {path} ({ENV}) does not exist.")
        return path, []
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ModelConfigError(f"The model configuration file {path} is not valid TOML: {exc}") from None
    unknown = set(data) - {"agent"}
    if unknown:
        raise ModelConfigError(f"{path}: unknown top-level key(s) {', '.join(sorted(unknown))}; "
                               f"declare agents as [[agent]] tables.")
    entries = data.get("agent", [])
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise ModelConfigError(f"{path}: 'agent' must be an array of tables ([[agent]]).")
    return path, entries


def parse(path: Path | None = None, *, rule_agents: dict | None = None) -> list[ModelAgentConfig]:
    """Every entry of the file, checked (see the module docstring); ``rule_agents`` (name -> AgentSpec,
    the games' own agents) checks fallbacks and name clashes, when given."""
    path, entries = read_entries(path)
    configs = [_entry(path, i, raw) for i, raw in enumerate(entries, 1)]
    names: set[str] = set()
    families: dict[str, ModelAgentConfig] = {}
    endpoints: dict[tuple[str, str], ModelAgentConfig] = {}
    for i, cfg in enumerate(configs, 1):
        where = f"{path}: agent #{i} ({cfg.name})"
        if cfg.name in names:
            raise ModelConfigError(f"{where}: the name {cfg.name!r} is declared twice.")
        names.add(cfg.name)
        if cfg.kind == "torch":
            first = families.setdefault(cfg.family_key, cfg)
            for key in SHARED:
                if getattr(first, key) != getattr(cfg, key):
                    raise ModelConfigError(
                        f"{where}: shares family_key {cfg.family_key!r} with {first.name!r} but its {key} differs "
                        f"({getattr(cfg, key)!r} vs {getattr(first, key)!r}); agents of one family share one loaded "
                        f"model: give it another family_key.")
        if cfg.kind == "openai":
            first = endpoints.setdefault((cfg.endpoint, cfg.model), cfg)
            if first.max_concurrency != cfg.max_concurrency:
                raise ModelConfigError(
                    f"{where}: max_concurrency {cfg.max_concurrency or '(none)'} differs from "
                    f"{first.max_concurrency or '(none)'} of {first.name!r}, which calls the same model at the same "
                    f"endpoint; the limit is one for both (calls in flight to {cfg.model} at {cfg.endpoint}).")
        if rule_agents is not None:
            _check_against_registry(where, cfg, rule_agents)
    return configs


def _entry(path: Path, index: int, raw: dict) -> ModelAgentConfig:
    name = raw.get("name")
    where = f"{path}: agent #{index}" + (f" ({name})" if isinstance(name, str) else "")

    def fail(key: str, why: str):
        raise ModelConfigError(f"{where}: {key} {why}")

    def text(key: str, *, required: bool = True, default: str = "") -> str:
        value = raw.get(key, None)
        if value is None:
            if required:
                fail(key, "is missing.")
            return default
        if not isinstance(value, str) or (required and not value.strip()):
            fail(key, f"must be a non-empty string, not {value!r}.")
        return value.strip()

    def number(key: str, default, *, lo: float, whole: bool = False, lo_open: bool = False):
        value = raw.get(key, default)
        if value is None:
            fail(key, "is missing.")
        ok_type = isinstance(value, int) if whole else isinstance(value, (int, float))
        if isinstance(value, bool) or not ok_type or value != value or value in (float("inf"), float("-inf")):
            fail(key, f"must be a {'whole number' if whole else 'number'}, not {value!r}.")
        if value < lo or (lo_open and value == lo):
            fail(key, f"must be {'more than' if lo_open else 'at least'} {lo:g}, not {value!r}.")
        return value

    kind = raw.get("kind", "torch")
    if kind not in KINDS:
        fail("kind", f"must be one of {', '.join(KINDS)}, not {kind!r}.")
    unknown = set(raw) - KEYS[kind]
    if unknown:
        article = "an" if kind == "openai" else "a"
        raise ModelConfigError(f"{where}: unknown key(s) for {article} {kind} agent: {', '.join(sorted(unknown))}.")
    name = text("name")
    if not NAME_RE.match(name):
        fail("name", f"must be lower-case letters, digits and _ (starting with a letter, at most 64), not {name!r}.")
    common = dict(name=name, kind=kind, game_id=text("game_id"), role=text("role"),
                  timeout_s=float(number("timeout_s", None, lo=0, lo_open=True)), fallback=text("fallback"),
                  version=text("version"), description=text("description", required=False))
    if kind == "http":
        url = text("url")
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            fail("url", f"must be an http:// or https:// address, not {url!r}.")
        headers = raw.get("headers", {})
        if not isinstance(headers, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                                    for k, v in headers.items()):
            fail("headers", "must be a table of strings (name = \"value\").")
        return ModelAgentConfig(**common, url=url, headers=dict(headers))
    if kind == "openai":
        return _openai_entry(path, raw, common, fail, text, number)
    family = text("family")
    if not CLASS_RE.match(family):
        fail("family", f"must name a class as 'package.module:Class', not {family!r}.")
    module = family.split(":")[0]
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        fail("family", f"names the module {module!r}, which cannot be found.")
    family_key = text("family_key", required=False, default=name)
    if not KEY_RE.match(family_key):
        fail("family_key", f"must be lower-case letters, digits, _ and - (at most 64), not {family_key!r}.")
    checkpoint = text("checkpoint")
    checkpoint_path = Path(checkpoint)
    if not checkpoint_path.is_absolute():
        checkpoint_path = (path.parent / checkpoint_path).resolve()
    device = text("device", required=False, default="cpu")
    if not DEVICE_RE.match(device):
        fail("device", f"must be 'cpu', 'cuda' or 'cuda:N', not {device!r}.")
    options = raw.get("options", {})
    if not isinstance(options, dict):
        fail("options", "must be a table (keyword arguments of the family's load()).")
    sha256 = text("sha256", required=False).lower()
    if sha256 and not SHA_RE.match(sha256):
        fail("sha256", f"must be 64 hexadecimal digits, not {raw.get('sha256')!r}.")
    return ModelAgentConfig(**common, family=family, family_key=family_key, checkpoint=str(checkpoint_path),
                            device=device, batch_size=int(number("batch_size", 16, lo=1, whole=True)),
                            wait_ms=float(number("wait_ms", 5.0, lo=0)),
                            threads=int(number("threads", 0, lo=0, whole=True)), options=dict(options), sha256=sha256)


def _openai_entry(path: Path, raw: dict, common: dict, fail, text, number) -> ModelAgentConfig:
    """The fields of a ``kind = "openai"`` entry (agents/llm/), checked."""
    base_url = text("base_url").rstrip("/")
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        fail("base_url", f"must be an http:// or https:// address (e.g. http://gpu-box:8000/v1), not {base_url!r}.")
    key_env = raw.get("api_key_env")
    if key_env is None:
        fail("api_key_env", "is missing: name the environment variable that holds the endpoint's key, "
                            "or write api_key_env = \"\" for an endpoint that needs none.")
    if not isinstance(key_env, str) or (key_env and not ENV_NAME_RE.match(key_env)):
        fail("api_key_env", f"must be the NAME of an environment variable (letters, digits, _), not {key_env!r}; "
                            f"the key itself never goes in this file.")
    if key_env and not os.environ.get(key_env):
        fail("api_key_env", f"names the environment variable {key_env}, which is not set (or empty) in this "
                            f"process; set it wherever GroundTalk runs, or write api_key_env = \"\" for an "
                            f"endpoint that needs no key.")

    def optional(key: str, *, lo: float, hi: float | None = None, whole: bool = False, lo_open: bool = False):
        if raw.get(key) is None:
            return None
        value = number(key, None, lo=lo, whole=whole, lo_open=lo_open)
        if hi is not None and value > hi:
            fail(key, f"must be at most {hi:g}, not {value!r}.")
        return value

    def flag(key: str) -> bool:
        value = raw.get(key, False)
        if not isinstance(value, bool):
            fail(key, f"must be true or false, not {value!r}.")
        return value

    seed = raw.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        fail("seed", f"must be a whole number, not {seed!r}.")
    prompt = text("prompt", required=False)
    if prompt:
        prompt_path = Path(prompt)
        if not prompt_path.is_absolute():
            prompt_path = (path.parent / prompt_path).resolve()
        if not prompt_path.is_file():
            fail("prompt", f"names {prompt_path}, which is not a file (a prompt template, relative to this file).")
        try:
            prompt_path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            fail("prompt", f"names {prompt_path}, which cannot be read as UTF-8 text: {exc}")
        prompt = str(prompt_path)
    pacing = raw.get("reply_pacing", {})
    if not isinstance(pacing, dict):
        fail("reply_pacing", "must be a table: { min_s = 2, chars_per_s = 6, jitter = 0.3 }.")
    unknown = set(pacing) - PACING_KEYS
    if unknown:
        fail("reply_pacing", f"has unknown key(s) {', '.join(sorted(unknown))}; known: {', '.join(sorted(PACING_KEYS))}.")
    checked_pacing = {}
    if pacing:
        for key, default, lo, lo_open in (("min_s", 0.0, 0, False), ("chars_per_s", None, 0, True),
                                          ("jitter", 0.0, 0, False)):
            value = pacing.get(key, default)
            if value is None:
                fail("reply_pacing", f"needs chars_per_s (a person's typing speed, e.g. 6).")
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or \
                    value < lo or (lo_open and value == lo) or value == float("inf"):
                fail("reply_pacing", f"{key} must be a number {'more than' if lo_open else 'at least'} {lo}, "
                                     f"not {value!r}.")
            checked_pacing[key] = float(value)
        if checked_pacing["jitter"] >= 1:
            fail("reply_pacing", f"jitter must be less than 1 (a fraction: 0.3 draws 70% to 130%), "
                                 f"not {checked_pacing['jitter']!r}.")
        if "max_s" in pacing:
            max_s = pacing["max_s"]
            if isinstance(max_s, bool) or not isinstance(max_s, (int, float)) or not (0 < max_s < float("inf")) \
                    or max_s < checked_pacing["min_s"]:
                fail("reply_pacing", f"max_s must be a number of at least min_s, not {max_s!r}.")
            checked_pacing["max_s"] = float(max_s)
    max_concurrency = raw.get("max_concurrency")
    price_in, price_out = optional("price_in", lo=0), optional("price_out", lo=0)
    return ModelAgentConfig(
        **common, base_url=base_url, model=text("model"), api_key_env=key_env,
        temperature=optional("temperature", lo=0, hi=2), top_p=optional("top_p", lo=0, hi=1, lo_open=True),
        max_tokens=optional("max_tokens", lo=1, whole=True), seed=seed, images=flag("images"), stream=flag("stream"),
        max_concurrency=int(number("max_concurrency", 0, lo=1, whole=True)) if max_concurrency is not None else 0,
        prompt=prompt, price_in=None if price_in is None else float(price_in),
        price_out=None if price_out is None else float(price_out), reply_pacing=checked_pacing)


def _check_against_registry(where: str, cfg: ModelAgentConfig, rule_agents: dict) -> None:
    if cfg.game_id not in GAMES:
        raise ModelConfigError(f"{where}: game_id {cfg.game_id!r} is not a registered game; known: "
                               f"{', '.join(sorted(GAMES))}.")
    roles = GAMES[cfg.game_id].roles
    if cfg.role not in roles:
        raise ModelConfigError(f"{where}: role {cfg.role!r} is not a role of {cfg.game_id}; its roles: "
                               f"{', '.join(roles)}.")
    if cfg.kind == "openai" and cfg.llm_role() is None:
        adapted = sorted(getattr(GAMES[cfg.game_id].llm, "ROLES", {}) or {}) if GAMES[cfg.game_id].llm else []
        raise ModelConfigError(f"{where}: role {cfg.role!r} of {cfg.game_id} has no LLM adapter "
                               f"(games/<game>/llm.py, ROLES), so an openai agent cannot play it; roles with one: "
                               f"{', '.join(adapted) or '(none)'}.")
    if cfg.name in rule_agents:
        raise ModelConfigError(f"{where}: the name {cfg.name!r} is already a registered agent of "
                               f"{rule_agents[cfg.name].game_id}.")
    fallback = rule_agents.get(cfg.fallback)
    candidates = sorted(n for n, s in rule_agents.items()
                        if s.game_id == cfg.game_id and s.role == cfg.role and s.device == "cpu")
    if fallback is None or fallback.game_id != cfg.game_id or fallback.role != cfg.role or fallback.device != "cpu":
        why = "is not a registered agent" if fallback is None else (
            f"plays {fallback.game_id}/{fallback.role} on {fallback.device}")
        raise ModelConfigError(f"{where}: fallback {cfg.fallback!r} {why}; the fallback must be a rule agent of "
                               f"{cfg.game_id}/{cfg.role}: {', '.join(candidates) or '(none registered)'}.")


def agent_specs(rule_agents: dict) -> list:
    """The configured agents as :class:`agents.base.AgentSpec` (checked against ``rule_agents``)."""
    specs = []
    for cfg in parse(rule_agents=rule_agents):
        factory = {"torch": "agents.serving.family:LocalModelAgent", "http": "agents.bridge:HttpAgent",
                   "openai": "agents.llm.agent:LlmAgent"}[cfg.kind]
        specs.append(AgentSpec(
            cfg.name, cfg.game_id, cfg.role, _lazy(factory), cfg.description or _describe(cfg),
            kwargs={"config": cfg}, queue=cfg.queue, device="cpu" if cfg.device == "cpu" else "gpu",
            timeout_s=cfg.timeout_s, fallback=cfg.fallback, model=cfg))
    return specs


def _describe(cfg: ModelAgentConfig) -> str:
    if cfg.kind == "openai":
        return f"Language model {cfg.model} at {cfg.endpoint} (OpenAI-compatible), version {cfg.version}."
    if cfg.kind == "http":
        return f"Model behind an HTTP endpoint (bridge), version {cfg.version}."
    return f"Model {cfg.family} ({cfg.family_key}), version {cfg.version}."


def _lazy(path: str):
    """A factory that imports ``module:Class`` only when an agent is built (never in the web process
    for a torch agent: the worker or ``simulate`` builds it)."""

    def build(**kwargs):
        module, _, cls = path.partition(":")
        return getattr(importlib.import_module(module), cls)(**kwargs)

    build.__qualname__ = build.__name__ = path.rsplit(":", 1)[-1]
    return build
