#!/usr/bin/env bash
# UCFT_CHECKSUM=y and a flipped bit in rank R's first message of a
# corrected collective OP (UCFT_INJECT): its receiver declares rank R
# failed (a corrupted message of a corrected algorithm costs its sender),
# rank R is fenced (SIGABRT, job status 134), and each of the N - 1
# survivors holds the corrected result, the same at every one (it_gossip
# OP accused: the root's data, or the corrected sum), no CHECK FAILED,
# nobody waits.
#   expect_checksum_accuse.sh UCFTRUN IT_GOSSIP N R exact|bcast
set -u
ucftrun=$1
prog=$2
n=$3
r=$4
mode=$5
op=allreduce
[ "$mode" = bcast ] && op=bcast
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() { tail -30 "$out"; echo "FAIL: $*"; exit 1; }
UCFT_CHECKSUM=y UCFT_INJECT="rank=$r,op=$op,flip=62" \
  "$ucftrun" -n "$n" --timeout 30 "$prog" "$mode" accused >"$out" 2>&1
rc=$?
[ "$rc" -eq 134 ] || fail "job status $rc (want 134: rank $r fenced)"
grep -q "CHECK FAILED" "$out" && fail "a survivor's check failed"
grep -q "declaring rank $r failed: it sent a corrupted message" "$out" ||
  fail "no rank declared rank $r for its corrupted message"
ok=$(grep -c "$mode, 1 dead, .*(ok)" "$out")
[ "$ok" -eq $((n - 1)) ] || fail "$ok of $((n - 1)) survivors with the corrected result"
echo "PASS: $op: the corrupted message's sender (rank $r) was declared and fenced; the $((n - 1)) survivors agree"
