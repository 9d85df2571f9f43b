/* Shared helpers of the whole-node failure sim tests: pretend nodes, a
 * placement, one collective run with one node killed. */
#ifndef UCFT_TEST_NODE_FAILURE_UTIL_H
#define UCFT_TEST_NODE_FAILURE_UTIL_H

#include "tools/sim/simnodes.h"
#include "tools/sim/simrun.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static inline const coll_op_ops_t *nf_op(const char *op, const char *alg)
{
    const coll_op_ops_t *o = coll_op_find(op, alg);
    assert_non_null(o);
    return o;
}

/* n ranks on `nodes` nodes mapped `by`, placed by `policy`. */
static inline void nf_nodes(simnodes_t *s, int n, int nodes, simnodes_by_t by,
                            placement_policy_t policy)
{
    assert_int_equal(simnodes_init(s, n, nodes, by), UCFT_OK);
    assert_int_equal(simnodes_place(s, policy), UCFT_OK);
}

/* Runs `op` with f = 1 (8 bytes: 1 int64 for reductions; no data for a
 * barrier), the given failures. Never bounded: a hang would show as an
 * unfinished rank. */
static inline void nf_run(const coll_op_ops_t *op, const simnodes_t *s,
                          int root, const simrun_fail_t *fails, size_t nfails,
                          simrun_result_t *r, uint8_t *rank_ok)
{
    simrun_params_t p;
    simrun_params_default(&p, op, s->n);
    p.root = root;
    p.len = strcmp(op->op, "barrier") == 0 ? 0 : 8;
    p.seq = 3;
    p.args.f = 1;
    p.args.map = &s->map;
    p.sim.domain = s->node_of;
    p.fails = fails;
    p.nfails = nfails;
    assert_int_equal(simrun_run(&p, r, rank_ok), UCFT_OK);
    assert_int_equal(r->bounded, 0);
}

/* Never a wrong value, never a hang, never disagreeing survivors. */
static inline void nf_assert_safe(const simrun_result_t *r, const char *what)
{
    if (r->unfinished || r->data_errors || r->inconsistent ||
        r->completed + r->failed_ops != r->live)
        fail_msg("%s: live %d completed %d failed %d unfinished %d "
                 "data_errors %d inconsistent %d",
                 what, r->live, r->completed, r->failed_ops, r->unfinished,
                 r->data_errors, r->inconsistent);
}

/* Every survivor completed with the right value. */
static inline void nf_assert_all(const simrun_result_t *r, const char *what)
{
    nf_assert_safe(r, what);
    if (r->completed != r->live)
        fail_msg("%s: %d of %d survivors failed", what, r->failed_ops, r->live);
}

#endif
