#!/usr/bin/env bash
# The runs behind docs/bench.md (about 30 minutes; every run is bounded). Results land in
# bench/out/<label>.json, the tables in bench/out/suite.md, the plots in docs/bench_*.png.
#
#   bench/suite.sh            # everything
#   bench/suite.sh human      # only the runs whose label contains "human"
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/services.sh
[[ -x .venv/bin/py-spy ]] || .venv/bin/pip install -q -e ".[test,bench]"
B=".venv/bin/python bench/relay.py"
only="${1:-}"
labels=()
run() {  # label, then relay.py arguments
  local label="$1"; shift
  labels+=("$label")
  if [[ -n "$only" && "$label" != *"$only"* ]]; then return 0; fi
  echo "=== $label: $*"
  timeout 900 $B --label "$label" "$@" || echo "=== $label FAILED ($?)"
}

# The requirement: 500 matches at the human pace, GroundTalk beside the bare relay; a match's two
# seats on different server processes (every event crosses Redis), then on the process its id
# hashes to (the nginx recipe of docs/operations.md). Each twice: single runs are noisy.
run human-500 --pairs 500 --duration 60 --mode human
run human-500-repeat --pairs 500 --duration 60 --mode human --no-baseline
run human-500-match --pairs 500 --duration 60 --mode human --no-baseline --route match
run human-500-match-repeat --pairs 500 --duration 60 --mode human --no-baseline --route match
# The runs that undid the write path (-thread, -locked) and the channel layer (-stocklayer, -core)
# used switches that left the product in issue 22: they are reproducible from git history
# (docs/bench.md names the commit).
# Fewer matches.
run human-300 --pairs 300 --duration 60 --mode human --no-baseline
run human-400 --pairs 400 --duration 60 --mode human --no-baseline
# CPython's own garbage-collector settings instead of groundtalk_web/gc_tuning.py.
GT_GC_THRESHOLD=default run human-300-gcdefault --pairs 300 --duration 60 --mode human --no-baseline
# Saturation, beside the bare relay; the 50-pair run is profiled with py-spy.
run saturation-50 --pairs 50 --duration 45 --mode saturation --profile 20
run saturation-200 --pairs 200 --duration 45 --mode saturation
run saturation-50-match --pairs 50 --duration 45 --mode saturation --no-baseline --route match
# What earlier changes to the hot path bought: the same saturation run with one of them undone.
run saturation-50-serial --pairs 50 --duration 45 --mode saturation --no-baseline --patches serial
run saturation-50-deflate --pairs 50 --duration 45 --mode saturation --no-baseline \
  --server-args "--ws-per-message-deflate true"
# Another server: Daphne instead of uvicorn.
run saturation-50-daphne --pairs 50 --duration 45 --mode saturation --no-baseline --server daphne

files=()
for label in "${labels[@]}"; do
  [[ -f "bench/out/$label.json" ]] && files+=("bench/out/$label.json")
done
.venv/bin/python bench/report.py "${files[@]}" | tee bench/out/suite.md
.venv/bin/python bench/report.py bench/out/human-500.json bench/out/human-500-match.json \
  bench/out/human-400.json bench/out/human-300.json \
  bench/out/saturation-50.json --plots docs >/dev/null
