# Sourced by run.sh and test.sh: make .venv with the project's dependencies (skipped when
# pyproject.toml has not changed since the last install), and the system packages the tests use.
set -euo pipefail
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv" >&2
  "$PY" -m venv .venv
fi
stamp=".venv/.groundtalk-deps"
want="$(sha256sum pyproject.toml | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]; then
  echo "setup: installing Python dependencies" >&2
  .venv/bin/pip install -q --upgrade pip
  .venv/bin/pip install -q -e ".[test,models,llm-test]"
  echo "$want" > "$stamp"
fi
need_apt=()
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
command -v docker-compose >/dev/null 2>&1 || need_apt+=(docker-compose)
if [ ${#need_apt[@]} -gt 0 ] && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  echo "setup: apt-get install ${need_apt[*]}" >&2
  apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
if [ -f package.json ] && command -v npm >/dev/null 2>&1; then
  if [ ! -d node_modules ] || [ package.json -nt node_modules ]; then
    echo "setup: npm install" >&2
    npm install --no-audit --no-fund --silent && touch node_modules
  fi
  [ -x scripts/vendor.sh ] && scripts/vendor.sh
fi
