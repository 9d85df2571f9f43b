/*
 * Approximate recursive doubling ARDB (Section 6.2) (gossip.h, docs/gossip.md):
 * the exchange pattern of recursive doubling, each pair averaging its (value,
 * weight) pairs; after k rounds a rank holds the exact mean of its block of 2^k
 * ranks, so stopping early samples the data. log2 n rounds (n a power of two)
 * give the exact result up to rounding.
 */
#include "gossip.h"

static const gossip_variant_t variant = {GOSSIP_SCHED_BUTTERFLY,
                                         GOSSIP_RULE_PS};

static ucft_status_t init(void *state, tp_t *tp, const coll_args_t *args,
                          void *buf)
{
    return gossip_init(state, tp, args, buf, &variant);
}

GOSSIP_OPS(coll_allreduce_approx_ardb_ops, "ardb",
           "approximate: recursive-doubling exchange of (value, weight), "
           "stopped after the rounds asked (default log2 n)",
           init);
