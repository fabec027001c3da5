"""Every setting GroundTalk reads from the environment: one typed object, read once.

``Env`` (pydantic-settings) declares each variable with its type, bounds, default and meaning;
``groundtalk_web/settings.py`` calls :func:`load` once and derives Django's settings from it. Code
that must see a variable changed at run time (the crowd platforms' endpoints and token, which tests
point at local recorders, and the model configuration file) calls :func:`load` when it needs one.
A bad value stops the process with ``ImproperlyConfigured`` naming the variable (the value is not
repeated for the keys). docs/settings.md is generated from this class
(``python -m groundtalk_web.env --write-docs``; ``--check`` fails when it is stale).

Values are read as they always were: a whole number or a number may be blank (its default), a flag
is on for ``1``, ``true``, ``yes`` or ``on`` (any case) and off for anything else, lists are
comma-separated, and text is taken as given (the two keys are stripped).
"""
from __future__ import annotations

import functools
import math
import os
import re
import sys
from pathlib import Path
from typing import Annotated, Any, Literal

import annotated_types
from django.core.checks.security.base import (SECRET_KEY_INSECURE_PREFIX, SECRET_KEY_MIN_LENGTH,
                                              SECRET_KEY_MIN_UNIQUE_CHARACTERS)
from django.core.exceptions import ImproperlyConfigured
from pydantic import BeforeValidator, Field, SecretStr, ValidationError, ValidationInfo, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "settings.md"

TRUE_WORDS = frozenset({"1", "true", "yes", "on"})
#: variables read outside this object: by run.sh and docker-compose.yml, and by the game SDK
SHELL_VARIABLES = frozenset({"PORT", "WORKERS", "GT_DEMO_ADMIN", "GT_WEB_BIND", "GT_NET_SUBNET", "GT_NET_GATEWAY",
                             "GT_MODEL_FAMILY", "GT_EXTRAS", "GT_GAME_PACKAGES"})
#: the repository's public keys: refused outside the embedded demo
PUBLIC_KEYS = frozenset({"", "dev-only-insecure-key-change-me", "change-me"})
DEMO_SECRET_KEY = "dev-only-insecure-key-change-me"
NEW_KEY = "make one with: python -c 'import secrets; print(secrets.token_urlsafe(50))'"
MTURK_ORIGINS = ["https://worker.mturk.com", "https://workersandbox.mturk.com"]
ORIGIN = re.compile(r"https?://[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]{1,5})?")


def _flag(value: Any) -> Any:
    return value.strip().lower() in TRUE_WORDS if isinstance(value, str) else value


def _strip(value: Any) -> Any:
    return value.strip() if isinstance(value, str) else value


def _comma_list(value: Any) -> Any:
    return [item for item in value.split(",") if item] if isinstance(value, str) else value


def _frame_ancestors(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    origins = value.replace(",", " ").split()
    return [] if origins == ["none"] else origins


def _gc_threshold(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    spec = value.strip()
    if spec == "default":
        return None
    try:
        thresholds = tuple(int(part) for part in spec.split(","))
    except ValueError:
        thresholds = ()
    if len(thresholds) != 3 or min(thresholds) < 1:
        raise ValueError(f"GT_GC_THRESHOLD must be three positive integers, not {spec!r}")
    return thresholds


#: on for 1/true/yes/on (any case, spaces around ignored), off for anything else, "" included
Flag = Annotated[bool, BeforeValidator(_flag)]
Key = Annotated[SecretStr, BeforeValidator(_strip)]
CommaList = Annotated[list[str], NoDecode, BeforeValidator(_comma_list)]


def weak_secret_key(key: str) -> bool:
    """What ``manage.py check --deploy`` calls weak (security.W009): fewer than 50 characters, fewer
    than 5 different ones, or the ``django-insecure-`` prefix of ``startproject``'s keys."""
    return (len(key) < SECRET_KEY_MIN_LENGTH or len(set(key)) < SECRET_KEY_MIN_UNIQUE_CHARACTERS
            or key.startswith(SECRET_KEY_INSECURE_PREFIX))


class Env(BaseSettings):
    """The environment of a GroundTalk process (web server, model worker, ``manage.py``)."""

    model_config = SettingsConfigDict(case_sensitive=True, extra="ignore", env_file=None)

    # --- where it runs: the embedded demo (neither URL) or the full stack (both) -------------------
    DATABASE_URL: str = Field("", description="PostgreSQL (`postgres://…`); unset: SQLite (the embedded demo)")
    REDIS_URL: str = Field("", description="Redis for the channel layer, Celery and the rate limits; unset: in-memory")
    SQLITE_PATH: str | None = Field(None, description="the SQLite file without `DATABASE_URL`",
                                    json_schema_extra={"shown": "`db.sqlite3` in the repository"})
    GT_DB_HEALTH_CHECKS: Flag = Field(False, description="Django's connection health check (`SELECT 1`) before a "
                                                         "connection's first query of each call (docs/bench.md)")
    GT_TEST_DB_NAME: str = Field("", description="test runs: the name of this run's PostgreSQL test database (test.sh)")
    MEDIA_ROOT: Path | None = Field(None, description="where uploaded and generated files are kept",
                                    json_schema_extra={"shown": "`var/media` in the repository"})
    LOG_LEVEL: Literal["CRITICAL", "FATAL", "ERROR", "WARN", "WARNING", "INFO", "DEBUG", "NOTSET"] = Field(
        "WARNING", description="the root logger's level (`INFO` adds uvicorn's access log lines)")

    # --- keys and the public face ---------------------------------------------------------------------
    SECRET_KEY: Key = Field(SecretStr(""), description="signs sessions and one-time codes; required (strong, "
                            "its own) when `DATABASE_URL` or `REDIS_URL` is set",
                            json_schema_extra={"shown": "none (embedded: a public development key)"})
    GT_PSEUDONYM_KEY: Key = Field(SecretStr(""), description="turns worker ids into exports' pseudonyms (HMAC); "
                                  "required, and not `SECRET_KEY`, when `DATABASE_URL` or `REDIS_URL` is set",
                                  json_schema_extra={"shown": "none (embedded: `SECRET_KEY`)"})
    DEBUG: Flag = Field(False, description="Django's debug pages (settings and tracebacks to anyone who reaches "
                                           "the server): only on a machine of your own")
    ALLOWED_HOSTS: CommaList = Field(["localhost", "127.0.0.1", "[::1]"],
                                     description="host names the server answers to")
    CSRF_TRUSTED_ORIGINS: CommaList = Field([], description="origins trusted for form posts besides the host's own")
    HOST: str = Field("", description="the address the server listens on (run.sh passes it to uvicorn; demo links "
                                      "on the full stack need a loopback one)",
                      json_schema_extra={"shown": "`127.0.0.1` (run.sh)"})
    GT_DEMO: Flag = Field(False, description="full stack: load the demo batches and open their links, only on a "
                                             "loopback `HOST` and only from this machine")
    GT_ALLOW_PUBLIC_DEMO: Flag = Field(False, description="let run.sh listen on a public `HOST` although DEBUG is "
                                                          "on or admin/admin exists (`manage.py gt_listen_check`)")
    GT_HTTPS: Flag = Field(False, description="served over HTTPS by a proxy: secure cookies, HSTS, "
                                              "`X-Forwarded-Proto` trusted, http → https",
                           json_schema_extra={"shown": "`0` (`1` in docker-compose.yml)"})
    GT_SSL_REDIRECT: Flag = Field(True, description="with `GT_HTTPS`: redirect plain HTTP to HTTPS")
    GT_HSTS_SECONDS: int = Field(31536000, ge=0, description="with `GT_HTTPS`: HSTS max-age")
    GT_HSTS_INCLUDE_SUBDOMAINS: Flag = Field(True, description="with `GT_HTTPS`: HSTS includeSubDomains")
    GT_HSTS_PRELOAD: Flag = Field(False, description="with `GT_HTTPS`: HSTS preload (the domain owner's decision)")
    FORWARDED_ALLOW_IPS: str = Field("", description="the proxies whose X-Forwarded-For uvicorn believes; `*` "
                                                     "is refused outside the embedded demo",
                                     json_schema_extra={"shown": "uvicorn's: `127.0.0.1`"})
    GT_FRAME_ANCESTORS: Annotated[list[str], NoDecode, BeforeValidator(_frame_ancestors)] = Field(
        MTURK_ORIGINS, description="origins (space- or comma-separated) that may frame the crowd pages; "
                                   "`none`: nobody")

    # --- agents and Celery --------------------------------------------------------------------------
    GT_AGENT_MODE: Literal["celery", "inprocess"] | None = Field(
        None, description="where agent turns run: model workers on Celery queues, or a thread pool in the server",
        json_schema_extra={"shown": "`celery` on the full stack, `inprocess` embedded"})
    CELERY_BROKER_URL: str | None = Field(None, description="Celery's broker",
                                          json_schema_extra={"shown": "`REDIS_URL`, else `memory://`"})
    GT_TASK_VISIBILITY_S: int = Field(120, ge=1, description="seconds before a task taken by a killed worker "
                                                             "goes back to its queue")
    GT_WORKER_TTL_S: float = Field(20.0, ge=6, description="seconds without a heartbeat before a queue counts as "
                                                          "having no worker (workers beat every 5 s)")
    GT_AGENT_TIMEOUT_S: float = Field(0.0, ge=0, description="a cap on every agent's timeout before its fallback "
                                                             "acts; `0`: each agent's own")
    GT_MODELS_FILE: str = Field("", description="the model agents' configuration file",
                                json_schema_extra={"shown": "`models/models.toml`"})
    GT_MODEL_SERVER_PORT: int = Field(8765, ge=1, le=65535,
                                      description="the embedded mode's model server (`manage.py model_server`, "
                                                  "started by run.sh) listens on 127.0.0.1 at this port; the web "
                                                  "process sends it the torch agents' turns there")
    GT_CODRAW_ART_DIR: str = Field("", description="a folder of the original Abstract Scenes clip-art "
                                                              "PNGs for the CoDraw page (docs/games/codraw_ui.md)")

    # --- the live matches ------------------------------------------------------------------------------
    GT_PARTNER_GONE_S: int = Field(60, ge=0, description="seconds after a partner's connection drops before the "
                                                        "other player may end the game")
    GT_PRESENCE_S: int = Field(8, ge=2, description="seconds without a poll after which a waiting worker is not "
                                                    "paired (and is asked \"are you still there?\")")
    GT_SEAT_GRACE_S: int = Field(15, ge=0, description="seconds a paired seat's page may take to connect before it "
                                                       "counts as gone; `0`: never")
    GT_STATE_CACHE: int = Field(2000, ge=0, description="matches whose latest snapshot each server process keeps")
    GT_ASYNC_PG_POOL: int = Field(16, ge=1, description="PostgreSQL connections of the event loop's pool per "
                                                        "server process")
    GT_BROADCAST_SNAPSHOT_MAX: int = Field(32 * 1024, ge=0, description="bytes of a match state that an action's "
                                                                        "broadcast carries to the other server "
                                                                        "processes; larger ones are not sent")
    GT_HTTP_THREADS: int = Field(8, ge=1, description="threads (and database connections) for HTTP requests "
                                                      "per server process")
    GT_DB_THREADS: int = Field(8, ge=2, description="threads (and database connections) for the websockets' "
                                                    "database calls and the watchdog per server process")
    GT_WATCHDOG_S: float = Field(0.5, ge=0, description="seconds between the watchdog's sweeps for stuck "
                                                        "matches; `0`: off in this process")
    GT_HTTP_DB_WAIT_S: float = Field(10.0, ge=0, description="seconds a page waits for an unreachable database "
                                                             "before the \"one moment\" page")
    GT_REDIS_POOL: int = Field(1000, ge=1, description="Redis connections of the channel layer per server process")
    GT_LAYER_SHARDS: int = Field(8, ge=1, le=64, description="publish lanes of the channel layer per server process: "
                                 "the same Redis listed this many times, each shard publishing one message at a time "
                                 "(docs/bench.md, issue 22)")
    GT_GC_THRESHOLD: Annotated[tuple[int, int, int] | None, NoDecode, BeforeValidator(_gc_threshold)] = Field(
        (50000, 20, 10), description="the server's garbage-collector thresholds (docs/bench.md); `default`: "
                                     "CPython's, and no freeze",
        json_schema_extra={"shown": "`50000,20,10`"})

    # --- rate limits (docs/operations.md, "Rate limits"; a rate of 0 turns one off) ----------------
    GT_WS_MAX_FRAME: int = Field(8192, ge=1, description="bytes of one websocket message")
    GT_WS_RATE: float = Field(8.0, ge=0, description="actions per second per seat, sustained")
    GT_WS_BURST: int = Field(16, ge=1, description="actions per seat in a burst")
    GT_WS_RESUME_RATE: int = Field(2, ge=0, description="resumes per second per seat")
    GT_WS_RESUME_BURST: int = Field(5, ge=1, description="resumes per seat in a burst")
    GT_WS_PING_RATE: int = Field(5, ge=0, description="pings per second per seat")
    GT_WS_PING_BURST: int = Field(20, ge=1, description="pings per seat in a burst")
    GT_WS_FRAME_RATE: int = Field(50, ge=1, description="frames of any kind per second per connection; beyond "
                                                        "it the socket is closed (4008)")
    GT_WS_FRAME_BURST: int = Field(200, ge=1, description="frames per connection in a burst")
    GT_RL_ENTRY_PER_MIN: int = Field(300, ge=0, description="entry links per minute per client address")
    GT_RL_ENTRY_BURST: int = Field(100, ge=1, description="entry links per address in a burst")
    GT_RL_STEP_PER_MIN: int = Field(600, ge=0, description="consent/ready/leave posts per minute per address")
    GT_RL_STEP_BURST: int = Field(200, ge=1, description="those posts per address in a burst")
    GT_RL_POLL_PER_MIN: int = Field(6000, ge=0, description="waiting-room polls per minute per address")
    GT_RL_POLL_BURST: int = Field(300, ge=1, description="those polls per address in a burst")
    GT_RL_PARTICIPANT_POLL_PER_MIN: int = Field(120, ge=0, description="waiting-room polls per minute per "
                                                                       "participant")
    GT_RL_PARTICIPANT_POLL_BURST: int = Field(10, ge=1, description="those polls per participant in a burst")
    GT_QUIZ_ATTEMPTS_PER_ADDRESS: int = Field(6, ge=0, description="onboarding quizzes of one game opened from one "
                                                                   "address per window (MTurk and Prolific "
                                                                   "entries); `0`: no limit")
    GT_QUIZ_ADDRESS_WINDOW_H: int = Field(24, ge=1, description="that window, in hours")
    GT_RL_BACKEND: Literal["redis", "memory"] | None = Field(
        None, description="where the counts live: `redis` (every process; needs `REDIS_URL`) or `memory` (per process)",
        json_schema_extra={"shown": "`redis` with `REDIS_URL`, else `memory`"})
    GT_RL_REDIS_POOL: int = Field(16, ge=1, description="Redis connections of the rate limits per process and "
                                                        "event loop")
    GT_RL_REDIS_TIMEOUT_MS: int = Field(100, ge=1, description="milliseconds a Redis check may take before the "
                                                               "process counts on its own")
    GT_RL_PREFIX: str = Field("", description="the rate limits' Redis key prefix",
                              json_schema_extra={"shown": "`gt:rl:<database name>:`"})

    # --- static files ----------------------------------------------------------------------------------
    GT_COLLECTSTATIC: Flag = Field(False, description="serve the collected, compressed static files (run "
                                                      "`manage.py collectstatic`) instead of finding them")

    # --- crowd platforms (docs/crowd.md) ----------------------------------------------------------------
    GT_MTURK_ENDPOINT: str = Field("", description="MTurk's API address",
                                   json_schema_extra={"shown": "MTurk's sandbox, or live when asked"})
    GT_MTURK_BLOCK_QUALIFICATION: str = Field("", description="the qualification that keeps excluded workers "
                                                              "out, offered on the launch form")
    GT_PROLIFIC_API: str = Field("", description="Prolific's API address",
                                 json_schema_extra={"shown": "`https://api.prolific.com/api/v1/`"})
    PROLIFIC_API_TOKEN: SecretStr = Field(SecretStr(""), description="Prolific's API token; unset: nothing is sent "
                                                                     "to Prolific")
    GT_MTURK_FEE_PERCENT: float = Field(20.0, ge=0, le=200, description="MTurk's fee on rewards and bonuses, in "
                                        "percent, for the cost per arm and the batch budget (crowd/costs.py); MTurk "
                                        "charges 20 more for HITs of 10 or more assignments: set 40 then")
    GT_PROLIFIC_FEE_PERCENT: float = Field(33.33, ge=0, le=200, description="Prolific's service fee on rewards and "
                                           "bonuses, in percent, as your account pays it (VAT included where "
                                           "charged), for the cost per arm and the batch budget (crowd/costs.py)")

    @classmethod
    def settings_customise_sources(cls, settings_cls, init_settings, env_settings, dotenv_settings,
                                   file_secret_settings):
        """The process environment only (and keyword arguments): no ``.env`` file, no secrets
        directory, as settings.py always read it; skipping those sources also halves a read."""
        return init_settings, env_settings

    @field_validator("*", mode="before")
    @classmethod
    def _numbers(cls, value: Any, info: ValidationInfo) -> Any:
        """Whole numbers and numbers as settings.py always read them: blank is the default, a value
        below the bound (or not a finite number) is refused with the variable's name."""
        field = cls.model_fields[info.field_name]
        if field.annotation not in (int, float):
            return value
        minimum = next(m.ge for m in field.metadata if isinstance(m, annotated_types.Ge))
        whole = field.annotation is int
        if isinstance(value, str):
            text = value.strip()
            if not text:
                return field.get_default()
            try:
                number = int(text) if whole else float(text)
            except ValueError:
                number = None
        else:
            number = value if isinstance(value, (int, float)) and not isinstance(value, bool) else None
        if whole and isinstance(number, int) and number >= minimum:
            return number
        if not whole and number is not None and math.isfinite(number) and number >= minimum:
            return float(number)
        kind = "a whole number" if whole else "a number"
        raise ValueError(f"{info.field_name} must be {kind} of at least {minimum:g}, not {value!r}.")

    @field_validator("GT_RL_BACKEND", mode="before")
    @classmethod
    def _rl_backend(cls, value: Any) -> Any:
        if value is not None and value not in ("redis", "memory"):
            raise ValueError(f"GT_RL_BACKEND must be redis (with REDIS_URL set) or memory, not {value!r}")
        return value

    @field_validator("GT_FRAME_ANCESTORS")
    @classmethod
    def _origins(cls, origins: list[str]) -> list[str]:
        for origin in origins:
            if not ORIGIN.fullmatch(origin):
                raise ValueError(f"GT_FRAME_ANCESTORS must list origins such as https://worker.mturk.com "
                                 f"(scheme and host, no path), or be 'none'; not {origin!r}")
        return origins

    @property
    def embedded(self) -> bool:
        """Not the full stack (which has both ``DATABASE_URL`` and ``REDIS_URL``)."""
        return not (self.DATABASE_URL and self.REDIS_URL)

    @model_validator(mode="after")
    def _the_stack(self) -> Env:
        """The checks between variables, and the defaults that depend on the mode."""
        secret, pseudonym = self.SECRET_KEY.get_secret_value(), self.GT_PSEUDONYM_KEY.get_secret_value()
        # Keys (docs/crowd.md, "Keys"). Outside the embedded demo (DATABASE_URL or REDIS_URL set) both
        # must be given, and differ: the repository's defaults are public, and with one key a leak of the
        # web server's secret would also undo the pseudonyms of every dataset published.
        if self.DATABASE_URL or self.REDIS_URL:
            if secret in PUBLIC_KEYS:
                raise ValueError(f"SECRET_KEY must be set to a secret of your own outside the embedded demo; {NEW_KEY}")
            if weak_secret_key(secret):   # guessable: anyone could sign sessions, lab links and device codes
                raise ValueError(
                    f"SECRET_KEY is weak ({len(secret)} characters, {len(set(secret))} different): outside the "
                    f"embedded demo it needs at least {SECRET_KEY_MIN_LENGTH} characters, "
                    f"{SECRET_KEY_MIN_UNIQUE_CHARACTERS} different ones, and not the {SECRET_KEY_INSECURE_PREFIX!r} "
                    f"prefix; {NEW_KEY}")
            if pseudonym in PUBLIC_KEYS:
                raise ValueError("GT_PSEUDONYM_KEY must be set to a secret of your own outside the embedded demo "
                                 f"(keep it: exports' pseudonyms depend on it); {NEW_KEY}")
            if pseudonym == secret:
                raise ValueError("GT_PSEUDONYM_KEY must differ from SECRET_KEY.")
        else:   # the embedded demo on one machine
            self.SECRET_KEY = SecretStr(secret or DEMO_SECRET_KEY)
            self.GT_PSEUDONYM_KEY = SecretStr(pseudonym or self.SECRET_KEY.get_secret_value())
        # "*" would make uvicorn take the leftmost X-Forwarded-For address, which the client writes
        # itself: any visitor could pick the address that the rate limits and pairing checks count.
        if not self.embedded and self.FORWARDED_ALLOW_IPS.strip() in ("*", '"*"', "'*'"):
            raise ValueError(
                "FORWARDED_ALLOW_IPS=* lets every client choose its own address (the first X-Forwarded-For entry). "
                "Set it to the address of the proxy in front of the server (docker-compose: its network's "
                "gateway, GT_NET_GATEWAY; docs/operations.md, Rate limits).")
        if self.GT_RL_BACKEND is None:
            self.GT_RL_BACKEND = "redis" if self.REDIS_URL else "memory"
        elif self.GT_RL_BACKEND == "redis" and not self.REDIS_URL:
            raise ValueError("GT_RL_BACKEND must be redis (with REDIS_URL set) or memory, not 'redis'")
        if self.GT_AGENT_MODE is None:
            self.GT_AGENT_MODE = "inprocess" if self.embedded else "celery"
        if self.CELERY_BROKER_URL is None:
            self.CELERY_BROKER_URL = self.REDIS_URL or "memory://"
        return self


def _message(error: dict) -> str:
    """One error as a sentence that names its variable (pydantic's own wording otherwise)."""
    if error["type"] == "value_error":
        return str(error["ctx"]["error"])
    name = ".".join(str(part) for part in error["loc"][:1])
    return f"{name}: {error['msg']}, not {error['input']!r}."


def load() -> Env:
    """The environment, read and checked now; ``ImproperlyConfigured`` naming each bad variable.
    Cheap to call again (code that reads a variable when it is used): while the object's variables
    are unchanged, the object read last is returned (reading one costs a few milliseconds)."""
    return _load(tuple(os.environ.get(name) for name in Env.model_fields))


@functools.lru_cache(maxsize=4)
def _load(values: tuple) -> Env:
    try:
        return Env()
    except ValidationError as error:   # from None: pydantic's report would repeat the values, keys included
        raise ImproperlyConfigured(" ".join(_message(e) for e in error.errors(include_url=False))) from None


# --- docs/settings.md ------------------------------------------------------------------------------


def _accepted(name: str) -> str:
    field = Env.model_fields[name]
    annotation = field.annotation
    minimum = next((m.ge for m in field.metadata if isinstance(m, annotated_types.Ge)), None)
    if annotation is int:
        return f"whole number ≥ {minimum}"
    if annotation is float:
        return f"number ≥ {minimum:g}"
    if annotation is bool:
        return "flag"
    if annotation is SecretStr:
        return "secret"
    if name in ("ALLOWED_HOSTS", "CSRF_TRUSTED_ORIGINS"):
        return "comma-separated"
    if name == "GT_FRAME_ANCESTORS":
        return "origins or `none`"
    if name == "GT_GC_THRESHOLD":
        return "three whole numbers ≥ 1, or `default`"
    choices = getattr(annotation, "__args__", ())
    literal = next((arg for arg in choices if getattr(arg, "__origin__", None) is Literal), None)
    if getattr(annotation, "__origin__", None) is Literal or literal is not None:
        return ", ".join(f"`{choice}`" for choice in (literal or annotation).__args__)
    return "path" if Path in choices else "text"


def _default(name: str) -> str:
    field = Env.model_fields[name]
    shown = (field.json_schema_extra or {}).get("shown")
    if shown:
        return shown
    value = field.default
    if isinstance(value, SecretStr):
        return "none"
    if isinstance(value, bool):
        return f"`{int(value)}`"
    if isinstance(value, list):
        return " ".join(f"`{item}`" for item in value) if name == "GT_FRAME_ANCESTORS" else f"`{','.join(value)}`"
    if value in ("", []):
        return "empty"
    return f"`{value:g}`" if isinstance(value, float) else f"`{value}`"


def render_docs() -> str:
    rows = [f"| `{name}` | {_accepted(name)} | {_default(name)} | {field.description} |"
            for name, field in Env.model_fields.items()]
    return "\n".join([
        "# Settings",
        "",
        "<!-- generated from groundtalk_web/env.py by `python -m groundtalk_web.env --write-docs`; do not edit -->",
        "",
        "Every setting comes from the environment, read once at start-up through one typed object",
        "(`groundtalk_web.env.Env`, pydantic-settings). A bad value stops the process with",
        "`ImproperlyConfigured` naming the variable. A blank number is its default; a flag is on for",
        "`1`, `true`, `yes` or `on` (any case) and off for anything else; lists are comma-separated.",
        "`SECRET_KEY` and `GT_PSEUDONYM_KEY` are required, different and strong whenever `DATABASE_URL`",
        "or `REDIS_URL` is set (docs/crowd.md, \"Keys\"). run.sh also reads `PORT` (8000), `WORKERS` (1)",
        "and `GT_DEMO_ADMIN` (1); docker-compose.yml `GT_WEB_BIND`, `GT_NET_SUBNET`, `GT_NET_GATEWAY`,",
        "`GT_MODEL_FAMILY` (docs/operations.md); games/registry.py `GT_GAME_PACKAGES` (docs/adding-a-game.md:",
        "the game SDK imports no platform code, so it reads its one variable itself).",
        "",
        "| variable | accepted | default | what |",
        "| --- | --- | --- | --- |",
        *rows,
        "",
    ])


def main(argv: list[str]) -> int:
    text = render_docs()
    if "--check" in argv:
        if not DOCS.is_file() or DOCS.read_text() != text:
            print(f"{DOCS.relative_to(ROOT)} is stale: run python -m groundtalk_web.env --write-docs", file=sys.stderr)
            return 1
        return 0
    if "--write-docs" in argv:
        DOCS.write_text(text)
        print(f"updated {DOCS.relative_to(ROOT)}")
        return 0
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
