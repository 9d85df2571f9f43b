#!/usr/bin/env bash
# The long fuzz run (docs/fuzz.md): every target of a UCFT_FUZZ build for
# RUNS executions (default 10^7) from its seed corpus, one after the other
# at the lowest priority, each bounded to MAX_SECONDS (default 3600).
# Prints one line per target: executions, seconds, result.
# Usage: scripts/fuzz_long.sh BUILD_FUZZ_DIR [RUNS [MAX_SECONDS]]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=$1 runs=${2:-10000000} max=${3:-3600}
export UCX_MEM_MALLOC_HOOKS=no UCX_MEM_MMAP_HOOK_MODE=none
rc=0
for bin in "$dir"/bin/fuzz-*; do
  t=${bin##*/fuzz-}
  work=$dir/fuzz-long/$t
  t0=$(date +%s)
  r=0
  "$root/tests/fuzz/run_one.sh" "$bin" "$root/tests/fuzz/corpus/$t" "$work" \
    "$max" -runs="$runs" >"$work.out" 2>&1 || r=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/fuzz.log")
  echo "$t executions=$execs seconds=$(( $(date +%s) - t0 )) status=$r"
  [ $r -eq 0 ] || rc=1
done
exit $rc
