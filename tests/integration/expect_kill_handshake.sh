#!/usr/bin/env bash
# A --kill due while the rank holds a socket but has not finished
# connecting to the PMIx server waits for the connection (PMIx 4.2.2's
# server crashes or deadlocks when a client dies inside its handshake;
# launcher/handshake.h). The rank holds a socket for 1.5 s before
# ucft_init (UCFT_IT_HOLD_SOCKET_MS), the kill is due at 0.5 s (the
# launcher waits at most 2 s past that for the handshake): the
# launcher must say that the kill waits, kill the rank after it connected,
# and the job must end on its own with the survivors agreeing on start-up.
# (With 400 ms and a kill at 100 ms, an ASan build in a loaded run had not
# reached main, and so held no socket, at 100 ms: the kill went at once.)
# Usage: expect_kill_handshake.sh UCFTRUN IT_FAULTS
set -u
ucftrun=$1 prog=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
start=$(date +%s)
UCFT_IT_HOLD_SOCKET_MS=1500 "$ucftrun" -v -n 3 --kill 2@0.5 --timeout 40 \
  "$prog" barrier 2 corrected >"$out" 2>&1
rc=$?
el=$(( $(date +%s) - start ))
grep -v "info: \(placement\|heartbeat\)" "$out"
[ "$rc" -ne 124 ] || fail "the job hung (launcher timeout)"
[ "$el" -le 20 ] || fail "took ${el} s"
grep -q -- "--kill of rank 2 waits for the end of its PMIx handshake" "$out" ||
  fail "the kill did not wait for the handshake"
c=$(grep -n "rank 2 connected (" "$out" | head -1 | cut -d: -f1)
k=$(grep -n "rank 2 killed by signal 9" "$out" | head -1 | cut -d: -f1)
[ -n "$c" ] || fail "rank 2 never connected"
[ -n "$k" ] || fail "rank 2 was not killed by SIGKILL"
[ "$c" -lt "$k" ] || fail "rank 2 was killed before it connected"
nf=$(grep -c "^it_faults: ucft_init failed" "$out")
ok=$(grep -c "^it_faults: rank [01]: .* all checked" "$out")
[ "$nf" -eq 2 ] || [ "$ok" -eq 2 ] ||
  fail "survivors disagree on start-up ($nf failed ucft_init, $ok went on)"
echo "PASS: the kill waited for the handshake (survivors: $nf init failures, $ok ran)"
