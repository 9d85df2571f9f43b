/*
 * Payload checksums on the wire for the collectives (UCFT_CHECKSUM=y in the
 * runtime, ucft-sim --checksum on the simulator; docs/gossip.md): a filter
 * transport in front of the transport a collective instance runs on (in
 * front of the flip filter, coll_flip.h, so an injected flip corrupts a
 * checksummed message). The same code in both worlds.
 *
 * Send: a collective-class message with a payload leaves as a copy of it
 * followed by 8 bytes, a 64-bit checksum of the payload, its tag and its
 * length (coll_csum_of). Empty messages go as they are. Receive: the
 * message lands in a scratch buffer 8 bytes longer than the caller's; when
 * its checksum matches, the payload is copied out and the caller's request
 * completes as if nothing had been added. When it does not, the message is
 * logged (warning: sender, context, sequence, kind, length) and counted as
 * lost; what happens then depends on the message kind (coll_op.h), that is
 * on the algorithm that receives it (coll_csum_on_lost):
 *
 *   COLL_CSUM_DROP   the corrected algorithms (broadcast, reduce,
 *                    allreduce, barrier, gather, the agreement, the copy
 *                    channel): the message is dropped, the receive
 *                    posted again, and its sender accused
 *                    (coll_csum_on_corrupt): the owner makes it a failed
 *                    rank for everybody (the runtime's detector declares
 *                    and fences it; the simulator kills it). Their fault
 *                    model is a crashed sender that every rank learns of;
 *                    a lost message of a sender that goes on is not in
 *                    it (the corrected broadcast's receiver would never
 *                    serve its subtree, for one), so the accusation turns
 *                    the one into the other, at the price of a rank per
 *                    corrupted message (docs/gossip.md);
 *   COLL_CSUM_EMPTY  the lock-step gossip family, which expects exactly one
 *                    message per partner and round: the receive completes
 *                    empty, which it takes as a lost message;
 *   COLL_CSUM_FAIL   every other kind (the baselines: binomial broadcast,
 *                    ring exchange, the rings, binomial reduce, recursive
 *                    doubling, linear, barrier), which cannot do without
 *                    a message: the receive fails (UCFT_ERR_TRANSPORT),
 *                    and the algorithm ends the rank with its error and
 *                    ends its peers' waits (baseline.h), never a hang.
 *                    The corrected ring (allreduce_ring_corrected.c) runs
 *                    the rings first: a failed ring sends every survivor
 *                    to its corrected fallback, which corrects the loss.
 *
 * Cost: one copy and one pass over the payload on each side, and one
 * allocation per message (the scratch is freed when the request
 * completes); measured in docs/gossip.md. Only collective messages.
 */
#ifndef UCFT_COLL_CSUM_H
#define UCFT_COLL_CSUM_H

#include "transport/filter.h"

#include <stddef.h>
#include <stdint.h>

/* Told that `rank` sent a corrupted message of a corrected algorithm. */
typedef void (*coll_csum_accuse_t)(void *arg, int rank);

typedef struct coll_csum {
    tp_filter_t f;    /* first: the filter is a tp_t; below: the real one */
    uint64_t dropped; /* corrupted messages received so far */
    coll_csum_accuse_t accuse; /* may be NULL: drop only */
    void *accuse_arg;
    void *live; /* requests in flight (their scratch) */
} coll_csum_t;

enum coll_csum_lost { COLL_CSUM_DROP, COLL_CSUM_EMPTY, COLL_CSUM_FAIL };

/* The filter in front of `below`. */
void coll_csum_init(coll_csum_t *c, tp_t *below);

/* Frees the scratch of requests that never completed (a rank that died
 * on the simulator: its requests stay pending for ever). Only once the
 * transport below can no longer touch them. */
void coll_csum_cleanup(coll_csum_t *c);

/* Who is told of the sender of a dropped (COLL_CSUM_DROP) message; called
 * from the receive's completion, inside the transport's progress, never
 * about this rank itself. */
void coll_csum_on_corrupt(coll_csum_t *c, coll_csum_accuse_t accuse, void *arg);

/* The filter, now in front of `below` (the runtime re-points it per call:
 * the context's transport, or UCFT_INJECT's filter for that call;
 * requests already posted keep the transport they were posted on). */
tp_t *coll_csum_tp(coll_csum_t *c, tp_t *below);

/* What a corrupted message of this collective kind becomes (above). */
enum coll_csum_lost coll_csum_on_lost(unsigned kind);

/* The checksum of `len` bytes sent with `tag`. */
uint64_t coll_csum_of(const void *buf, size_t len, uint64_t tag);

#endif
