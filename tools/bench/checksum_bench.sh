#!/usr/bin/env bash
# checksum_bench.sh: the cost of the payload checksums (UCFT_CHECKSUM=y,
# docs/gossip.md): the corrected allreduce of int64 on N ranks over shared
# memory, without and with the checksums side by side in one run, the two
# alternating per size and repetition so that both see the same load.
#
#   tools/bench/checksum_bench.sh [BUILD_DIR] [REPS] [SIZES...]
#
# Writes JSON lines (ucft-bench coll --json plus "checksum" and "rep") to
# stdout and a table of the medians over the repetitions to stderr.
# Environment: CSUM_N (ranks, default 4), CSUM_ITERS (default 200; sizes
# of 1 MiB and more: a fifth of it).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
reps=${2:-3}
shift 2 || true
sizes=${*:-8 65528 65536 1048576}
n=${CSUM_N:-4}
iters=${CSUM_ITERS:-200}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for rep in $(seq 1 "$reps"); do
  for s in $sizes; do
    it=$iters
    [ "$s" -ge 1048576 ] && it=$((iters / 5))
    for c in n y; do
      UCX_TLS=shm UCFT_CHECKSUM=$c "$build/bin/ucftrun" -n "$n" --timeout 300 \
        "$build/bin/ucft-bench" coll --op allreduce --size "$s" --iters "$it" \
        --warmup 10 --json | grep '^{' |
        sed "s/^{/{\"checksum\":\"$c\",\"rep\":$rep,/" | tee -a "$out"
    done
  done
done
/usr/bin/python3 - "$out" >&2 <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("| payload | median without | median with | difference | per byte |")
print("|---|---|---|---|---|")
for s in sorted({r["size"] for r in rows}):
    m = {c: statistics.median(r["median_us"] for r in rows
                              if r["size"] == s and r["checksum"] == c)
         for c in "ny"}
    d = m["y"] - m["n"]
    pb = "%.2f ns" % (d * 1e3 / s) if s >= 4096 else "-"
    print("| %d B | %.1f us | %.1f us | %+.1f us (x%.2f) | %s |"
          % (s, m["n"], m["y"], d, m["y"] / m["n"], pb))
PY
