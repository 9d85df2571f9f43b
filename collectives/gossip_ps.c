/*
 * Push-sum (Alg. 2 of the paper) (gossip.h, docs/gossip.md): every round each
 * rank halves its (value, weight) pair per element and sends the half to a
 * random neighbour. Mass is conserved only while no message is lost or
 * corrupted.
 */
#include "gossip.h"

static const gossip_variant_t variant = {GOSSIP_SCHED_RANDOM, GOSSIP_RULE_PS};

static ucft_status_t init(void *state, tp_t *tp, const coll_args_t *args,
                          void *buf)
{
    return gossip_init(state, tp, args, buf, &variant);
}

GOSSIP_OPS(coll_allreduce_approx_ps_ops, "ps",
           "approximate: push-sum, a random neighbour per round; loses mass on "
           "a crash or a bit flip",
           init);
