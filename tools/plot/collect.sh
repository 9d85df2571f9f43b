#!/usr/bin/env bash
# collect.sh: runs short benchmarks and writes their JSON lines into
# docs/data/ for plot.sh. Short on purpose (about two minutes on 2 cores);
# docs/bench.md has the long runs and their method.
#
#   tools/plot/collect.sh [BUILD_DIR]      (default build)
#
#   pt2pt.jsonl     ucftrun -n 2 ucft-bench pt2pt --json (ucft and raw UCP)
#   coll.jsonl      ucft-bench coll --json and Open MPI's mpi_coll, allreduce
#                   and bcast of 8 B at N = 2, 4, 8 (NS, ITERS)
#   collsize.jsonl  the same, allreduce and bcast at N = SIZE_N (4) for sizes
#                   SIZES (8 1k 64k 1m)
#   detector.jsonl  ucftrun -n 8 --kill 7@3 ucft-bench detector --json,
#                   DET_RUNS times (told_ms per survivor)
#   kill.jsonl      ucftrun -n 8 --kill 5@3 ucft-bench coll --kill-to-result
#                   --json, KILL_RUNS times
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
bin=$build/bin
out=$root/docs/data
NS=${NS:-"2 4 8"}
ITERS=${ITERS:-1000}
SIZE_N=${SIZE_N:-4}
SIZES=${SIZES:-"8 1024 65536 1048576"}
DET_RUNS=${DET_RUNS:-4}
KILL_RUNS=${KILL_RUNS:-3}
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export UCFT_LOG_LEVEL=error
note="# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

echo "== pt2pt"
{ echo "$note"; "$bin/ucftrun" -n 2 "$bin/ucft-bench" pt2pt --json \
    --sizes 8,64,512,4k,32k,256k,1m --budget 0.5; } >"$out/pt2pt.jsonl"

echo "== coll (ucft and Open MPI)"
mpi=""
if command -v mpicc >/dev/null && command -v mpirun >/dev/null &&
   mpicc -O2 -o "$tmp/mpi_coll" "$root/tools/bench/mpi_coll.c" 2>/dev/null; then
  mpi=$tmp/mpi_coll
fi
{
  echo "$note"
  for n in $NS; do
    for op in allreduce bcast; do
      "$bin/ucftrun" -n "$n" "$bin/ucft-bench" coll --op "$op" --size 8 \
        --iters "$ITERS" --warmup 100 --json
      [ -n "$mpi" ] && mpirun --allow-run-as-root --oversubscribe \
        --mca mpi_yield_when_idle 1 --mca pml ob1 -np "$n" "$mpi" "$op" 8 \
        "$ITERS" 100 2>/dev/null
    done
  done
} >"$out/coll.jsonl"

echo "== coll vs size (ucft and Open MPI, N = $SIZE_N)"
{
  echo "$note"
  for size in $SIZES; do
    # Fewer iterations for large vectors: about the same time per point.
    it=$(( ITERS * 1024 / (size > 1024 ? size : 1024) ))
    [ "$it" -lt 20 ] && it=20
    for op in allreduce bcast; do
      "$bin/ucftrun" -n "$SIZE_N" "$bin/ucft-bench" coll --op "$op" \
        --size "$size" --iters "$it" --warmup 10 --json
      [ -n "$mpi" ] && mpirun --allow-run-as-root --oversubscribe \
        --mca mpi_yield_when_idle 1 --mca pml ob1 -np "$SIZE_N" "$mpi" "$op" \
        "$size" "$it" 10 2>/dev/null
    done
  done
} >"$out/collsize.jsonl"

echo "== detector"
{ echo "$note"
  for i in $(seq "$DET_RUNS"); do
    "$bin/ucftrun" -n 8 --kill 7@3 "$bin/ucft-bench" detector --json
  done; } >"$out/detector.jsonl"

echo "== kill-to-result"
{ echo "$note"
  for i in $(seq "$KILL_RUNS"); do
    "$bin/ucftrun" -n 8 --kill 5@3 "$bin/ucft-bench" coll --kill-to-result --json
  done; } >"$out/kill.jsonl"
wc -l "$out"/*.jsonl
