#!/usr/bin/env bash
# coll_vs_mpi.sh: ucft collectives next to Open MPI's, same N, same size,
# same measurement (tools/bench/coll.c and mpi_coll.c: per rank the mean
# interval between back-to-back blocking operations, max over ranks),
# run alternately, ROUNDS rounds, median per cell. Then the
# kill-to-correct-result time of the corrected allreduce (N = KILL_N).
#
#   tools/bench/coll_vs_mpi.sh [BUILD_DIR]        (default build-cbench)
#
# Environment: NS ("2 4 8 16"), OPS ("bcast allreduce barrier"; also
# reduce, allgather, reduce_scatter), SIZE (8), SIZES (SIZE; several
# sizes, e.g. "8 64k 1m 16m": one table row per size; allgather and
# reduce_scatter: the whole vector, n blocks),
# ROUNDS (3), ITERS (2000), WARMUP (200), WAITS ("hybrid spin"),
# SPIN_MAX_N (number of cores),
# ALLREDUCE_ALGS ("corrected corrected-countbit corrected-bit recdbl recexch
# linear"),
# BCAST_ALGS ("corrected corrected-opportunistic corrected-batched binomial"),
# ALLGATHER_ALGS ("corrected ring"), REDUCE_SCATTER_ALGS ("corrected ring"),
# REDUCE_ALGS ("corrected binomial"), BARRIER_ALGS ("corrected recdbl recexch
# linear"),
# MPI_PMLS ("ob1 ucx"), KILL_N (8), KILL_RUNS (5; 0 skips),
# KILL_WAITS ("hybrid"), SYNC (0; 1: every operation timed alone and
# followed by an untimed barrier, --sync, as MPI benchmark suites measure
# collective latency, instead of back-to-back intervals), BIND (none;
# core: ucft ranks with ucftrun --bind-to core, Open MPI's with --bind-to
# core:overload-allowed, rank i on core i mod ncores for both; with more
# ranks than cores unbound runs flip between a fast and a slow placement
# from one run to the next, bound ones do not).
# Waiting: ucft ranks wait as UCFT_WAIT says (hybrid = the production
# default: poll and yield the core for UCFT_YIELD_TIME, then sleep on the
# event fd; spin = busy-poll, measured only while N <= SPIN_MAX_N, default
# the number of cores: with more ranks than cores a rank that never yields
# holds a core for whole time slices, tens of ms per operation). Open MPI
# busy-polls, yielding the core between polls with --mca
# mpi_yield_when_idle 1 (needed with more ranks than cores).
# mpi_coll.c is built with mpicc into a temporary directory; without
# mpicc/mpirun the Open MPI columns are "-".
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build-cbench}
bin=$build/bin
NS=${NS:-"2 4 8 16"}
OPS=${OPS:-"bcast allreduce barrier"}
SIZE=${SIZE:-8}
SIZES=${SIZES:-$SIZE}
ALLGATHER_ALGS=${ALLGATHER_ALGS:-"corrected ring"}
REDUCE_SCATTER_ALGS=${REDUCE_SCATTER_ALGS:-"corrected ring"}
ROUNDS=${ROUNDS:-3}
ITERS=${ITERS:-2000}
WARMUP=${WARMUP:-200}
WAITS=${WAITS:-"hybrid spin"}
ALLREDUCE_ALGS=${ALLREDUCE_ALGS:-"corrected corrected-countbit corrected-bit recdbl recexch linear"}
BCAST_ALGS=${BCAST_ALGS:-"corrected corrected-opportunistic corrected-batched binomial"}
REDUCE_ALGS=${REDUCE_ALGS:-"corrected binomial"}
BARRIER_ALGS=${BARRIER_ALGS:-"corrected recdbl recexch linear"}
MPI_PMLS=${MPI_PMLS:-"ob1 ucx"}
KILL_N=${KILL_N:-8}
KILL_RUNS=${KILL_RUNS:-5}
KILL_WAITS=${KILL_WAITS:-"hybrid"}
SPIN_MAX_N=${SPIN_MAX_N:-$(nproc)}
TMO=${TMO:-300}
SYNC=${SYNC:-0}
sync_ucft=() sync_mpi=()
[ "$SYNC" = 1 ] && sync_ucft=(--sync) && sync_mpi=(sync)
BIND=${BIND:-none}
case $BIND in
none) bind_ucft=() bind_mpi=() ;;
core) bind_ucft=(--bind-to core) bind_mpi=(--bind-to core:overload-allowed) ;;
*) echo "coll_vs_mpi.sh: BIND='$BIND': expected none or core" >&2; exit 2 ;;
esac

for f in "$bin/ucftrun" "$bin/ucft-bench"; do
    [ -x "$f" ] || { echo "coll_vs_mpi.sh: $f missing (build first)" >&2; exit 2; }
done
tmp=$(mktemp -d /tmp/coll_vs_mpi.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mpi=""
if command -v mpicc >/dev/null && command -v mpirun >/dev/null &&
    mpicc -O2 -o "$tmp/mpi_coll" "$root/tools/bench/mpi_coll.c" 2>"$tmp/cc.log"; then
    mpi=$tmp/mpi_coll
else
    echo "# no mpicc/mpirun (or mpi_coll.c did not build): no Open MPI columns"
    MPI_PMLS=""
fi

# algs OP: the ucft algorithms measured for OP.
algs() {
    case $1 in
    allreduce) echo "$ALLREDUCE_ALGS" ;;
    bcast) echo "$BCAST_ALGS" ;;
    reduce) echo "$REDUCE_ALGS" ;;
    barrier) echo "$BARRIER_ALGS" ;;
    allgather) echo "$ALLGATHER_ALGS" ;;
    reduce_scatter) echo "$REDUCE_SCATTER_ALGS" ;;
    *) echo "corrected" ;;
    esac
}
# baseline OP: the non-fault-tolerant algorithm of OP (docs/baselines.md).
baseline() {
    case $1 in
    allreduce | barrier) echo recdbl ;;
    allgather | reduce_scatter) echo ring ;;
    *) echo binomial ;;
    esac
}
# tobytes 64k -> 65536 (mpi_coll takes plain bytes).
tobytes() { awk -v s="$1" 'BEGIN { m = 1; u = tolower(substr(s, length(s)));
    if (u == "k") m = 1024; else if (u == "m") m = 1048576;
    else if (u == "g") m = 1073741824;
    if (m > 1) s = substr(s, 1, length(s) - 1); printf "%d\n", s * m }'; }
field() { sed -n "s/.*\"$1\":\([-0-9.]*\).*/\1/p" | head -1; }
median() { sort -g | awk '{v[NR]=$1} END {if (NR==0) print "-";
    else if (NR%2) print v[(NR+1)/2]; else printf "%.3f\n", (v[NR/2]+v[NR/2+1])/2}'; }

run_ucft() { # N OP ALG WAIT SIZE -> mean_us
    UCFT_WAIT=$4 timeout "$TMO" "$bin/ucftrun" -n "$1" "${bind_ucft[@]}" \
        "$bin/ucft-bench" coll \
        --op "$2" --alg "$3" --size "$5" --iters "$ITERS" \
        --warmup "$WARMUP" "${sync_ucft[@]}" --json 2>>"$tmp/err.log" |
        field mean_us
}
run_mpi() { # N OP PML SIZE -> mean_us
    local extra=(--mca pml ob1)
    [ "$3" = ucx ] && extra=(--mca pml ucx --mca pml_ucx_tls any
        --mca pml_ucx_devices any)
    timeout "$TMO" mpirun --allow-run-as-root --oversubscribe \
        "${bind_mpi[@]}" --mca mpi_yield_when_idle 1 "${extra[@]}" \
        -np "$1" "$mpi" "$2" \
        "$(tobytes "$4")" "$ITERS" "$WARMUP" "${sync_mpi[@]}" 2>>"$tmp/err.log" |
        field mean_us
}

echo "# coll_vs_mpi.sh $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores," \
    "load $(cut -d' ' -f1-3 /proc/loadavg); sizes $SIZES B, $ITERS iters" \
    "($WARMUP warm-up), $ROUNDS rounds, median of the rounds," \
    "$([ "$SYNC" = 1 ] && echo "each op timed alone (SYNC=1)" ||
        echo "back-to-back"), binding: $BIND"
for r in $(seq "$ROUNDS"); do
  for sz in $SIZES; do
    for n in $NS; do
        for op in $OPS; do
            for w in $WAITS; do
                [ "$w" = spin ] && [ "$n" -gt "$SPIN_MAX_N" ] && continue
                for a in $(algs "$op"); do
                    v=$(run_ucft "$n" "$op" "$a" "$w" "$sz")
                    echo "${v:-}" >>"$tmp/u.$sz.$n.$op.$a.$w"
                done
            done
            for p in $MPI_PMLS; do
                v=$(run_mpi "$n" "$op" "$p" "$sz")
                echo "${v:-}" >>"$tmp/m.$sz.$n.$op.$p"
            done
        done
    done
  done
done

cell() { [ -f "$1" ] && grep -v '^$' "$1" | median || echo -; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" ||
    b + 0 == 0) print "-"; else printf "%.2f\n", a / b }'; }
echo
echo "mean µs per operation (max over ranks), median of $ROUNDS rounds;" \
    "ratio = ucft / Open MPI (best of ${MPI_PMLS:-none})"
printf "| %5s | %3s | %-9s | %-18s | %-6s | %9s | %9s | %9s | %6s | %9s |\n" \
    size N op "ucft alg" wait "ucft µs" "ob1 µs" "ucx µs" ratio "/baseline"
echo "|---|---|---|---|---|---|---|---|---|---|"
for sz in $SIZES; do
for n in $NS; do
    for op in $OPS; do
        ob1=$(cell "$tmp/m.$sz.$n.$op.ob1")
        ucx=$(cell "$tmp/m.$sz.$n.$op.ucx")
        best=$(printf '%s\n%s\n' "$ob1" "$ucx" | grep -v '^-$' | sort -g | head -1)
        for w in $WAITS; do
            [ "$w" = spin ] && [ "$n" -gt "$SPIN_MAX_N" ] && continue
            for a in $(algs "$op"); do
                u=$(cell "$tmp/u.$sz.$n.$op.$a.$w")
                bin_r=-
                bl=$(baseline "$op")
                [ "$a" != "$bl" ] && [ -f "$tmp/u.$sz.$n.$op.$bl.$w" ] &&
                    bin_r=$(ratio "$u" "$(cell "$tmp/u.$sz.$n.$op.$bl.$w")")
                printf "| %5s | %3s | %-9s | %-18s | %-6s | %9s | %9s | %9s | %6s | %9s |\n" \
                    "$sz" "$n" "$op" "$a" "$w" "$u" "$ob1" "$ucx" \
                    "$(ratio "$u" "${best:--}")" "$bin_r"
            done
        done
    done
done
done

# The target of the issue: the fastest ucft allreduce (any algorithm, any
# wait mode) at most 1.0x the best Open MPI one, per N.
case " $OPS " in *" allreduce "*)
    echo
    echo "fastest ucft allreduce vs the best Open MPI, per size and N"
    printf "| %5s | %3s | %-26s | %9s | %9s | %6s |\n" size N "ucft alg/wait" \
        "ucft µs" "MPI µs" ratio
    echo "|---|---|---|---|---|---|"
    for sz in $SIZES; do
    for n in $NS; do
        bu=- ba=-
        for w in $WAITS; do
            for a in $(algs allreduce); do
                u=$(cell "$tmp/u.$sz.$n.allreduce.$a.$w")
                [ "$u" = - ] && continue
                if [ "$bu" = - ] || awk -v x="$u" -v y="$bu" 'BEGIN{exit !(x < y)}'; then
                    bu=$u ba="$a/$w"
                fi
            done
        done
        best=$(printf '%s\n%s\n' "$(cell "$tmp/m.$sz.$n.allreduce.ob1")" \
            "$(cell "$tmp/m.$sz.$n.allreduce.ucx")" | grep -v '^-$' | sort -g | head -1)
        printf "| %5s | %3s | %-26s | %9s | %9s | %6s |\n" "$sz" "$n" "$ba" \
            "$bu" "${best:--}" "$(ratio "$bu" "${best:--}")"
    done
    done
    ;;
esac

if [ "$KILL_RUNS" -gt 0 ]; then
    echo
    echo "kill-to-correct-result, corrected allreduce (f = 1), N = $KILL_N," \
        "rank $((KILL_N - 3)) SIGKILLed at 3 s; ms after the kill, median over survivors"
    printf "| %-6s | %3s | %9s | %9s | %11s | %11s | %11s | %3s |\n" wait run \
        first_med first_max excluded_med excluded_p99 excluded_max bad
    echo "|---|---|---|---|---|---|---|---|"
    for w in $KILL_WAITS; do
        : >"$tmp/k.$w"
        for r in $(seq "$KILL_RUNS"); do
            j=$(UCFT_WAIT=$w timeout "$TMO" "$bin/ucftrun" -n "$KILL_N" \
                "${bind_ucft[@]}" \
                --kill "$((KILL_N - 3))@3" "$bin/ucft-bench" coll \
                --kill-to-result --json 2>>"$tmp/err.log" | grep kill-to-result)
            fm=$(echo "$j" | sed 's/.*"first_ms":{//' | field median)
            fx=$(echo "$j" | sed 's/.*"first_ms":{//' | field max)
            em=$(echo "$j" | sed 's/.*"excluded_ms":{//' | field median)
            ep=$(echo "$j" | sed 's/.*"excluded_ms":{//' | field p99)
            ex=$(echo "$j" | sed 's/.*"excluded_ms":{//' | field max)
            bad=$(echo "$j" | field bad)
            echo "${em:-}" >>"$tmp/k.$w"
            printf "| %-6s | %3s | %9s | %9s | %11s | %11s | %11s | %3s |\n" \
                "$w" "$r" "${fm:--}" "${fx:--}" "${em:--}" "${ep:--}" \
                "${ex:--}" "${bad:--}"
        done
        echo "median over runs of the excluded median ($w): $(cell "$tmp/k.$w") ms"
    done
fi
if [ -s "$tmp/err.log" ]; then
    echo
    echo "# stderr (first lines):"
    grep -v 'heartbeat went out' "$tmp/err.log" | head -5 | sed 's/^/#   /'
fi
