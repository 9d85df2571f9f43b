/*
 * Push-flow with local correction (Alg. 4) (gossip.h, docs/gossip.md):
 * push-flow with a checksum third component c = x + w; a flow failing |x + w -
 * c| <= tau max(1, |c|) is dropped on receipt and reset to zero when the
 * estimate fails its checksum.
 */
#include "gossip.h"

static const gossip_variant_t variant = {GOSSIP_SCHED_RANDOM, GOSSIP_RULE_PFLC};

static ucft_status_t init(void *state, tp_t *tp, const coll_args_t *args,
                          void *buf)
{
    return gossip_init(state, tp, args, buf, &variant);
}

GOSSIP_OPS(coll_allreduce_approx_pflc_ops, "pflc",
           "approximate: push-flow with checksums, corrupted flows reset (tau "
           "default 0.5)",
           init);
