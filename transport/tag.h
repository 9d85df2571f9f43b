/*
 * The 64-bit tag layout, drawn once. Every message ucft puts on the wire is
 * a tagged message whose tag says what it belongs to:
 *
 *   63  62 61            48 47                       24 23                 0
 *  +------+----------------+---------------------------+-------------------+
 *  |class |  context id    |  source rank (job rank)   |  payload          |
 *  +------+----------------+---------------------------+-------------------+
 *    2 b        14 b                  24 b                     24 b
 *
 *  class  P2P   (0): user point-to-point; payload = user tag (0..2^24-1)
 *         COLL  (1): collectives; payload = sequence (16 b) << 8 | kind (8 b)
 *         CTRL  (2): runtime control (wire-up, heartbeats, failure news,
 *                    finalize); payload = kind (8 b), the rest 0
 *         PROBE (3): the transport's self-probe of its own FIFO (a
 *                    message from this process to itself); payload 0
 *  context id   the communicator (world = 0); 16384 communicators at once.
 *  source       the sender's *job* rank: 16,777,216 ranks. It is what
 *               ANY_SOURCE receives learn the sender from, and UCP's
 *               tag_sender_mask is set to exactly these bits.
 *  sequence     collective instance number modulo 2^16, so that a late
 *               message of an earlier collective never matches a later one
 *               while fewer than 65,536 collectives are in flight. There is
 *               no further check inside the payload: a message that
 *               arrives 65,536 instances late would be taken by the
 *               instance that reuses its sequence (the sweeper of late
 *               messages, comm/drain.c, drops them long before).
 *
 * Trust: the source field is written by the sender and is not checked
 * against the endpoint the message came in on (UCP's tag receives do not
 * report one). Receivers check that it names a rank of the job and that
 * the message has the size and form its kind requires (docs/wire.md);
 * a process that is not one of the job's ranks but reaches a rank's
 * worker could still send in another rank's name.
 *
 * A wildcard clears bits of the mask: ANY_SOURCE clears the source field,
 * ANY_TAG clears the payload field. Class and context id are always
 * matched, so traffic of different classes or communicators never mixes.
 */
#ifndef UCFT_TRANSPORT_TAG_H
#define UCFT_TRANSPORT_TAG_H

#include <stdint.h>

enum ucft_tag_class {
    UCFT_TAG_CLASS_P2P = 0,
    UCFT_TAG_CLASS_COLL = 1,
    UCFT_TAG_CLASS_CTRL = 2,
    UCFT_TAG_CLASS_PROBE = 3,
};

#define UCFT_TAG_CLASS_SHIFT  62
#define UCFT_TAG_CTX_SHIFT    48
#define UCFT_TAG_SRC_SHIFT    24
#define UCFT_TAG_CTX_BITS     14
#define UCFT_TAG_SRC_BITS     24
#define UCFT_TAG_PAYLOAD_BITS 24
#define UCFT_TAG_SEQ_BITS     16
#define UCFT_TAG_KIND_BITS    8

#define UCFT_TAG_MAX_CTX     ((1u << UCFT_TAG_CTX_BITS) - 1)
#define UCFT_TAG_MAX_RANKS   (1u << UCFT_TAG_SRC_BITS)
#define UCFT_TAG_MAX_PAYLOAD ((1u << UCFT_TAG_PAYLOAD_BITS) - 1)

#define UCFT_TAG_SRC_MASK                                                      \
    (((uint64_t)UCFT_TAG_MAX_RANKS - 1) << UCFT_TAG_SRC_SHIFT)
#define UCFT_TAG_PAYLOAD_MASK ((uint64_t)UCFT_TAG_MAX_PAYLOAD)
#define UCFT_TAG_FULL_MASK    (~(uint64_t)0)

static inline uint64_t ucft_tag_make(unsigned cls, unsigned ctx, uint32_t src,
                                     uint32_t payload)
{
    return ((uint64_t)(cls & 3u) << UCFT_TAG_CLASS_SHIFT) |
           ((uint64_t)(ctx & UCFT_TAG_MAX_CTX) << UCFT_TAG_CTX_SHIFT) |
           ((uint64_t)(src & (UCFT_TAG_MAX_RANKS - 1)) << UCFT_TAG_SRC_SHIFT) |
           ((uint64_t)payload & UCFT_TAG_PAYLOAD_MASK);
}

static inline unsigned ucft_tag_class(uint64_t tag)
{
    return (unsigned)(tag >> UCFT_TAG_CLASS_SHIFT);
}

static inline unsigned ucft_tag_ctx(uint64_t tag)
{
    return (unsigned)(tag >> UCFT_TAG_CTX_SHIFT) & UCFT_TAG_MAX_CTX;
}

static inline uint32_t ucft_tag_src(uint64_t tag)
{
    return (uint32_t)((tag & UCFT_TAG_SRC_MASK) >> UCFT_TAG_SRC_SHIFT);
}

static inline uint32_t ucft_tag_payload(uint64_t tag)
{
    return (uint32_t)(tag & UCFT_TAG_PAYLOAD_MASK);
}

/* Collective payload: sequence number and message kind. */
static inline uint32_t ucft_tag_coll_payload(uint32_t seq, unsigned kind)
{
    return ((seq & ((1u << UCFT_TAG_SEQ_BITS) - 1)) << UCFT_TAG_KIND_BITS) |
           (kind & ((1u << UCFT_TAG_KIND_BITS) - 1));
}

static inline uint32_t ucft_tag_coll_seq(uint64_t tag)
{
    return ucft_tag_payload(tag) >> UCFT_TAG_KIND_BITS;
}

static inline unsigned ucft_tag_coll_kind(uint64_t tag)
{
    return ucft_tag_payload(tag) & ((1u << UCFT_TAG_KIND_BITS) - 1);
}

/* Mask for a receive: wildcards clear the source and/or payload fields. */
static inline uint64_t ucft_tag_mask(int any_source, int any_payload)
{
    uint64_t m = UCFT_TAG_FULL_MASK;
    if (any_source)
        m &= ~UCFT_TAG_SRC_MASK;
    if (any_payload)
        m &= ~UCFT_TAG_PAYLOAD_MASK;
    return m;
}

#endif
