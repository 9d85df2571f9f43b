#!/usr/bin/env bash
# ucft-bench coll --kill-to-result: every rank loops corrected allreduces
# while ucftrun kills one. Every survivor must report a result after the
# kill that is correct and one that leaves the victim out (bad = 0, exit
# 0), within a generous bound; --ballast must be a size, and the mode needs
# a kill to measure.
set -u
ucftrun=$1
bench=$2
fail() { echo "FAIL: $*"; exit 1; }
line=$("$ucftrun" -n 4 --timeout 90 --times-from connected --kill 2@2 "$bench" coll \
  --kill-to-result --ballast 8 --bound 30 --json 2>/dev/null |
  grep '^{') || fail "no result (or a survivor failed)"
[[ $line == *'"survivors":3'* ]] || fail "not 3 survivors: $line"
[[ $line == *'"bad":0'* ]] || fail "wrong or missing results: $line"
excl=$(sed -n 's/.*"excluded_ms":{"median":\([0-9.]*\).*/\1/p' <<<"$line")
awk -v m="$excl" 'BEGIN { exit !(m > 0 && m < 1000) }' ||
  fail "kill -> result without the victim: '$excl' ms"
out=$("$ucftrun" -n 2 --timeout 30 "$bench" coll --kill-to-result \
  --ballast lots 2>&1) && fail "--ballast lots accepted"
grep -q -- "--ballast" <<<"$out" || fail "no line naming --ballast: $out"
out=$("$ucftrun" -n 2 --timeout 30 "$bench" coll --kill-to-result \
  --bound 2 2>&1) &&
  fail "ran without a kill"
grep -q "kill" <<<"$out" || fail "no line saying a kill is needed: $out"
echo "PASS: kill-to-result: 3 survivors, bad 0, excluded median $excl ms;" \
  "bad --ballast and a missing kill refused"
