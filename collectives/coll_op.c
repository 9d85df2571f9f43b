/* The table of registered collective algorithms. */
#include "coll_op.h"

#include <string.h>

extern const coll_op_ops_t coll_bcast_binomial_ops;
extern const coll_op_ops_t coll_bcast_corrected_ops;
extern const coll_op_ops_t coll_bcast_corrected_opportunistic_ops;
extern const coll_op_ops_t coll_bcast_corrected_batched_ops;
extern const coll_op_ops_t coll_bcast_corrected_failproof_ops;
extern const coll_op_ops_t coll_bcast_corrected_kary_ops;
extern const coll_op_ops_t coll_bcast_corrected_lame_ops;
extern const coll_op_ops_t coll_ring_exchange_ops;
extern const coll_op_ops_t coll_reduce_corrected_ops;
extern const coll_op_ops_t coll_reduce_corrected_list_ops;
extern const coll_op_ops_t coll_reduce_corrected_countbit_ops;
extern const coll_op_ops_t coll_reduce_corrected_bit_ops;
extern const coll_op_ops_t coll_allreduce_corrected_ops;
extern const coll_op_ops_t coll_allreduce_corrected_list_ops;
extern const coll_op_ops_t coll_allreduce_corrected_countbit_ops;
extern const coll_op_ops_t coll_allreduce_corrected_bit_ops;
extern const coll_op_ops_t coll_allreduce_corrected_ring_ops;
extern const coll_op_ops_t coll_barrier_corrected_ops;
extern const coll_op_ops_t coll_reduce_binomial_ops;
extern const coll_op_ops_t coll_allreduce_recdbl_ops;
extern const coll_op_ops_t coll_barrier_recdbl_ops;
extern const coll_op_ops_t coll_allreduce_recexch_ops;
extern const coll_op_ops_t coll_barrier_recexch_ops;
extern const coll_op_ops_t coll_allreduce_linear_ops;
extern const coll_op_ops_t coll_barrier_linear_ops;
extern const coll_op_ops_t coll_barrier_binomial_ops;
extern const coll_op_ops_t coll_allreduce_ring_ops;
extern const coll_op_ops_t coll_bcast_scatter_ring_ops;
extern const coll_op_ops_t coll_bcast_corrected_ring_ops;
extern const coll_op_ops_t coll_allgather_corrected_ops;
extern const coll_op_ops_t coll_allgather_corrected_ring_ops;
extern const coll_op_ops_t coll_allgather_ring_ops;
extern const coll_op_ops_t coll_reduce_scatter_corrected_ops;
extern const coll_op_ops_t coll_reduce_scatter_corrected_ring_ops;
extern const coll_op_ops_t coll_reduce_scatter_ring_ops;
extern const coll_op_ops_t coll_agree_era_ops;
extern const coll_op_ops_t coll_allreduce_approx_ps_ops;
extern const coll_op_ops_t coll_allreduce_approx_pf_ops;
extern const coll_op_ops_t coll_allreduce_approx_pflc_ops;
extern const coll_op_ops_t coll_allreduce_approx_pfcc_ops;
extern const coll_op_ops_t coll_allreduce_approx_hps_ops;
extern const coll_op_ops_t coll_allreduce_approx_hpflc_ops;
extern const coll_op_ops_t coll_allreduce_approx_ardb_ops;

const coll_op_ops_t *const coll_op_table[] = {
    &coll_bcast_binomial_ops,
    &coll_bcast_corrected_ops,
    &coll_bcast_corrected_opportunistic_ops,
    &coll_bcast_corrected_batched_ops,
    &coll_bcast_corrected_failproof_ops,
    &coll_bcast_corrected_kary_ops,
    &coll_bcast_corrected_lame_ops,
    &coll_ring_exchange_ops,
    &coll_reduce_corrected_ops,
    &coll_reduce_corrected_list_ops,
    &coll_reduce_corrected_countbit_ops,
    &coll_reduce_corrected_bit_ops,
    &coll_allreduce_corrected_ops,
    &coll_allreduce_corrected_list_ops,
    &coll_allreduce_corrected_countbit_ops,
    &coll_allreduce_corrected_bit_ops,
    &coll_allreduce_corrected_ring_ops,
    &coll_barrier_corrected_ops,
    &coll_allgather_corrected_ops,
    &coll_allgather_corrected_ring_ops,
    &coll_reduce_scatter_corrected_ops,
    &coll_reduce_scatter_corrected_ring_ops,
    /* Baselines (fault-aware, not fault-tolerant): after the corrected
     * algorithms, so that coll_op_find(op, NULL) stays corrected. */
    &coll_reduce_binomial_ops,
    &coll_allreduce_recdbl_ops,
    &coll_barrier_recdbl_ops,
    &coll_allreduce_recexch_ops,
    &coll_barrier_recexch_ops,
    &coll_allreduce_linear_ops,
    &coll_barrier_linear_ops,
    &coll_barrier_binomial_ops,
    &coll_allreduce_ring_ops,
    &coll_bcast_scatter_ring_ops,
    &coll_bcast_corrected_ring_ops,
    &coll_allgather_ring_ops,
    &coll_reduce_scatter_ring_ops,
    /* Agreement (fault-tolerant, any number of failures). */
    &coll_agree_era_ops,
    /* Approximate (op "allreduce_approx", collectives/gossip.h): never
     * found for "allreduce". */
    &coll_allreduce_approx_ps_ops,
    &coll_allreduce_approx_pf_ops,
    &coll_allreduce_approx_pflc_ops,
    &coll_allreduce_approx_pfcc_ops,
    &coll_allreduce_approx_hps_ops,
    &coll_allreduce_approx_hpflc_ops,
    &coll_allreduce_approx_ardb_ops,
    NULL,
};

const coll_op_ops_t *coll_op_find(const char *op, const char *alg)
{
    if (op == NULL)
        return NULL;
    for (size_t i = 0; coll_op_table[i] != NULL; i++) {
        const coll_op_ops_t *o = coll_op_table[i];
        if (strcmp(o->op, op) == 0 && (alg == NULL || strcmp(o->alg, alg) == 0))
            return o;
    }
    return NULL;
}
