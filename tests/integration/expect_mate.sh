#!/usr/bin/env bash
# Two ranks per core: ucftrun --bind-to core on a node of two cores
# (HWLOC_SYNTHETIC, whatever this machine has; it binds rank i to core
# i mod 2). Every rank must find the rank it shares its core with (i ^ 2,
# placement/comm_map.c), and it_coll's loops of recursive doubling and exchange
# and of the corrected algorithms (allreduce and barrier), which then give
# the wait its hint (coll_args_t.remote_wait, runtime/progress.c), must check
# out at every rank:
# small values, and vectors of 2 MiB (UCX rendezvous: a send to the mate
# stays pending, the hint must say 0). Then the same with the spin off
# (UCFT_MATE_SPIN_TIME=0).
set -u
ucftrun=$1
itcoll=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for alg in recdbl recexch corrected; do
    for spin in 20us 0; do
        for args in "20" "2 262144"; do
            # shellcheck disable=SC2086 # args: it_coll's ITERS [COUNT]
            HWLOC_SYNTHETIC="core:2 pu:1" UCFT_LOG_LEVEL=debug \
                UCFT_ALLREDUCE_ALG=$alg UCFT_BARRIER_ALG=$alg \
                UCFT_MATE_SPIN_TIME=$spin \
                "$ucftrun" -n 4 --bind-to core --timeout 120 "$itcoll" $args \
                >"$out" 2>&1 || {
                tail -30 "$out"
                echo "FAIL: $alg, UCFT_MATE_SPIN_TIME=$spin, it_coll $args"
                exit 1
            }
            for r in 0 1 2 3; do
                grep -q "\[ucft rank $r\] debug: placement .*core shared with rank $((r ^ 2)) " "$out" || {
                    grep "core shared" "$out"
                    echo "FAIL: rank $r did not find rank $((r ^ 2)) on its core"
                    exit 1
                }
            done
            echo "$alg, UCFT_MATE_SPIN_TIME=$spin, it_coll $args: mates found, results correct"
        done
    done
done
echo "PASS: two ranks per core"
