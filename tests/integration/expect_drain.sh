#!/usr/bin/env bash
# Late messages of finished collectives must not pile up: 2 ranks run
# 20,000 corrected broadcasts back to back (the root never waits, so it runs
# far ahead of its receiver and the receiver's corrections reach it late).
# At the end each rank's transport reports how many messages nobody had
# received ("discarded N unmatched message(s) at destroy"); only the last
# incomplete drain block (< 16 instances, a few messages each) may remain.
set -u
ucftrun=$1
bench=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() { cat "$out"; echo "FAIL: $*"; exit 1; }
UCFT_WAIT=spin UCFT_LOG_LEVEL=info "$ucftrun" -n 2 --timeout 120 "$bench" coll \
  --op bcast --alg corrected --size 8 --iters 20000 --warmup 10 >"$out" 2>&1 ||
  fail "the benchmark failed"
grep -q "^bcast .*corrected" "$out" || fail "no result line"
grep -q "was not matched" "$out" && fail "UCX found unreceived messages at exit"
max=$(sed -n 's/.*discarded \([0-9]*\) unmatched.*/\1/p' "$out" | sort -n | tail -1)
echo "largest count of messages left at destroy: ${max:-0}"
[ "${max:-0}" -le 64 ] || fail "${max} late messages accumulated (at most 64 expected)"
# Finalize drops what is still queued; it must be the tail end, not a
# backlog that the sweeps during the run left behind.
fin=$(sed -n 's/.*finalize: \([0-9]*\) late collective messages dropped.*/\1/p' "$out" | sort -n | tail -1)
echo "largest count of late messages dropped at finalize: ${fin:-0}"
[ "${fin:-0}" -le 64 ] || fail "${fin} late messages were left for finalize (at most 64 expected)"
echo "PASS: late collective messages were drained"
