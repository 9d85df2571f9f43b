#!/usr/bin/env bash
# Malformed messages from a process outside the job (it_forged.c): rank 0
# reports the one that names sender 999 as UCFT_ERR_TRANSPORT, with a
# warning; drops the collective message of a communicator that does not
# exist, with a warning; and every rank still checks 20 allreduces.
# Usage: expect_forged.sh UCFTRUN IT_FORGED [TLS...]
set -u
ucftrun=$1
prog=$2
shift 2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
for tls in "${@:-shm}"; do
  UCX_TLS=$tls "$ucftrun" -n 3 --timeout 60 "$prog" >"$out" 2>&1
  rc=$?
  cat "$out"
  [ "$rc" -ne 124 ] || fail "$tls: the job hung"
  [ "$rc" -eq 0 ] || fail "$tls: exit $rc"
  grep -q "rank 0: message naming sender 999: ERR_TRANSPORT" "$out" ||
    fail "$tls: the message of sender 999 was not refused"
  grep -q "names sender 999, which is no rank" "$out" ||
    fail "$tls: no warning names sender 999"
  grep -q "names communicator 4096, which does not exist: dropped" "$out" ||
    fail "$tls: the message of communicator 4096 was not dropped with a warning"
  [ "$(grep -c '20 allreduces ok' "$out")" = 3 ] ||
    fail "$tls: not every rank checked its allreduces"
done
echo "PASS: forged messages refused or dropped with a warning, the job goes on"
