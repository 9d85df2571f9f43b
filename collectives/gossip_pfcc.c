/*
 * Push-flow with cooperative correction (Alg. 5) (gossip.h, docs/gossip.md): as
 * PFLC, but a corrupted flow is corrected by the neighbour: every message is
 * answered (empty when accepted, with the receiver's own flow when it failed
 * its checksum), and a flow is reset only when both copies are corrupted. In
 * lock step a rank with a corrupted local flow leaves it out of its estimate
 * and sends it unchanged at its next exchange with that neighbour, whose answer
 * repairs it.
 */
#include "gossip.h"

static const gossip_variant_t variant = {GOSSIP_SCHED_RANDOM, GOSSIP_RULE_PFCC};

static ucft_status_t init(void *state, tp_t *tp, const coll_args_t *args,
                          void *buf)
{
    return gossip_init(state, tp, args, buf, &variant);
}

GOSSIP_OPS(coll_allreduce_approx_pfcc_ops, "pfcc",
           "approximate: push-flow with checksums, corrected by the "
           "neighbour's answer (2 messages per rank and round)",
           init);
