#!/usr/bin/env bash
# A rank dies during start-up (--kill 2@0): ucft_init at the survivors must
# end with an error naming what happened (a death event, or at worst
# UCFT_INIT_TIMEOUT), never hang until the launcher's --timeout.
set -u
ucftrun=$1
prog=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
start=$(date +%s)
UCFT_INIT_TIMEOUT=8s "$ucftrun" -n 3 --kill 2@0 --timeout 40 "$prog" >"$out" 2>&1
rc=$?
elapsed=$(( $(date +%s) - start ))
cat "$out"
fail() { echo "FAIL: $*"; exit 1; }
[ "$rc" -ne 0 ] || fail "exit status 0"
[ "$rc" -ne 124 ] || fail "the launcher's timeout had to end the job (a hang)"
grep -q "died during start-up\|did not complete within UCFT_INIT_TIMEOUT" "$out" \
  || fail "no line saying why ucft_init failed"
[ "$elapsed" -le 20 ] || fail "took ${elapsed}s"
echo "PASS: ucft_init ended with an error after ${elapsed}s"
