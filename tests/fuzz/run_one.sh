#!/usr/bin/env bash
# Runs one fuzz target for a bounded time at the lowest priority, from its
# seed corpus in the repository (read only: new inputs go to WORK).
# Usage: run_one.sh FUZZ_BIN CORPUS_DIR WORK_DIR SECONDS [libFuzzer args...]
# Fails when the fuzzer finds a crash, a leak, a sanitizer report or a
# timeout (libFuzzer's exit status), and prints its execution count.
set -euo pipefail
bin=$1 corpus=$2 work=$3 secs=$4
shift 4
mkdir -p "$work/new" "$work/artifacts"
[ -d "$corpus" ] || { echo "run_one: no corpus at $corpus" >&2; exit 1; }
log=$work/fuzz.log
rc=0
nice -n 19 "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
  -print_final_stats=1 -artifact_prefix="$work/artifacts/" "$@" \
  "$work/new" "$corpus" >"$log" 2>&1 || rc=$?
grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb' "$log" || true
if [ $rc -ne 0 ]; then
  tail -60 "$log"
  echo "run_one: $(basename "$bin") failed (status $rc); inputs in $work/artifacts" >&2
fi
exit $rc
