#!/usr/bin/env bash
# A rank is stopped (SIGSTOP) and the others wait for it forever (the
# failure detector is off, so nothing tells them): ucftrun's --timeout must
# end the job with a non-zero status, say so, and leave no rank behind.
set -u
ucftrun=$1
prog=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
start=$(date +%s)
UCFT_DETECTOR=n "$ucftrun" -n 3 --stop 2@0.5 --timeout 4 "$prog" wait >"$out" 2>&1
rc=$?
elapsed=$(( $(date +%s) - start ))
cat "$out"
if [ "$rc" -eq 0 ]; then echo "FAIL: exit status 0 after a timeout"; exit 1; fi
if ! grep -qi "timeout\|timed out" "$out"; then echo "FAIL: no timeout line"; exit 1; fi
if [ "$elapsed" -gt 20 ]; then echo "FAIL: took ${elapsed}s"; exit 1; fi
if pgrep -f "$prog wait" >/dev/null; then echo "FAIL: ranks left behind"; pkill -9 -f "$prog wait"; exit 1; fi
echo "PASS: exit status $rc after ${elapsed}s"
