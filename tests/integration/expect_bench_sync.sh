#!/usr/bin/env bash
# ucft-bench coll --sync: every operation timed alone with an untimed
# barrier after it. The JSON line must say so, report no failed call and a
# positive latency for each op; a value given to --sync is refused.
set -u
ucftrun=$1
bench=$2
fail() { echo "FAIL: $*"; exit 1; }
for op in bcast allreduce; do
  line=$("$ucftrun" -n 4 --timeout 60 "$bench" coll --op "$op" --sync \
    --iters 300 --warmup 10 --json 2>/dev/null | grep '^{') ||
    fail "$op: no result"
  [[ $line == *'"sync":1'* ]] || fail "$op: not in sync mode: $line"
  [[ $line == *'"errors":0'* ]] || fail "$op: failed calls: $line"
  mean=$(sed -n 's/.*"mean_us":\([0-9.]*\).*/\1/p' <<<"$line")
  awk -v m="$mean" 'BEGIN { exit !(m > 0) }' || fail "$op: mean $mean"
done
out=$("$ucftrun" -n 2 --timeout 30 "$bench" coll --op bcast --sync=2 2>&1) &&
  fail "--sync=2 accepted"
grep -q "sync" <<<"$out" || fail "no line naming --sync: $out"
echo "PASS: --sync latency for bcast and allreduce; --sync=2 refused"
