#!/usr/bin/env bash
# ucft-topo online under ucftrun: the report of a running job (loci and map
# from the runtime, ucft_comm_query_placement) must be the offline report
# of the same job shape, line for line, i.e. the runtime's map is what
# placement_compute gives for that job; plus the counts docs/placement.md
# derives, the DOT file, and the online option errors (exit 2, one
# message).
# Usage: run_topo_online_test.sh CASE path/to/ucftrun path/to/ucft-topo
# Exit 77 (skipped) when the case needs what this machine lacks.
set -u
case_name=$1
run_=$2
topo=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
export UCX_TLS=${UCX_TLS:-shm} UCFT_LOG_LEVEL=${UCFT_LOG_LEVEL:-warn}

fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}

# online LAUNCHER_ARGS... -- TOOL_ARGS...: report in $tmp/on, status $rc.
online() {
    local largs=()
    while [ "$1" != -- ]; do
        largs+=("$1")
        shift
    done
    shift
    "$run_" --timeout 60 "${largs[@]}" "$topo" "$@" >"$tmp/on" 2>"$tmp/on.err"
    rc=$?
}

# offline TOOL_ARGS...: report in $tmp/off (never online, even under a
# launcher).
offline() {
    env -u PMIX_NAMESPACE -u PMIX_RANK "$topo" --offline "$@" >"$tmp/off" \
        2>"$tmp/off.err" || fail "offline $* exited $?: $(cat "$tmp/off.err")"
}

# same WHAT: the online report, less its "# online" line, equals the
# offline one.
same() {
    [ "$rc" -eq 0 ] || fail "$1: online exit $rc: $(head -3 "$tmp/on.err")"
    head -1 "$tmp/on" | grep -q '^# online: ' || fail "$1: no '# online' line"
    tail -n +2 "$tmp/on" >"$tmp/on.body"
    diff "$tmp/off" "$tmp/on.body" >"$tmp/diff" ||
        fail "$1: online and offline reports differ: $(head -6 "$tmp/diff")"
}

# expect LINE: the online report holds exactly this line.
expect() {
    grep -qxF -- "$1" "$tmp/on" || fail "missing line '$1'"
}

# bad WANT LAUNCHER_ARGS... -- TOOL_ARGS...: exit status WANT and exactly
# one 'ucft-topo: ' message (rank 0's) however many ranks.
bad() {
    local want=$1
    shift
    online "$@"
    [ "$rc" -eq "$want" ] || fail "exit $rc (want $want) for: $*"
    [ "$(grep -c '^ucft-topo: ' "$tmp/on.err")" -eq 1 ] ||
        fail "want one message for: $*, got: $(cat "$tmp/on.err")"
}

case $case_name in
map_slot)
    # 8 ranks, 2 pretend nodes, ranks 0-3 on node 0: interleave puts
    # position p on node p mod 2 (D - 1 = 1 tree edge across, every ring
    # pair across); identity and locality are the blocks (n - m = 4 edges
    # across, D = 2 ring pairs).
    for pl in interleave locality identity; do
        UCFT_PLACEMENT=$pl online -n 8 --nodes 2 --map-by slot --
        offline --nodes 2 --ppn 4 --map-by slot --placement $pl
        same "$pl bcast"
        expect "# online: the running job; loci and map of the world communicator from the runtime (UCFT_PLACEMENT=$pl)"
        expect "# ucft-topo: 8 ranks on 2 nodes, placement $pl, op bcast, root 0, f 1"
        expect "rank 5: node 1 package - numa - core -"
        if [ $pl = interleave ]; then
            expect "pos 1 -> rank 4 -> node 1 (vrank 1)"
            expect "pos 6 -> rank 3 -> node 0 (vrank 6)"
            expect "tree edges crossing nodes: 1"
            expect "ring pairs crossing nodes: 8 of 8"
        else
            expect "pos 1 -> rank 1 -> node 0 (vrank 1)"
            expect "pos 6 -> rank 6 -> node 1 (vrank 6)"
            expect "tree edges crossing nodes: 4"
            expect "ring pairs crossing nodes: 2 of 8"
        fi
    done
    # Reduce from another root with the runtime's f (UCFT_F=1): interleave
    # gives no up-correction group two members on one node.
    UCFT_PLACEMENT=interleave online -n 8 --nodes 2 -- --op reduce --root 5
    offline --nodes 2 --ppn 4 --op reduce --root 5 --f 1
    same "interleave reduce root 5"
    expect "groups with two members on one node: 0 of 4"
    expect "most I(f)-subtrees holding ranks of one node: 1 of 2"
    ;;
map_node)
    # Ranks dealt round robin over 2 nodes: identity already interleaves.
    UCFT_PLACEMENT=identity online -n 8 --nodes 2 --map-by node --
    offline --nodes 2 --ppn 4 --map-by node --placement identity
    same "identity by node"
    expect "pos 1 -> rank 1 -> node 1 (vrank 1)"
    expect "tree edges crossing nodes: 1"
    expect "ring pairs crossing nodes: 8 of 8"
    # UCFT_F and --f: allreduce with f = 2 tries 3 candidate roots.
    UCFT_F=2 online -n 8 --nodes 2 --map-by node -- --op allreduce --summary
    offline --nodes 2 --ppn 4 --map-by node --op allreduce --f 2 --summary
    same "allreduce UCFT_F=2"
    expect "candidate roots on distinct nodes: 2 of 3"
    UCFT_F=2 online -n 8 --nodes 2 --map-by node -- --op allreduce --f 1 \
        --summary
    expect "# ucft-topo: 8 ranks on 2 nodes, placement interleave, op allreduce, root 0, f 1"
    ;;
bind_core)
    # Bound ranks: ucftrun binds local rank l to core l mod ncores and
    # registers its locality string; the runtime's loci must be those of
    # the offline tool binding local rank l to core l on this machine's
    # topology (hwloc's synthetic export of it), for l < ncores.
    command -v lstopo-no-graphics >/dev/null || {
        echo "SKIP: no lstopo-no-graphics"
        exit 77
    }
    syn=$(lstopo-no-graphics --of synthetic --no-io 2>/dev/null)
    ncores=$(lstopo-no-graphics --only core 2>/dev/null | grep -c .)
    [ -n "$syn" ] && [ "$ncores" -ge 1 ] || {
        echo "SKIP: this machine has no synthetic description"
        exit 77
    }
    m=$((ncores < 4 ? ncores : 4))
    for pl in interleave locality; do
        UCFT_PLACEMENT=$pl online -n $((2 * m)) --nodes 2 --bind-to core --
        offline --nodes 2 --ppn $m --synthetic "$syn" --bind core \
            --placement $pl
        same "$pl bound, $m ranks per node"
        grep -q '^rank .* core -$' "$tmp/on" && fail "$pl: a bound rank without core"
        expect "rank 0: node 0 package 0 numa 0 core 0"
        expect "rank $((m + m - 1)): node 1 package 0 numa 0 core $((m - 1))"
        expect "tree edges crossing nodes: $([ $pl = interleave ] && echo 1 || echo $m)"
    done
    ;;
dot)
    # Rank 0 writes the DOT file, equal to the offline one.
    UCFT_PLACEMENT=interleave online -n 8 --nodes 2 -- --dot "$tmp/on.dot" \
        --summary
    offline --nodes 2 --ppn 4 --dot "$tmp/off.dot" --summary
    same "dot"
    cmp -s "$tmp/on.dot" "$tmp/off.dot" || fail "online and offline DOT differ"
    [ "$(grep -c 'subgraph cluster_' "$tmp/on.dot")" -eq 2 ] ||
        fail "want 2 node clusters"
    [ "$(grep -c 'color=red\]' "$tmp/on.dot")" -eq 1 ] ||
        fail "want 1 red tree edge"
    online -n 2 -- --dot "$tmp/no/such/dir/x.dot"
    [ "$rc" -eq 1 ] || fail "unwritable --dot: exit $rc (want 1)"
    ;;
bad_options)
    bad 2 -n 4 --nodes 2 -- --nodes 2 --ppn 2
    grep -q -- '--nodes describes an offline job' "$tmp/on.err" ||
        fail "message does not name --nodes: $(cat "$tmp/on.err")"
    bad 2 -n 4 -- --synthetic "pack:1 core:2 pu:1"
    bad 2 -n 4 -- --placement identity
    grep -q 'UCFT_PLACEMENT' "$tmp/on.err" || fail "no hint to UCFT_PLACEMENT"
    bad 2 -n 4 -- --root 4
    bad 2 -n 4 -- --f 4
    bad 2 -n 4 -- --op scatter
    bad 2 -n 4 -- --online --offline
    # The runtime rejects a bad UCFT_PLACEMENT itself (one line per rank).
    UCFT_PLACEMENT=bogus online -n 2 --
    [ "$rc" -eq 2 ] || fail "bad UCFT_PLACEMENT: exit $rc (want 2)"
    # Offline forced under a launcher: every rank prints the offline report.
    online -n 2 -- --offline --nodes 2 --ppn 2 --summary
    [ "$rc" -eq 0 ] && [ "$(grep -c '^nodes: 2$' "$tmp/on")" -eq 2 ] ||
        fail "--offline under ucftrun: exit $rc, $(cat "$tmp/on")"
    ;;
singleton)
    # --online without a launcher: ucft_init runs as a singleton.
    env -u PMIX_NAMESPACE -u PMIX_RANK "$topo" --online >"$tmp/on" 2>"$tmp/on.err"
    rc=$?
    [ "$rc" -eq 0 ] || fail "singleton exit $rc: $(cat "$tmp/on.err")"
    expect "# ucft-topo: 1 ranks on 1 nodes, placement interleave, op bcast, root 0, f 0"
    expect "pos 0 -> rank 0 -> node 0 (vrank 0)"
    ;;
*)
    echo "unknown case $case_name"
    exit 2
    ;;
esac
[ "$fails" -eq 0 ] && echo "PASS: $case_name" && exit 0
exit 1
