#!/usr/bin/env bash
# Run the whole test suite against a real PostgreSQL and a real Redis (started if installed and
# not running), with a real Celery worker, a real uvicorn server and headless Chromium.
set -euo pipefail
cd "$(dirname "$0")"
source scripts/setup.sh
scripts/services.sh
export DATABASE_URL="${TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/groundtalk}"
# Each pytest process that runs tests takes a Redis database of its own (tests/support/redis_db.py,
# held with a lock until it exits; TEST_REDIS_URL picks one by hand for a run of one process).
unset REDIS_URL
# A strong key of this run's own: the full stack refuses one that `check --deploy` calls weak.
export SECRET_KEY="${SECRET_KEY:-$(.venv/bin/python -c 'import secrets; print(secrets.token_urlsafe(50))')}"
export GT_PSEUDONYM_KEY="${GT_PSEUDONYM_KEY:-test-pseudonym}"
export GT_TEST_DB_NAME="${GT_TEST_DB_NAME:-test_groundtalk_$$}"
mkdir -p var
# TEST_WORKERS=N runs the whole suite (no test path given) in N pytest-xdist workers, a test
# file's tests all in one worker (its module fixtures start once), the files in the order
# tests/conftest.py gives (slowest first). Each worker has its own test database (pytest-django's
# _gwN suffix), Redis database, server and Celery worker (docs/testing.md). The default is one
# process (TEST_WORKERS=0): three workers were faster here (27 against 36 min) but ran PostgreSQL
# out of connections and lost fault tests on the loaded 2 cores (docs/testing.md, "In parallel").
# A run of chosen tests runs in one process unless it says -n.
parallel=1
for arg in "$@"; do
  case "$arg" in
    -n|-n*|--numprocesses*|--dist*|no:xdist) parallel=0 ;;
    -*) ;;
    *) [ -e "${arg%%::*}" ] && parallel=0 ;;
  esac
done
if [ "$parallel" = 1 ] && [ "${TEST_WORKERS:-0}" != 0 ]; then
  set -- -n "${TEST_WORKERS}" --dist loadfile --no-loadscope-reorder "$@"
fi
exec .venv/bin/python -m pytest "$@"
