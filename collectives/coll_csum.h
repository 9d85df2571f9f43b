/*
 * Payload checksums on the wire for the collectives (UCFT_CHECKSUM=y,
 * docs/gossip.md): a filter transport in front of the transport every
 * collective instance runs on (after UCFT_INJECT's filter, so an injected
 * flip corrupts a checksummed message).
 *
 * Send: a collective-class message with a payload leaves as a copy of it
 * followed by 8 bytes, a 64-bit checksum of the payload, its tag and its
 * length (cm_csum_of). Empty messages go as they are. Receive: the message
 * lands in a scratch buffer 8 bytes longer than the caller's; when its
 * checksum matches, the payload is copied out and the caller's request
 * completes as if nothing had been added; when it does not, the message is
 * logged (warning: sender, context, sequence, kind, length) and dropped,
 * and the receive is posted again: the message counts as lost, and what
 * the algorithm does about a lost message decides the outcome (the
 * corrected allreduce's redundancy delivers the exact result; a baseline
 * such as recursive doubling waits for a message that never comes, as it
 * would for any lost message). For the gossip algorithms the receive
 * completes empty instead (cm_csum_tp's lost_empty).
 *
 * Cost: one copy and one pass over the payload on each side, and one
 * allocation per message (the scratch is freed when the request
 * completes); measured in docs/gossip.md. Only collective messages, and
 * only while the variable is set.
 */
#ifndef UCFT_COMM_COLL_CSUM_H
#define UCFT_COMM_COLL_CSUM_H

#include "transport/filter.h"

#include <stddef.h>
#include <stdint.h>

typedef struct cm_csum {
    tp_filter_t f;    /* first: the filter is a tp_t; below: the real one */
    uint64_t dropped; /* corrupted messages dropped so far */
    int lost_empty;   /* receives posted now: see cm_csum_tp */
} cm_csum_t;

/* The filter in front of `real` (re-pointed per call: cm_csum_tp). */
void cm_csum_init(cm_csum_t *c, tp_t *real);

/* The filter, now in front of `real` (the context's transport, or
 * UCFT_INJECT's filter for that call). lost_empty 1: a corrupted message
 * completes its receive as an empty message instead of being dropped
 * (for the lock-step gossip algorithms, which expect exactly one message
 * per partner and round and take an empty one as lost; dropped, it would
 * leave the receive waiting for a message that never comes). */
tp_t *cm_csum_tp(cm_csum_t *c, tp_t *real, int lost_empty);

/* The checksum of `len` bytes sent with `tag`. */
uint64_t cm_csum_of(const void *buf, size_t len, uint64_t tag);

#endif
