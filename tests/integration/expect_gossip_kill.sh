#!/usr/bin/env bash
# The approximate allreduce (PFLC) with rank 3 of 5 killing itself in the
# middle of the operation (UCFT_INJECT): the job's status is rank 3's
# SIGKILL (137); each of the 4 survivors must report a result within eps
# of the exact sum over the survivors, and the exact count of wrong ranks
# that follows must be 0 at every survivor (no CHECK FAILED).
set -u
ucftrun=$1
prog=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() { tail -30 "$out"; echo "FAIL: $*"; exit 1; }
UCFT_INJECT='rank=3,op=allreduce_approx,msg=20' \
  "$ucftrun" -n 5 --timeout 60 "$prog" approx pflc 1e-8 150 none >"$out" 2>&1
rc=$?
[ "$rc" -eq 137 ] || fail "job status $rc (want 137: rank 3's SIGKILL only)"
grep -q "CHECK FAILED" "$out" && fail "a survivor's check failed"
ok=$(grep -c 'pflc, 1 dead, .*(ok)' "$out")
[ "$ok" -eq 4 ] || fail "$ok of 4 survivors within eps of the survivors' sum"
echo "PASS: PFLC converged over the 4 survivors of a rank killed mid-operation"
