#!/usr/bin/env bash
# Late messages must keep draining past the 16-bit tag sequence's wrap.
# 8 ranks; rank 5 dies at its first broadcast, so the others' broadcasts
# leave late corrections behind (the checked correction goes past the
# dead rank). The benchmark's barrier (a kept instance: it runs on for
# the others after it completes) is followed only by broadcasts; 65,536
# instances later one of them reuses the barrier's tag sequence. The
# kept barrier must be retired then: while it ran, the sweeper counted
# that broadcast's late messages as wanted, stopped at them for the rest
# of the run, and the backlog grew (thousands left for finalize; with
# 200,000 broadcasts the run took minutes instead of a second).
set -u
ucftrun=$1
bench=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() { tail -30 "$out"; echo "FAIL: $*"; exit 1; }
UCFT_INJECT='rank=5,op=bcast,call=1,msg=0' UCFT_LOG_LEVEL=info \
  "$ucftrun" -n 8 --timeout 150 "$bench" coll --op bcast --iters 75000 \
  --warmup 1000 --json >"$out" 2>&1
line=$(grep '^{' "$out") || fail "no result"
[[ $line == *'"failed_ranks":[5]'* ]] || fail "rank 5 not named: $line"
[[ $line == *'"errors":0,'* ]] || fail "failed broadcasts: $line"
grep -q "was not matched" "$out" && fail "UCX found unreceived messages at exit"
fin=$(sed -n 's/.*finalize: \([0-9]*\) late collective messages dropped.*/\1/p' "$out" | sort -n | tail -1)
echo "largest count of late messages dropped at finalize: ${fin:-0}"
[ "${fin:-0}" -le 256 ] || fail "${fin} late messages were left for finalize (at most 256 expected)"
echo "PASS: late messages drained past the sequence wrap after a failure"
