#!/usr/bin/env bash
# examples/evloop under a kill: 4 ranks in libuv loops, rank 2 killed at
# 1.5 s. Every survivor must end with the right sum of the 3 live ranks,
# print no wrong sum, and have answered socket requests and run its timer
# while it reduced.
# Usage: expect_evloop.sh <ucftrun> <evloop>
set -u
run=$1 prog=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$run" -n 4 --timeout 60 --tag-output --times-from connected --kill 2@1.5 "$prog" >"$out" 2>&1
rc=$?
fail() { echo "FAIL: $*"; cat "$out"; exit 1; }
[ $rc -eq 0 ] || fail "ucftrun exited $rc"
grep -q WRONG "$out" && fail "a wrong sum"
for r in 0 1 3; do
  grep -q "^\[$r\] iteration 59: sum   7 of 3 live ranks (correct)$" "$out" ||
    fail "rank $r did not end with the sum of the 3 survivors"
  n=$(sed -n "s/^\[$r\] served \([0-9]*\) requests while reducing.*, \([0-9]*\) timer ticks$/\1 \2/p" "$out")
  [ -n "$n" ] || fail "rank $r: no summary line"
  set -- $n
  [ "$1" -gt 0 ] && [ "$2" -gt 0 ] || fail "rank $r served $1 requests, $2 ticks"
done
echo "PASS: evloop survivors 0 1 3 summed right while serving"
grep "served" "$out"
