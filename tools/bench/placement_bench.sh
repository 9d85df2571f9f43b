#!/usr/bin/env bash
# placement_bench.sh: failure-free latency of each collective under each
# placement policy (UCFT_PLACEMENT), N ranks on NODES pretend nodes of
# ucftrun (docs/placement.md, docs/bench.md "placement").
#
#   tools/bench/placement_bench.sh [BUILD_DIR]        (default build)
#
# Every run is `ucftrun -n N --nodes NODES --map-by MAP_BY ucft-bench coll
# --op OP` (tools/bench/coll.c: per rank the mean interval between
# back-to-back blocking operations, max over ranks). Rounds are
# interleaved: each round runs every op under every policy, the policies
# in a rotated order, so that a change of the machine's load hits all
# cells alike; a cell is the median of its ROUNDS runs.
#
# On one machine the pretend nodes share memory and cores: UCX moves every
# message the same way whatever node PMIx names, so this measures what the
# mapping costs (other trees, other send orders, other ranks waking each
# other), not network locality.
#
# Environment: N (16), NODES (4), MAP_BY (slot), OPS ("bcast reduce
# allreduce barrier"), POLICIES ("interleave locality identity"), SIZE
# (8), ROUNDS (3), ITERS (1000), WARMUP (100), TMO (300 s per run),
# UCFT_HB_TIMEOUT (10s here: 16 ranks on a few busy cores are descheduled
# for longer than the 100 ms default, and a live rank falsely declared
# failed makes a failure-free run fail). UCFT_WAIT, UCFT_F, UCX_TLS etc.
# pass through to the ranks. Exit status 1 if a run gave no result or
# reported errors (it is left out of its cell and named).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
bin=$build/bin
N=${N:-16}
NODES=${NODES:-4}
MAP_BY=${MAP_BY:-slot}
OPS=${OPS:-"bcast reduce allreduce barrier"}
POLICIES=${POLICIES:-"interleave locality identity"}
SIZE=${SIZE:-8}
ROUNDS=${ROUNDS:-3}
ITERS=${ITERS:-1000}
WARMUP=${WARMUP:-100}
TMO=${TMO:-300}
export UCFT_HB_TIMEOUT=${UCFT_HB_TIMEOUT:-10s}

for f in "$bin/ucftrun" "$bin/ucft-bench"; do
    [ -x "$f" ] || {
        echo "placement_bench.sh: $f missing (build first)" >&2
        exit 2
    }
done
tmp=$(mktemp -d /tmp/placement_bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

field() { sed -n "s/.*\"$1\":\([-0-9.]*\).*/\1/p" | head -1; }
median() { sort -g | awk '{v[NR]=$1} END {if (NR==0) print "-";
    else if (NR%2) print v[(NR+1)/2]; else printf "%.3f\n", (v[NR/2]+v[NR/2+1])/2}'; }
cell() { [ -s "$1" ] && grep -v '^$' "$1" | median || echo -; }
us() { awk -v v="$1" 'BEGIN { if (v == "-") print "-"; else printf "%.0f\n", v }'; }
range() { [ -s "$1" ] && grep -v '^$' "$1" | sort -g |
    awk 'NR==1{lo=$1} {hi=$1} END {printf "%.0f-%.0f\n", lo, hi}' || echo -; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" ||
    b + 0 == 0) print "-"; else printf "%.2f\n", a / b }'; }

run() { # OP POLICY -> one JSON line
    UCFT_PLACEMENT=$2 timeout "$TMO" "$bin/ucftrun" -n "$N" --nodes "$NODES" \
        --map-by "$MAP_BY" "$bin/ucft-bench" coll --op "$1" --size "$SIZE" \
        --iters "$ITERS" --warmup "$WARMUP" --json 2>>"$tmp/err.log" |
        grep '"bench":"coll"'
}

load0=$(cut -d' ' -f1-3 /proc/loadavg)
echo "# placement_bench.sh $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores," \
    "load at start $load0; UCFT_HB_TIMEOUT=$UCFT_HB_TIMEOUT; N=$N on $NODES pretend nodes (--map-by $MAP_BY)," \
    "size $SIZE B, $ITERS iters ($WARMUP warm-up), $ROUNDS interleaved rounds"
set -- $POLICIES
npol=$#
failed=0
for r in $(seq "$ROUNDS"); do
    # Rotate the policy order by one each round.
    order=$(echo $POLICIES | tr ' ' '\n' | awk -v k=$(((r - 1) % npol)) -v n=$npol \
        '{p[NR-1]=$0} END {for (i = 0; i < n; i++) printf "%s ", p[(i+k)%n]}')
    for op in $OPS; do
        for pl in $order; do
            j=$(run "$op" "$pl")
            v=$(echo "$j" | field mean_us)
            e=$(echo "$j" | field errors)
            if [ -z "$v" ] || [ "${e:-1}" != 0 ]; then
                failed=$((failed + 1))
                echo "# round $r, $op, $pl: ${e:+$e errors}${e:-no result}"
                continue
            fi
            echo "$v" >>"$tmp/$op.$pl"
        done
    done
done
echo "# load at end $(cut -d' ' -f1-3 /proc/loadavg); $failed failed runs"

echo
echo "mean µs per operation (max over ranks), median of $ROUNDS rounds" \
    "[min-max over rounds]; ratio = policy / identity"
hdr="| op "
sep="|---"
for pl in $POLICIES; do
    hdr="$hdr| $pl µs "
    sep="$sep|---"
done
for pl in $POLICIES; do
    [ "$pl" = identity ] && continue
    hdr="$hdr| $pl / identity "
    sep="$sep|---"
done
echo "$hdr|"
echo "$sep|"
for op in $OPS; do
    line="| $op "
    for pl in $POLICIES; do
        line="$line| $(us "$(cell "$tmp/$op.$pl")") [$(range "$tmp/$op.$pl")] "
    done
    id=$(cell "$tmp/$op.identity")
    for pl in $POLICIES; do
        [ "$pl" = identity ] && continue
        line="$line| $(ratio "$(cell "$tmp/$op.$pl")" "${id:--}") "
    done
    echo "$line|"
done
late=$(grep -c 'heartbeat went out' "$tmp/err.log")
if [ "$late" -gt 0 ]; then
    echo
    echo "# $late warnings of a late own heartbeat (descheduled ranks)"
fi
if grep -qv 'heartbeat went out' "$tmp/err.log"; then
    echo "# stderr (first other lines):"
    grep -v 'heartbeat went out' "$tmp/err.log" | head -5 | sed 's/^/#   /'
fi
[ "$failed" -eq 0 ]
