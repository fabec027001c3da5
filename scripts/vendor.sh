#!/usr/bin/env bash
# Copy the browser libraries the pages load from node_modules/ (npm install, see package.json)
# into static/vendor/ (ignored by git; served as /static/vendor/...). Run by scripts/setup.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
out=static/vendor
mkdir -p "$out"
copy() {  # copy SRC DEST-NAME, only when it changed
  local src="node_modules/$1" dest="$out/$2"
  if [ ! -f "$src" ]; then
    echo "vendor: $src is missing; run 'npm install' in $(pwd)" >&2
    exit 1
  fi
  cmp -s "$src" "$dest" 2>/dev/null || cp "$src" "$dest"
}
copy konva/konva.min.js konva.min.js
copy konva/LICENSE konva.LICENSE.txt
copy chart.js/dist/chart.umd.min.js chart.umd.min.js   # the research monitor's plots (docs/monitor.md)
copy chart.js/LICENSE.md chart.LICENSE.txt
