#!/usr/bin/env bash
# A steady loop of collectives must reuse its states: for each operation and
# algorithm, 1 and 2 ranks run 10,000 blocking operations back to back and report
# at finalize (info log) how many collective states they allocated. Every
# state is recycled as soon as its cancelled transport requests have
# completed (coll_op_ops_t.idle), so the count stays small whatever the
# number of operations (it was one per operation before reuse, and up to
# two seconds' worth of them alive at once). A corrected broadcast
# completes early and runs on (at most 16 such states, comm/coll_life.c), so
# the bound is 24. One rank: every operation completes inside its post and
# nothing else makes progress; a corrected allreduce or barrier is kept
# after it completed (comm/coll_life.c) and its successor retires it, which
# piled up one state per operation until the post cleaned the retired ones
# up itself (10,000 states; 200 us per operation after 20,000).
set -u
ucftrun=$1
bench=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
bound=24
for n in 1 2; do
for spec in bcast:corrected bcast:binomial allreduce:corrected \
    allreduce:recdbl allreduce:linear reduce:corrected reduce:binomial \
    barrier:corrected barrier:recdbl; do
    op=${spec%%:*} alg=${spec#*:}
    UCFT_WAIT=spin UCFT_LOG_LEVEL=info "$ucftrun" -n $n --timeout 120 "$bench" \
        coll --op "$op" --alg "$alg" --size 8 --iters 10000 --warmup 10 \
        >"$out" 2>&1 || { cat "$out"; echo "FAIL: $op $alg: the benchmark failed"; exit 1; }
    lines=$(grep -c "collectives: [0-9]* operations" "$out")
    [ "$lines" -eq $n ] || { cat "$out"; echo "FAIL: $op $alg: $lines state reports, $n expected"; exit 1; }
    while read -r nops nalloc peak; do
        echo "$n ranks, $op $alg: $nops operations, $nalloc states allocated, at most $peak at once"
        [ "$nops" -ge 10000 ] || { echo "FAIL: only $nops operations counted"; exit 1; }
        [ "$nalloc" -le "$bound" ] && [ "$peak" -le "$bound" ] ||
            { echo "FAIL: $n ranks, $op $alg: more than $bound states"; exit 1; }
    done < <(sed -n 's/.*collectives: \([0-9]*\) operations, \([0-9]*\) states allocated, at most \([0-9]*\) at once.*/\1 \2 \3/p' "$out")
done
done
echo "PASS: collective states are reused"
