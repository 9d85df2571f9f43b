#!/usr/bin/env bash
# Fencing: rank 3 is stopped (SIGSTOP), declared failed by the heartbeat
# detector, then continued (SIGCONT). It must learn that it was declared
# and abort with a line saying so; the survivors finish normally.
set -u
ucftrun=$1
prog=$2
out=$(mktemp)
trap 'rm -f "$out"; [ -n "${lpid:-}" ] && kill -9 "$lpid" 2>/dev/null' EXIT
fail() { cat "$out"; echo "FAIL: $*"; exit 1; }
"$ucftrun" -n 4 --times-from connected --stop 3@1.5 --timeout 40 "$prog" fence >"$out" 2>&1 &
lpid=$!
for _ in $(seq 1 200); do   # up to 20 s for all three survivors
  [ "$(grep -c 'saw rank 3 fail' "$out")" -ge 3 ] && break
  sleep 0.1
done
[ "$(grep -c 'saw rank 3 fail' "$out")" -ge 3 ] || fail "survivors did not all see rank 3 fail"
vpid=$(sed -n 's/.*victim pid \([0-9]*\).*/\1/p' "$out" | head -1)
[ -n "$vpid" ] || fail "no victim pid"
kill -CONT "$vpid" || fail "cannot continue $vpid"
wait "$lpid"
rc=$?
lpid=
cat "$out"
grep -q "declared failed by the job" "$out" || fail "the victim did not say it was fenced"
grep -q "rank 3 killed by signal 6" "$out" || fail "the victim did not abort"
[ "$rc" -eq 134 ] || fail "ucftrun exit status $rc, expected 134 (the victim's abort)"
echo "PASS: the continued rank fenced itself"
