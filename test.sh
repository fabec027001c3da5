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
# The whole suite (no test path given) runs in two phases (docs/testing.md, "In parallel"):
# 1. every test but the serial ones in TEST_WORKERS pytest-xdist workers (default 3 on the 2-core
#    machine it was measured on: much of a test's time is waiting on servers, browsers and sockets;
#    with 3 the cores were busy about 97 % of the phase, docs/testing.md; 0: the whole suite in one
#    process), a test file's
#    tests all in one worker (its module fixtures start once), the files in the order
#    tests/conftest.py gives (slowest first). Each worker has its own test database (pytest-django's
#    _gwN suffix), Redis database, server and Celery worker;
# 2. then the tests marked serial (the fault tests: each starts a whole stack and has marks a loaded
#    machine misses) in one process, with the machine to themselves.
# The exit status is the first failing phase's; an interrupted first phase ends the run. A run of chosen tests (a path, -n, -m or --dist)
# is one pytest process, as given.
workers="${TEST_WORKERS:-3}"
parallel=1
value_of=""   # the option whose value this argument is (-k live: not the folder live/)
for arg in "$@"; do
  if [ -n "$value_of" ]; then
    [ "$value_of" = -p ] && [ "$arg" = no:xdist ] && parallel=0
    value_of=""
    continue
  fi
  case "$arg" in
    -n|-n*|--numprocesses*|--dist*|-pno:xdist|-m|-m*) parallel=0 ;;
    -k|-p|-c|-o|-W|-r|--tb|--durations|--maxfail|--deselect|--ignore|--ignore-glob|--basetemp|--rootdir|--junitxml)
      value_of="$arg" ;;
    -*) ;;
    *) [ -e "${arg%%::*}" ] && parallel=0 ;;
  esac
done
if [ "$parallel" = 0 ] || [ "$workers" = 0 ]; then
  exec .venv/bin/python -m pytest "$@"
fi
exitfirst=0
for arg in "$@"; do
  case "$arg" in -x|--exitfirst|--maxfail*) exitfirst=1 ;; esac
done
echo "== phase 1 of 2: all but the serial tests, in $workers workers =="
# PostgreSQL's connections (max_connections 100 here, not ours to raise) are shared by every
# worker's test process, its session server and Celery worker and the servers its test files
# start. A server may hold GT_HTTP_THREADS + GT_DB_THREADS + 1 + GT_ASYNC_PG_POOL connections
# (33 by default); in this phase each holds at most 4 + 4 + 1 + 4 = 13 (docs/testing.md, "In
# parallel", counts the budget). A variable set by the caller wins.
set +e
GT_HTTP_THREADS="${GT_HTTP_THREADS:-4}" GT_DB_THREADS="${GT_DB_THREADS:-4}" GT_ASYNC_PG_POOL="${GT_ASYNC_PG_POOL:-4}" \
  .venv/bin/python -m pytest -n "$workers" --dist loadfile --no-loadscope-reorder -m "not serial" "$@"
first=$?
set -e
# 5: no test selected (a -k that picks none of a phase's tests); 2: interrupted (Ctrl-C)
if [ "$first" = 2 ] || { [ "$first" != 0 ] && [ "$first" != 5 ] && [ "$exitfirst" = 1 ]; }; then
  exit "$first"
fi
echo "== phase 2 of 2: the serial tests, in one process =="
set +e
.venv/bin/python -m pytest -m serial "$@"
second=$?
set -e
for rc in "$first" "$second"; do
  if [ "$rc" != 0 ] && [ "$rc" != 5 ]; then exit "$rc"; fi
done
[ "$first" = 5 ] && [ "$second" = 5 ] && exit 5
exit 0
