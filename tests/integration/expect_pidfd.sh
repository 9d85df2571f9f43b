#!/usr/bin/env bash
# The pidfd fast path: rank 3 is SIGKILLed; every survivor's heartbeat
# thread must see its process end through the pidfd it watches (a debug
# line per survivor), and the job must pass its own checks (every survivor
# told, the failed set exact; it_detect told).
set -u
ucftrun=$1
prog=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() { cat "$out"; echo "FAIL: $*"; exit 1; }
UCFT_LOG_LEVEL=debug "$ucftrun" -n 4 --kill 3@1.5 --timeout 50 "$prog" told 5 \
  >"$out" 2>&1 || fail "the job failed"
for r in 0 1 2; do
  grep -q "ucft rank $r\] debug: rank 3: its process ended (pidfd)" "$out" ||
    fail "rank $r did not see rank 3's process end through its pidfd"
  grep -q "ucft rank $r\] debug: watching 3 local rank(s) through pidfds" "$out" ||
    fail "rank $r does not watch its 3 local peers"
done
echo "PASS: every survivor saw the death through its pidfd"
