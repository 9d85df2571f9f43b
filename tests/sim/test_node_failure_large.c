/* 1024 nodes x 64 ranks (N = 65536), f = 1.
 *
 * A whole node (64 ranks) fails during the corrected broadcast and the
 * corrected allreduce (before the op, and at the middle of the failure-free
 * run in simulated time): under interleave every live rank delivers the
 * right value (the broadcast only if its root lives). Each run is timed.
 *
 * Failure-free, the messages whose source and destination are on different
 * nodes, per policy: the binomial broadcast under interleave keeps every
 * tree edge inside a node except the nodes - 1 edges of the top log2(nodes)
 * levels; the closed forms below are asserted, the rest is reported. */
#include "test_node_failure_util.h"

#include <inttypes.h>
#include <stdio.h>

enum { NODES = 1024, PPN = 64, N = NODES * PPN };
#define WALL_LIMIT_S 60.0

typedef struct big_case {
    const char *op, *alg;
} big_case_t;

static void run_timed(const coll_op_ops_t *op, const simnodes_t *s, int root,
                      const simrun_fail_t *fl, size_t nfl, simrun_result_t *r)
{
    nf_run(op, s, root, fl, nfl, r, NULL);
    if (r->wall_s > WALL_LIMIT_S)
        fail_msg("%s/%s: %.1f s of wall time", op->op, op->alg, r->wall_s);
}

static void node_failures(const char *opname, const char *alg)
{
    const coll_op_ops_t *op = nf_op(opname, alg);
    int bcast = strcmp(opname, "bcast") == 0;
    simnodes_t s;
    simrun_result_t r0, r;
    nf_nodes(&s, N, NODES, SIMNODES_BY_SLOT, PLACEMENT_INTERLEAVE);
    const int root = 4242;
    /* A node away from the root, the node of the root, and the node of
     * the allreduce's second candidate root. */
    const int victims[] = {517, (int)s.node_of[root],
                           (int)s.node_of[s.rank_at[(s.pos_of[root] + 1) % N]]};
    assert_int_not_equal(victims[1], victims[2]);

    run_timed(op, &s, root, NULL, 0, &r0);
    nf_assert_all(&r0, "failure-free");
    assert_int_equal(r0.live, N);
    print_message(
        "%s/%s N=%d failure-free: %.3f us, %" PRIu64 " messages, wall %.2f s\n",
        opname, alg, N, r0.sim_latency_ns / 1e3, r0.stats.messages, r0.wall_s);
    for (size_t v = 0; v < sizeof(victims) / sizeof(victims[0]); v++)
        for (int mid = 0; mid < 2; mid++) {
            char what[96];
            int node = victims[v];
            simrun_fail_t fl = {.kind = mid ? SIMRUN_FAIL_AT_TIME
                                            : SIMRUN_FAIL_BEFORE_OP,
                                .rank = simnodes_first_rank(&s, node),
                                .time = r0.sim_latency_ns / 2,
                                .whole_node = 1};
            snprintf(what, sizeof(what), "%s/%s node %d %s", opname, alg, node,
                     mid ? "at mid-op" : "before the op");
            run_timed(op, &s, root, &fl, 1, &r);
            assert_int_equal(r.ranks - r.live, PPN);
            if (bcast && node == (int)s.node_of[root]) {
                nf_assert_safe(&r, what); /* the root died */
                if (!mid)
                    assert_int_equal(r.completed, 0);
            } else {
                nf_assert_all(&r, what);
            }
            print_message("%-40s %10.3f us %8" PRIu64 " messages (%" PRIu64
                          " cross-node) %6d of %d delivered, wall %.2f s\n",
                          what, r.sim_latency_ns / 1e3, r.stats.messages,
                          r.stats.cross_domain, r.completed, r.live, r.wall_s);
        }
    simnodes_cleanup(&s);
}

static void test_node_failure_large_bcast(void **state)
{
    node_failures("bcast", "corrected");
}

static void test_node_failure_large_allreduce(void **state)
{
    node_failures("allreduce", "corrected");
}

/* Failure-free cross-node messages per policy (map-by slot: node = rank /
 * 64, so identity = locality = blocks of 64 positions). */
static void test_node_failure_large_cross_fraction(void **state)
{
    static const big_case_t cases[] = {
        {"bcast", "binomial"},    {"bcast", "corrected"},
        {"reduce", "corrected"},  {"allreduce", "corrected"},
        {"barrier", "corrected"},
    };
    static const placement_policy_t pol[] = {
        PLACEMENT_INTERLEAVE, PLACEMENT_LOCALITY, PLACEMENT_IDENTITY};
    uint64_t cross[3][5];

    for (int p = 0; p < 3; p++) {
        simnodes_t s;
        nf_nodes(&s, N, NODES, SIMNODES_BY_SLOT, pol[p]);
        for (int c = 0; c < 5; c++) {
            simrun_result_t r;
            run_timed(nf_op(cases[c].op, cases[c].alg), &s, 0, NULL, 0, &r);
            nf_assert_all(&r, cases[c].alg);
            cross[p][c] = r.stats.cross_domain;
            print_message("%-10s %-9s %-9s %8" PRIu64 " of %8" PRIu64
                          " messages cross nodes (%.4f)\n",
                          placement_policy_name(pol[p]), cases[c].op,
                          cases[c].alg, r.stats.cross_domain, r.stats.messages,
                          (double)r.stats.cross_domain /
                              (double)r.stats.messages);
        }
        simnodes_cleanup(&s);
    }
    /* Binomial tree, interleave: edge v -> v + 2^j joins positions on one
     * node iff 2^j is a multiple of NODES, so exactly the 2^j edges of
     * each j < log2(NODES) cross: NODES - 1. Locality: the edges with
     * 2^j >= PPN leave their block: N - PPN. */
    assert_int_equal(cross[0][0], NODES - 1);
    assert_int_equal(cross[1][0], N - PPN);
    /* Corrected broadcast adds two ring corrections per rank (v - 1 and
     * v + 1): all on other nodes under interleave, only the two across
     * each of the NODES block boundaries under locality. */
    assert_int_equal(cross[0][1], NODES - 1 + 2 * (uint64_t)N);
    assert_int_equal(cross[1][1], N - PPN + 2 * NODES);
    /* Identity by slot is locality. */
    for (int c = 0; c < 5; c++)
        assert_int_equal(cross[2][c], cross[1][c]);
}

/* The moments check itself: right sums pass, a live rank counted twice
 * with another left out fails, a dead rank counted twice fails. */
static void test_node_failure_large_moments_check(void **state)
{
    static uint8_t dead[N];
    uint64_t acc[NF_MOMENTS] = {0}, v[NF_MOMENTS];
    coll_args_t a = {0};
    for (int r = 3 * PPN; r < 4 * PPN; r++)
        dead[r] = 1;
    for (int r = 0; r < N; r++) {
        if (dead[r] && r % 3 != 0)
            continue; /* a third of the dead ranks included */
        nf_moments_fill(v, &a, r, N);
        for (int k = 0; k < NF_MOMENTS; k++)
            acc[k] += v[k];
    }
    assert_true(nf_moments_check(acc, &a, 0, N, dead));
    uint64_t bad[NF_MOMENTS];
    uint64_t v5[NF_MOMENTS], v6[NF_MOMENTS], vd[NF_MOMENTS];
    nf_moments_fill(v5, &a, 5, N);
    nf_moments_fill(v6, &a, 6, N);
    nf_moments_fill(vd, &a, 3 * PPN, N);
    for (int k = 0; k < NF_MOMENTS; k++)
        bad[k] = acc[k] + v5[k] - v6[k];
    assert_false(nf_moments_check(bad, &a, 0, N, dead));
    for (int k = 0; k < NF_MOMENTS; k++)
        bad[k] = acc[k] + vd[k];
    assert_false(nf_moments_check(bad, &a, 0, N, dead));
    for (int k = 0; k < NF_MOMENTS; k++)
        bad[k] = acc[k] - v5[k];
    assert_false(nf_moments_check(bad, &a, 0, N, dead));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_node_failure_large_moments_check),
        cmocka_unit_test(test_node_failure_large_bcast),
        cmocka_unit_test(test_node_failure_large_allreduce),
        cmocka_unit_test(test_node_failure_large_cross_fraction),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
