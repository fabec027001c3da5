#!/usr/bin/env bash
# Run the whole test suite against a real PostgreSQL and a real Redis (started if installed and
# not running), with a real Celery worker, a real uvicorn server and headless Chromium.
set -euo pipefail
cd "$(dirname "$0")"
source scripts/setup.sh
scripts/services.sh
export DATABASE_URL="${TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/groundtalk}"
if [ -n "${TEST_REDIS_URL:-}" ]; then
  export REDIS_URL="$TEST_REDIS_URL"
else
  # Each concurrent run its own Redis database (held with a lock until the run ends): Celery queues,
  # a worker's purge and the model workers' heartbeats are per database, so two runs on one machine
  # never take, purge or count each other's agent turns and workers. (2, 3 and 7 are the bench's.)
  for db in 1 4 5 6 8 9 10 11 12 13 14 15; do
    exec {redis_lock}>"/tmp/groundtalk-test-redis-$db.lock"
    flock -n "$redis_lock" && break
    exec {redis_lock}>&-
    db=""
  done
  [ -n "$db" ] || { echo "test.sh: every test Redis database is in use by another run" >&2; exit 1; }
  export REDIS_URL="redis://127.0.0.1:6379/$db"
fi
# A strong key of this run's own: the full stack refuses one that `check --deploy` calls weak.
export SECRET_KEY="${SECRET_KEY:-$(.venv/bin/python -c 'import secrets; print(secrets.token_urlsafe(50))')}"
export GT_PSEUDONYM_KEY="${GT_PSEUDONYM_KEY:-test-pseudonym}"
export GT_TEST_DB_NAME="${GT_TEST_DB_NAME:-test_groundtalk_$$}"
mkdir -p var
exec .venv/bin/python -m pytest "$@"
