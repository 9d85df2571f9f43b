#!/usr/bin/env bash
# ab_builds.sh: two builds of ucft side by side in one run, alternating
# (A B, then B A, ...), so that both see the same machine: the collectives
# against Open MPI (coll_vs_mpi.sh, one round per turn) and the 8-byte
# point-to-point round trip against raw UCP (ucft-bench pt2pt). Prints,
# per cell, the median over the rounds of each build and the ratio B / A.
#
#   tools/bench/ab_builds.sh BUILD_A BUILD_B [ROUNDS]   (default 3 rounds)
#
# coll_vs_mpi.sh's variables apply (NS, OPS, BIND, WAITS, SIZE, ...); the
# defaults here: NS="2 4 8", SIZE=8, BIND=core, KILL_RUNS=0.
set -u
here=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 2 ] || { sed -n '2,12p' "$0"; exit 2; }
a=$1 b=$2 rounds=${3:-3}
for d in "$a" "$b"; do
    [ -x "$d/bin/ucft-bench" ] || { echo "ab_builds.sh: $d/bin/ucft-bench missing" >&2; exit 2; }
done
export NS=${NS:-"2 4 8"} SIZE=${SIZE:-8} BIND=${BIND:-core} KILL_RUNS=0 ROUNDS=1
out=$(mktemp -d /tmp/ab_builds.XXXXXX)
trap 'rm -rf "$out"' EXIT
echo "# ab_builds.sh $(date -u '+%Y-%m-%d %H:%M UTC'): A=$a B=$b, $rounds rounds," \
    "NS=\"$NS\" SIZE=$SIZE BIND=$BIND, load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$rounds"); do
    order="A B"
    [ $((r % 2)) -eq 0 ] && order="B A"
    for w in $order; do
        d=$a
        [ "$w" = B ] && d=$b
        bash "$here/coll_vs_mpi.sh" "$d" >"$out/coll.$w.$r" 2>&1
        UCX_TLS=shm timeout 120 "$d/bin/ucftrun" -n 2 --bind-to core \
            "$d/bin/ucft-bench" pt2pt --wait spin --sizes 8 --rounds 5 \
            --no-bw --iters 20000 --json >"$out/pt2pt.$w.$r" 2>&1
    done
done
python3 - "$out" "$rounds" <<'PY'
import json, os, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
cells = {}
for w in "AB":
    for r in range(1, rounds + 1):
        for line in open(os.path.join(out, f"coll.{w}.{r}")):
            f = [x.strip() for x in line.strip().strip("|").split("|")]
            if len(f) != 9 or not f[0].isdigit():
                continue
            key = (int(f[0]), f[1], f[2], f[3])
            try:
                u = float(f[4])
            except ValueError:
                continue
            mpi = [float(x) for x in (f[5], f[6]) if x not in ("-", "")]
            c = cells.setdefault(key, {"A": [], "B": [], "rA": [], "rB": []})
            c[w].append(u)
            if mpi:
                c["r" + w].append(u / min(mpi))
        for line in open(os.path.join(out, f"pt2pt.{w}.{r}")):
            if not line.startswith("{"):
                continue
            j = json.loads(line)
            key = (2, "pt2pt rtt", "8 B", "spin")
            c = cells.setdefault(key, {"A": [], "B": [], "rA": [], "rB": []})
            u = j.get("ucft_rtt_us")
            raw = j.get("ucp_rtt_us")
            if u is None:
                continue
            c[w].append(u)
            if raw:
                c["r" + w].append(u / raw)
med = lambda v: statistics.median(v) if v else float("nan")
print("\nmedian over rounds; µs per operation; 'vs base' = "
      "ucft / Open MPI (collectives) or ucft / raw UCP (pt2pt)")
print("| N | op | alg | wait | A µs | B µs | B / A | A vs base | B vs base |")
print("|---|---|---|---|---:|---:|---:|---:|---:|")
for k in sorted(cells):
    c = cells[k]
    a, b = med(c["A"]), med(c["B"])
    print(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {a:.2f} | {b:.2f} | "
          f"{b / a:.2f} | {med(c['rA']):.2f} | {med(c['rB']):.2f} |")
PY
