#!/usr/bin/env bash
# examples/failure: rank N-1 SIGKILLs itself. ucftrun must report that rank
# (exit status 137, a line naming it), and every survivor must say that its
# receive from the dead rank ended with ERR_PROC_FAILED, within 5 s.
set -u
ucftrun=$1
prog=$2
n=${3:-4}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$ucftrun" -n "$n" --timeout 30 "$prog" >"$out" 2>&1
rc=$?
cat "$out"
fail() { echo "FAIL: $*"; exit 1; }
[ "$rc" -eq 137 ] || fail "ucftrun exit status $rc, expected 137"
grep -q "rank $((n - 1)) killed by signal 9" "$out" || fail "no line naming the dead rank"
for r in $(seq 0 $((n - 2))); do
  line=$(grep "^rank $r: receive from rank $((n - 1)) ended with ERR_PROC_FAILED" "$out") \
    || fail "rank $r did not report ERR_PROC_FAILED"
  t=$(echo "$line" | sed -n 's/.*after \([0-9.]*\) s$/\1/p')
  awk -v t="$t" 'BEGIN { exit !(t < 5.0) }' || fail "rank $r took $t s"
done
echo "PASS"
