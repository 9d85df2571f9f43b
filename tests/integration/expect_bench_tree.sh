#!/usr/bin/env bash
# ucft-bench coll --failed --tree-repair (docs/trees.md): ranks 2 and 4 of 6
# fail right after start-up; every design reports from a survivor, names
# them, and has no failed timed call: keep (f raised to 2), rebalance (f =
# 1: the calls before the switch fail, counted apart as warm-up errors),
# fresh (a shrunk communicator); --paired (reroute against a shrink in
# alternating rounds) reports its ratio inside its interval. Bad values are
# refused with a line naming the option.
set -u
ucftrun=$1
bench=$2
fail() { echo "FAIL: $*"; exit 1; }
run() { # design
  "$ucftrun" -n 6 --timeout 90 "$bench" coll --op allreduce --iters 300 \
    --warmup 20 --failed 2,4 --tree-repair "$1" --json 2>/dev/null | grep '^{'
}
for d in keep rebalance fresh; do
  line=$(run $d) || fail "$d: no report"
  [[ $line == *'"failed_ranks":[2,4]'* ]] || fail "$d: ranks 2, 4 not named: $line"
  [[ $line == *'"errors":0,'* ]] || fail "$d: failed timed calls: $line"
  [[ $line == *"\"tree_repair\":\"$d\""* ]] || fail "$d: design not reported: $line"
  [[ $line == *'"failed":2,'* ]] || fail "$d: k not reported: $line"
done
[[ $(run keep) == *'"f":2,'* ]] || fail "keep: f not raised to 2"
out=$("$ucftrun" -n 3 --timeout 30 "$bench" coll --op barrier --failed 0 2>&1) &&
  fail "--failed 0 (the reporting rank) accepted"
grep -q -- "--failed" <<<"$out" || fail "no line naming --failed: $out"
out=$("$ucftrun" -n 3 --timeout 30 "$bench" coll --op barrier --failed 1 \
  --tree-repair sideways 2>&1) && fail "--tree-repair sideways accepted"
grep -q -- "--tree-repair" <<<"$out" || fail "no line naming --tree-repair: $out"
# --paired: the design's communicator against a shrink, in alternating
# rounds; every rank's ratio and its interval reported, no failed call.
line=$("$ucftrun" -n 6 --timeout 90 "$bench" coll --op allreduce --alg corrected \
  --iters 100 --warmup 20 --failed 2,4 --tree-repair reroute --paired 5 \
  --json 2>/dev/null | grep '^{') || fail "--paired: no report"
[[ $line == *'"errors":0,'* ]] || fail "--paired: failed timed calls: $line"
python3 - "$line" <<'PY' || fail "--paired: bad figures: $line"
import json, sys
d = json.loads(sys.argv[1])
assert d["paired"] == 5 and d["tree_repair"] == "reroute"
assert 0 < d["paired_lo"] <= d["paired_ratio"] <= d["paired_hi"], d
assert d["design_us"] > 0 and d["fresh_us"] > 0, d
PY
out=$("$ucftrun" -n 3 --timeout 30 "$bench" coll --op barrier --failed 1 \
  --tree-repair fresh --paired 3 2>&1) && fail "--paired with fresh accepted"
grep -q -- "--paired" <<<"$out" || fail "no line naming --paired: $out"
echo "PASS: keep, rebalance, fresh after ranks 2, 4 failed: reported, no" \
  "failed timed call; --paired reported; bad --failed, --tree-repair and" \
  "--paired refused"
