/*
 * HPFLC (Section 6.1) (gossip.h, docs/gossip.md): PFLC on one random n-cycle
 * per round: no two ranks send to each other in the same round, so flows never
 * overwrite each other.
 */
#include "gossip.h"

static const gossip_variant_t variant = {GOSSIP_SCHED_CYCLE, GOSSIP_RULE_PFLC};

static ucft_status_t init(void *state, tp_t *tp, const coll_args_t *args,
                          void *buf)
{
    return gossip_init(state, tp, args, buf, &variant);
}

GOSSIP_OPS(
    coll_allreduce_approx_hpflc_ops, "hpflc",
    "approximate: PFLC on a random n-cycle per round; resilient to bit flips",
    init);
