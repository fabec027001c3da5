#!/usr/bin/env bash
# Repeat chosen tests N times, optionally under extra CPU load, and count passes and failures:
# a test that fails by chance is a defect (issue 20). Each run is a separate ./test.sh (its own
# test database, server, worker and browser), so runs do not share state.
#
#   scripts/stress_tests.sh [-n RUNS] [-l BUSY_LOOPS] [-k] -- <pytest arguments>
#
#   -n RUNS        how many times to run the tests (default 5)
#   -l BUSY_LOOPS  extra CPU load: that many busy loops (one core each) while the tests run
#                  (default 0; stress-ng is used when installed, else a Python loop)
#   -k             keep going after a failing run (default: stop at the first failing run)
#
# e.g. scripts/stress_tests.sh -n 10 -l 2 -k -- tests/browser/codraw/test_codraw_neural_teller_browser.py
# Prints one line per run and, at the end, each test that failed with how often; the output of
# every failing run is kept in var/stress/<time>-<pid>/run-<n>.log (the server and worker logs
# of that run are in var/ as the tests name them; a later run overwrites those).
set -uo pipefail
cd "$(dirname "$0")/.."

runs=5 loops=0 keep=0
while getopts "n:l:k" opt; do
  case "$opt" in
    n) runs=$OPTARG ;;
    l) loops=$OPTARG ;;
    k) keep=1 ;;
    *) sed -n '2,16p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ "${1:-}" = "--" ] && shift
if [ $# -eq 0 ] || ! [[ "$runs" =~ ^[1-9][0-9]*$ ]] || ! [[ "$loops" =~ ^[0-9]+$ ]]; then
  sed -n '2,16p' "$0"; exit 2
fi

out=var/stress/$(date +%Y%m%d-%H%M%S)-$$
mkdir -p "$out"
load_pids=()
stop_load() { for pid in "${load_pids[@]}"; do kill "$pid" 2>/dev/null; done; load_pids=(); }
trap stop_load EXIT
trap "exit 130" INT TERM
for _ in $(seq 1 "$loops"); do
  if command -v stress-ng >/dev/null; then stress-ng --cpu 1 --quiet &
  else python3 -c "while True: pass" &
  fi
  load_pids+=($!)
done

passed=0 failed=0
failures=$(mktemp)
for i in $(seq 1 "$runs"); do
  log="$out/run-$i.log"
  start=$SECONDS
  ./test.sh "$@" -q -rfE -p no:cacheprovider >"$log" 2>&1
  rc=$?
  summary=$(grep -E '^(=+ )?[0-9]+ (passed|failed|error)' "$log" | tail -1 | tr -d '=' | xargs)
  if [ $rc -eq 0 ]; then
    passed=$((passed + 1)); rm -f "$log"
    echo "run $i/$runs: pass ($((SECONDS - start)) s) ${summary}"
  else
    failed=$((failed + 1))
    grep -E '^(FAILED|ERROR) ' "$log" | sed -E 's/ - .*//' >>"$failures"
    echo "run $i/$runs: FAIL rc=$rc ($((SECONDS - start)) s) ${summary}; log: $log"
    [ $keep -eq 1 ] || break
  fi
done

echo "== $passed passed, $failed failed of $((passed + failed)) runs (extra busy loops: $loops; load average now: $(cut -d' ' -f1-3 /proc/loadavg))"
if [ -s "$failures" ]; then
  echo "== failing tests (runs):"
  sort "$failures" | uniq -c | sort -rn
fi
rm -f "$failures"
[ $failed -eq 0 ]
