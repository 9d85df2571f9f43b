/* The communicator layer's UCFT_* variables (comm/variables.h): failures
 * tolerated, algorithms, flow control, placement, failure injection. Read
 * when the layer is made (comm/layer.c); `ucft-info -c` prints them. */
#include "comm/variables.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* In the order of placement_policy_t (placement/comm_map.c checks it). */
static const char *const placements[] = {"interleave", "locality", "identity",
                                         NULL};
/* In the order of comm/repair.h's CM_REPAIR_*. */
static const char *const repairs[] = {"rebalance", "keep", "reroute", "lookup",
                                      NULL};

#define F(field) offsetof(cm_config_t, field)

static const ucft_config_field_t cm_fields[] = {
    {"F", "1",
     "failures a collective tolerates (corrected algorithms); more end "
     "with UCFT_ERR_PROC_FAILED",
     ucft__config_parse_int, F(f), NULL},
    {"COLL_RNDV_MIN", "0",
     "payload size from which the corrected broadcast sends its copies by "
     "rendezvous, so that a rank that already holds the data takes a "
     "correction without moving the payload again (e.g. 8k: about 2x "
     "faster at 1 MiB; experimental: UCX 1.13's TCP transport can crash "
     "after a kill with it, docs/bcast.md); 0: every copy buffered and "
     "moved whole",
     ucft__config_parse_size, F(coll_rndv_min), NULL},
    {"COLL_DIRECT_MIN", "64k",
     "payload size from which a blocking broadcast, allreduce or allgather "
     "on an algorithm that allows it (binomial, scatter-ring, ring, recdbl, "
     "recexch) works in the caller's buffers instead of copies of them: "
     "no copy out, and no copy in but the own input into the output; a call "
     "that fails may then have written its output buffer (include/ucft.h, "
     "R4); 0: always copies",
     ucft__config_parse_size, F(coll_direct_min), NULL},
    {"COLL_BATCH", "64",
     "broadcast corrected-batched: copies of consecutive broadcasts that a "
     "rank sends its ring neighbour in one message, at most (1..64); they "
     "also go when the rank waits or learns of a failure, and at once "
     "when their receiver is known to be cut off by one",
     ucft__config_parse_uint, F(coll_batch), NULL},
    {"REDUCE_WINDOW", "64",
     "flow control of reduce loops: after every this many reduces in a row "
     "on a communicator a corrected barrier is posted without waiting, and "
     "the reduce that ends the next run of as many waits for it, so no rank "
     "runs more than twice this many reduces ahead of another (a reduce "
     "leaf never waits otherwise, and its messages pile up unmatched at the "
     "ranks that combine); 0: off",
     ucft__config_parse_uint, F(reduce_window), NULL},
    /* Every UCFT_<OP>_ALG below (comm/coll_select.h): one algorithm, a
     * table by payload size, or "fast". */
    {"PLACEMENT", "interleave",
     "which rank holds which position in the collectives' trees and rings: "
     "interleave (consecutive positions on different nodes, so that a "
     "whole-node failure stays correctable), locality (neighbours on one "
     "node, fewer messages between nodes) or identity (position = rank)",
     ucft__config_parse_enum, F(placement), placements},
    {"BCAST_ALG", "corrected",
     "broadcast algorithm (ucft-sim --list), or a table by payload size "
     "SIZE:ALG,SIZE:ALG... (e.g. 0:binomial,64k:corrected: from 0 bytes "
     "the first, from 64 KiB the second; the same syntax for every "
     "UCFT_*_ALG below), or fast (the fastest baselines, here binomial): "
     "corrected, "
     "corrected-opportunistic, corrected-batched, corrected-failproof, "
     "corrected-kary, corrected-lame, binomial",
     ucft__config_parse_string, F(alg[0]), NULL},
    {"REDUCE_ALG", "corrected",
     "reduce algorithm: corrected (= corrected-list), corrected-countbit, "
     "corrected-bit, binomial (baseline: any failure it depends on ends it "
     "with ERR_PROC_FAILED)",
     ucft__config_parse_string, F(alg[1]), NULL},
    {"ALLREDUCE_ALG", "corrected",
     "allreduce algorithm: corrected (= corrected-list), corrected-ring "
     "(the same semantics at the ring's traffic when nothing fails), "
     "corrected-countbit, corrected-bit, recdbl (baseline recursive "
     "doubling: any failure ends it with ERR_PROC_FAILED), recexch "
     "(baseline recursive exchange, radix up to 8: fewer rounds), linear "
     "(baseline star through the root: one wait per rank, for small jobs "
     "on few cores), ring (baseline reduce-scatter + allgather ring: "
     "bandwidth-optimal for large vectors); fast = 0:recdbl,16k:ring",
     ucft__config_parse_string, F(alg[2]), NULL},
    {"BARRIER_ALG", "corrected",
     "barrier algorithm: corrected, recdbl, recexch, linear (baselines; "
     "finalize always uses the corrected one)",
     ucft__config_parse_string, F(alg[3]), NULL},
    {"ALLGATHER_ALG", "corrected",
     "allgather algorithm: corrected (a failed rank's block whole or "
     "marked absent, the same at every survivor), corrected-ring (the "
     "same at the ring's traffic when nothing fails), ring (baseline, "
     "bandwidth-optimal: any failure ends it with ERR_PROC_FAILED)",
     ucft__config_parse_string, F(alg[4]), NULL},
    {"REDUCE_SCATTER_ALG", "corrected",
     "reduce-scatter algorithm: corrected (every block over the live ranks "
     "and the same subset of failed ones), corrected-ring (the same at "
     "the ring's traffic when nothing fails), ring (baseline, "
     "bandwidth-optimal: any failure ends it with ERR_PROC_FAILED)",
     ucft__config_parse_string, F(alg[5]), NULL},
    {"INJECT", "",
     "failure injection for tests: 'rank=R,op=OP[,call=C][,msg=K]' (specs "
     "separated by ';'): rank R SIGKILLs itself just before sending message "
     "K (default 1; 0 = at the start) of its C-th (default 1) call of OP "
     "(bcast, reduce, allreduce, barrier, allgather, reduce_scatter, "
     "finalize, agree, allreduce_approx, shrink, dup, split, create_group); "
     "with flip=B (and/or flip_rate=P[,seed=S]) it corrupts that call's "
     "messages instead (bit B of message K's payload; each message with "
     "probability P); empty = none",
     ucft__config_parse_string, F(inject), NULL},
    {"CHECKSUM", "n",
     "y: every collective message with a payload carries a 64-bit checksum "
     "of it; a corrupted one is logged (sender, context, sequence, kind) "
     "and counted as lost: the baselines end with an error, the gossip "
     "algorithms correct it, for the corrected ones and the agreement its "
     "sender is declared failed (and fenced) and corrected for "
     "(docs/gossip.md; costs a copy and a pass over the payload on each "
     "side)",
     ucft__config_parse_bool, F(checksum), NULL},
    {"TREE_REPAIR", "rebalance",
     "what a communicator's collectives do with the members it has lost "
     "(docs/trees.md): rebalance (agree on the failed set in the "
     "background, then run broadcast, reduce, allreduce and barrier on the "
     "survivors in a dense order: the trees of a fresh communicator of the "
     "survivors, and those failures no longer count against f), reroute or "
     "lookup (the same switch, but the binomial broadcast, reduce and "
     "barrier keep the original tree with a failed member's children "
     "adopted by its nearest live ancestor, computed at every operation or "
     "once per failed set and root; every other structure is rebalanced), "
     "or keep (failed members stay in every tree, each counts against f "
     "for the communicator's life); the same at every rank",
     ucft__config_parse_enum, F(tree_repair), repairs},
    {"TREE_REPAIR_WINDOW", "4",
     "tree repair: a rank that contributed to the background agreement "
     "with its next operation number c posts no collective numbered c + "
     "this or later before the agreement has decided (it waits), and every "
     "rank switches to the survivors' trees at max(c) + this (1..65536)",
     ucft__config_parse_uint, F(tree_window), NULL},
    {NULL, NULL, NULL, NULL, 0, NULL},
};

const ucft_config_table_t cm_config_table = {"communicators", cm_fields};

/* The variables that every rank must set alike: collectives (algorithms,
 * trees, wire format, flow-control barriers) that disagree cannot match.
 * UCFT_INJECT names its rank; UCFT_TREE_REPAIR_WINDOW may differ (the
 * switch takes the largest); the batching and rendezvous sizes are read
 * by the sender alone. */
static const char *const jobwide[] = {
    "F",
    "PLACEMENT",
    "BCAST_ALG",
    "REDUCE_ALG",
    "ALLREDUCE_ALG",
    "BARRIER_ALG",
    "ALLGATHER_ALG",
    "REDUCE_SCATTER_ALG",
    "REDUCE_WINDOW",
    "CHECKSUM",
    "TREE_REPAIR",
    NULL,
};

static const char *dflt(const char *name)
{
    for (const ucft_config_field_t *f = cm_fields; f->name != NULL; f++)
        if (strcmp(f->name, name) == 0)
            return f->dflt;
    return "";
}

char *cm_config_jobwide(void)
{
    size_t len = 1;
    char *text = NULL;
    for (int pass = 0; pass < 2; pass++) {
        size_t at = 0;
        for (int i = 0; jobwide[i] != NULL; i++) {
            char var[64];
            snprintf(var, sizeof(var), UCFT_CONFIG_PREFIX "%s", jobwide[i]);
            const char *v = getenv(var);
            int n = snprintf(text != NULL ? text + at : NULL,
                             text != NULL ? len - at : 0, "%s=%s\n", jobwide[i],
                             v != NULL ? v : dflt(jobwide[i]));
            if (n < 0)
                return NULL;
            at += (size_t)n;
        }
        if (text == NULL) {
            len = at + 1;
            if ((text = malloc(len)) == NULL)
                return NULL;
            text[0] = '\0';
        }
    }
    return text;
}
