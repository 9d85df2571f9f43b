#!/usr/bin/env bash
# gossip_bench.sh: ucft-bench coll latency of every gossip algorithm
# (ucft_allreduce_approx, 8-byte doubles) at eps 1e-3, 1e-8 and 1e-14 next
# to the recursive-doubling allreduce, on N = 2, 4, 8, 16 ranks over
# shared memory; one JSON line per run into docs/data/gossip_bench.jsonl
# (docs/gossip.md shows the table). Run it niced on a quiet machine:
#   nice -n 19 tools/bench/gossip_bench.sh [BUILD_DIR] [ITERS]
# (GOSSIP_BENCH_N="2 4 8": other rank counts)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
iters=${2:-200}
out=$root/docs/data/gossip_bench.jsonl
run="$build/bin/ucftrun --timeout 600"
bench=$build/bin/ucft-bench
: >"$out"
for n in ${GOSSIP_BENCH_N:-2 4 8 16}; do
  UCX_TLS=shm UCFT_ALLREDUCE_ALG=recdbl $run -n $n "$bench" coll \
    --op allreduce --iters "$iters" --warmup 20 --json | grep '^{' >>"$out"
  for a in ps pf pflc pfcc hps hpflc ardb; do
    for e in 1e-3 1e-8 1e-14; do
      UCX_TLS=shm $run -n $n "$bench" coll --op allreduce_approx --alg $a \
        --eps $e --iters "$iters" --warmup 20 --json | grep '^{' >>"$out"
    done
  done
done
echo "wrote $out"
