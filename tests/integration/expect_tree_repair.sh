#!/usr/bin/env bash
# Tree repair with the binomial broadcast, reduce and barrier under one
# design (UCFT_TREE_REPAIR from the environment: reroute, lookup or
# rebalance; docs/trees.md): ranks 1, 2 and 5 of N (default 8) kill
# themselves right after start-up, the survivors loop 200 broadcasts,
# reduces and barriers from rotating roots (it_tree_repair; with N = 12,
# more roots than lookup keeps trees for, CM_LOOKUP_ROOTS). Passes when every survivor reports every value
# right and no failed call after the switch, exactly the three victims
# died (SIGKILL), and the trees are the design's: under reroute and
# lookup every tree a rank reports (debug log) has the parent that the
# original binomial tree rerouted around ranks 1, 2, 5 gives it, computed
# here independently; under rebalance no rerouted tree is reported.
# BCAST_ALG (default binomial) picks the broadcast: `corrected` (the
# checked correction) runs on the rerouted tree too. CORRECTED=1 runs the
# reduce, barrier and allreduce corrected: under reroute and lookup on the
# original I(f)-tree and groups around the holes (every survivor must log
# that frame), under rebalance on the survivors.
# Usage: expect_tree_repair.sh UCFTRUN IT_TREE_REPAIR [N]
set -u
ucftrun=$1 prog=$2 n=${3:-8}
design=${UCFT_TREE_REPAIR:?set UCFT_TREE_REPAIR}
bcast=${BCAST_ALG:-binomial}
corrected=${CORRECTED:-0}
red=binomial
[ "$corrected" = 1 ] && red=corrected
fail() { echo "FAIL ($design, bcast $bcast, reduce $red): $*"; exit 1; }
out=$(UCFT_LOG_LEVEL=debug UCFT_BCAST_ALG=$bcast UCFT_REDUCE_ALG=$red \
  UCFT_BARRIER_ALG=$red UCFT_ALLREDUCE_ALG=corrected \
  "$ucftrun" -n "$n" --timeout 90 "$prog" 1,2,5 200 2>&1)
for r in $(seq 0 $((n - 1))); do
  [ "$r" = 1 ] || [ "$r" = 2 ] || [ "$r" = 5 ] && continue
  grep -q "^rank $r: 200 iterations, [0-9]* early errors, all values right" \
    <<<"$out" || fail "rank $r did not report every value right"
done
dead=$(sed -n 's/^ucftrun: rank \([0-9]*\) killed by signal 9.*/\1/p' <<<"$out" |
  sort -n | tr '\n' ' ')
[ "$dead" = "1 2 5 " ] || fail "ranks killed by SIGKILL: '$dead', want 1 2 5"
if grep -q "killed by signal [^9]\|exited with status [1-9]\|CHECK FAILED" <<<"$out"; then
  fail "a survivor failed: $(grep "killed by signal [^9]\|exited with status [1-9]\|CHECK FAILED" <<<"$out" | head -3)"
fi
trees=$(grep "binomial tree rooted at" <<<"$out")
frames=$(grep -c "corrected structures over the original $n positions around 3 failed members" <<<"$out")
if [ "$design" = rebalance ]; then
  [ "$frames" = 0 ] || fail "a frame with holes under rebalance"
else
  [ "$frames" = $((n - 3)) ] ||
    fail "$frames of $((n - 3)) survivors logged the frame around the 3 failed members"
fi
if [ "$design" = rebalance ]; then
  [ -z "$trees" ] || fail "a rerouted tree under rebalance: $(head -1 <<<"$trees")"
  echo "PASS ($design): $((n - 3)) survivors, every value right, no rerouted tree"
  exit 0
fi
[ -n "$trees" ] || fail "no rank reported its tree"
python3 - "$trees" "$n" <<'PY' || fail "a reported tree is not the rerouted one"
import re, sys
n, dead = int(sys.argv[2]), {1, 2, 5}
def bitlen(v): return v.bit_length()
def parent(v): return -1 if v <= 0 else v & ~(1 << (bitlen(v) - 1))
def rerouted_parent(rank, root):
    v = (rank - root) % n
    p = parent(v)
    while p > 0 and (p + root) % n in dead:
        p = parent(p)
    return -1 if v == 0 else (p + root) % n
checked = 0
for line in sys.argv[1].splitlines():
    m = re.search(r"\[ucft rank (\d+)\].*binomial tree rooted at (\d+) around "
                  r"(\d+) failed members: parent (-?\d+)", line)
    if not m or int(m.group(3)) != 3:
        continue  # an earlier epoch (fewer failures known)
    rank, root, par = int(m.group(1)), int(m.group(2)), int(m.group(4))
    want = rerouted_parent(rank, root)
    if par != want:
        print(f"rank {rank}, root {root}: parent {par}, rerouted tree says {want}")
        sys.exit(1)
    checked += 1
if checked == 0:
    print("no tree around the 3 failed members reported")
    sys.exit(1)
print(f"{checked} reported trees are the rerouted ones")
PY
echo "PASS ($design, bcast $bcast, reduce $red): $((n - 3)) survivors, every value right, the rerouted trees and frames"
