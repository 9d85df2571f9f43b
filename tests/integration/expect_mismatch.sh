#!/usr/bin/env bash
# Collectives called with different counts at different ranks: the job
# must end by itself (not the launcher's timeout), at least one rank must
# report UCFT_ERR_TRUNCATED with a warning that names the cause, and no
# rank may report success with a value of the wrong size (rank 1, the odd
# one out, never succeeds).
# Usage: expect_mismatch.sh UCFTRUN IT_MISMATCH
set -u
ucftrun=$1
prog=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
for op in bcast reduce allreduce; do
  "$ucftrun" -n 4 --timeout 60 "$prog" "$op" >"$out" 2>&1
  rc=$?
  cat "$out"
  [ "$rc" -ne 124 ] || fail "$op: the job hung"
  [ "$rc" -ne 0 ] || fail "$op: every rank succeeded"
  grep -q "$op ERR_TRUNCATED" "$out" || fail "$op: no rank reported ERR_TRUNCATED"
  grep -q "called the .* with different" "$out" \
    || fail "$op: no warning names the cause"
  ! grep -q "rank 1: $op OK" "$out" || fail "$op: rank 1 succeeded"
done
echo "PASS: mismatched collective sizes end with UCFT_ERR_TRUNCATED, no hang"
