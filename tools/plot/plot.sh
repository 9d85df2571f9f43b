#!/usr/bin/env bash
# plot.sh: turns the benchmark JSON of docs/data/ (tools/plot/collect.sh)
# into PNGs in docs/img/, with gnuplot (Debian gnuplot-nox); python3 reads
# the JSON. And renders `ucft-topo --dot` with Graphviz for
# docs/placement.md.
#
#   tools/plot/plot.sh [BUILD_DIR]     (default build; for ucft-topo only)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
data=$root/docs/data
img=$root/docs/img
mkdir -p "$img"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# JSON lines -> whitespace tables (one file per series).
python3 - "$data" "$tmp" <<'PY'
import json, sys
data, tmp = sys.argv[1], sys.argv[2]
def rows(name):
    with open("%s/%s" % (data, name)) as f:
        return [json.loads(l) for l in f if l.startswith("{")]
def header(name):
    with open("%s/%s" % (data, name)) as f:
        return f.readline().lstrip("# ").strip()
def write(name, lines):
    with open("%s/%s" % (tmp, name), "w") as f:
        f.write("\n".join(" ".join(str(x) for x in l) for l in lines) + "\n")
p = rows("pt2pt.jsonl")
write("pt2pt.dat", [(r["size"], r["ucft_rtt_us"], r["ucp_rtt_us"],
                     r.get("ucft_mbps", 0), r.get("ucp_mbps", 0)) for r in p])
c = rows("coll.jsonl")
for op in ("allreduce", "bcast"):
    write("ucft_%s.dat" % op, [(r["ranks"], r["mean_us"]) for r in c
                              if r["bench"] == "coll" and r["op"] == op])
    write("mpi_%s.dat" % op, [(r["ranks"], r["mean_us"]) for r in c
                             if r["bench"] == "mpi_coll" and r["op"] == op])
cs = rows("collsize.jsonl")
for op in ("allreduce", "bcast"):
    write("ucft_size_%s.dat" % op, [(r["size"], r["mean_us"]) for r in cs
                                   if r["bench"] == "coll" and r["op"] == op])
    write("mpi_size_%s.dat" % op, [(r["size"], r["mean_us"]) for r in cs
                                  if r["bench"] == "mpi_coll" and r["op"] == op])
nsize = cs[0]["ranks"] if cs else 0
d = rows("detector.jsonl")
told = sorted(x for r in d for x in r["told_ms"])
event = sorted(x for r in d for x in r["event_ms"])
write("told.dat", [(x, (i + 1) / len(told)) for i, x in enumerate(told)])
write("event.dat", [(x, (i + 1) / len(event)) for i, x in enumerate(event)])
k = rows("kill.jsonl")
write("first.dat", [(q["rank"] + 0.1 * (i - 1), q["first_ms"], i + 1)
                    for i, r in enumerate(k) for q in r["per_rank"]])
write("excl.dat", [(q["rank"] + 0.1 * (i - 1), q["excluded_ms"], i + 1)
                   for i, r in enumerate(k) for q in r["per_rank"]])
for n in ("pt2pt", "coll", "collsize", "detector", "kill"):
    with open("%s/%s.note" % (tmp, n), "w") as f:
        f.write(header(n + ".jsonl"))
with open("%s/counts" % tmp, "w") as f:
    f.write("%d %d %d %d\n" % (len(d), len(told), len(k), nsize))
PY
read -r druns ntold kruns nsize <"$tmp/counts"
note() { cat "$tmp/$1.note"; }

gnuplot <<GP
set terminal pngcairo size 800,500 font "sans,10"
set grid
set key top left
set logscale x 2
set format x "%.0s%cB"
set xlabel "message size"

set output "$img/pt2pt_latency.png"
set title "Point-to-point round trip, 2 ranks, shared memory ($(note pt2pt))"
set logscale y
set ylabel "round trip (us)"
plot "$tmp/pt2pt.dat" u 1:2 w lp pt 7 t "ucft", "" u 1:3 w lp pt 5 t "raw UCP"

set output "$img/pt2pt_bandwidth.png"
set title "Point-to-point bandwidth, 2 ranks, shared memory ($(note pt2pt))"
set ylabel "MB/s"
plot "$tmp/pt2pt.dat" u 1:4 w lp pt 7 t "ucft", "" u 1:5 w lp pt 5 t "raw UCP"

set output "$img/coll_vs_n.png"
set title "8 B collectives, back-to-back mean per op, max over ranks ($(note coll))"
set logscale x 2
set format x "%g"
set xlabel "ranks (N), 2 cores"
set ylabel "us per operation"
plot "$tmp/ucft_allreduce.dat" w lp pt 7 lc 1 t "ucft allreduce (corrected)", \
     "$tmp/mpi_allreduce.dat" w lp pt 5 lc 1 dt 2 t "Open MPI allreduce (ob1)", \
     "$tmp/ucft_bcast.dat" w lp pt 7 lc 2 t "ucft bcast (corrected)", \
     "$tmp/mpi_bcast.dat" w lp pt 5 lc 2 dt 2 t "Open MPI bcast (ob1)"

set output "$img/coll_vs_size.png"
set title "Collectives vs size, N = $nsize, back-to-back mean per op ($(note collsize))"
set logscale x 2
set logscale y
set format x "%.0s%cB"
set xlabel "vector size"
set ylabel "us per operation"
plot "$tmp/ucft_size_allreduce.dat" w lp pt 7 lc 1 t "ucft allreduce (corrected)", \
     "$tmp/mpi_size_allreduce.dat" w lp pt 5 lc 1 dt 2 t "Open MPI allreduce (ob1)", \
     "$tmp/ucft_size_bcast.dat" w lp pt 7 lc 2 t "ucft bcast (corrected)", \
     "$tmp/mpi_size_bcast.dat" w lp pt 5 lc 2 dt 2 t "Open MPI bcast (ob1)"
unset logscale y

set output "$img/detector_told.png"
set title "Kill to told: 8 ranks, rank 7 killed, $druns runs, $ntold survivors ($(note detector))"
set logscale x 10
set format x "%g"
unset logscale y
set yrange [0:1.05]
set key bottom right
set xlabel "ms from the kill until the survivor's failure callback ran"
set ylabel "fraction of survivors"
plot "$tmp/told.dat" u 1:2 w steps lw 2 t "ucft detector (failure callback)", \
     "$tmp/event.dat" u 1:2 w steps lw 2 dt 2 t "launcher's death event (PMIx)"

set output "$img/kill_to_result.png"
set title "Kill to result: 8 ranks loop allreduce, rank 5 killed, $kruns runs ($(note kill))"
unset logscale
set autoscale
set yrange [0:*]
set xrange [-0.5:7.5]
set xtics 1
set key below horizontal
set xlabel "survivor rank"
set ylabel "ms after the kill"
plot "$tmp/first.dat" u 1:2 w p pt 7 ps 1.2 t "first correct result", \
     "$tmp/excl.dat" u 1:2 w p pt 6 ps 1.5 t "first result without the victim"
GP

# ucft-topo --dot: 16 ranks on 4 nodes, interleave placement, the
# broadcast tree from root 0 (docs/placement.md).
if [ -x "$build/bin/ucft-topo" ] && command -v dot >/dev/null; then
  "$build/bin/ucft-topo" --nodes 4 --ppn 4 --dot "$tmp/topo.dot" >/dev/null
  dot -Tpng -Gdpi=80 -o "$img/topo_interleave_4x4.png" "$tmp/topo.dot"
fi
ls -l "$img"
