#!/usr/bin/env bash
# Set up and run GroundTalk: .venv with dependencies, migrations, demo content, the server and
# the model agents' processes: embedded, the model server (manage.py model_server, on
# 127.0.0.1:GT_MODEL_SERVER_PORT); full stack, the agent worker, the CPU torch families' model
# workers (manage.py model_workers, one process) and a model worker per GPU family. Embedded by
# default; full stack when DATABASE_URL and REDIS_URL are set. PORT (default 8000) and HOST
# (default 127.0.0.1) choose where it listens.
#   GT_DEMO        load the demo batches (default: 1 embedded, 0 full stack); on the full stack
#                  GT_DEMO=1 also opens their demo links, only with a loopback HOST and only from this machine
#   GT_DEMO_ADMIN  create the staff account admin/admin (embedded only; default 1)
# The server is not started on a public address (HOST other than loopback) while DEBUG is on or
# admin/admin exists (or this run's demo would create it), unless GT_ALLOW_PUBLIC_DEMO=1: checked
# first, before migrating (manage.py prepare_run, gt_listen_check's check; docs/crowd.md).
set -euo pipefail
cd "$(dirname "$0")"
export HOST="${HOST:-127.0.0.1}"   # the server reads it too: demo links open on the full stack only on loopback
source scripts/setup.sh
mkdir -p var
full_stack=""
if [ -n "${DATABASE_URL:-}" ] && [ -n "${REDIS_URL:-}" ]; then full_stack=1; fi
prepare=(--host "${HOST}")
if [ "${GT_DEMO:-$([ -z "$full_stack" ] && echo 1 || echo 0)}" = 1 ]; then
  prepare+=(--demo)
  if [ -z "$full_stack" ] && [ "${GT_DEMO_ADMIN:-1}" = 1 ]; then prepare+=(--admin); fi
fi
# One Django process prepares it all (manage.py prepare_run): the listen check (before any table
# is made), migrate, the demo batches (manage.py gt_demo [--admin]), then lines this script reads
# (no eval): torch=1 when torch is installed (the `models` extra), and the torch agents' family keys
# of the models file (models/models.toml or GT_MODELS_FILE; manage.py model_families [--device ...]).
prepared="$(.venv/bin/python manage.py prepare_run "${prepare[@]}")" || { status=$?; printf '%s\n' "$prepared"; exit "$status"; }
torch=0; families=""; cpu_families=""; gpu_families=""
while IFS= read -r line; do
  case "$line" in
    torch=*) torch="${line#torch=}" ;;
    families=*) families="${line#families=}" ;;
    cpu_families=*) cpu_families="${line#cpu_families=}" ;;
    gpu_families=*) gpu_families="${line#gpu_families=}" ;;
    "") ;;
    *) printf '%s\n' "$line" ;;   # what migrate and the demo said
  esac
done <<< "$prepared"
if [ "$torch" != 1 ]; then   # the torch families are served only where torch is installed
  if [ -n "$families" ]; then
    echo "the models file has torch agents but torch is not installed (pip install -e '.[models]'):" \
         "their batches show as 'cannot run'"
  fi
  families=""; cpu_families=""; gpu_families=""
fi
# Every process started here is supervised (restarted when it exits unasked: the commands' own
# supervisors) and stopped when this script exits.
pids=()
stop_all() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap stop_all EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
if [ -n "$full_stack" ]; then
  echo "full stack: PostgreSQL + Redis; starting the agent worker (log: var/worker.log)"
  echo "staff account for the researcher pages and the admin (once, same environment):"
  echo "  .venv/bin/python manage.py createsuperuser"
  if [ "${GT_DEMO:-0}" = 1 ]; then
    echo "demo batches: open http://${HOST}:${PORT:-8000}/ on this machine (demo links open only from it, HOST loopback)"
  fi
  .venv/bin/python manage.py agent_worker --concurrency 4 > var/worker.log 2>&1 &
  pids+=($!)
  if [ -n "$families" ]; then   # the batched model workers (docs/agents.md, "The model worker")
    if [ -n "$cpu_families" ]; then   # the CPU families: one process, a thread each
      echo "model workers for families $(echo $cpu_families | tr ' ' ','): one process (log: var/model-workers.log)"
      .venv/bin/python manage.py model_workers --device cpu > var/model-workers.log 2>&1 &
      pids+=($!)
    fi
    for family in $gpu_families; do   # a process per GPU family
      echo "model worker for family $family (log: var/model-worker-$family.log)"
      .venv/bin/python manage.py model_worker --family "$family" > "var/model-worker-$family.log" 2>&1 &
      pids+=($!)
    done
  fi
else
  echo "embedded: SQLite (db.sqlite3), in-memory channel layer, agents in the server process"
  if [ -n "$families" ]; then   # the torch agents: the model server on loopback (docs/agents.md)
    echo "model server for families $(echo $families | tr ' ' ','):" \
         "127.0.0.1:${GT_MODEL_SERVER_PORT:-8765} (log: var/model-server.log)"
    .venv/bin/python manage.py model_server > var/model-server.log 2>&1 &
    pids+=($!)
  fi
fi
echo "GroundTalk on http://${HOST}:${PORT:-8000}/  (researcher pages: /research/, admin: /admin/)"
# In the background and waited for, so that a TERM or Ctrl-C stops it and every process above at once.
.venv/bin/python -m uvicorn groundtalk_web.asgi:application --host "${HOST}" --port "${PORT:-8000}" \
  --workers "${WORKERS:-1}" --ws-max-size 65536 --ws-per-message-deflate false --lifespan on &
web_pid=$!
pids+=("$web_pid")
wait "$web_pid"
