#!/usr/bin/env bash
# A bad UCFT_INJECT: ucft_init must fail at every rank with a line naming
# what is wrong (syntax: at parse time; a rank beyond the job: at setup),
# and the job must end (non-zero, not the launcher's timeout).
# Usage: expect_inject_bad.sh UCFTRUN PROGRAM
set -u
ucftrun=$1
prog=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
check() { # SPEC EXPECTED_TEXT
  UCFT_INJECT="$1" "$ucftrun" -n 2 --timeout 30 "$prog" >"$out" 2>&1
  rc=$?
  cat "$out"
  [ "$rc" -ne 0 ] || fail "UCFT_INJECT='$1': exit status 0"
  [ "$rc" -ne 124 ] || fail "UCFT_INJECT='$1': the job hung"
  [ "$(grep -c "UCFT_INJECT='$1': $2" "$out")" -eq 2 ] \
    || fail "UCFT_INJECT='$1': expected '$2' from both ranks"
}
check "rank=1,op=allreduce,cal=2" "unknown key 'cal'"
check "rank=1,op=scan" "op 'scan'"
check "rank=2,op=bcast" "rank=2: the job has 2 ranks"
echo "PASS: bad UCFT_INJECT specs end ucft_init with a reason"
