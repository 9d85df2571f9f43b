#!/usr/bin/env bash
# it_comms revoke_die: the last rank revokes and dies at once (SIGKILL,
# exit 137 from the launcher); every other rank's receive ended REVOKED.
# Usage: expect_revoke_die.sh UCFTRUN IT_COMMS N
set -u
out=$(mktemp)
trap 'rm -f "$out"' EXIT
timeout 60 "$1" -n "$3" --timeout 50 "$2" revoke_die >"$out" 2>&1
rc=$?
fail() { echo "FAIL: $*"; cat "$out"; exit 1; }
[ "$rc" -eq 137 ] || fail "exit status $rc, expected 137"
for ((r = 0; r < $3 - 1; r++)); do
  grep -q "^rank $r: revoked by a rank that died at once" "$out" || fail "rank $r"
done
echo "ok: $(($3 - 1)) ranks saw the revoke"
