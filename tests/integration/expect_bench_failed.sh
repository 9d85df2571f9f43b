#!/usr/bin/env bash
# ucft-bench coll with ranks killed mid-run (UCFT_INJECT), rank 0 among
# them: a survivor must still report, leaving the dead ranks out and
# naming them. The corrected allreduce must show no failed call at the
# survivors (f = 1: rank 0; f = 2: ranks 0 and 1); the recursive doubling
# baseline must count its failed calls (it errors after a failure).
set -u
ucftrun=$1
bench=$2
fail() { echo "FAIL: $*"; exit 1; }
run() { # env-spec, bench options...
  local spec=$1
  shift
  UCFT_INJECT=$spec "$ucftrun" -n 4 --timeout 90 "$bench" coll --op allreduce \
    --iters 2000 --warmup 100 --json "$@" 2>/dev/null | grep '^{'
}
line=$(run 'rank=0,op=allreduce,call=300,msg=0') || fail "f=1: no report"
[[ $line == *'"failed_ranks":[0]'* ]] || fail "f=1: rank 0 not named: $line"
[[ $line == *'"errors":0,'* ]] || fail "f=1: failed calls: $line"
mean=$(sed -n 's/.*"mean_us":\([0-9.]*\).*/\1/p' <<<"$line")
awk -v m="$mean" 'BEGIN { exit !(m > 0) }' || fail "f=1: mean '$mean'"
line=$(run 'rank=0,op=allreduce,call=300,msg=0;rank=1,op=allreduce,call=600,msg=0' \
  --f 2) || fail "f=2: no report"
[[ $line == *'"failed_ranks":[0,1]'* ]] || fail "f=2: ranks 0, 1 not named: $line"
[[ $line == *'"errors":0,'* ]] || fail "f=2: failed calls: $line"
line=$(run 'rank=3,op=allreduce,call=300,msg=0' --alg recdbl) ||
  fail "recdbl: no report"
[[ $line == *'"failed_ranks":[3]'* ]] || fail "recdbl: rank 3 not named: $line"
[[ $line != *'"errors":0,'* ]] || fail "recdbl: no failed call counted: $line"
echo "PASS: reports after kills of rank 0 (f=1) and ranks 0, 1 (f=2) with" \
  "no failed call; recdbl counts its failed calls"
