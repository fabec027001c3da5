#!/usr/bin/env bash
# Run the whole test suite against a real PostgreSQL and a real Redis (started if installed and
# not running), with a real Celery worker, a real uvicorn server and headless Chromium.
set -euo pipefail
cd "$(dirname "$0")"
source scripts/setup.sh
scripts/services.sh
export DATABASE_URL="${TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/groundtalk}"
export REDIS_URL="${TEST_REDIS_URL:-redis://127.0.0.1:6379/1}"
export SECRET_KEY="${SECRET_KEY:-test-secret}"
export GT_PSEUDONYM_KEY="${GT_PSEUDONYM_KEY:-test-pseudonym}"
export GT_TEST_DB_NAME="${GT_TEST_DB_NAME:-test_groundtalk_$$}"
mkdir -p var
exec .venv/bin/python -m pytest "$@"
