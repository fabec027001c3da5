#!/usr/bin/env bash
# Set up and run GroundTalk: .venv with dependencies, migrations, demo content, the server and
# (full stack) the model worker. Embedded by default; full stack when DATABASE_URL and REDIS_URL
# are set. PORT (default 8000) and HOST (default 127.0.0.1) choose where it listens.
set -euo pipefail
cd "$(dirname "$0")"
source scripts/setup.sh
mkdir -p var
.venv/bin/python manage.py migrate --noinput -v0
if [ -z "${DATABASE_URL:-}" ]; then .venv/bin/python manage.py gt_demo --admin; else .venv/bin/python manage.py gt_demo; fi
worker_pid=""
if [ -n "${DATABASE_URL:-}" ] && [ -n "${REDIS_URL:-}" ]; then
  echo "full stack: PostgreSQL + Redis; starting the model worker (log: var/worker.log)"
  .venv/bin/python manage.py agent_worker --concurrency 4 > var/worker.log 2>&1 &
  worker_pid=$!
  trap '[ -n "$worker_pid" ] && kill "$worker_pid" 2>/dev/null' EXIT
else
  echo "embedded: SQLite (db.sqlite3), in-memory channel layer, agents in the server process"
fi
echo "GroundTalk on http://${HOST:-127.0.0.1}:${PORT:-8000}/  (researcher pages: /research/, admin: /admin/)"
.venv/bin/python -m uvicorn groundtalk_web.asgi:application --host "${HOST:-127.0.0.1}" --port "${PORT:-8000}" \
  --workers "${WORKERS:-1}" --ws-max-size 65536 --ws-per-message-deflate false --lifespan on
