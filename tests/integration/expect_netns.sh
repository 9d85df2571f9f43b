#!/usr/bin/env bash
# Jobs on pretend nodes that are network hosts (ucftrun --netns,
# docs/launcher.md). Needs root: without CAP_NET_ADMIN/CAP_SYS_ADMIN the
# launcher refuses with its message, and this script exits 77 (CTest
# SKIP_RETURN_CODE) printing the reason. Every namespace the launcher made
# is gone when the script ends (checked), and removed by the trap if a
# step fails.
#
# Usage: expect_netns.sh MODE UCFTRUN PROGRAM [BOUND_MS]
#   coll    4 ranks on 2 nodes run it_coll (PROGRAM) over TCP between the
#           namespaces: every result checked by it_coll.
#   cut     8 ranks on 4 nodes under ucft-bench detector (PROGRAM); node
#           3's link is cut at 2.5 s (its ranks 6 and 7 keep running, and
#           are killed at 6 s to end the job): every survivor (ranks 0-5)
#           must report both cut ranks failed within BOUND_MS, and no
#           live survivor may be reported.
#   partition GROUPS  4 ranks on 4 nodes under ucft-bench detector --soak
#           (PROGRAM) with UCFT_QUORUM=y and delta = 500 ms (fewer false
#           suspicions on 2 loaded cores: under the majority rule each
#           one costs a rank); the nodes are split into GROUPS
#           (e.g. 0,1,2/3) at 2 s: the minority side's ranks (or, in a
#           tie, the half without rank 0) must fence (SIGABRT with the
#           quorum message), the others must go on and report exactly the
#           fenced ranks failed.
#   gate GROUPS  8 ranks on 4 nodes (2 each) call corrected allreduces
#           back to back for 6 s (PROGRAM: it_partition; 5 s for gate_shrink) with
#           UCFT_QUORUM=y; the nodes are split into GROUPS (e.g. 0/1,2,3)
#           at 2 s: the minority side's ranks must fence, the others must
#           finish, and no two ranks may have handed over different
#           results for one call (the majority gate), the fenced ones
#           none after the majority's first result without them.
#   gate_shrink GROUPS  as gate, the allreduces on a communicator of world
#           ranks 1, 2 and 4 only (it_partition ... shrink), shrunk after
#           an error: the members on the majority side must make one
#           communicator of themselves and go on, the member on the
#           other side none (the agreement's gate), and no two ranks
#           may have made different communicators in one shrink.
#   heal    as cut, with UCFT_QUORUM=y and node 3's link healed at 5 s
#           instead of its ranks killed: ranks 6 and 7 (2 of 8, a
#           minority) must fence themselves (SIGABRT, the quorum message)
#           and stay gone; the survivors as for cut.
#   loss    8 ranks on 4 nodes compute 8 s under ucft-bench detector
#           --soak (PROGRAM) while every node loses 5 % of its packets
#           both ways (TCP retransmits after >= 200 ms, beyond delta =
#           100 ms): with the indirect probes (UCFT_HB_PROBES, default)
#           no rank may be reported failed and all 8 must report; the
#           same job with UCFT_HB_PROBES=0 must report some live rank
#           failed (else the loss did not bite and the first half proves
#           nothing).
#   evidence  8 ranks on 4 nodes under ucft-bench detector (PROGRAM) with
#           the launcher's death events and the kernel's view turned off
#           (UCFT_DETECTOR_EVENTS=n, UCFT_DETECTOR_PIDFD=n); rank 5 is
#           killed at 3 s: every survivor must report it within BOUND_MS,
#           nobody else, and some rank must have declared it on transport
#           evidence confirmed by the probes (its log line).
#   delay   2 ranks on 2 nodes measure UDP round trips between the nodes
#           (PROGRAM: netem_rtt.py), without and with --netem
#           K:delay=5ms on both: the fastest round trip must grow by at
#           least 2 x 5 ms (each node's incoming packets are held 5 ms by
#           its relay, launcher/relay.h), and no relay may outlive the job.
#   signal  SIGTERM to the launcher while 2 nodes sleep: it must end and
#           leave no namespace.
#   nocaps  the launcher as user nobody (or as this user, when not root)
#           must refuse --netns with a
#           message naming the capabilities, and make nothing.
set -uo pipefail
mode=$1 ucftrun=$2 prog=$3 bound=${4:-1000}
out=$(mktemp -d)
pid=""

netns_of() { ip netns list 2>/dev/null | awk '{print $1}' | grep "^ucft$1\(hub\|n[0-9]*\)$"; }
cleanup() {
  if [ -n "$pid" ]; then
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    for ns in $(netns_of "$pid"); do ip netns del "$ns"; done
  fi
  rm -rf "$out"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; sed 's/^/  err: /' "$out/err" | tail -20; exit 1; }
skip_if_no_caps() {
  if grep -q 'needs CAP_NET_ADMIN' "$out/err"; then
    echo "SKIP: $(grep -m1 'needs CAP_NET_ADMIN' "$out/err")"
    exit 77
  fi
}
no_leftovers() {
  local left
  left=$(netns_of "$1")
  [ -z "$left" ] || fail "namespaces left behind: $left"
}

case $mode in
coll)
  "$ucftrun" -n 4 --nodes 2 --netns --timeout 60 "$prog" 10 >"$out/out" 2>"$out/err" &
  pid=$!
  wait "$pid"; rc=$?
  skip_if_no_caps
  [ $rc -eq 0 ] || fail "job exit status $rc"
  grep -q 'correct on 4 ranks' "$out/out" || fail "no result line"
  no_leftovers "$pid"
  echo "PASS: it_coll on 2 network hosts; namespaces removed"
  ;;
gate | gate_shrink)
  groups=$bound
  sub= secs=6
  [ "$mode" = gate ] || sub=shrink secs=5
  UCFT_QUORUM=y UCFT_HB_TIMEOUT=500ms \
    "$ucftrun" -n 8 --nodes 4 --netns --partition "$groups@2" --tag-output \
    --timeout 60 "$prog" $secs $sub >"$out/out" 2>"$out/err" &
  pid=$!
  wait "$pid"; rc=$?
  skip_if_no_caps
  [ $rc -ne 124 ] || fail "the job timed out"
  no_leftovers "$pid"
  /usr/bin/python3 - "$groups" "$out/out" "$out/err" "$sub" <<'PY' || fail "partition outcome wrong"
import collections, re, sys
a, b = (set(int(x) for x in g.split(",")) for g in sys.argv[1].split("/"))
out, err = open(sys.argv[2]).read(), open(sys.argv[3]).read()
shrink = sys.argv[4] == "shrink"
win = a if len(a) > len(b) or (len(a) == len(b) and 0 in a) else b
keep = sorted(r for r in range(8) if r // 2 in win)   # 2 ranks a node
gone = sorted(r for r in range(8) if r // 2 not in win)
fenced = sorted(int(m) for m in re.findall(
    r"\[ucft rank (\d+)\] error: in a minority after failures or a partition", err))
assert fenced == gone, f"fenced {fenced}, expected {gone}"
done = sorted(int(m) for m in re.findall(r"^\[(\d+)\] done$", out, re.M))
assert done == keep, f"finished {done}, expected {keep}"
res = collections.defaultdict(set)
last = {}
for r, g, i, v in re.findall(r"^\[(\d+)\] op (\d+) (\d+) ok (\S+ \S+)$", out,
                             re.M):
    res[(int(g), int(i))].add(v)
    last[int(r)] = max(last.get(int(r), (-1, -1)), (int(g), int(i)))
split = sorted(i for i, v in res.items() if len(v) > 1)
assert not split, f"two results handed over for calls {split[:5]}"
if shrink:
    mem = {1, 2, 4}
    made = collections.defaultdict(set)
    for r, g, m in re.findall(r"^\[(\d+)\] shrink (\d+) ok (\S+)$", out, re.M):
        made[int(g)].add(int(m, 16))
        assert int(r) in keep, f"rank {r} of the minority made a communicator"
    two = sorted(g for g, ms in made.items() if len(ms) > 1)
    assert not two, f"two communicators made by shrink {two}"
    want = sum(1 << r for r in mem if r in keep)
    assert made.get(0) == {want}, f"shrink 0 made {made.get(0)}, not {want:x}"
    print(f"{len(res)} calls, one result each; shrink 0 made {want:x} only; "
          f"minority {gone} fenced")
    sys.exit(0)
full = "%d %x" % (36, 255)
partial = [i for i, v in res.items() if full not in v]
assert partial, "the majority never went on without the minority"
first = min(partial)
late = [r for r in gone if last.get(r, (-1, -1)) >= first]
assert not late, f"fenced ranks {late} handed over results at or after call {first}"
print(f"{len(res)} calls, one result each; minority {gone} fenced after "
      f"call {max(last.get(r, (-1, -1)) for r in gone)}, majority alone from "
      f"{first}")
PY
  echo "PASS: $mode across a partition: one outcome per call, minority fenced"
  ;;
cut | heal)
  if [ "$mode" = cut ]; then
    end=(--kill-node 3@6)
  else
    end=(--heal-node 3@5)
    export UCFT_QUORUM=y
  fi
  "$ucftrun" -n 8 --nodes 4 --netns --cut-node 3@2.5 "${end[@]}" \
    --timeout 60 "$prog" detector --bound 10 --json >"$out/out" 2>"$out/err" &
  pid=$!
  wait "$pid"; rc=$?
  skip_if_no_caps
  [ $rc -ne 124 ] || fail "the job timed out"
  no_leftovers "$pid"
  json=$(grep -m1 '^{' "$out/out") || fail "no report"
  /usr/bin/python3 - "$bound" "$json" <<'PY' || fail "report does not hold"
import json, sys
bound = float(sys.argv[1])
r = json.loads(sys.argv[2])
victims = sorted(v["rank"] for v in r["victims"])
assert victims == [6, 7], f"victims {victims}"
assert r["survivors"] == [0, 1, 2, 3, 4, 5], f"survivors {r['survivors']}"
assert r["not_told"] == 0, f"{r['not_told']} reports missing"
assert r["false_suspicions"] == 0, f"false: {r['false_ranks']}"
told = r["told_ms"]
assert len(told) == 12 and max(told) <= bound, f"told_ms {told}"
print(f"PASS: cut node 3 declared by all 6 survivors: p50 {r['p50_ms']:.1f} "
      f"ms, max {r['max_ms']:.1f} ms (bound {bound:.0f} ms), delta "
      f"{r['delta_ms']:.0f} ms, eta {r['eta_ms']:.0f} ms")
PY
  if [ "$mode" = heal ]; then
    for r in 6 7; do
      grep -q "\[ucft rank $r\] error: in a minority" "$out/err" &&
        grep -q "ucftrun: rank $r killed by signal 6" "$out/err" ||
        fail "rank $r did not fence"
    done
    echo "PASS: ranks 6 and 7 fenced (minority) and stayed gone after the heal"
  fi
  ;;
evidence)
  UCFT_DETECTOR_EVENTS=n UCFT_DETECTOR_PIDFD=n UCFT_LOG_LEVEL=info \
    "$ucftrun" -n 8 --nodes 4 --netns --kill 5@3 --timeout 60 "$prog" \
    detector --bound 10 --json >"$out/out" 2>"$out/err" &
  pid=$!
  wait "$pid"; rc=$?
  skip_if_no_caps
  [ $rc -ne 124 ] || fail "the job timed out"
  no_leftovers "$pid"
  json=$(grep -m1 '^{' "$out/out") || fail "no report"
  /usr/bin/python3 - "$bound" "$json" <<'PY' || fail "report does not hold"
import json, sys
bound = float(sys.argv[1])
r = json.loads(sys.argv[2])
assert [v["rank"] for v in r["victims"]] == [5], f"victims {r['victims']}"
assert r["survivors"] == [0, 1, 2, 3, 4, 6, 7], f"survivors {r['survivors']}"
assert r["not_told"] == 0, f"{r['not_told']} reports missing"
assert r["false_suspicions"] == 0, f"false: {r['false_ranks']}"
assert max(r["told_ms"]) <= bound, f"told_ms {r['told_ms']}"
print(f"PASS: rank 5 killed, no launcher event, no kernel view: told p50 "
      f"{r['p50_ms']:.1f} ms, max {r['max_ms']:.1f} ms (bound {bound:.0f} ms)")
PY
  grep -q "rank 5: transport evidence (an endpoint error) and no answer" \
    "$out/err" || fail "no rank declared rank 5 on confirmed transport evidence"
  echo "PASS: declared on transport evidence confirmed by the probes"
  ;;
partition)
  groups=$bound
  UCFT_QUORUM=y UCFT_HB_TIMEOUT=500ms \
    "$ucftrun" -n 4 --nodes 4 --netns --partition "$groups@2" \
    --timeout 60 "$prog" detector --soak 8 --json >"$out/out" 2>"$out/err" &
  pid=$!
  wait "$pid"; rc=$?
  skip_if_no_caps
  [ $rc -ne 124 ] || fail "the job timed out"
  no_leftovers "$pid"
  json=$(grep -m1 '^{' "$out/out") || fail "no report"
  /usr/bin/python3 - "$groups" "$json" "$out/err" <<'PY' || fail "partition outcome wrong"
import json, re, sys
a, b = (set(int(x) for x in g.split(",")) for g in sys.argv[1].split("/"))
r = json.loads(sys.argv[2])
err = open(sys.argv[3]).read()
node = lambda rank: rank               # 4 ranks on 4 nodes
win = a if len(a) > len(b) or (len(a) == len(b) and 0 in a) else b
keep = sorted(x for x in range(4) if node(x) in win)
gone = sorted(x for x in range(4) if node(x) not in win)
fenced = sorted(int(m) for m in re.findall(
    r"\[ucft rank (\d+)\] error: in a minority after failures or a partition", err))
aborted = sorted(int(m) for m in re.findall(
    r"ucftrun: rank (\d+) killed by signal 6", err))
assert fenced == gone, f"fenced {fenced}, expected {gone}"
assert aborted == gone, f"aborted {aborted}, expected {gone}"
assert r["survivors"] == keep, f"survivors {r['survivors']}, expected {keep}"
assert sorted(r["false_ranks"]) == gone, f"reported {r['false_ranks']}"
print(f"PASS: partition {sys.argv[1]}: ranks {gone} fenced, {keep} went on")
PY
  ;;
loss)
  loss=()
  for k in 0 1 2 3; do loss+=(--netem "$k:loss=5%"); done
  for probes in 3 0; do
    UCFT_HB_PROBES=$probes "$ucftrun" -n 8 --nodes 4 --netns "${loss[@]}" \
      --timeout 60 "$prog" detector --soak 8 --json >"$out/out" 2>"$out/err" &
    pid=$!
    wait "$pid"; rc=$?
    skip_if_no_caps
    [ $rc -ne 124 ] || fail "probes $probes: the job timed out"
    no_leftovers "$pid"
    if [ "$probes" -gt 0 ]; then
      [ $rc -eq 0 ] || fail "probes $probes: job exit status $rc"
      json=$(grep -m1 '^{' "$out/out") || fail "no report"
      /usr/bin/python3 - "$json" <<'PY' || fail "live ranks reported failed under loss"
import json, sys
r = json.loads(sys.argv[1])
assert r["survivors"] == list(range(8)), f"reporting: {r['survivors']}"
assert r["false_suspicions"] == 0, f"false: {r['false_ranks']}"
PY
    else
      # Without probes: some live rank is declared and fences (aborts).
      without=$(grep -c 'this rank was declared failed by the job' "$out/err")
      [ "$without" -gt 0 ] || fail "without probes nobody was declared: the loss did not bite"
    fi
  done
  echo "PASS: 5 % loss on every node, 8 s: no live rank declared with probes; without them $without of 8 fenced"
  ;;
delay)
  for d in 0 5; do
    netem=()
    [ "$d" -gt 0 ] && netem=(--netem "0:delay=${d}ms" --netem "1:delay=${d}ms")
    "$ucftrun" -n 2 --nodes 2 --netns "${netem[@]}" --timeout 60 "$prog" 40 \
      >"$out/out.$d" 2>"$out/err" &
    pid=$!
    wait "$pid"; rc=$?
    skip_if_no_caps
    [ $rc -eq 0 ] || fail "delay ${d} ms: job exit status $rc"
    no_leftovers "$pid"
    grep -q '^rtt_ms n=40 ' "$out/out.$d" || fail "no round trips: $(cat "$out/out.$d")"
  done
  base=$(sed -n 's/.* min=\([0-9.]*\) .*/\1/p' "$out/out.0")
  slow=$(sed -n 's/.* min=\([0-9.]*\) .*/\1/p' "$out/out.5")
  /usr/bin/python3 -c "import sys; b, s = float(sys.argv[1]), float(sys.argv[2]); sys.exit(0 if s - b >= 10.0 and s < 60 else 1)" \
    "$base" "$slow" || fail "fastest round trip $base ms without delay, $slow ms with 5 ms on each node"
  [ -z "$(pgrep -f "^$ucftrun -n 2 --nodes 2 --netns --netem" || true)" ] ||
    fail "a delay relay outlived its job"
  echo "PASS: delay 5 ms per node: fastest round trip $base -> $slow ms ($(cut -d' ' -f2- "$out/out.5"))"
  ;;
signal)
  "$ucftrun" -n 2 --nodes 2 --netns --timeout 60 "$prog" 30 >"$out/out" 2>"$out/err" &
  pid=$!
  for _ in $(seq 100); do
    [ -n "$(netns_of "$pid")" ] && break
    sleep 0.05
  done
  sleep 0.5
  skip_if_no_caps
  [ "$(netns_of "$pid" | wc -l)" -eq 3 ] || fail "expected 3 namespaces (hub, n0, n1)"
  kill -TERM "$pid"
  wait "$pid"; rc=$?
  [ $rc -ne 0 ] || fail "the launcher exited 0 after SIGTERM"
  no_leftovers "$pid"
  echo "PASS: SIGTERM: launcher ended (status $rc), namespaces removed"
  ;;
nocaps)
  # As root: drop to user nobody; otherwise this user lacks them already.
  drop=()
  [ "$(id -u)" -eq 0 ] && drop=(setpriv --reuid 65534 --regid 65534 --clear-groups)
  "${drop[@]}" "$ucftrun" -n 2 --nodes 2 --netns "$prog" >"$out/out" 2>"$out/err" &
  pid=$!
  wait "$pid"; rc=$?
  [ $rc -eq 1 ] || fail "status $rc, expected 1"
  grep -q -- '--netns needs CAP_NET_ADMIN and CAP_SYS_ADMIN' "$out/err" ||
    fail "no message naming the capabilities"
  no_leftovers "$pid"
  echo "PASS: refused without the capabilities: $(cat "$out/err")"
  ;;
*)
  echo "unknown mode $mode"; exit 2 ;;
esac
