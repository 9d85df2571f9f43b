/*
 * Every control-class message kind, in one place. A control message has
 * tag class UCFT_TAG_CLASS_CTRL, context id 0 (the job), source = the
 * sender's job rank and payload = one of the kinds below (transport/tag.h).
 * Next to tag.h because the kinds are part of the wire format: the runtime
 * and the detector (runtime/detector/) both send and match them.
 */
#ifndef UCFT_TRANSPORT_CTRL_KINDS_H
#define UCFT_TRANSPORT_CTRL_KINDS_H

#include "transport/tag.h"

#include <stdint.h>

enum ucft_ctrl_kind {
    /* 0 is never used: a zero payload marks a bug, not a message. */
    /* Endpoint wire-up at start-up: one message around the ring
     * (runtime/context.c). Body: 8 bytes, the sender's rank. */
    UCFT_CTRL_WIREUP = 1,

    /* Heartbeat, observed rank -> its observer, every eta. Body: 8 bytes,
     * the sender's heartbeat sequence number (debugging only). */
    UCFT_CTRL_HB = 2,
    /* Observer -> a new observed rank: "send your heartbeats to me". Sent
     * when the observer re-targets after declaring its predecessor failed.
     * Body: 8 bytes, the sender's failure epoch. */
    UCFT_CTRL_HB_REQUEST = 3,
    /* Observed rank -> its observer on a clean stop: "stop watching me",
     * so a finalizing rank is never reported as failed. Body: 8 bytes, 0. */
    UCFT_CTRL_HB_STOP = 4,
    /* Failure news of the reliable broadcast: "rank r failed". Body: two
     * little-endian-in-memory uint32: the failed rank and the sender's
     * epoch once it knew the fact. */
    UCFT_CTRL_FAILED = 5,
    /* Anti-entropy: a rank's whole failed set (runtime/detector/
     * reconcile.h), sent to a ring neighbour whose heartbeats carried
     * another. Body: uint32 flags (bit 0: answer with yours if you know
     * more), uint32 n, then n uint32 failed ranks (at most REC_MAX_FACTS;
     * a larger set goes in turns). */
    UCFT_CTRL_FAILED_SET = 6,
    /* A communicator is revoked (comm/revoke.c): every member that learns
     * it tells every other. Body: uint32 context id, uint32 the
     * communicator's uid. */
    UCFT_CTRL_REVOKE = 7,
    /* Indirect probes (runtime/detector/probe.h): a suspicion confirmed
     * by other observers before a declaration. Body: five uint32: op
     * (1 request origin -> helper "probe the suspect for me", 2 ping
     * helper -> suspect, 3 ack suspect -> helper, 4 relay helper ->
     * origin "it answered"), origin, suspect, nonce (the origin's
     * suspicion number), silent_ms (how long the origin had not heard
     * the suspect). Checks: ctrl_wire_probe. */
    UCFT_CTRL_PROBE = 8,
};

/* The tag of a control message of `kind` sent by job rank `src`. */
static inline uint64_t ucft_ctrl_tag(uint32_t src, unsigned kind)
{
    return ucft_tag_make(UCFT_TAG_CLASS_CTRL, 0, src, kind);
}

/* The mask for a control receive of one kind from any source. */
static inline uint64_t ucft_ctrl_mask_any_source(void)
{
    return ucft_tag_mask(1, 0);
}

#endif
