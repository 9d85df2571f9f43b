/*
 * Push-flow (Alg. 3) (gossip.h, docs/gossip.md): the input never changes; each
 * rank keeps one flow per neighbour and sends it, a received flow overwrites
 * the local one negated, so any successful exchange restores flow conservation
 * between the pair.
 */
#include "gossip.h"

static const gossip_variant_t variant = {GOSSIP_SCHED_RANDOM, GOSSIP_RULE_PF};

static ucft_status_t init(void *state, tp_t *tp, const coll_args_t *args,
                          void *buf)
{
    return gossip_init(state, tp, args, buf, &variant);
}

GOSSIP_OPS(coll_allreduce_approx_pf_ops, "pf",
           "approximate: push-flow, a random neighbour per round; converges "
           "over the survivors of a crash",
           init);
