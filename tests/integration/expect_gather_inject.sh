#!/usr/bin/env bash
# expect_gather_inject.sh UCFTRUN IT_GATHER N MODE SPEC [COUNT]
# A rank kills itself inside an allgather (UCFT_INJECT=SPEC, never rank 0)
# during 40 rounds of `it_gather MODE`: the launcher reports that one
# SIGKILL (exit status 137), no survivor failed a check, and rank 0's
# summary shows the failure: kill (corrected): every call succeeded and
# the dead rank's blocks went absent; killring (ring baseline): calls
# ended with UCFT_ERR_PROC_FAILED, none hung. COUNT: int32 per block
# (default 3); from 64 KiB of blocks the blocking allgather works in the
# caller's buffer (UCFT_COLL_DIRECT_MIN), and no rank may report that a
# request still used it when the call ended.
set -u
ucftrun=$1 prog=$2 n=$3 mode=$4 spec=$5 count=${6:-3}
out=$(mktemp /tmp/expect_gather_inject.XXXXXX)
trap 'rm -f "$out"' EXIT
UCFT_INJECT="$spec" "$ucftrun" -n "$n" --timeout 60 "$prog" "$mode" 40 "$count" >"$out" 2>&1
rc=$?
cat "$out"
fail() { echo "FAIL: $*"; exit 1; }
[ "$rc" -ne 124 ] || fail "the job hung (launcher timeout)"
[ "$rc" -eq 137 ] || fail "exit status $rc, expected 137"
[ "$(grep -c '^ucftrun: rank' "$out")" -eq 1 ] || fail "expected one failed rank"
grep -q "killed by signal 9" "$out" || fail "no SIGKILL"
! grep -q "CHECK FAILED" "$out" || fail "a survivor's check failed"
! grep -q "defect of the algorithm" "$out" || fail "a request outlived its call"
line=$(grep "^it_gather kill:" "$out") || fail "no summary from rank 0"
absent=$(echo "$line" | sed 's/.*, \([0-9]*\) absent.*/\1/')
errors=$(echo "$line" | sed 's/.*blocks, \([0-9]*\) ended.*/\1/')
if [ "$mode" = kill ]; then
  [ "$absent" -gt 0 ] && [ "$errors" -eq 0 ] ||
    fail "corrected: $absent absent blocks, $errors errors"
else
  [ "$errors" -gt 0 ] || fail "ring: no call reported the failure"
fi
echo "PASS: $line"
