#!/usr/bin/env bash
# Set up and run GroundTalk: .venv with dependencies, migrations, demo content, the server and
# (full stack) the model worker. Embedded by default; full stack when DATABASE_URL and REDIS_URL
# are set. PORT (default 8000) and HOST (default 127.0.0.1) choose where it listens.
#   GT_DEMO        load the demo batches (default: 1 embedded, 0 full stack); on the full stack
#                  GT_DEMO=1 also opens their demo links, only with a loopback HOST and only from this machine
#   GT_DEMO_ADMIN  create the staff account admin/admin (embedded only; default 1)
# The server is not started on a public address (HOST other than loopback) while DEBUG is on or
# admin/admin exists, unless GT_ALLOW_PUBLIC_DEMO=1 (manage.py gt_listen_check; docs/crowd.md).
set -euo pipefail
cd "$(dirname "$0")"
export HOST="${HOST:-127.0.0.1}"   # the server reads it too: demo links open on the full stack only on loopback
source scripts/setup.sh
mkdir -p var
.venv/bin/python manage.py migrate --noinput -v0
full_stack=""
if [ -n "${DATABASE_URL:-}" ] && [ -n "${REDIS_URL:-}" ]; then full_stack=1; fi
if [ "${GT_DEMO:-$([ -z "$full_stack" ] && echo 1 || echo 0)}" = 1 ]; then
  if [ -z "$full_stack" ] && [ "${GT_DEMO_ADMIN:-1}" = 1 ]; then
    .venv/bin/python manage.py gt_demo --admin
  else
    .venv/bin/python manage.py gt_demo
  fi
fi
.venv/bin/python manage.py gt_listen_check --host "${HOST}"
worker_pid=""
if [ -n "$full_stack" ]; then
  echo "full stack: PostgreSQL + Redis; starting the model worker (log: var/worker.log)"
  echo "staff account for the researcher pages and the admin (once, same environment):"
  echo "  .venv/bin/python manage.py createsuperuser"
  if [ "${GT_DEMO:-0}" = 1 ]; then
    echo "demo batches: open http://${HOST}:${PORT:-8000}/ on this machine (demo links open only from it, HOST loopback)"
  fi
  .venv/bin/python manage.py agent_worker --concurrency 4 > var/worker.log 2>&1 &
  worker_pid=$!
  trap '[ -n "$worker_pid" ] && kill "$worker_pid" 2>/dev/null' EXIT
else
  echo "embedded: SQLite (db.sqlite3), in-memory channel layer, agents in the server process"
fi
echo "GroundTalk on http://${HOST}:${PORT:-8000}/  (researcher pages: /research/, admin: /admin/)"
.venv/bin/python -m uvicorn groundtalk_web.asgi:application --host "${HOST}" --port "${PORT:-8000}" \
  --workers "${WORKERS:-1}" --ws-max-size 65536 --ws-per-message-deflate false --lifespan on
