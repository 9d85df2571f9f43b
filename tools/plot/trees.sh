#!/usr/bin/env bash
# trees.sh: the fault-aware trees' figures (docs/trees.md): latency of a
# barrier and of the corrected allreduce on a communicator that already
# lost k ranks, per design (keep / reroute / lookup / rebalance / fresh),
# and on this machine also the binomial barrier under reroute / lookup /
# rebalance / fresh (--real-binomial; the runtime's designs since 28
# November),
# on the simulator (N = 256 and N = 2^16) and, with --real, on this machine
# (N = 16, ucftrun, shared memory); and the corrected broadcast (checked
# correction) under reroute / lookup / rebalance / fresh, simulated and,
# with --real-bcast, here; and the corrected allreduce under reroute /
# lookup / rebalance / fresh here (--real-allreduce; its rerouted form
# since 29 November). Writes docs/data/trees_*.csv and
# docs/img/trees_*.png (gnuplot, Debian gnuplot-nox).
#
# --paired ROUNDS: rebalance against a fresh communicator in the same job
# (ucft-bench coll --paired: alternating blocks, the median ratio and its
# 95 % interval), the binomial and corrected barrier and the corrected
# allreduce, k = 1, 2, 4, 8 of 16 here (docs/data/trees_real_paired_n16.jsonl).
#
#   tools/plot/trees.sh [BUILD_DIR] [--real ROUNDS] [--real-binomial ROUNDS]
#                       [--real-bcast ROUNDS] [--real-allreduce ROUNDS]
#                       [--paired ROUNDS] [--no-sim] [--plot-only]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$root/build
real=0
real_bin=0
real_bc=0
real_ar=0
real_pair=0
plot_only=0
no_sim=0
while [ $# -gt 0 ]; do
  case $1 in
    --real) real=$2; shift 2 ;;
    --real-binomial) real_bin=$2; shift 2 ;;
    --real-bcast) real_bc=$2; shift 2 ;;
    --real-allreduce) real_ar=$2; shift 2 ;;
    --paired) real_pair=$2; shift 2 ;;
    --plot-only) plot_only=1; shift ;;
    --no-sim) no_sim=1; shift ;;
    *) build=$1; shift ;;
  esac
done
sim=$build/bin/ucft-sim
data=$root/docs/data
img=$root/docs/img
mkdir -p "$data" "$img"

# One simulated run -> one CSV line: op,alg,design,n,k,f,latency_us,messages,
# delivered,live,failed_ops (a design that cannot run: latency empty).
simline() { # op alg design n k f [extra args]
  local op=$1 alg=$2 d=$3 n=$4 k=$5 f=$6; shift 6
  local out
  if out=$(nice "$sim" --op "$op" --alg "$alg" --ranks "$n" --failed "FIRST:$k" \
           --tree-repair "$d" --f "$f" --json "$@" 2>/dev/null); then
    python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(",".join(str(x) for x in [sys.argv[2],sys.argv[3],sys.argv[4],sys.argv[5],sys.argv[6],sys.argv[7],d["sim_latency_us"],d["messages"],d["delivered"],d["live"],d["failed_ops"]]))' \
      "$out" "$op" "$alg" "$d" "$n" "$k" "$f"
  else
    echo "$op,$alg,$d,$n,$k,$f,,,,,"
  fi
}

# The corrected algorithms tolerate at most 8 failures per operation
# (RC_MAX_F): keep, which counts every failed rank against f, runs with
# f = k up to there, and not beyond.
series() { # n nodes klist...
  local n=$1 nodes=$2; shift 2
  for k in "$@"; do
    for d in reroute lookup rebalance fresh; do
      simline barrier binomial "$d" "$n" "$k" 1
    done
    for op in barrier allreduce; do
      if [ "$k" -le 8 ]; then
        f=$(( k > 0 ? k : 1 ))
        simline "$op" corrected keep "$n" "$k" "$f" --nodes "$nodes" --placement interleave
      else
        echo "$op,corrected,keep,$n,$k,$k,,,,,"
      fi
      for d in reroute lookup rebalance fresh; do
        simline "$op" corrected "$d" "$n" "$k" 1 --nodes "$nodes" --placement interleave
      done
    done
    for d in reroute lookup rebalance fresh; do
      simline bcast corrected "$d" "$n" "$k" 1 --nodes "$nodes" --placement interleave
    done
  done
}

hdr="op,alg,design,n,k,f,latency_us,messages,delivered,live,failed_ops"
if [ "$plot_only" = 0 ] && [ "$no_sim" = 0 ]; then
  { echo "$hdr"; series 256 64 0 1 2 4 8 16 32 64 96 128 160 192 224; } \
    > "$data/trees_sim_n256.csv"
  { echo "$hdr"; series 65536 16384 0 1 4 16 256 4096 16384 32768 57344; } \
    > "$data/trees_sim_n65536.csv"
fi

# Real: ucft-bench coll on this machine, N = 16 (shared memory), k failed
# ranks (FIRST:k), rounds alternating the designs; the median over rounds
# of the headline (max over ranks of the per-rank mean).
if [ "$real" -gt 0 ] && [ "$plot_only" = 0 ]; then
  out=$data/trees_real_n16.jsonl
  : > "$out"
  for round in $(seq 1 "$real"); do
    for k in 0 1 2 4 8; do
      for op in barrier allreduce; do
        for d in keep rebalance fresh; do
          [ "$d" = keep ] && [ "$k" -gt 8 ] && continue
          UCX_TLS=shm nice "$build/bin/ucftrun" -n 16 --timeout 120 \
            "$build/bin/ucft-bench" coll --op "$op" --iters 2000 --warmup 200 \
            --failed "FIRST:$k" --tree-repair "$d" --json 2>/dev/null |
            grep '^{' | sed "s/}\$/,\"round\":$round}/" >> "$out" || true
        done
      done
    done
  done
fi

# Real, one operation under reroute, lookup, rebalance and fresh (a file
# of its own): the paper's case, the binomial barrier (--real-binomial
# ROUNDS), and the corrected broadcast, 8 bytes from root 0 (--real-bcast
# ROUNDS).
real_designs() { # file rounds op alg
  local out=$data/$1 rounds=$2 op=$3 alg=$4
  : > "$out"
  for round in $(seq 1 "$rounds"); do
    for k in 0 1 2 4 8; do
      for d in reroute lookup rebalance fresh; do
        UCX_TLS=shm nice "$build/bin/ucftrun" -n 16 --timeout 120 \
          "$build/bin/ucft-bench" coll --op "$op" --alg "$alg" \
          --iters 2000 --warmup 200 --failed "FIRST:$k" --tree-repair "$d" \
          --json 2>/dev/null |
          grep '^{' | sed "s/}\$/,\"round\":$round}/" >> "$out" || true
      done
    done
  done
}
if [ "$plot_only" = 0 ] && [ "$real_bin" -gt 0 ]; then
  real_designs trees_real_binomial_n16.jsonl "$real_bin" barrier binomial
fi
if [ "$plot_only" = 0 ] && [ "$real_bc" -gt 0 ]; then
  real_designs trees_real_bcast_n16.jsonl "$real_bc" bcast corrected
fi
if [ "$plot_only" = 0 ] && [ "$real_ar" -gt 0 ]; then
  real_designs trees_real_allreduce_n16.jsonl "$real_ar" allreduce corrected
fi
if [ "$plot_only" = 0 ] && [ "$real_pair" -gt 0 ]; then
  out=$data/trees_real_paired_n16.jsonl
  : > "$out"
  for k in 1 2 4 8; do
    for spec in "barrier binomial" "barrier corrected" "allreduce corrected"; do
      set -- $spec
      UCX_TLS=shm nice "$build/bin/ucftrun" -n 16 --timeout 600 \
        "$build/bin/ucft-bench" coll --op "$1" --alg "$2" --iters 500 \
        --warmup 200 --failed "FIRST:$k" --tree-repair rebalance \
        --paired "$real_pair" --json 2>/dev/null | grep '^{' >> "$out" || true
    done
  done
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 - "$data" "$tmp" <<'PY'
import csv, json, os, sys
data, tmp = sys.argv[1], sys.argv[2]
for n in (256, 65536):
    rows = list(csv.DictReader(open("%s/trees_sim_n%d.csv" % (data, n))))
    for op, alg in (("barrier", "binomial"), ("barrier", "corrected"),
                    ("allreduce", "corrected"), ("bcast", "corrected")):
        for d in ("keep", "reroute", "lookup", "rebalance", "fresh"):
            sel = [r for r in rows if r["op"] == op and r["alg"] == alg
                   and r["design"] == d and r["latency_us"]]
            if sel:
                with open("%s/%d_%s_%s_%s" % (tmp, n, op, alg, d), "w") as f:
                    for r in sel:
                        f.write("%s %s\n" % (r["k"], r["latency_us"]))
rows = {}
for name in ("trees_real_n16.jsonl", "trees_real_binomial_n16.jsonl",
             "trees_real_bcast_n16.jsonl", "trees_real_allreduce_n16.jsonl"):
    p = "%s/%s" % (data, name)
    if os.path.exists(p):
        rows[name] = [json.loads(l) for l in open(p) if l.startswith("{")]
# (file, op, alg, design, series name): each series from its own run.
series = [("trees_real_n16.jsonl", op, "corrected", d, "real_%s_%s" % (op, d))
          for op in ("barrier", "allreduce")
          for d in ("keep", "rebalance", "fresh")]
series += [("trees_real_binomial_n16.jsonl", "barrier", "binomial", d,
            "real_binomial_%s" % d)
           for d in ("reroute", "lookup", "rebalance", "fresh")]
series += [("trees_real_bcast_n16.jsonl", "bcast", "corrected", d,
            "real_bcast_%s" % d)
           for d in ("reroute", "lookup", "rebalance", "fresh")]
series += [("trees_real_allreduce_n16.jsonl", "allreduce", "corrected", d,
            "real_ar_%s" % d)
           for d in ("reroute", "lookup", "rebalance", "fresh")]
for fname, op, alg, d, name in series:
    sel = [r for r in rows.get(fname, []) if r["op"] == op and
           r["tree_repair"] == d and
           (r.get("alg") == "binomial") == (alg == "binomial")]
    ks = sorted({r["failed"] for r in sel})
    with open("%s/%s" % (tmp, name), "w") as f:
        for k in ks:
            # The least disturbed round: the machine is shared.
            v = sorted(r["median_us"] for r in sel
                       if r["failed"] == k and r["errors"] == 0)
            if v:
                f.write("%d %.3f\n" % (k, v[0]))
PY

plot() { # png title xlabel series...(file:title)
  local png=$1 title=$2 xl=$3; shift 3
  local cmd="" sep=""
  for s in "$@"; do
    local file=${s%%:*} t=${s#*:}
    [ -s "$tmp/$file" ] || continue
    cmd+="$sep'$tmp/$file' using ${PLOT_X:-1}:2 with linespoints title '$t'"
    sep=", "
  done
  [ -n "$cmd" ] || return 0 # no data for this plot (yet)
  gnuplot <<EOF
set terminal pngcairo size 900,560 font ",11"
set output '$img/$png'
set title '$title'
set xlabel '$xl'
set ylabel 'latency (us)'
set key top left
set grid
${PLOT_EXTRA:-}
plot $cmd
EOF
}
plot trees_barrier_n256.png \
  "Barrier, 256 ranks, ranks 1..k failed (simulated, LogGP defaults)" \
  "failed ranks k" \
  256_barrier_binomial_reroute:"binomial, reroute" \
  256_barrier_binomial_lookup:"binomial, lookup" \
  256_barrier_binomial_rebalance:"binomial, rebalance" \
  256_barrier_binomial_fresh:"binomial, fresh N-k" \
  256_barrier_corrected_keep:"corrected, keep (f = k)" \
  256_barrier_corrected_reroute:"corrected, reroute (f = 1)" \
  256_barrier_corrected_rebalance:"corrected, rebalance (f = 1)" \
  256_barrier_corrected_fresh:"corrected, fresh N-k (f = 1)"
plot trees_allreduce_n256.png \
  "Corrected allreduce, 256 ranks, ranks 1..k failed (simulated)" \
  "failed ranks k" \
  256_allreduce_corrected_keep:"keep (f = k)" \
  256_allreduce_corrected_reroute:"reroute (f = 1)" \
  256_allreduce_corrected_lookup:"lookup (f = 1)" \
  256_allreduce_corrected_rebalance:"rebalance (f = 1)" \
  256_allreduce_corrected_fresh:"fresh N-k (f = 1)"
plot trees_bcast_n256.png \
  "Corrected broadcast (checked), 256 ranks, ranks 1..k failed (simulated)" \
  "failed ranks k" \
  256_bcast_corrected_reroute:"reroute" \
  256_bcast_corrected_lookup:"lookup" \
  256_bcast_corrected_rebalance:"rebalance" \
  256_bcast_corrected_fresh:"fresh N-k"
PLOT_X='($1+1)' PLOT_EXTRA='set logscale xy' plot trees_n65536.png \
  "65536 ranks, ranks 1..k failed (simulated; log scales)" \
  "failed ranks k + 1" \
  65536_barrier_binomial_reroute:"binomial barrier, reroute" \
  65536_barrier_binomial_rebalance:"binomial barrier, rebalance" \
  65536_barrier_binomial_fresh:"binomial barrier, fresh" \
  65536_allreduce_corrected_keep:"corrected allreduce, keep" \
  65536_allreduce_corrected_reroute:"corrected allreduce, reroute" \
  65536_allreduce_corrected_rebalance:"corrected allreduce, rebalance" \
  65536_allreduce_corrected_fresh:"corrected allreduce, fresh" \
  65536_bcast_corrected_reroute:"corrected broadcast, reroute" \
  65536_bcast_corrected_rebalance:"corrected broadcast, rebalance"
if [ -s "$data/trees_real_n16.jsonl" ] || [ -s "$data/trees_real_binomial_n16.jsonl" ] ||
  [ -s "$data/trees_real_bcast_n16.jsonl" ] ||
  [ -s "$data/trees_real_allreduce_n16.jsonl" ]; then
  plot trees_real_n16.png \
    "16 ranks on this machine (2 cores, shared memory), ranks 1..k failed; min over rounds of the median" \
    "failed ranks k" \
    real_barrier_keep:"corrected barrier, keep (f = k)" \
    real_barrier_rebalance:"corrected barrier, rebalance" \
    real_barrier_fresh:"corrected barrier, fresh (shrink)" \
    real_allreduce_keep:"corrected allreduce, keep (f = k)" \
    real_allreduce_rebalance:"corrected allreduce, rebalance" \
    real_allreduce_fresh:"corrected allreduce, fresh (shrink)"
  plot trees_real_binomial_n16.png \
    "Binomial barrier, 16 ranks on this machine, ranks 1..k failed; min over rounds of the median" \
    "failed ranks k" \
    real_binomial_reroute:"reroute (tree built per operation)" \
    real_binomial_lookup:"lookup (tree built once)" \
    real_binomial_rebalance:"rebalance" \
    real_binomial_fresh:"fresh (shrink)"
  plot trees_real_bcast_n16.png \
    "Corrected broadcast (checked, 8 B), 16 ranks here, ranks 1..k failed: time per broadcast in a stream; min over rounds of the median" \
    "failed ranks k" \
    real_bcast_reroute:"reroute (tree built per operation)" \
    real_bcast_lookup:"lookup (tree built once)" \
    real_bcast_rebalance:"rebalance" \
    real_bcast_fresh:"fresh (shrink)"
  plot trees_real_allreduce_n16.png \
    "Corrected allreduce (8 B), 16 ranks here, ranks 1..k failed; min over rounds of the median" \
    "failed ranks k" \
    real_ar_reroute:"reroute (original structures around the holes)" \
    real_ar_lookup:"lookup (the same)" \
    real_ar_rebalance:"rebalance" \
    real_ar_fresh:"fresh (shrink)"
fi
echo "wrote $data/trees_*.csv and $img/trees_*.png"
