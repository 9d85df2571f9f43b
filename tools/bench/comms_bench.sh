#!/usr/bin/env bash
# comms_bench.sh: the communicator figures of docs/comms.md. Agreement next
# to the recursive-doubling allreduce (the fastest small allreduce) and
# shrink without failures, at each N, ROUNDS rounds alternating; then the
# kill-to-shrink time at N = 8 (KILL_RUNS runs, a SIGKILL of rank 5 at 1 s).
#
#   tools/bench/comms_bench.sh [BUILD_DIR]     (default build)
#
# Environment: NS ("2 4 8 16"), ROUNDS (2), KILL_RUNS (12), OUT (docs/data:
# comms_bench.txt and comms_kill_to_shrink.jsonl are written there).
# Prints the table: per N the agree and allreduce medians (µs) of each
# round, their ratio, and the shrink median; then the kill-to-shrink
# median, p99 and wrong results over every survivor of every run.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
bin=$build/bin
ns=${NS:-2 4 8 16}
rounds=${ROUNDS:-2}
kill_runs=${KILL_RUNS:-12}
out=${OUT:-$root/docs/data}
[ -x "$bin/ucft-bench" ] || {
  echo "comms_bench.sh: no $bin/ucft-bench (build first)" >&2
  exit 2
}
load() { cut -d' ' -f1-3 /proc/loadavg; }
export UCX_TLS=${UCX_TLS:-shm}

bench=$out/comms_bench.txt
echo "# $(date -u +%FT%TZ) load average: $(load)" >"$bench"
for round in $(seq 1 "$rounds"); do
  for n in $ns; do
    for op in agree allreduce shrink; do
      args=(--op "$op" --iters 3000 --warmup 300 --json)
      [ "$op" = allreduce ] && args+=(--alg recdbl)
      [ "$op" = shrink ] && args[3]=300
      line=$("$bin/ucftrun" -n "$n" "$bin/ucft-bench" coll "${args[@]}" |
        grep '^{' | tail -1)
      echo "round $round n $n $line" >>"$bench"
    done
  done
done
echo "# end $(date -u +%FT%TZ) load average: $(load)" >>"$bench"

k2s=$out/comms_kill_to_shrink.jsonl
: >"$k2s"
for _ in $(seq 1 "$kill_runs"); do
  "$bin/ucftrun" -n 8 --kill 5@1 "$bin/ucft-bench" coll --kill-to-shrink \
    --json | grep '^{' >>"$k2s" || true
done

/usr/bin/python3 - "$bench" "$k2s" <<'EOF'
import json, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    if not line.startswith("round"):
        print(line.strip())
        continue
    _, _, _, n, js = line.split(" ", 4)
    d = json.loads(js)
    rows.setdefault((int(n), d["op"]), []).append(d["median_us"])
print("| n | agree median µs | recdbl allreduce median µs | agree / allreduce | shrink median µs |")
print("|---|---|---|---|---|")
for n in sorted({k[0] for k in rows}):
    a, r, s = rows[(n, "agree")], rows[(n, "allreduce")], rows[(n, "shrink")]
    fmt = lambda v: ", ".join(f"{x:.3g}" for x in v)
    print(f"| {n} | {fmt(a)} | {fmt(r)} | "
          f"{', '.join(f'{x / y:.2f}' for x, y in zip(a, r))} | {fmt(s)} |")
first, bad, runs = [], 0, 0
for line in open(sys.argv[2]):
    d = json.loads(line)
    runs += 1
    bad += d["bad"]
    first += [r["first_ms"] for r in d["per_rank"]]
if first:
    first.sort()
    p99 = first[min(len(first) - 1, int(0.99 * len(first)))]
    print(f"kill to shrink (n = 8): {runs} runs, {len(first)} survivor results, "
          f"median {statistics.median(first):.2f} ms, p99 {p99:.2f} ms, "
          f"{bad} wrong")
EOF
