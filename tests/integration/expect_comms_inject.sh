#!/usr/bin/env bash
# Runs it_comms uniform under UCFT_INJECT (set by the caller) and checks the
# end: the launcher reports the self-inflicted SIGKILLs (exit 137), every
# victim named in UCFT_INJECT died where asked, and every other rank ran
# every round and found the outcomes the same at every survivor.
# Usage: expect_comms_inject.sh UCFTRUN IT_COMMS N ROUNDS
set -u
ucftrun=$1 prog=$2 n=$3 rounds=$4
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() { echo "FAIL (UCFT_INJECT='$UCFT_INJECT'): $*"; cat "$out"; exit 1; }
timeout 100 "$ucftrun" -n "$n" --timeout 90 "$prog" uniform "$rounds" >"$out" 2>&1
rc=$?
[ "$rc" -ne 124 ] || fail "the job hung"
[ "$rc" -eq 137 ] || fail "exit status $rc, expected 137"
mapfile -t victims < <(grep -o 'rank=[0-9]*' <<<"$UCFT_INJECT" | cut -d= -f2 | sort -un)
for v in "${victims[@]}"; do
  grep -q "^ucftrun: rank $v killed by signal 9" "$out" || fail "rank $v did not die"
done
for ((r = 0; r < n; r++)); do
  [[ " ${victims[*]} " == *" $r "* ]] && continue
  grep -q "^rank $r: $rounds rounds of agree, dup, shrink, split: uniform" "$out" ||
    fail "survivor $r did not finish"
done
echo "ok: ${#victims[@]} victim(s), $((n - ${#victims[@]})) survivors uniform"
