#!/usr/bin/env bash
# ucft-topo offline cases: run the tool on a known job and check the counts
# that docs/placement.md derives (e.g. D - 1 binomial edges across D nodes
# under interleave, n - m under locality), the DOT output, and that bad
# options exit with status 2 and a message.
# Usage: run_topo_test.sh CASE path/to/ucft-topo
set -u
case_name=$1
topo=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}

# run ARGS...: output in $tmp/out, status in $rc.
run() {
    "$topo" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
}

# expect LINE: the report holds exactly this line.
expect() {
    grep -qxF -- "$1" "$tmp/out" || {
        fail "missing line '$1' in: $(grep -E '^(#|[a-z].*:)' "$tmp/out" | tail -8)"
    }
}

expect_ok() {
    [ "$rc" -eq 0 ] || fail "exit $rc for $*: $(cat "$tmp/err")"
}

# bad ARGS...: exit status 2 and a message naming the tool.
bad() {
    run "$@"
    [ "$rc" -eq 2 ] || fail "exit $rc (want 2) for: $*"
    grep -q '^ucft-topo: ' "$tmp/err" || fail "no message for: $*"
}

case $case_name in
interleave_bcast)
    # 4 nodes x 4: position p on node p mod 4; D - 1 = 3 edges across.
    for root in 0 5 15; do
        run --nodes 4 --ppn 4 --root $root
        expect_ok
        expect "tree edges crossing nodes: 3"
        expect "ring pairs crossing nodes: 16 of 16"
        expect "longest unreached run after losing one node: 1"
        expect "pos 1 -> rank 4 -> node 1 (vrank $(((1 - (root % 4) * 4 - root / 4 + 16) % 16)))"
    done
    ;;
locality_bcast)
    # Blocks of m = 4: n - m = 12 edges across, D = 4 ring pairs across.
    run --nodes 4 --ppn 4 --placement locality
    expect_ok
    expect "tree edges crossing nodes: 12"
    expect "ring pairs crossing nodes: 4 of 16"
    expect "longest unreached run after losing one node: 4"
    # identity under --map-by slot is the same order.
    run --nodes 4 --ppn 4 --placement identity --map-by slot
    expect "tree edges crossing nodes: 12"
    ;;
identity_map_by_node)
    # Ranks dealt round robin over nodes: identity interleaves nodes.
    run --nodes 8 --ppn 2 --placement identity --map-by node
    expect_ok
    expect "tree edges crossing nodes: 7"
    expect "ring pairs crossing nodes: 16 of 16"
    ;;
reduce_groups)
    # f = 1, 4 nodes: no group on one node, each node in one subtree.
    run --nodes 4 --ppn 4 --op reduce --f 1 --root 6
    expect_ok
    expect "groups with two members on one node: 0 of 8"
    expect "most I(f)-subtrees holding ranks of one node: 1 of 2"
    # (f + 1) = 2 does not divide 3 nodes: a node spans both subtrees.
    run --nodes 3 --ppn 4 --op reduce --f 1
    expect "most I(f)-subtrees holding ranks of one node: 2 of 2"
    expect "groups with two members on one node: 0 of 6"
    # Locality, blocks of 4: groups {1,2} {3,4} ... {15,0}: every other
    # group lies inside a block.
    run --nodes 4 --ppn 4 --op reduce --f 1 --placement locality
    expect "groups with two members on one node: 4 of 8"
    ;;
allreduce_candidates)
    run --nodes 3 --ppn 5 --op allreduce --f 2 --root 4
    expect_ok
    expect "candidate roots on distinct nodes: 3 of 3"
    expect "most I(f)-subtrees holding ranks of one node: 1 of 3"
    # Locality: candidates are positions root .. root + 2 of blocks of 5.
    run --nodes 3 --ppn 5 --op allreduce --f 2 --placement locality
    expect "candidate roots on distinct nodes: 1 of 3"
    run --nodes 3 --ppn 5 --op allreduce --f 2 --root 4 --placement locality
    expect "candidate roots on distinct nodes: 2 of 3"
    ;;
packages)
    # 2 nodes x 2 packages x 2 cores, bound by core: D - 1 = 1 edge across
    # nodes, D (P - 1) = 2 across packages of one node.
    run --nodes 2 --ppn 4 --synthetic "pack:2 numa:1 core:2 pu:1" --root 3
    expect_ok
    expect "rank 2: node 0 package 1 numa 1 core 2"
    expect "tree edges crossing nodes: 1"
    expect "tree edges crossing packages inside a node: 2"
    run --nodes 2 --ppn 4 --synthetic "pack:2 numa:1 core:2 pu:1" --bind none
    expect "rank 2: node 0 package - numa - core -"
    expect "tree edges crossing packages inside a node: 0"
    ;;
node_list)
    # Sparse ids, unequal nodes: 3 nodes (ids 3, 7, 9).
    run --node-list 7,7,3,9,7,3 --op reduce --summary
    expect_ok
    expect "# ucft-topo: 6 ranks on 3 nodes, placement interleave, op reduce, root 0, f 1"
    expect "nodes: 3"
    run --node-list 7,7,3,9,7,3
    expect "pos 0 -> rank 2 -> node 3 (vrank 5)"
    expect "pos 1 -> rank 0 -> node 7 (vrank 0)"
    ;;
dot)
    run --nodes 4 --ppn 4 --synthetic "pack:2 numa:1 core:2 pu:1" \
        --dot "$tmp/t.dot"
    expect_ok
    [ "$(grep -c 'subgraph cluster_' "$tmp/t.dot")" -eq 20 ] ||
        fail "want 20 clusters (4 x (node + 2 packages + 2 NUMA))"
    [ "$(grep -c -- ' -> ' "$tmp/t.dot")" -eq 31 ] ||
        fail "want 15 tree + 16 ring edges"
    [ "$(grep -c 'color=red\]' "$tmp/t.dot")" -eq 3 ] ||
        fail "want 3 red tree edges"
    if command -v dot >/dev/null; then
        dot -Tsvg "$tmp/t.dot" -o "$tmp/t.svg" || fail "dot rejects the file"
    fi
    run --nodes 2 --ppn 2 --dot "$tmp/no/such/dir/x.dot"
    [ "$rc" -eq 1 ] || fail "unwritable --dot: exit $rc (want 1)"
    ;;
env_placement)
    UCFT_PLACEMENT=locality run --nodes 2 --ppn 2 --summary
    expect_ok
    expect "# ucft-topo: 4 ranks on 2 nodes, placement locality, op bcast, root 0, f 1"
    UCFT_PLACEMENT=locality run --nodes 2 --ppn 2 --summary --placement identity
    expect "# ucft-topo: 4 ranks on 2 nodes, placement identity, op bcast, root 0, f 1"
    UCFT_PLACEMENT=bogus bad --nodes 2 --ppn 2
    ;;
bad_options)
    bad
    bad --nodes 4
    bad --nodes 0 --ppn 4
    bad --nodes 4 --ppn x
    bad --nodes 4 --ppn 4x
    bad --nodes 4 --ppn -1
    bad --nodes 4 --ppn 4 --placement foo
    bad --nodes 4 --ppn 4 --op scatter
    bad --nodes 4 --ppn 4 --map-by core
    bad --nodes 4 --ppn 4 --bind core
    bad --nodes 4 --ppn 4 --bind sometimes --synthetic "pack:1 core:4 pu:1"
    bad --nodes 4 --ppn 4 --synthetic "bogus:2"
    bad --nodes 4 --ppn 8 --synthetic "pack:1 core:4 pu:1"
    bad --nodes 4 --ppn 4 --root 16
    bad --nodes 4 --ppn 4 --f 16
    bad --nodes 4 --ppn 4 --f -1
    bad --nodes 4096 --ppn 8192
    bad --node-list 0,,1
    bad --node-list 0,1,
    bad --node-list 0,-1
    bad --node-list 0,1 --nodes 2 --ppn 2
    bad --nodes 4 --ppn 4 --frobnicate
    bad --nodes 4 --ppn 4 extra
    bad --nodes 4 --ppn
    ;;
mode)
    # Under a launcher (PMIX_NAMESPACE set) the job options are refused
    # before anything starts; --offline forces the offline mode.
    PMIX_NAMESPACE=fake.1 bad --nodes 2 --ppn 2
    grep -q -- '--nodes describes an offline job' "$tmp/err" ||
        fail "message does not name --nodes: $(cat "$tmp/err")"
    PMIX_NAMESPACE=fake.1 bad --node-list 0,1
    PMIX_NAMESPACE=fake.1 bad --placement locality
    PMIX_NAMESPACE=fake.1 run --offline --nodes 2 --ppn 2 --summary
    expect_ok
    expect "nodes: 2"
    bad --online --offline --nodes 2 --ppn 2
    bad --online --nodes 2 --ppn 2
    # Ranks other than 0 of a job keep their messages to themselves.
    PMIX_RANK=3 run --nodes 4
    [ "$rc" -eq 2 ] && [ ! -s "$tmp/err" ] ||
        fail "PMIX_RANK=3: exit $rc, stderr '$(cat "$tmp/err")'"
    ;;
help)
    run --help
    expect_ok
    grep -q -- '--placement' "$tmp/out" || fail "help lacks --placement"
    grep -q -- '--online' "$tmp/out" || fail "help lacks --online"
    ;;
*)
    echo "unknown case $case_name"
    exit 2
    ;;
esac
[ "$fails" -eq 0 ] && echo "PASS: $case_name" && exit 0
exit 1
