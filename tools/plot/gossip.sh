#!/usr/bin/env bash
# gossip.sh: the figures of docs/gossip.md, in the shape of Casas,
# Gansterer and Wimmer's (gossip all-reduce resilience), from ucft-sim runs
# of the same algorithm code that real jobs run. Writes CSV into docs/data/
# (gossip_*.csv) and PNGs into docs/img/ (gossip_*.png) with gnuplot;
# /usr/bin/python3 (numpy) reduces the runs to medians and maxima.
#
#   tools/plot/gossip.sh [BUILD_DIR] [RUNS] [NMAX_LOG2] [N13_LOG2]
#
# RUNS: runs per point (default 10; the paper: 100), NMAX_LOG2: the
# largest rank count of the scaling figures (default 14), N13_LOG2: the
# rank count of Fig. 13 (default 12; the paper: 20, about 6 minutes and
# 6.5 GB per run here). Run it niced: nice -n 19 tools/plot/gossip.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
runs=${2:-10}
nmax=${3:-14}
l13=${4:-12}
sim=$build/bin/ucft-sim
data=$root/docs/data
img=$root/docs/img
py=/usr/bin/python3
mkdir -p "$data" "$img"

# One CSV line per run (ucft-sim --runs), without the header after the
# first file line.
runs_csv() { "$sim" "$@" --runs "$runs" | tail -n +2; }
hdr="alg,ranks,seed,eps,tau,rounds,iterations,max_rel_err,delivered,live,data_errors,flips,detected,resets,sim_latency_us,messages"

# Fig. 2: maximum relative error vs the position of one flipped bit (bit B
# of the first value of rank 0's 20th message; recursive doubling: of its
# first), N = 32, eps 1e-12, 250 rounds (room to recover).
f=$data/gossip_fig2_bitpos.csv
echo "bit,$hdr" >"$f"
for b in $(seq 0 63); do
  for a in ps pf pflc pfcc; do
    runs_csv --op allreduce_approx --alg $a --ranks 32 --eps 1e-12 \
      --rounds 250 --flip "$b@0:20" | sed "s/^/$b,/" >>"$f"
  done
  runs_csv --op allreduce --alg recdbl --dtype double --eps 1e-12 \
    --ranks 32 --flip "$b@0:1" | sed "s/^/$b,/" >>"$f"
done

# Figs. 4 and 6: iterations vs tau under a flip rate, and vs the number of
# flips a run saw. N = 32, eps 1e-12, 1 flip per 1000 messages.
f=$data/gossip_fig4_tau.csv
echo "$hdr" >"$f"
for t in 1e-12 1e-10 1e-8 1e-6 1e-4 1e-2 0.1 0.5 1; do
  for a in pflc pfcc; do
    runs_csv --op allreduce_approx --alg $a --ranks 32 --eps 1e-12 \
      --rounds 400 --tau $t --flip-rate 1e-3 >>"$f"
  done
done
f=$data/gossip_fig6_flips.csv
echo "$hdr" >"$f"
for a in pflc pfcc; do
  for rate in 1e-4 2e-4 5e-4 1e-3 2e-3; do
    "$sim" --op allreduce_approx --alg $a --ranks 32 --eps 1e-12 \
      --rounds 400 --flip-rate $rate --runs $((4 * runs)) | tail -n +2 >>"$f"
  done
done

# Figs. 9-10: HPS iterations vs N for six accuracies (float, uniform
# inputs, full topology), rounds enough to converge.
f=$data/gossip_fig9_hps.csv
echo "$hdr" >"$f"
for e in 1e-1 1e-2 1e-3 1e-4 1e-5 1e-6; do
  for l in $(seq 4 2 "$nmax"); do
    runs_csv --op allreduce_approx --alg hps --ranks $((1 << l)) \
      --dtype float --eps $e --rounds 60 >>"$f"
  done
done

# Fig. 12: ARDB and HPFLC iterations vs N (eps 1e-2 .. 1e-5, float).
f=$data/gossip_fig12_ardb_hpflc.csv
echo "$hdr" >"$f"
for e in 1e-2 1e-3 1e-4 1e-5; do
  for l in $(seq 4 2 "$nmax"); do
    runs_csv --op allreduce_approx --alg ardb --ranks $((1 << l)) \
      --dtype float --eps $e >>"$f"
    runs_csv --op allreduce_approx --alg hpflc --ranks $((1 << l)) \
      --dtype float --eps $e --rounds 60 >>"$f"
  done
done

# Fig. 13: iteration overhead of one flip in HPFLC (float, eps 1e-3) by
# bit position, at N = 2^N13_LOG2: the flip hits rank 0's 3rd message.
f=$data/gossip_fig13_hpflc_flip.csv
echo "bit,$hdr" >"$f"
n13=$((1 << l13))
runs_csv --op allreduce_approx --alg hpflc --ranks $n13 --dtype float \
  --eps 1e-3 --rounds 40 | sed "s/^/-1,/" >>"$f"
for b in $(seq 0 31); do
  runs_csv --op allreduce_approx --alg hpflc --ranks $n13 --dtype float \
    --eps 1e-3 --rounds 40 --flip "$b@0:3" | sed "s/^/$b,/" >>"$f"
done

"$root/tools/plot/gossip_plot.sh"
