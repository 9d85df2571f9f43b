#!/usr/bin/env bash
# Many ranks on few cores (docs/detector.md, "Many ranks on few cores"):
# (1) 128 ranks compute for 5 s without calling ucft (ucft-bench detector
# --soak): on 2 cores their heartbeat threads starve, and no rank may be
# reported failed (without the kernel's view of local ranks, 8 were, and
# fenced, in each of 2 runs); (2) 128 ranks of ucft-manyranks loop
# corrected allreduces while ucftrun kills ranks 1 and 65. Every survivor
# must finish with every result correct and no error, know exactly
# {1, 65} failed (no live rank falsely declared), and no rank may be
# fenced ("declared failed by the job").
# Usage: expect_manyranks.sh UCFTRUN UCFT_MANYRANKS UCFT_BENCH [N]
set -u
ucftrun=$1 prog=$2 bench=$3 n=${4:-128}
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
fail() { grep -v "own heartbeat went out" "$err" | head -20; echo "FAIL: $*"; exit 1; }
"$ucftrun" -n "$n" --timeout 100 "$bench" detector --soak 5 >"$out" 2>"$err"
rc=$?
grep "^false suspicions" "$out"
[ "$rc" -eq 0 ] || fail "soak: ucftrun exit status $rc"
grep -q "^false suspicions: 0$" "$out" || fail "soak: live ranks reported failed"
! grep -q "declared failed by the job" "$err" || fail "soak: a live rank was fenced"

a=1 b=$((n / 2 + 1))
start=$(date +%s)
"$ucftrun" -n "$n" --timeout 100 --times-from connected --kill "$a@8" --kill "$b@9" "$prog" \
  --f 2 --kills 2 --min 3 --after 2 --bound 90 >"$out" 2>"$err"
rc=$?
took=$(($(date +%s) - start))
grep "^MANY" "$out" | sort -k3 -n | head -3
echo "... $(grep -c '^MANY' "$out") ranks reported in ${took} s"
[ "$rc" -eq 0 ] || fail "ucftrun exit status $rc"
! grep -q "declared failed by the job" "$err" || fail "a live rank was fenced"
[ "$(grep -c '^MANY' "$out")" -eq $((n - 2)) ] || fail "not every survivor reported"
bad=$(grep '^MANY' "$out" | grep -v " bad 0 errors 0 " | head -3)
[ -z "$bad" ] || fail "wrong results or errors: $bad"
other=$(grep '^MANY' "$out" | grep -v " failed $a,$b$" | head -3)
[ -z "$other" ] || fail "a survivor's failed set is not {$a, $b}: $other"
echo "PASS: $((n - 2)) survivors, all results correct, failed set {$a, $b} everywhere"
