#!/usr/bin/env bash
# Runs `ucft-bench pt2pt` over {shm, tcp} x {spin, hybrid, sleep} on this
# host, loopback only, and prints one summary table (median over runs of
# each run's numbers, and the min..max of the ratios across runs).
#
# usage: tools/bench/pt2pt_matrix.sh [-b BENCH] [-l LAUNCHER] [-r RUNS]
#                                    [-- pt2pt options]
#   -b BENCH     the ucft-bench binary (default: build/bin/ucft-bench)
#   -l LAUNCHER  ucftrun or mpirun (default: ucftrun next to BENCH, else
#                mpirun)
#   -r RUNS      runs per cell (default 3)
#   -k           keep the raw JSON lines (printed to stderr)
# Example: tools/bench/pt2pt_matrix.sh -r 5 -- --sizes 8,1024 --no-bw
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
bench="$root/build/bin/ucft-bench"
launcher=""
runs=3
keep=0
while getopts "b:l:r:kh" opt; do
    case $opt in
    b) bench=$OPTARG ;;
    l) launcher=$OPTARG ;;
    r) runs=$OPTARG ;;
    k) keep=1 ;;
    h) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "pt2pt_matrix.sh: bad option (see -h)" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[[ ${1:-} == "--" ]] && shift
if [[ ! -x $bench ]]; then
    echo "pt2pt_matrix.sh: no ucft-bench at $bench (build it or use -b)" >&2
    exit 2
fi
if [[ -z $launcher ]]; then
    if [[ -x $(dirname "$bench")/ucftrun ]]; then
        launcher=$(dirname "$bench")/ucftrun
    else
        launcher=mpirun
    fi
fi

# Loopback only: UCX may use shared memory, or tcp on lo, nothing else.
# Under mpirun the runtime's own out-of-band traffic stays on lo too.
run_one() { # tls wait -> JSON lines on stdout
    local tls=$1 wait=$2
    shift 2
    local env=(UCX_TLS="$tls" UCX_NET_DEVICES=lo UCFT_WAIT="$wait")
    [[ $tls == shm ]] && env=(UCX_TLS=shm UCFT_WAIT="$wait")
    if [[ $(basename "$launcher") == ucftrun ]]; then
        env "${env[@]}" "$launcher" -n 2 --timeout 120 \
            "$bench" pt2pt --json "$@"
    else
        env "${env[@]}" "$launcher" --allow-run-as-root --oversubscribe \
            -np 2 --mca oob_tcp_if_include lo -x UCX_TLS -x UCFT_WAIT \
            $([[ $tls == shm ]] || echo -x UCX_NET_DEVICES) \
            "$bench" pt2pt --json "$@"
    fi
}

tmp=$(mktemp)
trap 'rm -f "$tmp" "$tmp.run"' EXIT
echo "# ucft-bench pt2pt matrix: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc)" \
    "cores, load $(cut -d' ' -f1-3 /proc/loadavg), $runs run(s) per cell," \
    "launcher $(basename "$launcher")"
for tls in shm tcp; do
    for wait in spin hybrid sleep; do
        for ((i = 0; i < runs; i++)); do
            if ! run_one "$tls" "$wait" "$@" >>"$tmp.run"; then
                echo "pt2pt_matrix.sh: run failed: $tls $wait" >&2
            fi
            # Tag each line with the cell it belongs to.
            sed "s/^{/{\"cell\":\"$tls $wait\",/" "$tmp.run" >>"$tmp"
            rm -f "$tmp.run"
        done
    done
done
[[ $keep == 1 ]] && cat "$tmp" >&2

# One row per (cell, size): medians over runs; ratio range across runs.
awk '
function num(key,   m) {
    if (match($0, "\"" key "\":[-0-9.e+]+")) {
        m = substr($0, RSTART, RLENGTH); sub(/^[^:]*:/, "", m); return m + 0
    }
    return -1
}
function str(key,   m) {
    if (match($0, "\"" key "\":\"[^\"]*\"")) {
        m = substr($0, RSTART, RLENGTH); sub(/^[^:]*:"/, "", m)
        sub(/"$/, "", m); return m
    }
    return "?"
}
function median(list,   a, n, i, j, t) {
    n = split(list, a, " ")
    for (i = 2; i <= n; i++)
        for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) {
            t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
        }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{
    k = str("cell") SUBSEP num("size")
    if (!(k in seen)) { seen[k] = 1; order[++n] = k; lo[k] = 1e9; hi[k] = 0 }
    tp[k] = str("transport")
    u[k] = u[k] " " num("ucft_rtt_us"); p[k] = p[k] " " num("ucp_rtt_us")
    r = num("ratio"); rr[k] = rr[k] " " r
    if (r < lo[k]) lo[k] = r
    if (r > hi[k]) hi[k] = r
    bu[k] = bu[k] " " num("ucft_mbps"); bp[k] = bp[k] " " num("ucp_mbps")
    runs[k]++
}
END {
    printf "%-12s %-12s %8s %9s %9s %6s %11s %10s %10s %6s %4s\n", "cell",
        "transport", "size", "ucft_us", "ucp_us", "ratio", "ratio_range",
        "ucft_MB/s", "ucp_MB/s", "bw", "runs"
    for (i = 1; i <= n; i++) {
        k = order[i]; split(k, c, SUBSEP)
        mu = median(u[k]); mp = median(p[k]); bwu = median(bu[k])
        bwp = median(bp[k])
        printf "%-12s %-12s %8d %9.3f %9.3f %6.3f %5.3f-%5.3f %10.1f %10.1f %6.3f %4d\n",
            c[1], tp[k], c[2], mu, mp, median(rr[k]), lo[k], hi[k],
            bwu, bwp, (bwp > 0 ? bwu / bwp : 0), runs[k]
    }
}' "$tmp"
