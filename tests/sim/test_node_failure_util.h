/* Shared helpers of the whole-node failure sim tests: pretend nodes, a
 * placement, one collective run with one node killed. */
#ifndef UCFT_TEST_NODE_FAILURE_UTIL_H
#define UCFT_TEST_NODE_FAILURE_UTIL_H

#include "collectives/dtype.h"
#include "simrun/simnodes.h"
#include "simrun/oracle.h"
#include "simrun/simrun.h"

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

/*
 * Values of reductions. The ops' own check enumerates subsets of at most 12
 * dead ranks and accepts anything beyond, so a whole node needs more:
 *  n <= 4096: the ops' multiplicity mode (uint64 sum, 2n elements: rank r
 *             adds 1 at r and at n + r): live ranks exactly once, dead ones
 *             entirely or not at all, checked per rank exactly;
 *  larger n:  moments (5 uint64 sums, below): rank r adds 1, r, r^2, r^3
 *             and 2^(r mod 64); the check (dead ranks with distinct r mod
 *             64, e.g. one node mapped by slot) reads from the last sum
 *             which dead ranks were included and compares the four moments
 *             with those of the live ranks plus them (mod 2^64).
 */
enum { NF_MOMENTS = 5 };

static inline void nf_moments_fill(void *buf, const coll_args_t *args, int rank,
                                   int size)
{
    uint64_t r = (uint64_t)rank,
             v[NF_MOMENTS] = {1, r, r * r, r * r * r, (uint64_t)1 << (r % 64)};
    (void)args, (void)size;
    memcpy(buf, v, sizeof(v));
}

/* Sum of r^k, r < n, mod 2^64 (k <= 3), through r^k summed one by one
 * would be O(n) per check: closed forms with 128-bit intermediates. */
static inline uint64_t nf_power_sum(uint64_t n, int k)
{
    unsigned __int128 m = n;
    if (k == 0)
        return n;
    if (k == 1)
        return (uint64_t)(m * (m - 1) / 2);
    if (k == 2)
        return (uint64_t)(m * (m - 1) / 2 * (2 * m - 1) / 3);
    unsigned __int128 t = m * (m - 1) / 2;
    return (uint64_t)(t * t);
}

static inline int nf_moments_check(const void *buf, const coll_args_t *args,
                                   int rank, int size, const uint8_t *dead)
{
    uint64_t got[NF_MOMENTS], want[NF_MOMENTS] = {0}, bits = 0;
    int by_bit[64];
    (void)args, (void)rank;
    memcpy(got, buf, sizeof(got));
    for (int k = 0; k < 4; k++)
        want[k] = nf_power_sum((uint64_t)size, k);
    for (uint64_t c = 0; c < 64 && c < (uint64_t)size; c++) {
        uint64_t cnt = ((uint64_t)size - c + 63) / 64;
        bits += cnt << c;
    }
    for (int i = 0; i < 64; i++)
        by_bit[i] = -1;
    for (const uint8_t *q = dead; q < dead + size; q++) {
        q = memchr(q, 1, (size_t)(dead + size - q));
        if (q == NULL)
            break;
        uint64_t d = (uint64_t)(q - dead);
        if (by_bit[d % 64] >= 0)
            return 0; /* two dead ranks share a bit: cannot tell */
        by_bit[d % 64] = (int)d;
        want[0] -= 1, want[1] -= d, want[2] -= d * d, want[3] -= d * d * d;
        bits -= (uint64_t)1 << (d % 64);
    }
    uint64_t incl = got[4] - bits; /* the dead ranks included */
    for (int b = 0; b < 64; b++) {
        if (!((incl >> b) & 1))
            continue;
        if (by_bit[b] < 0)
            return 0; /* a bit no dead rank explains */
        uint64_t d = (uint64_t)by_bit[b];
        want[0] += 1, want[1] += d, want[2] += d * d, want[3] += d * d * d;
    }
    return memcmp(got, want, 4 * sizeof(uint64_t)) == 0;
}

/* Reduce: only the root has an output. */
static inline int nf_moments_root(const void *buf, const coll_args_t *args,
                                  int rank, int size, const uint8_t *dead)
{
    return rank != args->root || nf_moments_check(buf, args, rank, size, dead);
}

/* Runs `op` with f (nf_run: 1), the given failures: 8 bytes for a broadcast,
 * none for a barrier, reductions as above. Never bounded: a hang would show as
 * an unfinished rank. */
static inline void nf_run_f(const coll_op_ops_t *op, const simnodes_t *s, int f,
                            int root, const simrun_fail_t *fails, size_t nfails,
                            simrun_result_t *r, uint8_t *rank_ok)
{
    simrun_params_t p;
    coll_oracle_t moments;
    int reducing =
        strcmp(op->op, "reduce") == 0 || strcmp(op->op, "allreduce") == 0;
    simrun_params_default(&p, op, s->n);
    p.root = root;
    p.len = strcmp(op->op, "barrier") == 0 ? 0 : 8;
    p.seq = 3;
    p.args.f = f;
    p.args.map = &s->map;
    if (reducing) {
        p.args.dtype = COLL_DTYPE_UINT64;
        p.args.redop = COLL_REDOP_SUM;
        p.args.count = s->n <= 4096 ? 2 * (size_t)s->n : NF_MOMENTS;
        p.len = p.args.count * 8;
        if (s->n > 4096) {
            moments.fill = nf_moments_fill;
            moments.check = strcmp(op->op, "reduce") == 0 ? nf_moments_root
                                                          : nf_moments_check;
            p.oracle = &moments;
        }
    }
    p.sim.domain = s->node_of;
    p.fails = fails;
    p.nfails = nfails;
    assert_int_equal(simrun_run(&p, r, rank_ok), UCFT_OK);
    assert_int_equal(r->bounded, 0);
}

static inline void nf_run(const coll_op_ops_t *op, const simnodes_t *s,
                          int root, const simrun_fail_t *fails, size_t nfails,
                          simrun_result_t *r, uint8_t *rank_ok)
{
    nf_run_f(op, s, 1, root, fails, nfails, r, rank_ok);
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
