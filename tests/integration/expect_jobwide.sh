#!/usr/bin/env bash
# Variables that must be the same at every rank, set otherwise at rank 1:
# every rank's ucft_init fails with UCFT_ERR_INVALID_PARAM and an error
# line that names the variable, and the job ends by itself. A variable that
# may differ (UCFT_TREE_REPAIR_WINDOW) changes nothing: the job runs.
# Usage: expect_jobwide.sh UCFTRUN IT_MISMATCH
set -u
ucftrun=$1
prog=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() { echo "FAIL: $*"; cat "$out"; exit 1; }
for nv in TREE_REPAIR=keep ALLREDUCE_ALG=recdbl F=2 CHECKSUM=y; do
  name=${nv%%=*} value=${nv#*=}
  "$ucftrun" -n 4 --timeout 60 "$prog" config "$name" "$value" >"$out" 2>&1
  rc=$?
  [ "$rc" -ne 124 ] || fail "$name: the job hung"
  for r in 0 1 2 3; do
    grep -q "^rank $r: init ERR_INVALID_PARAM" "$out" || fail "$name: rank $r"
  done
  grep -q "error: UCFT_$name is '$value' here but '.*' at rank 0: it must be the same at every rank" "$out" ||
    fail "$name: rank 1 does not name the variable"
  grep -q "error: UCFT_$name is '.*' here but '$value' at rank 1" "$out" ||
    fail "$name: rank 0 does not name the variable"
done
"$ucftrun" -n 4 --timeout 60 "$prog" config TREE_REPAIR_WINDOW 8 >"$out" 2>&1 ||
  fail "a window that may differ stopped the job"
[ "$(grep -c 'allreduce OK 10$' "$out")" -eq 4 ] || fail "allreduce with a differing window"
echo "PASS: job-wide variables checked at start-up"
