#!/usr/bin/env bash
# Faults beyond a killed process: the figures of docs/detector.md
# ("Partitions, loss and delay on TCP"). Needs root (ucftrun --netns).
#
#   soak   N ranks on H pretend network hosts compute for S seconds under
#          ucft-bench detector --soak while every host loses LOSS % of its
#          packets both ways (and, with -d, delays its incoming ones);
#          one row per job: live ranks reported failed (by a survivor's
#          report, plus ranks that fenced: the report of a fenced rank is
#          lost), ranks that fenced, probe settings, load average.
#   cut    the same job shape without loss; host H-1's link is cut at
#          2.5 s (its ranks keep running until they are killed at 6 s):
#          one row per job with the survivors' kill -> told times of
#          every cut rank (p50, max over all pairs) and false reports;
#          after the last run, one line pooled over every run's pairs
#          (p50, p99, max, live ranks reported failed).
#
# Usage: tools/netns_detector.sh soak|cut [-b BUILD] [-n N] [-H HOSTS]
#          [-s SECONDS] [-l LOSS] [-d NETEM_EXTRA] [-r RUNS] [-k DIR]
#   The environment (UCFT_HB_PROBES, UCFT_HB_PERIOD, UCFT_HB_TIMEOUT,
#   UCFT_HB_CONFIRM, UCFT_HB_RUN) passes to the ranks.
#   -d "delay=2ms,jitter=1ms"  appended to every host's --netem
#   -k DIR  keep each job's output in DIR
set -u
mode=${1:-}
shift || true
build=build n=16 hosts=4 secs=60 loss=5 extra="" runs=1 keep=""
while getopts "b:n:H:s:l:d:r:k:" o; do
  case $o in
    b) build=$OPTARG ;;
    n) n=$OPTARG ;;
    H) hosts=$OPTARG ;;
    s) secs=$OPTARG ;;
    l) loss=$OPTARG ;;
    d) extra=$OPTARG ;;
    r) runs=$OPTARG ;;
    k) keep=$OPTARG ;;
    *) echo "usage: $0 soak|cut [-b B] [-n N] [-H H] [-s S] [-l L] [-d D] [-r R] [-k DIR]" >&2; exit 2 ;;
  esac
done
case $mode in soak | cut) ;; *) echo "usage: $0 soak|cut [options]" >&2; exit 2 ;; esac
run=$build/bin/ucftrun
bench=$build/bin/ucft-bench
[ -x "$run" ] && [ -x "$bench" ] || { echo "$0: build $build first" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ -n "$keep" ] && mkdir -p "$keep"
probes=${UCFT_HB_PROBES:-3}
eta=${UCFT_HB_PERIOD:-20ms} delta=${UCFT_HB_TIMEOUT:-100ms}
confirm=${UCFT_HB_CONFIRM:-0}
hbrun=${UCFT_HB_RUN:-16}
: >"$tmp/pool"

for i in $(seq "$runs"); do
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  start=$(date -u +%H:%M:%S)
  if [ "$mode" = soak ]; then
    netem=()
    for k in $(seq 0 $((hosts - 1))); do
      item="loss=${loss}%"
      [ -n "$extra" ] && item="$item,$extra"
      netem+=(--netem "$k:$item")
    done
    nice "$run" -n "$n" --nodes "$hosts" --netns "${netem[@]}" \
      --timeout $((secs + 120)) "$bench" detector --soak "$secs" --json \
      >"$tmp/out" 2>"$tmp/err"
  else
    last=$((hosts - 1))
    nice "$run" -n "$n" --nodes "$hosts" --netns --cut-node "$last@2.5" \
      --kill-node "$last@6" --timeout 60 "$bench" detector --bound 10 \
      --expect $((n / hosts)) --json >"$tmp/out" 2>"$tmp/err"
  fi
  rc=$?
  [ -n "$keep" ] && cp "$tmp/out" "$keep/$mode.$i.out" && cp "$tmp/err" "$keep/$mode.$i.err"
  /usr/bin/python3 - "$mode" "$tmp/out" "$tmp/err" "$rc" "$start" "$load" \
    "$probes" "$eta" "$delta" "$confirm" "$n" "$hosts" "$hbrun" "$tmp/pool" <<'PY'
import json, re, sys
(mode, outf, errf, rc, start, load, probes, eta, delta, confirm, n, hosts,
 hbrun, pool) = sys.argv[1:]
err = open(errf).read()
fenced = sorted({int(m) for m in re.findall(
    r"\[ucft rank (\d+)\] error: this rank was declared failed", err)})
rep = None
for line in open(outf):
    if line.startswith("{"):
        rep = json.loads(line)
        break
conf = (f"probes {probes}, run {hbrun}, eta {eta}, delta {delta}, "
        f"confirm {confirm or 'default'}")
if mode == "soak":
    false = set(fenced) | set(rep["false_ranks"] if rep else [])
    print(f"| {n} on {hosts} | {conf} | {len(false)} {sorted(false)} | "
          f"{len(fenced)} | {rep['soak_s'] if rep else '-'} s | rc {rc} | "
          f"{start} | {load} |")
else:
    if rep is None:
        print(f"| {n} on {hosts} | {conf} | no report | rc {rc} | {start} | {load} |")
        sys.exit(0)
    told = sorted(rep["told_ms"])
    with open(pool, "a") as f:
        f.write(json.dumps({"told": told, "false": len(
            set(fenced) | set(rep["false_ranks"]))}) + "\n")
    p50 = told[len(told) // 2] if told else -1
    print(f"| {n} on {hosts} | {conf} | {len(told)} | {p50:.1f} | "
          f"{max(told) if told else -1:.1f} | {rep['not_told']} | "
          f"{len(set(fenced) | set(rep['false_ranks']))} | rc {rc} | {start} | {load} |")
PY
done
if [ "$mode" = cut ]; then
  /usr/bin/python3 - "$tmp/pool" "$n" "$hosts" "$probes" "$hbrun" "$eta" "$delta" <<'PY'
import json, math, sys
pool, n, hosts, probes, hbrun, eta, delta = sys.argv[1:]
rows = [json.loads(l) for l in open(pool) if l.strip()]
told = sorted(t for r in rows for t in r["told"])
false = sum(r["false"] for r in rows)
if told:
    q = lambda p: told[max(0, math.ceil(p * len(told)) - 1)]
    print(f"pooled: | {n} on {hosts} | probes {probes}, run {hbrun}, eta "
          f"{eta}, delta {delta} | {len(rows)} | {len(told)} | {q(0.5):.1f} | "
          f"{q(0.99):.1f} | {told[-1]:.1f} | {false} |")
PY
fi
