"""GroundTalk settings, all from the environment, read once through ``groundtalk_web.env.Env``
(every variable typed, with its default and meaning: docs/settings.md).

Two ways to run:

* **Embedded** (``DATABASE_URL`` and ``REDIS_URL`` unset): SQLite, the in-memory channel layer,
  agents run in a thread pool inside the server process. One command, no other service.
* **Full stack** (both set): PostgreSQL, the Redis channel layer, Celery model workers on their
  own queues (``GT_AGENT_MODE=celery``).
"""
from __future__ import annotations

from pathlib import Path

import dj_database_url
from csp.constants import NONE, SELF

from groundtalk_web import env
from groundtalk_web.loopback import is_loopback
from games.registry import GAME_PACKAGES

BASE_DIR = Path(__file__).resolve().parent.parent

#: the environment, read and checked once (groundtalk_web/env.py: types, bounds, defaults, the checks
#: between variables; a bad value raises ImproperlyConfigured naming it)
ENV = env.load()

DATABASE_URL = ENV.DATABASE_URL
REDIS_URL = ENV.REDIS_URL
EMBEDDED = ENV.embedded

# Keys (docs/crowd.md, "Keys"). SECRET_KEY signs sessions (a participant's browser binding) and
# one-time codes; GT_PSEUDONYM_KEY turns worker ids into the pseudonyms of exports (HMAC, live/selectors.py).
# Outside the embedded demo (DATABASE_URL or REDIS_URL set) both must be given, strong, and different
# (env.Env checks it); the embedded demo uses the public development key.
SECRET_KEY = ENV.SECRET_KEY.get_secret_value()
GT_PSEUDONYM_KEY = ENV.GT_PSEUDONYM_KEY.get_secret_value()
# Off in every mode unless DEBUG=1: Django's debug pages show settings and tracebacks to anyone who
# reaches the server (workers included). Error pages: templates/4xx.html, 500.html (groundtalk_web/errors.py).
DEBUG = ENV.DEBUG
ALLOWED_HOSTS = ENV.ALLOWED_HOSTS

# Demo links (?worker=NAME, crowd/entry.py) open the demo batches: always embedded; on the full
# stack only when the operator asks for the demo (GT_DEMO=1) and the server listens on loopback
# (HOST, which run.sh passes to uvicorn; unset counts as not loopback), and then only for a
# browser on this machine (crowd.entry.check_demo_client). Never on a deployment's public address.
GT_DEMO_ENTRY = EMBEDDED or (ENV.GT_DEMO and is_loopback(ENV.HOST))
CSRF_TRUSTED_ORIGINS = ENV.CSRF_TRUSTED_ORIGINS

# HTTPS behind a proxy that terminates TLS (docs/operations.md, "HTTPS"). GT_HTTPS=1 (docker-compose's
# default): the proxy must set X-Forwarded-Proto (overwriting the client's) and be the only way in.
GT_HTTPS = ENV.GT_HTTPS
if GT_HTTPS:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = ENV.GT_SSL_REDIRECT
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = ENV.GT_HSTS_SECONDS
    SECURE_HSTS_INCLUDE_SUBDOMAINS = ENV.GT_HSTS_INCLUDE_SUBDOMAINS
    SECURE_HSTS_PRELOAD = ENV.GT_HSTS_PRELOAD

# The client address behind a proxy (docs/operations.md, "Rate limits"): uvicorn believes
# X-Forwarded-For only from the addresses in FORWARDED_ALLOW_IPS (the proxies) and takes the
# rightmost address no trusted proxy appended. "*" would make it take the leftmost, which the
# client writes itself, so any visitor could pick the address that the per-address rate limits
# and the pairing checks count: refused outside the embedded demo (env.Env checks it).
# security.W021 (HSTS without "preload"): the preload list is a commitment for the whole domain, made
# by its owner at hstspreload.org, hard to undo, and not the study server's to make (a university's
# subdomain, say). GT_HSTS_PRELOAD=1 sends it when the owner has decided so.
SILENCED_SYSTEM_CHECKS = ["security.W021"]

# Pages that MTurk's worker site may show in its frame (groundtalk_web/crowd_pages.py): origins,
# space- or comma-separated, or "none". Every other page answers X-Frame-Options: DENY.
GT_FRAME_ANCESTORS = ENV.GT_FRAME_ANCESTORS

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

# No "daphne" app: it only replaces ``manage.py runserver`` with an ASGI one, and every Django
# process paid for it at start (twisted and its reactor, about 0.4 s of CPU; docs/testing.md "Where
# the time goes"). GroundTalk is served by uvicorn (run.sh); daphne stays a dependency for the relay
# benchmark's ``--server daphne``.
INSTALLED_APPS = [
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
        DATABASE_URL, conn_max_age=600, conn_health_checks=ENV.GT_DB_HEALTH_CHECKS)}
    if ENV.GT_TEST_DB_NAME:  # lets several test runs share one PostgreSQL
        DATABASES["default"]["TEST"] = {"NAME": ENV.GT_TEST_DB_NAME}
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": str(BASE_DIR / "db.sqlite3") if ENV.SQLITE_PATH is None else ENV.SQLITE_PATH,
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
            # redis-py's asyncio pool defaults to 100 connections and raises when full. The stock
            # layer publishes one message at a time per shard (behind the shard's lock): the same
            # Redis listed GT_LAYER_SHARDS times gives that many publishes in flight, groups and
            # channels spread over them by name (docs/bench.md, "Issue 22").
            "CONFIG": {"hosts": [{"address": REDIS_URL, "max_connections": ENV.GT_REDIS_POOL,
                                  "redis_connect_func": _layer_on_connect}] * ENV.GT_LAYER_SHARDS},
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

# How agent turns run: "celery" (model workers on queue agent.<name>) or "inprocess" (a thread
# pool in the web process: the embedded default, and handy for a laptop).
GT_AGENT_MODE = ENV.GT_AGENT_MODE
CELERY_BROKER_URL = ENV.CELERY_BROKER_URL
# A queue with no worker heartbeat for this long has no worker: batches whose agents use it are not
# served (agents/liveness.py). Workers beat every 5 s.
GT_WORKER_TTL_S = ENV.GT_WORKER_TTL_S
# The embedded mode's torch agents are played by the model server (agents/serving/server.py), on
# loopback only; the web process posts their turns to this address (agents/model_client.py).
GT_MODEL_SERVER_PORT = ENV.GT_MODEL_SERVER_PORT
GT_MODEL_SERVER_URL = f"http://127.0.0.1:{GT_MODEL_SERVER_PORT}"
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = "control"
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A task taken by a worker that is then killed goes back to the queue after this many seconds
# (acks_late). Agent timeouts are the watchdog's (live/watchdog.py), not Celery countdowns.
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": ENV.GT_TASK_VISIBILITY_S}
CELERY_TASK_ALWAYS_EAGER = False
# A turn running when the broker connection is lost is cancelled and redelivered (agent turns are
# idempotent: a stale or repeated turn does nothing), Celery 6's default.
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = True

# Player-facing limits. Websocket: per seat (shared by all its sockets in every process), except
# the frame cap, which is per connection. HTTP: per client address and, for the waiting-room poll,
# per participant. Rates of 0 turn a limit off. live/ratelimit.py; docs/operations.md "Rate limits".
GT_WS_MAX_FRAME = ENV.GT_WS_MAX_FRAME
GT_WS_RATE = ENV.GT_WS_RATE                      # actions per second per seat, sustained
GT_WS_BURST = ENV.GT_WS_BURST                    # actions in a burst
GT_WS_RESUME_RATE = ENV.GT_WS_RESUME_RATE        # resumes per second per seat
GT_WS_RESUME_BURST = ENV.GT_WS_RESUME_BURST
GT_WS_PING_RATE = ENV.GT_WS_PING_RATE            # pings per second per seat
GT_WS_PING_BURST = ENV.GT_WS_PING_BURST
GT_WS_FRAME_RATE = ENV.GT_WS_FRAME_RATE          # frames of any kind per second per
GT_WS_FRAME_BURST = ENV.GT_WS_FRAME_BURST        # connection; over it: closed (4008)
GT_RL_ENTRY_PER_MIN = ENV.GT_RL_ENTRY_PER_MIN    # entry links per address
GT_RL_ENTRY_BURST = ENV.GT_RL_ENTRY_BURST
GT_RL_STEP_PER_MIN = ENV.GT_RL_STEP_PER_MIN      # consent/ready/leave per address
GT_RL_STEP_BURST = ENV.GT_RL_STEP_BURST
GT_RL_POLL_PER_MIN = ENV.GT_RL_POLL_PER_MIN      # waiting-room polls per address
GT_RL_POLL_BURST = ENV.GT_RL_POLL_BURST
GT_RL_PARTICIPANT_POLL_PER_MIN = ENV.GT_RL_PARTICIPANT_POLL_PER_MIN  # per participant
GT_RL_PARTICIPANT_POLL_BURST = ENV.GT_RL_PARTICIPANT_POLL_BURST
# Onboarding quiz attempts (crowd/onboarding.py, issue 21 item 7): at most this many quizzes of one
# game opened from one client address in GT_QUIZ_ADDRESS_WINDOW_H hours, whatever worker ids they
# come with (throwaway ids mining the answers); only MTurk and Prolific entries count. 0: no limit.
GT_QUIZ_ATTEMPTS_PER_ADDRESS = ENV.GT_QUIZ_ATTEMPTS_PER_ADDRESS
GT_QUIZ_ADDRESS_WINDOW_H = ENV.GT_QUIZ_ADDRESS_WINDOW_H
# Where the counts live: "redis" (shared by every process; the default with REDIS_URL) or "memory"
# (per process). Redis checks give up after GT_RL_REDIS_TIMEOUT_MS and then count per process.
GT_RL_BACKEND = ENV.GT_RL_BACKEND
GT_RL_REDIS_POOL = ENV.GT_RL_REDIS_POOL               # connections per event loop / process
GT_RL_REDIS_TIMEOUT_MS = ENV.GT_RL_REDIS_TIMEOUT_MS
GT_RL_PREFIX = ENV.GT_RL_PREFIX   # "" = gt:rl:<database name>:
GT_PARTNER_GONE_S = ENV.GT_PARTNER_GONE_S
# Ghost partners (crowd/presence.py, live/presence.py): a waiting worker whose page has not polled for GT_PRESENCE_S
# is not paired (and is asked "are you still there?" on return); a paired seat whose page has not
# connected GT_SEAT_GRACE_S after the match began counts as gone (0: never).
GT_PRESENCE_S = ENV.GT_PRESENCE_S
GT_SEAT_GRACE_S = ENV.GT_SEAT_GRACE_S
GT_CODRAW_ART_DIR = ENV.GT_CODRAW_ART_DIR
# Crowd platforms (crowd/): the launch form's block qualification. The endpoints and Prolific's
# token are read from env.load() when a call is made (crowd/mturk.py, crowd/prolific.py).
GT_MTURK_BLOCK_QUALIFICATION = ENV.GT_MTURK_BLOCK_QUALIFICATION

# The action write path (live/services.py, docs/architecture.md): the event loop's pool is per
# server process and counts against PostgreSQL's max_connections.
GT_ASYNC_PG_POOL = ENV.GT_ASYNC_PG_POOL
GT_BROADCAST_SNAPSHOT_MAX = ENV.GT_BROADCAST_SNAPSHOT_MAX
# Matches whose latest snapshot each server process keeps (live/match_store.py).
GT_STATE_CACHE = ENV.GT_STATE_CACHE

# Database connections a server process may hold (groundtalk_web/asgi.py, docs/operations.md):
# HTTP requests run on GT_HTTP_THREADS threads, consumers' database calls and the watchdog on
# GT_DB_THREADS, plus the event-loop pool (GT_ASYNC_PG_POOL) and Channels' one sync thread.
GT_HTTP_THREADS = ENV.GT_HTTP_THREADS
GT_DB_THREADS = ENV.GT_DB_THREADS
# The watchdog's sweep period in seconds (live/watchdog.py); 0 turns it off in this process.
GT_WATCHDOG_S = ENV.GT_WATCHDOG_S
# A cap on every agent's timeout (seconds) before its fallback acts; unset: each agent's own.
GT_AGENT_TIMEOUT_S = ENV.GT_AGENT_TIMEOUT_S
# How long an HTTP request waits for an unreachable database before the "one moment" page.
GT_HTTP_DB_WAIT_S = ENV.GT_HTTP_DB_WAIT_S

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "var" / "staticfiles"
# WhiteNoise serves static files from the ASGI process; with finders on, no collectstatic step
# is needed (set GT_COLLECTSTATIC=1 and run collectstatic for compressed, cached files).
WHITENOISE_USE_FINDERS = not ENV.GT_COLLECTSTATIC
WHITENOISE_AUTOREFRESH = DEBUG
MEDIA_ROOT = BASE_DIR / "var" / "media" if ENV.MEDIA_ROOT is None else ENV.MEDIA_ROOT
MEDIA_URL = "/media/"
LOGIN_URL = "/admin/login/"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": ENV.LOG_LEVEL},
}
