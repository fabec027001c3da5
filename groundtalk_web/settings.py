"""GroundTalk settings, all from the environment.

Two ways to run:

* **Embedded** (``DATABASE_URL`` and ``REDIS_URL`` unset): SQLite, the in-memory channel layer,
  agents run in a thread pool inside the server process. One command, no other service.
* **Full stack** (both set): PostgreSQL, the Redis channel layer, Celery model workers on their
  own queues (``GT_AGENT_MODE=celery``).
"""
from __future__ import annotations

import os
import re
from pathlib import Path

import dj_database_url
from csp.constants import NONE, SELF
from django.core.checks.security.base import (SECRET_KEY_INSECURE_PREFIX, SECRET_KEY_MIN_LENGTH,
                                              SECRET_KEY_MIN_UNIQUE_CHARACTERS)
from django.core.exceptions import ImproperlyConfigured

from groundtalk_web.loopback import is_loopback
from games.registry import GAME_PACKAGES

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_int(name: str, default: int, minimum: int) -> int:
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    try:
        number = int(value)
    except ValueError:
        number = None
    if number is None or number < minimum:
        raise ImproperlyConfigured(f"{name} must be a whole number of at least {minimum}, not {value!r}.")
    return number


def env_float(name: str, default: float, minimum: float) -> float:
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    try:
        number = float(value)
    except ValueError:
        number = None
    if number is None or not number >= minimum or number == float("inf"):
        raise ImproperlyConfigured(f"{name} must be a number of at least {minimum:g}, not {value!r}.")
    return number


DATABASE_URL = os.environ.get("DATABASE_URL", "")
REDIS_URL = os.environ.get("REDIS_URL", "")
EMBEDDED = not (DATABASE_URL and REDIS_URL)

# Keys (docs/crowd.md, "Keys"). SECRET_KEY signs sessions (a participant's browser binding) and
# one-time codes; GT_PSEUDONYM_KEY turns worker ids into the pseudonyms of exports (HMAC, live/selectors.py).
# Outside the embedded demo (DATABASE_URL or REDIS_URL set) both must be given, and differ: the
# repository's defaults are public, and with one key a leak of the web server's secret would
# also undo the pseudonyms of every dataset published.
_PUBLIC_KEYS = {"", "dev-only-insecure-key-change-me", "change-me"}
SECRET_KEY = os.environ.get("SECRET_KEY", "").strip()
GT_PSEUDONYM_KEY = os.environ.get("GT_PSEUDONYM_KEY", "").strip()


def weak_secret_key(key: str) -> bool:
    """What ``manage.py check --deploy`` calls weak (security.W009): fewer than 50 characters, fewer
    than 5 different ones, or the ``django-insecure-`` prefix of ``startproject``'s keys."""
    return (len(key) < SECRET_KEY_MIN_LENGTH or len(set(key)) < SECRET_KEY_MIN_UNIQUE_CHARACTERS
            or key.startswith(SECRET_KEY_INSECURE_PREFIX))


if DATABASE_URL or REDIS_URL:
    _NEW_KEY = "make one with: python -c 'import secrets; print(secrets.token_urlsafe(50))'"
    if SECRET_KEY in _PUBLIC_KEYS:
        raise ImproperlyConfigured(f"SECRET_KEY must be set to a secret of your own outside the embedded demo; {_NEW_KEY}")
    if weak_secret_key(SECRET_KEY):   # guessable: anyone could sign sessions, lab links and device codes
        raise ImproperlyConfigured(
            f"SECRET_KEY is weak ({len(SECRET_KEY)} characters, {len(set(SECRET_KEY))} different): outside the "
            f"embedded demo it needs at least {SECRET_KEY_MIN_LENGTH} characters, {SECRET_KEY_MIN_UNIQUE_CHARACTERS} "
            f"different ones, and not the {SECRET_KEY_INSECURE_PREFIX!r} prefix; {_NEW_KEY}")
    if GT_PSEUDONYM_KEY in _PUBLIC_KEYS:
        raise ImproperlyConfigured("GT_PSEUDONYM_KEY must be set to a secret of your own outside the embedded demo "
                                   f"(keep it: exports' pseudonyms depend on it); {_NEW_KEY}")
    if GT_PSEUDONYM_KEY == SECRET_KEY:
        raise ImproperlyConfigured("GT_PSEUDONYM_KEY must differ from SECRET_KEY.")
else:   # the embedded demo on one machine
    SECRET_KEY = SECRET_KEY or "dev-only-insecure-key-change-me"
    GT_PSEUDONYM_KEY = GT_PSEUDONYM_KEY or SECRET_KEY
# Off in every mode unless DEBUG=1: Django's debug pages show settings and tracebacks to anyone who
# reaches the server (workers included). Error pages: templates/4xx.html, 500.html (groundtalk_web/errors.py).
DEBUG = env_bool("DEBUG", False)
ALLOWED_HOSTS = [h for h in os.environ.get("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]").split(",") if h]

# Demo links (?worker=NAME, crowd/entry.py) open the demo batches: always embedded; on the full
# stack only when the operator asks for the demo (GT_DEMO=1) and the server listens on loopback
# (HOST, which run.sh passes to uvicorn; unset counts as not loopback), and then only for a
# browser on this machine (crowd.entry.check_demo_client). Never on a deployment's public address.
GT_DEMO_ENTRY = EMBEDDED or (env_bool("GT_DEMO", False) and is_loopback(os.environ.get("HOST", "")))
CSRF_TRUSTED_ORIGINS = [o for o in os.environ.get("CSRF_TRUSTED_ORIGINS", "").split(",") if o]

# HTTPS behind a proxy that terminates TLS (docs/operations.md, "HTTPS"). GT_HTTPS=1 (docker-compose's
# default): the proxy must set X-Forwarded-Proto (overwriting the client's) and be the only way in.
GT_HTTPS = env_bool("GT_HTTPS", False)
if GT_HTTPS:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = env_bool("GT_SSL_REDIRECT", True)
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env_int("GT_HSTS_SECONDS", 31536000, minimum=0)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("GT_HSTS_INCLUDE_SUBDOMAINS", True)
    SECURE_HSTS_PRELOAD = env_bool("GT_HSTS_PRELOAD", False)

# The client address behind a proxy (docs/operations.md, "Rate limits"): uvicorn believes
# X-Forwarded-For only from the addresses in FORWARDED_ALLOW_IPS (the proxies) and takes the
# rightmost address no trusted proxy appended. "*" would make it take the leftmost, which the
# client writes itself, so any visitor could pick the address that the per-address rate limits
# and the pairing checks count: refused outside the embedded demo.
if not EMBEDDED and os.environ.get("FORWARDED_ALLOW_IPS", "").strip() in ("*", '"*"', "'*'"):
    raise ImproperlyConfigured(
        "FORWARDED_ALLOW_IPS=* lets every client choose its own address (the first X-Forwarded-For entry). "
        "Set it to the address of the proxy in front of the server (docker-compose: its network's "
        "gateway, GT_PROXY_ADDRESS; docs/operations.md, Rate limits).")
# security.W021 (HSTS without "preload"): the preload list is a commitment for the whole domain, made
# by its owner at hstspreload.org, hard to undo, and not the study server's to make (a university's
# subdomain, say). GT_HSTS_PRELOAD=1 sends it when the owner has decided so.
SILENCED_SYSTEM_CHECKS = ["security.W021"]

# Pages that MTurk's worker site may show in its frame (groundtalk_web/crowd_pages.py): origins,
# space- or comma-separated, or "none". Every other page answers X-Frame-Options: DENY.
GT_FRAME_ANCESTORS = os.environ.get(
    "GT_FRAME_ANCESTORS", "https://worker.mturk.com https://workersandbox.mturk.com").replace(",", " ").split()
if GT_FRAME_ANCESTORS == ["none"]:
    GT_FRAME_ANCESTORS = []
for _origin in GT_FRAME_ANCESTORS:
    if not re.fullmatch(r"https?://[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]{1,5})?", _origin):
        raise ImproperlyConfigured(f"GT_FRAME_ANCESTORS must list origins such as https://worker.mturk.com "
                                   f"(scheme and host, no path), or be 'none'; not {_origin!r}")

# The Content-Security-Policy of every response (django-csp; groundtalk_web/csp.py adds this host's
# websocket, the crowd pages' frame-ancestors and MTurk's submit form per response; docs/operations.md,
# "Security headers"). Scripts and styles only from files of this site: no inline code, no eval.
CONTENT_SECURITY_POLICY = {"DIRECTIVES": {
    "default-src": [SELF],
    "script-src": [SELF],
    "style-src": [SELF],
    "img-src": [SELF, "data:"],     # data: for canvas and Konva's generated images
    "font-src": [SELF],
    "connect-src": [SELF],          # + ws(s)://<this host> per request
    "object-src": [NONE],
    "base-uri": [NONE],
    "form-action": [SELF],          # + MTurk's submit address on a worker's last page
    "frame-ancestors": [NONE],      # crowd pages: GT_FRAME_ANCESTORS
}}

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "csp",
    "games",
    "live",
    "agents",
    "crowd",
    "research",
    *GAME_PACKAGES,   # each game package is an app: its templates/, static/ and commands (games/registry.py)
]

MIDDLEWARE = [
    "groundtalk_web.csp.SiteCSPMiddleware",  # first: every response gets the Content-Security-Policy
    "groundtalk_web.crowd_pages.CrowdPageMiddleware",  # crowd pages: MTurk's frame, its cookies, origin check
    "groundtalk_web.middleware.HostileInputMiddleware",  # then: 400 for NUL, control characters, bad encoding
    "django.middleware.security.SecurityMiddleware",
    "groundtalk_web.resilience.DatabaseRetryMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "groundtalk_web.urls"
ASGI_APPLICATION = "groundtalk_web.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]

if DATABASE_URL:
    # Persistent connections without a health check: Django's check is a ``SELECT 1`` before the first
    # query of every ``database_sync_to_async`` call, one extra round trip per player action
    # (docs/bench.md). A connection that breaks fails that one call (the client re-sends its pending
    # action) and is then dropped by ``close_old_connections``. GT_DB_HEALTH_CHECKS=1 turns it back on.
    DATABASES = {"default": dj_database_url.parse(
        DATABASE_URL, conn_max_age=600, conn_health_checks=os.environ.get("GT_DB_HEALTH_CHECKS", "0") == "1")}
    if os.environ.get("GT_TEST_DB_NAME"):  # lets several test runs share one PostgreSQL
        DATABASES["default"]["TEST"] = {"NAME": os.environ["GT_TEST_DB_NAME"]}
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": os.environ.get("SQLITE_PATH", str(BASE_DIR / "db.sqlite3")),
            "OPTIONS": {"timeout": 20, "transaction_mode": "IMMEDIATE", "init_command": "PRAGMA journal_mode=WAL;"},
        }
    }

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

if REDIS_URL:
    # channels_redis's pub/sub layer as shipped, with a resync of the seats after Redis comes back
    # (live/channel_layer.py, through redis-py's redis_connect_func option).
    from live.channel_layer import on_connect as _layer_on_connect

    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
            # redis-py's asyncio pool defaults to 100 connections and raises when full.
            "CONFIG": {"hosts": [{"address": REDIS_URL, "max_connections": int(os.environ.get("GT_REDIS_POOL", "1000")),
                                  "redis_connect_func": _layer_on_connect}]},
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

# How agent turns run: "celery" (model workers on queue agent.<name>) or "inprocess" (a thread
# pool in the web process: the embedded default, and handy for a laptop).
GT_AGENT_MODE = os.environ.get("GT_AGENT_MODE", "inprocess" if EMBEDDED else "celery")
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", REDIS_URL or "memory://")
# A queue with no worker heartbeat for this long has no worker: batches whose agents use it are not
# served (agents/liveness.py). Workers beat every 5 s.
GT_WORKER_TTL_S = env_float("GT_WORKER_TTL_S", 20.0, minimum=6.0)
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = "control"
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A task taken by a worker that is then killed goes back to the queue after this many seconds
# (acks_late). Agent timeouts are the watchdog's (live/watchdog.py), not Celery countdowns.
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": int(os.environ.get("GT_TASK_VISIBILITY_S", "120"))}
CELERY_TASK_ALWAYS_EAGER = False
# A turn running when the broker connection is lost is cancelled and redelivered (agent turns are
# idempotent: a stale or repeated turn does nothing), Celery 6's default.
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = True

# Player-facing limits. Websocket: per seat (shared by all its sockets in every process), except
# the frame cap, which is per connection. HTTP: per client address and, for the waiting-room poll,
# per participant. Rates of 0 turn a limit off. live/ratelimit.py; docs/operations.md "Rate limits".
GT_WS_MAX_FRAME = int(os.environ.get("GT_WS_MAX_FRAME", "8192"))
GT_WS_RATE = float(os.environ.get("GT_WS_RATE", "8"))      # actions per second per seat, sustained
GT_WS_BURST = int(os.environ.get("GT_WS_BURST", "16"))     # actions in a burst
GT_WS_RESUME_RATE = env_int("GT_WS_RESUME_RATE", 2, minimum=0)     # resumes per second per seat
GT_WS_RESUME_BURST = env_int("GT_WS_RESUME_BURST", 5, minimum=1)
GT_WS_PING_RATE = env_int("GT_WS_PING_RATE", 5, minimum=0)         # pings per second per seat
GT_WS_PING_BURST = env_int("GT_WS_PING_BURST", 20, minimum=1)
GT_WS_FRAME_RATE = env_int("GT_WS_FRAME_RATE", 50, minimum=1)      # frames of any kind per second per
GT_WS_FRAME_BURST = env_int("GT_WS_FRAME_BURST", 200, minimum=1)   # connection; over it: closed (4008)
GT_RL_ENTRY_PER_MIN = env_int("GT_RL_ENTRY_PER_MIN", 300, minimum=0)    # entry links per address
GT_RL_ENTRY_BURST = env_int("GT_RL_ENTRY_BURST", 100, minimum=1)
GT_RL_STEP_PER_MIN = env_int("GT_RL_STEP_PER_MIN", 600, minimum=0)      # consent/ready/leave per address
GT_RL_STEP_BURST = env_int("GT_RL_STEP_BURST", 200, minimum=1)
GT_RL_POLL_PER_MIN = env_int("GT_RL_POLL_PER_MIN", 6000, minimum=0)     # waiting-room polls per address
GT_RL_POLL_BURST = env_int("GT_RL_POLL_BURST", 300, minimum=1)
GT_RL_PARTICIPANT_POLL_PER_MIN = env_int("GT_RL_PARTICIPANT_POLL_PER_MIN", 120, minimum=0)  # per participant
GT_RL_PARTICIPANT_POLL_BURST = env_int("GT_RL_PARTICIPANT_POLL_BURST", 10, minimum=1)
# Onboarding quiz attempts (crowd/onboarding.py, issue 21 item 7): at most this many quizzes of one
# game opened from one client address in GT_QUIZ_ADDRESS_WINDOW_H hours, whatever worker ids they
# come with (throwaway ids mining the answers); only MTurk and Prolific entries count. 0: no limit.
GT_QUIZ_ATTEMPTS_PER_ADDRESS = env_int("GT_QUIZ_ATTEMPTS_PER_ADDRESS", 6, minimum=0)
GT_QUIZ_ADDRESS_WINDOW_H = env_int("GT_QUIZ_ADDRESS_WINDOW_H", 24, minimum=1)
# Where the counts live: "redis" (shared by every process; the default with REDIS_URL) or "memory"
# (per process). Redis checks give up after GT_RL_REDIS_TIMEOUT_MS and then count per process.
GT_RL_BACKEND = os.environ.get("GT_RL_BACKEND", "redis" if REDIS_URL else "memory")
if GT_RL_BACKEND not in ("redis", "memory") or (GT_RL_BACKEND == "redis" and not REDIS_URL):
    raise ImproperlyConfigured(f"GT_RL_BACKEND must be redis (with REDIS_URL set) or memory, not {GT_RL_BACKEND!r}")
GT_RL_REDIS_POOL = env_int("GT_RL_REDIS_POOL", 16, minimum=1)             # connections per event loop / process
GT_RL_REDIS_TIMEOUT_MS = env_int("GT_RL_REDIS_TIMEOUT_MS", 100, minimum=1)
GT_RL_PREFIX = os.environ.get("GT_RL_PREFIX", "")   # "" = gt:rl:<database name>:
GT_PARTNER_GONE_S = int(os.environ.get("GT_PARTNER_GONE_S", "60"))
# Ghost partners (live/presence.py): a waiting worker whose page has not polled for GT_PRESENCE_S
# is not paired (and is asked "are you still there?" on return); a paired seat whose page has not
# connected GT_SEAT_GRACE_S after the match began counts as gone (0: never).
GT_PRESENCE_S = env_int("GT_PRESENCE_S", 8, minimum=2)
GT_SEAT_GRACE_S = env_int("GT_SEAT_GRACE_S", 15, minimum=0)
GT_CODRAW_ART_DIR = os.environ.get("GT_CODRAW_ART_DIR", "")

# The action write path (live/services.py, docs/architecture.md): the event loop's pool is per
# server process and counts against PostgreSQL's max_connections.
GT_ASYNC_PG_POOL = env_int("GT_ASYNC_PG_POOL", 16, minimum=1)
GT_BROADCAST_SNAPSHOT_MAX = env_int("GT_BROADCAST_SNAPSHOT_MAX", 32 * 1024, minimum=0)

# Database connections a server process may hold (groundtalk_web/asgi.py, docs/operations.md):
# HTTP requests run on GT_HTTP_THREADS threads, consumers' database calls and the watchdog on
# GT_DB_THREADS, plus the event-loop pool (GT_ASYNC_PG_POOL) and Channels' one sync thread.
GT_HTTP_THREADS = env_int("GT_HTTP_THREADS", 8, minimum=1)
GT_DB_THREADS = env_int("GT_DB_THREADS", 8, minimum=2)
# The watchdog's sweep period in seconds (live/watchdog.py); 0 turns it off in this process.
GT_WATCHDOG_S = env_float("GT_WATCHDOG_S", 0.5, minimum=0)
# A cap on every agent's timeout (seconds) before its fallback acts; unset: each agent's own.
GT_AGENT_TIMEOUT_S = env_float("GT_AGENT_TIMEOUT_S", 0, minimum=0)
# How long an HTTP request waits for an unreachable database before the "one moment" page.
GT_HTTP_DB_WAIT_S = env_float("GT_HTTP_DB_WAIT_S", 10, minimum=0)

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "var" / "staticfiles"
# WhiteNoise serves static files from the ASGI process; with finders on, no collectstatic step
# is needed (set GT_COLLECTSTATIC=1 and run collectstatic for compressed, cached files).
WHITENOISE_USE_FINDERS = not env_bool("GT_COLLECTSTATIC", False)
WHITENOISE_AUTOREFRESH = DEBUG
MEDIA_ROOT = Path(os.environ.get("MEDIA_ROOT", str(BASE_DIR / "var" / "media")))
MEDIA_URL = "/media/"
LOGIN_URL = "/admin/login/"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "WARNING")},
}
