#!/usr/bin/env bash
# it_repair_gather through five deaths spaced by operations, not by time:
# UCFT_INJECT kills ranks 3, 9, 12, 5 and 14 (SIGKILL, from inside the
# rank) in their allgather or reduce-scatter calls 40, 80, 120, 160 and 200,
# before their first message. Kills at wall-clock times
# (--kill R@S, counted from the launch) landed in a start-up that two
# sixteen-rank ASan jobs on two cores stretched past the first kill: the
# job then failed in ucft_init, or its first two deaths came before the
# first switch, as two failures against f = 1. Spaced by calls, each
# death comes about 240 operations after the last, far beyond the
# switch's bound (UCFT_TREE_REPAIR_WINDOW operations and one agreement),
# however slow the machine. The launcher did not kill them, so it reports
# them (exit status 137); every other rank must exit 0, having checked
# every call, and see exactly five failures.
# Usage: expect_repair_gather.sh UCFTRUN IT_REPAIR_GATHER
set -u
ucftrun=$1 prog=$2
. "$(dirname "$0")/injected_deaths.sh"
export UCFT_INJECT="rank=3,op=allgather,call=40,msg=1;rank=9,op=reduce_scatter,call=80,msg=1;rank=12,op=allgather,call=120,msg=1;rank=5,op=reduce_scatter,call=160,msg=1;rank=14,op=allgather,call=200,msg=1"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
timeout -s KILL 150 "$ucftrun" -n 16 --timeout 140 "$prog" 250 20 5 >"$out" 2>&1
rc=$?
fail() { cat "$out"; echo "FAIL: $*"; exit 1; }
expect_injected_deaths "$rc" "$out" 3 9 12 5 14
for r in 0 1 2 4 6 7 8 10 11 13 15; do
  grep -q "^rank $r: 250 iterations, 5 failed, all allgathers and reduce-scatters right" "$out" ||
    fail "survivor $r did not report every call right"
done
echo "ok: 11 survivors, 250 allgathers and reduce-scatters each, 5 deaths"
