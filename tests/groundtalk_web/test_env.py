"""groundtalk_web/env.py: the one typed object every setting is read through (issue 22, item 4).

Each test starts from an environment without any of its variables, sets some, and reads the object
the way settings.py does (``env.load()``). Whole stacks reading it in fresh processes:
tests/groundtalk_web/test_gc_tuning.py, tests/groundtalk_web/test_settings.py."""
from __future__ import annotations

import inspect
import math
import re

import annotated_types
import pytest
from django.core.exceptions import ImproperlyConfigured

from groundtalk_web import env, settings as settings_module

KEY = "k" * 25 + "abcdefghijklmnopqrstuvwxy"          # 50 characters, 26 different: strong
PSEUDONYM_KEY = "p" * 25 + "abcdefghijklmnopqrstuvwxy"
FULL = {"DATABASE_URL": "postgres://u@127.0.0.1:5432/x", "REDIS_URL": "redis://127.0.0.1:6379/1",
        "SECRET_KEY": KEY, "GT_PSEUDONYM_KEY": PSEUDONYM_KEY}


@pytest.fixture
def environ(monkeypatch):
    """Read the object from an environment that has none of its variables but these."""
    def set_(**values):
        for name in env.Env.model_fields:
            monkeypatch.delenv(name, raising=False)
        for name, value in values.items():
            monkeypatch.setenv(name, value)
        return env.load()
    return set_


def refused(environ, **values) -> str:
    with pytest.raises(ImproperlyConfigured) as error:
        environ(**values)
    return str(error.value)


def bound(name: str):
    field = env.Env.model_fields[name]
    return next(m.ge for m in field.metadata if isinstance(m, annotated_types.Ge))


NUMBERS = [name for name, field in env.Env.model_fields.items() if field.annotation in (int, float)]


def test_the_embedded_defaults(environ):
    e = environ()
    assert e.embedded and e.DATABASE_URL == "" and e.REDIS_URL == ""
    assert e.SECRET_KEY.get_secret_value() == "dev-only-insecure-key-change-me"
    assert e.GT_PSEUDONYM_KEY.get_secret_value() == e.SECRET_KEY.get_secret_value()
    assert (e.GT_AGENT_MODE, e.CELERY_BROKER_URL, e.GT_RL_BACKEND) == ("inprocess", "memory://", "memory")
    assert e.DEBUG is False and e.GT_HTTPS is False and e.GT_SSL_REDIRECT is True
    assert e.ALLOWED_HOSTS == ["localhost", "127.0.0.1", "[::1]"] and e.CSRF_TRUSTED_ORIGINS == []
    assert e.GT_FRAME_ANCESTORS == ["https://worker.mturk.com", "https://workersandbox.mturk.com"]
    assert e.GT_GC_THRESHOLD == (50000, 20, 10) and e.LOG_LEVEL == "WARNING"
    assert (e.GT_WS_RATE, e.GT_WS_BURST, e.GT_HSTS_SECONDS, e.GT_WATCHDOG_S) == (8.0, 16, 31536000, 0.5)
    assert e.SQLITE_PATH is None and e.MEDIA_ROOT is None and e.PROLIFIC_API_TOKEN.get_secret_value() == ""


def test_the_full_stack_defaults(environ):
    e = environ(**FULL)
    assert not e.embedded
    assert (e.GT_AGENT_MODE, e.CELERY_BROKER_URL, e.GT_RL_BACKEND) == ("celery", FULL["REDIS_URL"], "redis")
    assert (e.SECRET_KEY.get_secret_value(), e.GT_PSEUDONYM_KEY.get_secret_value()) == (KEY, PSEUDONYM_KEY)
    # one URL alone is not the full stack, but already needs the keys
    e = environ(REDIS_URL="redis://r", SECRET_KEY=KEY, GT_PSEUDONYM_KEY=PSEUDONYM_KEY)
    assert e.embedded and e.GT_AGENT_MODE == "inprocess" and e.GT_RL_BACKEND == "redis"


@pytest.mark.parametrize("value, on", [("1", True), ("TRUE", True), (" yes ", True), ("On", True),
                                       ("0", False), ("", False), ("no", False), ("2", False), ("nonsense", False)])
def test_a_flag_is_on_for_the_four_words_and_off_for_anything_else(environ, value, on):
    e = environ(DEBUG=value, GT_SSL_REDIRECT=value, GT_DB_HEALTH_CHECKS=value)
    assert e.DEBUG is on and e.GT_SSL_REDIRECT is on and e.GT_DB_HEALTH_CHECKS is on


def test_numbers_blank_is_the_default_and_spaces_are_ignored(environ):
    e = environ(GT_WS_BURST=" ", GT_HTTP_THREADS="", GT_PRESENCE_S=" 3 ", GT_WATCHDOG_S=" 0.25", GT_AGENT_TIMEOUT_S="1e1")
    assert (e.GT_WS_BURST, e.GT_HTTP_THREADS, e.GT_PRESENCE_S) == (16, 8, 3)
    assert (e.GT_WATCHDOG_S, e.GT_AGENT_TIMEOUT_S) == (0.25, 10.0)


@pytest.mark.parametrize("name", NUMBERS)
def test_every_number_is_checked_against_its_bound_and_named(environ, name):
    minimum = bound(name)
    whole = env.Env.model_fields[name].annotation is int
    kind = "a whole number" if whole else "a number"
    assert getattr(environ(**{name: str(minimum)}), name) == minimum
    bad = [str(minimum - 1), "many", "1.5" if whole else "nan", "inf"]
    for value in bad:
        message = refused(environ, **{name: value})
        assert message == f"{name} must be {kind} of at least {minimum:g}, not {value!r}.", message


def test_floats_are_finite(environ):
    for value in ("nan", "inf", "-inf", "often"):
        assert refused(environ, GT_HTTP_DB_WAIT_S=value).startswith("GT_HTTP_DB_WAIT_S must be a number of at least 0")
    assert math.isfinite(environ(GT_WS_RATE="2.5").GT_WS_RATE)


def test_choices_are_checked_and_named(environ):
    assert environ(GT_AGENT_MODE="celery").GT_AGENT_MODE == "celery"
    message = refused(environ, GT_AGENT_MODE="Celery")
    assert message.startswith("GT_AGENT_MODE:") and "'celery'" in message and "'Celery'" in message
    assert refused(environ, LOG_LEVEL="info").startswith("LOG_LEVEL:")
    assert environ(LOG_LEVEL="INFO").LOG_LEVEL == "INFO"


def test_the_rate_limit_backend(environ):
    assert refused(environ, GT_RL_BACKEND="redis") == \
        "GT_RL_BACKEND must be redis (with REDIS_URL set) or memory, not 'redis'"
    assert refused(environ, GT_RL_BACKEND="disk") == "GT_RL_BACKEND must be redis (with REDIS_URL set) or memory, not 'disk'"
    assert environ(**FULL, GT_RL_BACKEND="memory").GT_RL_BACKEND == "memory"


def test_every_bad_variable_is_named_in_one_message(environ):
    message = refused(environ, GT_WS_BURST="0", GT_WATCHDOG_S="-1", GT_AGENT_MODE="x")
    for name in ("GT_WS_BURST", "GT_WATCHDOG_S", "GT_AGENT_MODE"):
        assert name in message, message
    assert "\n" not in message


@pytest.mark.parametrize("values, message", [
    ({"DATABASE_URL": "postgres://x/y"}, "SECRET_KEY must be set to a secret of your own outside the embedded demo"),
    ({**FULL, "SECRET_KEY": "change-me"}, "SECRET_KEY must be set"),
    ({**FULL, "SECRET_KEY": " dev-only-insecure-key-change-me "}, "SECRET_KEY must be set"),
    ({**FULL, "GT_PSEUDONYM_KEY": "  "}, "GT_PSEUDONYM_KEY must be set to a secret of your own"),
    ({**FULL, "GT_PSEUDONYM_KEY": f" {KEY} "}, "GT_PSEUDONYM_KEY must differ from SECRET_KEY."),
    ({"REDIS_URL": "redis://r", "SECRET_KEY": KEY}, "GT_PSEUDONYM_KEY must be set"),
])
def test_the_keys_outside_the_embedded_demo(environ, values, message):
    assert refused(environ, **values).startswith(message)


@pytest.mark.parametrize("weak", ["x" * 60, "django-insecure-" + KEY, KEY[:49]])
def test_a_weak_secret_key_is_refused_without_repeating_it(environ, weak):
    with pytest.raises(ImproperlyConfigured) as error:
        environ(**{**FULL, "SECRET_KEY": weak})
    message = str(error.value)
    assert message.startswith("SECRET_KEY is weak (") and "secrets.token_urlsafe(50)" in message
    assert weak not in message
    # pydantic's own report (which repeats every input) is not chained to what the process prints
    assert error.value.__cause__ is None and error.value.__suppress_context__


def test_the_embedded_demo_keeps_any_key(environ):
    e = environ(SECRET_KEY="  test-secret ")
    assert e.SECRET_KEY.get_secret_value() == e.GT_PSEUDONYM_KEY.get_secret_value() == "test-secret"
    assert "test-secret" not in repr(e)


@pytest.mark.parametrize("value", ["*", '"*"', "'*'", " * "])
def test_forwarded_allow_ips_star_is_refused_outside_the_embedded_demo(environ, value):
    assert refused(environ, **FULL, FORWARDED_ALLOW_IPS=value).startswith(
        "FORWARDED_ALLOW_IPS=* lets every client choose its own address")
    assert environ(FORWARDED_ALLOW_IPS=value).FORWARDED_ALLOW_IPS == value   # embedded: the demo on one machine
    assert environ(**FULL, FORWARDED_ALLOW_IPS="172.30.231.1").FORWARDED_ALLOW_IPS == "172.30.231.1"


def test_lists(environ):
    assert environ(ALLOWED_HOSTS="").ALLOWED_HOSTS == []
    assert environ(ALLOWED_HOSTS="a.org,,b.org").ALLOWED_HOSTS == ["a.org", "b.org"]
    assert environ(CSRF_TRUSTED_ORIGINS="https://a.org").CSRF_TRUSTED_ORIGINS == ["https://a.org"]
    assert environ(GT_FRAME_ANCESTORS="none").GT_FRAME_ANCESTORS == []
    assert environ(GT_FRAME_ANCESTORS="https://a.org, http://b.org:8080").GT_FRAME_ANCESTORS == \
        ["https://a.org", "http://b.org:8080"]
    assert refused(environ, GT_FRAME_ANCESTORS="https://a.org/path").startswith(
        "GT_FRAME_ANCESTORS must list origins such as https://worker.mturk.com")


def test_gc_thresholds(environ):
    assert environ(GT_GC_THRESHOLD="default").GT_GC_THRESHOLD is None
    assert environ(GT_GC_THRESHOLD=" 1000,5,5 ").GT_GC_THRESHOLD == (1000, 5, 5)
    for bad in ("50000,20", "a,b,c", "0,10,10"):
        assert refused(environ, GT_GC_THRESHOLD=bad) == f"GT_GC_THRESHOLD must be three positive integers, not {bad!r}"


def test_every_variable_is_described_and_in_the_generated_docs():
    docs = env.DOCS.read_text()
    assert docs == env.render_docs(), "docs/settings.md is stale: run python -m groundtalk_web.env --write-docs"
    for name, field in env.Env.model_fields.items():
        assert field.description and "\n" not in field.description, name
        assert f"| `{name}` |" in docs, name


def test_a_stale_docs_page_is_noticed(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(env, "DOCS", tmp_path / "settings.md")
    monkeypatch.setattr(env, "ROOT", tmp_path)
    assert env.main(["--check"]) == 1
    assert env.main(["--write-docs"]) == 0 and env.main(["--check"]) == 0
    (tmp_path / "settings.md").write_text(env.render_docs().replace("`GT_WS_RATE`", "`GT_WS_SPEED`"))
    assert env.main(["--check"]) == 1


def test_settings_read_the_environment_only_through_the_object():
    source = inspect.getsource(settings_module)
    assert "os.environ" not in source and "getenv" not in source
    assert settings_module.ENV.__class__ is env.Env


def test_the_docs_name_no_variable_that_does_not_exist():
    """README.md and the operator's pages name only variables of the object (or of run.sh, the
    compose file and the game SDK): a variable removed from the object leaves the docs too."""
    known = set(env.Env.model_fields) | env.SHELL_VARIABLES
    for page in ("README.md", "docs/operations.md", "docs/crowd.md", "docs/settings.md", "docs/agents.md"):
        named = set(re.findall(r"\b(GT_[A-Z0-9_]+)\b", (env.ROOT / page).read_text()))
        assert named <= known, (page, named - known)
