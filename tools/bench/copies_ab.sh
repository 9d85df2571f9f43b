#!/usr/bin/env bash
# copies_ab.sh: large blocking collectives with copies (UCFT_COLL_DIRECT_MIN=0)
# against the same calls in the caller's buffers (the default, include/ucft.h
# R4), alternating run by run in one session: ROUNDS rounds, each running
# every case both ways (the order flips every round), median per cell.
#
#   tools/bench/copies_ab.sh [BUILD_DIR]          (default build)
#
# Environment: NS ("2 4 8"), SIZES ("64k 1m 16m"), ROUNDS (5),
# CASES ("bcast:binomial bcast:scatter-ring allgather:ring allreduce:ring
# allreduce:recdbl"), ITERS (empty: by size, 400 / 100 / 10 up to 64 KiB /
# 1 MiB / beyond), BIND (core; none: unbound), UCX_TLS (shm).
# Prints one markdown table: mean µs per operation (max over ranks) with
# copies and in place, and in place ÷ copies.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
NS=${NS:-"2 4 8"}
SIZES=${SIZES:-"64k 1m 16m"}
ROUNDS=${ROUNDS:-5}
CASES=${CASES:-"bcast:binomial bcast:scatter-ring allgather:ring allreduce:ring allreduce:recdbl"}
ITERS=${ITERS:-}
BIND=${BIND:-core}
export UCX_TLS=${UCX_TLS:-shm}
case $BIND in
core) bind=(--bind-to core) ;;
none) bind=() ;;
*) echo "copies_ab.sh: BIND='$BIND': expected core or none" >&2; exit 2 ;;
esac
for f in "$build/bin/ucftrun" "$build/bin/ucft-bench"; do
    [ -x "$f" ] || { echo "copies_ab.sh: $f missing (build first)" >&2; exit 2; }
done
bytes() {
    case $1 in
    *k) echo $(( ${1%k} * 1024 )) ;;
    *m) echo $(( ${1%m} * 1048576 )) ;;
    *) echo "$1" ;;
    esac
}
tmp=$(mktemp -d /tmp/copies_ab.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
echo "# copies_ab.sh $(date -u '+%F %H:%M') UTC, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), UCX_TLS=$UCX_TLS, bind $BIND, $ROUNDS rounds"
for r in $(seq 1 "$ROUNDS"); do
    for n in $NS; do
        for s in $SIZES; do
            b=$(bytes "$s")
            it=$ITERS
            [ -n "$it" ] || it=$(( b <= 65536 ? 400 : b <= 1048576 ? 100 : 10 ))
            for c in $CASES; do
                op=${c%%:*} alg=${c#*:}
                modes="0 64k"
                [ $(( r % 2 )) -eq 0 ] && modes="64k 0"
                for m in $modes; do
                    line=$(UCFT_COLL_DIRECT_MIN=$m timeout 300 \
                        "$build/bin/ucftrun" -n "$n" "${bind[@]}" \
                        "$build/bin/ucft-bench" coll --op "$op" --alg "$alg" \
                        --size "$b" --iters "$it" --warmup $(( it / 10 + 1 )) \
                        2>/dev/null | tail -1)
                    mean=$(awk '{print $5}' <<<"$line")
                    err=$(awk '{print $9}' <<<"$line")
                    [ "$err" = 0 ] || mean=err
                    echo "$n $s $op $alg $m $mean" >>"$tmp/raw"
                done
            done
        done
    done
done
python3 - "$tmp/raw" "$NS" "$SIZES" "$CASES" <<'EOF'
import statistics, sys
raw, ns, sizes, cases = sys.argv[1], sys.argv[2].split(), sys.argv[3].split(), sys.argv[4].split()
d = {}
for l in open(raw):
    n, s, op, alg, m, mean = l.split()
    d.setdefault((n, s, op, alg, m), []).append(mean)
def med(v):
    x = [float(a) for a in v if a != "err"]
    return statistics.median(x) if len(x) == len(v) and x else None
print("| N | size | op | alg | copies µs | in place µs | in place ÷ copies |")
print("|---|---|---|---|---:|---:|---:|")
for n in ns:
    for s in sizes:
        for c in cases:
            op, alg = c.split(":")
            a = med(d.get((n, s, op, alg, "0"), []))
            b = med(d.get((n, s, op, alg, "64k"), []))
            fa = "err" if a is None else f"{a:,.1f}"
            fb = "err" if b is None else f"{b:,.1f}"
            rt = "-" if a is None or b is None else f"{b / a:.2f}"
            print(f"| {n} | {s} | {op} | {alg} | {fa} | {fb} | {rt} |")
EOF
