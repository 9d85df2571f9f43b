/* Whole-node failures at N = 16 on 4 nodes, f = 1: every node, every root,
 * the node killed before the op and at every message boundary of each of
 * its ranks (the node goes down the instant one of its ranks is about to
 * send its k-th message of the op).
 *
 * Interleave (nodes mapped by slot or by node): no structure loses more
 * than it tolerates, so every survivor gets the right value (broadcast with
 * a live root, reduce at a live root, allreduce and barrier always: the
 * two candidate roots sit on different nodes). Identity with map-by slot
 * (a node = 4 consecutive ranks): never a wrong value, never a hang,
 * never disagreeing survivors, and the failures that must happen do. */
#include "test_node_failure_util.h"

#include <stdio.h>

enum { MAXN = 128 };

typedef struct nf_case {
    const char *op, *alg;
} nf_case_t;

static const nf_case_t cases[] = {
    {"bcast", "corrected"},
    {"bcast", "corrected-failproof"},
    {"bcast", "corrected-opportunistic"},
    {"bcast", "corrected-kary"},
    {"bcast", "corrected-lame"},
    {"reduce", "corrected"},
    {"reduce", "corrected-countbit"},
    {"reduce", "corrected-bit"},
    {"allreduce", "corrected"},
    {"allreduce", "corrected-countbit"},
    {"allreduce", "corrected-bit"},
    {"barrier", "corrected"},
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

typedef struct nf_tally {
    unsigned runs, all_ok, some_failed, all_failed;
} nf_tally_t;

static void tally(nf_tally_t *t, const simrun_result_t *r)
{
    t->runs++;
    t->all_ok += r->completed == r->live;
    t->some_failed += r->failed_ops > 0 && r->completed > 0;
    t->all_failed += r->completed == 0;
}

static int bc_tree_other(const nf_case_t *c)
{
    return strcmp(c->alg, "corrected-kary") == 0 ||
           strcmp(c->alg, "corrected-lame") == 0;
}

/* What must hold for one run. `pre`: the node died before the op. */
static void judge(const nf_case_t *c, const simnodes_t *s, int interleave,
                  int root, int node, int pre, const simrun_result_t *r,
                  const uint8_t *rank_ok)
{
    char what[160];
    int root_dead = (int)s->node_of[root] == node;
    int rooted = strcmp(c->op, "bcast") == 0 || strcmp(c->op, "reduce") == 0;
    snprintf(what, sizeof(what), "%s/%s %s root %d node %d %s", c->op, c->alg,
             interleave ? "interleave" : "identity", root, node,
             pre ? "before the op" : "during the op");
    nf_assert_safe(r, what);
    assert_int_equal(r->ranks - r->live, s->n / s->nodes);
    if (interleave) {
        /* Interleave is made for the binomial tree: under the k-ary and
         * Lame trees a dead rank's subtree is a run of the ring that holds
         * other ranks of its node, and a rank inside it may give up (more
         * failures than tolerated, no source it can prove). */
        if (bc_tree_other(c) && s->n / s->nodes > 2 * 1 + 2)
            return;
        if (!rooted || !root_dead)
            nf_assert_all(r, what);
        else if (pre && strcmp(c->op, "bcast") == 0 && r->completed != 0)
            fail_msg("%s: the data came from a dead root", what);
        return;
    }
    if (!pre)
        return;
    /* Identity, a node of 4 consecutive ranks dead before the op: the
     * dead ranks are 4 consecutive vranks of any tree (rooted at a live
     * rank), so both subtrees of the I(1)-tree lose a rank and no root
     * gets a clean answer (the allreduce moves to the next candidate only
     * when a root dies, and it meets the same). The checked broadcast
     * corrects across a gap of known-dead ranks of any length (a side
     * stops only after hearing from a rank beyond the gap). */
    if (!rooted && r->completed != 0)
        fail_msg("%s: %d survivors completed without a clean subtree", what,
                 r->completed);
    if (strcmp(c->op, "reduce") == 0 && !root_dead && rank_ok[root])
        fail_msg("%s: the root got a result without a clean subtree", what);
    if (strcmp(c->op, "bcast") == 0 && !root_dead &&
        strcmp(c->alg, "corrected-opportunistic") != 0)
        nf_assert_all(r, what);
}

/* Every node; roots 0, rstep, 2 rstep, ...; before the op and at every
 * message boundary of the node's ranks (only its first `branks` ranks). */
static void sweep(const char *label, int n, int nodes, simnodes_by_t by,
                  placement_policy_t policy, int rstep, int branks)
{
    int interleave = policy == PLACEMENT_INTERLEAVE;
    simnodes_t s;
    assert_true(n <= MAXN);
    nf_nodes(&s, n, nodes, by, policy);
    for (size_t ci = 0; ci < NCASES; ci++) {
        const nf_case_t *c = &cases[ci];
        const coll_op_ops_t *op = nf_op(c->op, c->alg);
        nf_tally_t pre = {0}, in = {0};
        for (int node = 0; node < nodes; node++)
            for (int root = 0; root < n; root += rstep) {
                simrun_result_t r;
                uint8_t ok[MAXN];
                simrun_fail_t fl = {.kind = SIMRUN_FAIL_BEFORE_OP,
                                    .rank = simnodes_first_rank(&s, node),
                                    .whole_node = 1};
                nf_run(op, &s, root, &fl, 1, &r, ok);
                judge(c, &s, interleave, root, node, 1, &r, ok);
                tally(&pre, &r);
                for (int a = 0, seen = 0; a < n && seen < branks; a++) {
                    if ((int)s.node_of[a] != node)
                        continue;
                    seen++;
                    for (unsigned k = 1;; k++) {
                        fl = (simrun_fail_t){.kind = SIMRUN_FAIL_BEFORE_SEND,
                                             .rank = a,
                                             .k = k,
                                             .whole_node = 1};
                        nf_run(op, &s, root, &fl, 1, &r, ok);
                        if (r.live == n)
                            break; /* a sends fewer than k messages */
                        judge(c, &s, interleave, root, node, 0, &r, ok);
                        tally(&in, &r);
                    }
                }
            }
        print_message("%-10s %-9s %-24s before: %3u runs %3u all ok %3u "
                      "all failed | during: %4u runs %4u all ok %3u some "
                      "failed %3u all failed\n",
                      label, c->op, c->alg, pre.runs, pre.all_ok,
                      pre.all_failed, in.runs, in.all_ok, in.some_failed,
                      in.all_failed);
    }
    simnodes_cleanup(&s);
}

static void test_node_failure_interleave_slot(void **state)
{
    sweep("interleave", 16, 4, SIMNODES_BY_SLOT, PLACEMENT_INTERLEAVE, 1, 4);
}

static void test_node_failure_interleave_node(void **state)
{
    sweep("interleave", 16, 4, SIMNODES_BY_NODE, PLACEMENT_INTERLEAVE, 1, 4);
}

static void test_node_failure_identity_slot(void **state)
{
    sweep("identity", 16, 4, SIMNODES_BY_SLOT, PLACEMENT_IDENTITY, 1, 4);
}

/* Nodes of 32 ranks: more failures than a broadcast state holds inline
 * and than a reduce list holds (2(f+1) = 4 entries), every node, every
 * 5th root, the node's first two ranks' message boundaries. */
static void test_node_failure_wide_nodes(void **state)
{
    sweep("interleave", 128, 4, SIMNODES_BY_SLOT, PLACEMENT_INTERLEAVE, 5, 2);
}

static int gcd(int a, int b)
{
    return b == 0 ? a : gcd(b, a % b);
}

/* The I(f)-tree puts vrank v in subtree (v - 1) mod (f + 1), and
 * interleave puts a node's ranks D positions apart (D nodes): with at
 * least f + 1 ranks per node they meet (f + 1) / gcd(D, f + 1) of the
 * f + 1 subtrees (one when f + 1 divides D). So a node crash leaves a
 * clean subtree, and the allreduce delivers, exactly when gcd(D, f + 1) >
 * 1; otherwise every subtree loses a rank and every survivor fails. */

static void test_node_failure_subtree_divisibility(void **state)
{
    const coll_op_ops_t *op = nf_op("allreduce", "corrected");
    static const int dcount[] = {6, 8, 9, 10, 12};
    for (int f = 1; f <= 3; f++)
        for (size_t di = 0; di < sizeof(dcount) / sizeof(dcount[0]); di++) {
            int d = dcount[di], n = 8 * d;
            simnodes_t s;
            nf_nodes(&s, n, d, SIMNODES_BY_SLOT, PLACEMENT_INTERLEAVE);
            for (int node = 0; node < d; node++) {
                char what[64];
                simrun_result_t r;
                simrun_fail_t fl = {.kind = SIMRUN_FAIL_BEFORE_OP,
                                    .rank = simnodes_first_rank(&s, node),
                                    .whole_node = 1};
                snprintf(what, sizeof(what), "f %d, %d nodes, node %d", f, d,
                         node);
                nf_run_f(op, &s, f, 0, &fl, 1, &r, NULL);
                if (gcd(d, f + 1) > 1) {
                    nf_assert_all(&r, what);
                } else {
                    nf_assert_safe(&r, what);
                    if (r.completed != 0)
                        fail_msg("%s: %d delivered without a clean subtree",
                                 what, r.completed);
                }
            }
            simnodes_cleanup(&s);
        }
}

/* Two nodes of 32 dead before the op (64 failures, more than the 20 the
 * broadcast state once remembered): the checked broadcasts still deliver
 * to every survivor when the root lives (with all failures known, the
 * heard rule walks across every gap). */
static void test_node_failure_two_nodes_checked_bcast(void **state)
{
    static const char *const algs[] = {"corrected", "corrected-failproof"};
    enum { N2 = 256, D2 = 8 };
    simnodes_t s;
    nf_nodes(&s, N2, D2, SIMNODES_BY_SLOT, PLACEMENT_INTERLEAVE);
    for (int ai = 0; ai < 2; ai++)
        for (int a = 0; a < D2; a++)
            for (int b = a + 1; b < D2; b++)
                for (int root = 3; root < N2; root += 17) {
                    char what[96];
                    simrun_result_t r;
                    simrun_fail_t fl[2] = {
                        {.kind = SIMRUN_FAIL_BEFORE_OP,
                         .rank = simnodes_first_rank(&s, a),
                         .whole_node = 1},
                        {.kind = SIMRUN_FAIL_BEFORE_OP,
                         .rank = simnodes_first_rank(&s, b),
                         .whole_node = 1},
                    };
                    int rn = (int)s.node_of[root];
                    snprintf(what, sizeof(what), "bcast/%s nodes %d+%d root %d",
                             algs[ai], a, b, root);
                    nf_run(nf_op("bcast", algs[ai]), &s, root, fl, 2, &r, NULL);
                    assert_int_equal(r.ranks - r.live, 2 * N2 / D2);
                    if (rn == a || rn == b)
                        nf_assert_safe(&r, what);
                    else
                        nf_assert_all(&r, what);
                }
    simnodes_cleanup(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_node_failure_interleave_slot),
        cmocka_unit_test(test_node_failure_interleave_node),
        cmocka_unit_test(test_node_failure_identity_slot),
        cmocka_unit_test(test_node_failure_wide_nodes),
        cmocka_unit_test(test_node_failure_subtree_divisibility),
        cmocka_unit_test(test_node_failure_two_nodes_checked_bcast),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
