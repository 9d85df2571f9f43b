#!/usr/bin/env bash
# gossip_2p20.sh: the 2^20-rank points of Figs. 12 and 13 (docs/gossip.md),
# one ucft-sim run each (seed 1), one at a time: an HPFLC run takes
# 6.6 GB and 3.5 minutes of CPU here, an ARDB run 2.1 GB and 35 s. Appends Fig. 12's rows to
# docs/data/gossip_fig12_ardb_hpflc.csv and writes Fig. 13's to
# docs/data/gossip_fig13_hpflc_flip_2p20.csv (bit -1: no flip), then
# redraws (tools/plot/gossip_plot.sh). Run it niced:
#
#   nice -n 19 tools/plot/gossip_2p20.sh [BUILD_DIR] [WHAT...]
#
# WHAT: any of the names below (default: all, in this order).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
shift || true
sim=$build/bin/ucft-sim
data=$root/docs/data
f12=$data/gossip_fig12_ardb_hpflc.csv
f13=$data/gossip_fig13_hpflc_flip_2p20.csv
hdr="alg,ranks,seed,eps,tau,rounds,iterations,max_rel_err,delivered,live,data_errors,flips,detected,resets,sim_latency_us,messages"
[ -s "$f13" ] || echo "bit,$hdr" >"$f13"
# HPFLC at 2^20 with 40 rounds (50 for eps 1e-4, 1e-5): enough to converge
# (the smaller N run 60), and the flow slots per rank grow with R.
all="hpflc_e3 ardb_e3 flip30 ardb_e2 ardb_e4 ardb_e5 hpflc_e2 flip24 flip31
flip22 hpflc_e4 flip16 hpflc_e5 flip0"
args_of() {
  case $1 in
  hpflc_e2) echo "--alg hpflc --eps 1e-2 --rounds 40" ;;
  hpflc_e3) echo "--alg hpflc --eps 1e-3 --rounds 40" ;;
  hpflc_e4) echo "--alg hpflc --eps 1e-4 --rounds 50" ;;
  hpflc_e5) echo "--alg hpflc --eps 1e-5 --rounds 50" ;;
  ardb_e*) echo "--alg ardb --eps 1e-${1#ardb_e}" ;;
  flip*) echo "--alg hpflc --eps 1e-3 --rounds 40 --flip ${1#flip}@0:3" ;;
  *) echo "gossip_2p20.sh: unknown point $1" >&2; exit 2 ;;
  esac
}
for w in ${*:-$all}; do
  a=$(args_of "$w")
  line=$("$sim" --op allreduce_approx --ranks 1048576 --dtype float $a \
    --runs 1 | tail -n +2)
  case $w in
  flip*) echo "${w#flip},$line" >>"$f13" ;;
  hpflc_e3) echo "$line" >>"$f12"; echo "-1,$line" >>"$f13" ;;
  *) echo "$line" >>"$f12" ;;
  esac
  echo "$w: $line"
done
"$root/tools/plot/gossip_plot.sh"
