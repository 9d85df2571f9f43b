/*
 * High-performance push-sum HPS (Section 6) (gossip.h, docs/gossip.md):
 * push-sum on one random permutation per round: every rank sends one message
 * and receives one.
 */
#include "gossip.h"

static const gossip_variant_t variant = {GOSSIP_SCHED_PERM, GOSSIP_RULE_PS};

static ucft_status_t init(void *state, tp_t *tp, const coll_args_t *args,
                          void *buf)
{
    return gossip_init(state, tp, args, buf, &variant);
}

GOSSIP_OPS(coll_allreduce_approx_hps_ops, "hps",
           "approximate: push-sum on a random permutation per round (one "
           "message in, one out)",
           init);
