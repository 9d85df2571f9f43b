#!/usr/bin/env bash
# ucft-sim's node and placement options: bad values exit 2 with a message,
# the cross-node count follows the closed forms of the binomial broadcast
# (interleave: nodes - 1; blocks: N - ranks per node), a killed node's ranks
# are dead and every survivor delivers under interleave.
# Usage: ucft_sim_cli.sh PATH/TO/ucft-sim
set -u
sim=$1
fails=0

expect_exit() { # code, args...
    local want=$1
    shift
    "$sim" "$@" >/dev/null 2>/tmp/ucft_sim_cli.$$
    local got=$?
    if [ "$got" != "$want" ] || { [ "$want" = 2 ] && ! grep -q "ucft-sim:" /tmp/ucft_sim_cli.$$; }; then
        echo "FAIL: ucft-sim $* -> exit $got (want $want): $(head -1 /tmp/ucft_sim_cli.$$)"
        fails=$((fails + 1))
    fi
}

field() { # json, name
    sed -n "s/.*\"$2\":\"\{0,1\}\([^,\"}]*\).*/\1/p" <<<"$1"
}

expect_field() { # name, want, args...
    local name=$1 want=$2
    shift 2
    local out
    out=$("$sim" --json "$@")
    local got
    got=$(field "$out" "$name")
    if [ "$got" != "$want" ]; then
        echo "FAIL: ucft-sim $* -> $name=$got (want $want)"
        fails=$((fails + 1))
    fi
}

expect_exit 2 --op bcast --ranks 16 --nodes 0
# Not-a-number times (every range check used to let NaN through).
expect_exit 2 --op bcast --ranks 4 --loggp nan,0,0,0
expect_exit 2 --op bcast --ranks 4 --detect-delay nan
expect_exit 2 --op bcast --ranks 4 --start-spread nan
expect_exit 2 --op bcast --ranks 4 --start-spread -1
expect_exit 2 --op bcast --ranks 4 --kill-at 1@nan
expect_exit 2 --op bcast --ranks 4 --nodes 2 --kill-node 0@nan
# Empty list elements and white space before a number.
expect_exit 2 --op bcast --ranks 4 --fail-start ""
expect_exit 2 --op bcast --ranks 4 --fail-start 1,,2
expect_exit 2 --op bcast --ranks 4 --kill-at 1@0,
expect_exit 2 --op bcast --ranks 8 --sweep-ranks 4,,8
expect_exit 2 --op bcast --ranks 8 --sweep-ranks " 4"
expect_exit 0 --op bcast --ranks 8 --sweep-ranks 4,8
expect_exit 2 --op bcast --ranks 16 --nodes 17
expect_exit 2 --op bcast --ranks 16 --nodes 4 --map-by diagonal
expect_exit 2 --op bcast --ranks 16 --nodes 4 --placement scattered
expect_exit 2 --op bcast --ranks 16 --placement interleave
# The agreement needs a value word past its 8-byte header.
expect_exit 2 --op agree --ranks 8
expect_exit 2 --op agree --ranks 8 --size 14
expect_exit 0 --op agree --ranks 8 --size 12 --fail-start 3
expect_exit 2 --op bcast --ranks 16 --kill-node 1
expect_exit 2 --op bcast --ranks 16 --nodes 4 --kill-node 4
expect_exit 2 --op bcast --ranks 16 --nodes 4 --kill-node 1@soon
expect_exit 2 --op bcast --ranks 16 --f -1
expect_exit 2 --op bcast --alg corrected --ranks 16 --f 9
expect_exit 2 --op bcast --ranks 8 --sweep-ranks 8,16 --nodes 12
expect_exit 0 --op bcast --ranks 16 --nodes 4 --map-by node --placement identity

# Staggered starts: with seed 1, 5 of the 15 survivors start after they
# heard of rank 3's death; every one of them still delivers.
expect_field delivered 15 --op allreduce --alg corrected --ranks 16 \
    --fail-start 3 --start-spread 50 --detect-delay 1 --seed 1
expect_field started_knowing 5 --op allreduce --alg corrected --ranks 16 \
    --fail-start 3 --start-spread 50 --detect-delay 1 --seed 1

# 1024 ranks on 16 nodes, binomial broadcast.
expect_field cross_node 15 --op bcast --ranks 1024 --nodes 16 --placement interleave
expect_field cross_node 960 --op bcast --ranks 1024 --nodes 16 --placement locality
expect_field cross_node 960 --op bcast --ranks 1024 --nodes 16
expect_field cross_node 15 --op bcast --ranks 1024 --nodes 16 --map-by node
expect_field cross_node 0 --op bcast --ranks 1024
# A node of 64 ranks dies before / during; every survivor delivers.
for kill in 5 5@3.5; do
    for op in "bcast --alg corrected" "allreduce --alg corrected" "reduce --alg corrected"; do
        # shellcheck disable=SC2086
        expect_field dead 64 --op $op --ranks 1024 --nodes 16 --placement interleave --kill-node $kill
        # shellcheck disable=SC2086
        expect_field delivered 960 --op $op --ranks 1024 --nodes 16 --placement interleave --kill-node $kill
    done
done
# Output final vs the end of the corrections (default LogGP, 8 ranks):
# binomial 4.8 us both; the corrected broadcast's last output is final at
# 3.6 us (a ring neighbour's correction beats the deepest tree message)
# and its corrections end at 6.8 us.
expect_field sim_ready_us 4.803 --op bcast --alg binomial --ranks 8
expect_field sim_ready_us 3.602 --op bcast --alg corrected --ranks 8
expect_field sim_latency_us 6.804 --op bcast --alg corrected --ranks 8
# Sweep CSV carries the node columns.
csv=$("$sim" --op bcast --sweep-ranks 64,128 --nodes 4 --placement interleave)
if ! grep -q "nodes,cross_node,cross_node_frac,sim_ready_us" <<<"$csv" || [ "$(tail -1 <<<"$csv" | cut -d, -f18)" != 3 ]; then
    echo "FAIL: sweep CSV: $csv"
    fails=$((fails + 1))
fi
# --failed / --tree-repair (docs/trees.md): bad values exit 2; the root,
# a rank beyond N and k >= N do not fit; reroute needs a binomial tree
# (the baselines', or the corrected broadcast's with checked correction).
expect_exit 2 --op barrier --ranks 16 --failed FIRST:x
expect_exit 2 --op barrier --ranks 16 --failed 1,,2
expect_exit 2 --op barrier --ranks 16 --failed 1 --tree-repair sideways
expect_exit 2 --op barrier --ranks 16 --failed 0
expect_exit 2 --op barrier --ranks 16 --failed 16
expect_exit 2 --op barrier --ranks 16 --failed FIRST:16
expect_exit 2 --op allreduce --alg ring --ranks 16 --failed 3 --tree-repair reroute
expect_exit 2 --op barrier --ranks 16 --failed 3 --fail 1
# Rebalanced = fresh; the rerouted binomial barrier after ranks 1..8 of 16:
# the root adopts them, 2 (16 - 8 - 1) messages either way.
for d in rebalance fresh; do
    expect_field delivered 8 --op barrier --alg binomial --ranks 16 --failed FIRST:8 --tree-repair $d
    expect_field sim_latency_us 9.600 --op barrier --alg binomial --ranks 16 --failed FIRST:8 --tree-repair $d
done
expect_field messages 14 --op barrier --alg binomial --ranks 16 --failed FIRST:8 --tree-repair reroute
# The binomial broadcast and reduce take the rerouted tree too: every one
# of the 8 survivors delivers, one message per tree edge, and the root,
# which adopts all seven (a star), is done sooner than the rebalanced
# tree of depth 3 (rebalance = fresh).
for op in bcast reduce; do
    expect_field delivered 8 --op $op --alg binomial --ranks 16 --failed FIRST:8 --tree-repair lookup
    expect_field messages 7 --op $op --alg binomial --ranks 16 --failed FIRST:8 --tree-repair reroute
    expect_field sim_latency_us 4.001 --op $op --alg binomial --ranks 16 --failed FIRST:8 --tree-repair reroute
    expect_field sim_latency_us 4.803 --op $op --alg binomial --ranks 16 --failed FIRST:8 --tree-repair rebalance
done
# The corrected broadcast (checked correction) runs on the rerouted tree
# over the 8 survivors: every one delivers, with the rebalanced tree's
# message count (7 tree messages, 16 corrections), the star sooner; the
# opportunistic variant takes no rerouted tree.
for d in reroute lookup rebalance; do
    expect_field delivered 8 --op bcast --alg corrected --ranks 16 --failed FIRST:8 --tree-repair $d
    expect_field messages 23 --op bcast --alg corrected --ranks 16 --failed FIRST:8 --tree-repair $d
done
expect_field sim_latency_us 6.003 --op bcast --alg corrected --ranks 16 --failed FIRST:8 --tree-repair reroute
expect_field sim_latency_us 6.804 --op bcast --alg corrected --ranks 16 --failed FIRST:8 --tree-repair rebalance
expect_exit 2 --op bcast --alg corrected-opportunistic --ranks 16 --failed 3 --tree-repair reroute
# The corrected reduce around the holes of ranks 1..8 of 16 (f = 1,
# reduce_corrected_holes.c): groups (9,10), (11,12), (13,14) exchange (6
# messages), 15's group has a hole and sends to the root (1), one tree
# message per survivor but the root (7): 14; the survivors' own
# structures (rebalance) take three full groups' exchanges (6), the root's
# with the short group (2) and 7 tree messages: 15.
for d in reroute lookup; do
    expect_field delivered 8 --op reduce --alg corrected --ranks 16 --failed FIRST:8 --tree-repair $d
    expect_field messages 14 --op reduce --alg corrected --ranks 16 --failed FIRST:8 --tree-repair $d
    expect_field delivered 8 --op allreduce --alg corrected --ranks 16 --failed FIRST:8 --tree-repair $d
done
expect_field messages 15 --op reduce --alg corrected --ranks 16 --failed FIRST:8 --tree-repair rebalance
# The rerouted tree follows the placement too (positions, as in the
# runtime): 3 cross-node messages with interleave, 47 over plain ranks.
expect_field cross_node 3 --op bcast --alg binomial --ranks 64 --failed 1,5,9,13,17 --nodes 4 --placement interleave --tree-repair reroute
# Rebalance keeps the communicator's placement over the failure domains
# that remain: as many cross-node messages as a fresh job.
expect_field cross_node 26 --op bcast --alg binomial --ranks 64 --failed 1,5,9,13,17 --nodes 16 --placement interleave --tree-repair rebalance
expect_field cross_node 26 --op bcast --alg binomial --ranks 64 --failed 1,5,9,13,17 --nodes 16 --placement interleave --tree-repair fresh
expect_field delivered 12 --op allreduce --ranks 16 --failed 1,5,9,13 --tree-repair rebalance
expect_field dead 4 --op allreduce --ranks 16 --failed 1,5,9,13 --tree-repair keep --f 4
expect_field delivered 12 --op allreduce --ranks 16 --failed 1,5,9,13 --tree-repair keep --f 4
rm -f /tmp/ucft_sim_cli.$$
echo "$fails failures"
[ "$fails" = 0 ]
