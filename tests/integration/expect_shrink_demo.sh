#!/usr/bin/env bash
# examples/shrink with ranks 3 and 6 killed by the launcher and rank 2
# killed by UCFT_INJECT inside the first shrink (set by the caller): the
# launcher reports the self-inflicted SIGKILL (exit 137); each of the five
# survivors saw no wrong result and ran the corrected allreduce on the
# final communicator of five ranks.
# Usage: expect_shrink_demo.sh UCFTRUN SHRINK
set -u
out=$(mktemp)
trap 'rm -f "$out"' EXIT
timeout 100 "$1" -n 8 --timeout 90 --times-from connected --kill 3@1.5 --kill 6@2.5 "$2" >"$out" 2>&1
rc=$?
fail() { echo "FAIL: $*"; cat "$out"; exit 1; }
[ "$rc" -eq 137 ] || fail "exit status $rc, expected 137"
grep -q "UCFT_INJECT: killing myself" "$out" || fail "rank 2 did not die in the shrink"
for r in 0 1 4 5 7; do
  grep -q "^rank $r: 0 wrong results; corrected allreduce on 5 ranks (f = 1): success" "$out" ||
    fail "survivor $r"
done
grep -q "WRONG" "$out" && fail "a wrong result"
echo "ok: 5 survivors, every result correct"
