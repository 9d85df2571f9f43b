/*
 * Silent data corruption for every collective, the same code in the
 * simulator and in real jobs (UCFT_INJECT flip=B / flip_rate=R,
 * comm/coll_inject.h; ucft-sim --flip / --flip-rate, docs/gossip.md).
 *
 * A rank's flip state counts the collective-class messages with a payload
 * that it sends in one operation (1-based; empty messages, e.g. PFCC's
 * acceptances and error notices, carry nothing to corrupt and are not
 * counted) and corrupts the payload of some of them before they leave:
 *   bit >= 0   message number `msg`: bit `bit` of the payload is inverted
 *              (bit 0 = the least significant bit of the first byte, so
 *              bit B < 64 of a double payload is bit B of its first
 *              value); a message shorter than bit / 8 + 1 bytes is left
 *              alone;
 *   rate > 0   every message independently with probability `rate`, one
 *              uniformly drawn bit of its payload, drawn from (seed, rank,
 *              message number): the same flips on every run.
 * The corrupted bytes are a copy (the caller's buffer is never written),
 * kept until coll_flip_cleanup: a flip is a fault, not the fast path.
 *
 * The filter transport (coll_flip_tp) puts this in front of any tp_t: the
 * simulator's driver wraps every rank's transport with one.
 */
#ifndef UCFT_COLL_FLIP_H
#define UCFT_COLL_FLIP_H

#include "transport/transport.h"

#include <stddef.h>
#include <stdint.h>

typedef struct coll_flip_params {
    int bit;      /* -1: no single flip */
    unsigned msg; /* the message number of the single flip (1-based) */
    double rate;  /* 0: none; else in (0, 1] */
    uint64_t seed;
} coll_flip_params_t;

typedef struct coll_flip {
    tp_t base; /* first: the filter is a tp_t */
    tp_t *real;
    coll_flip_params_t p;
    int rank;
    unsigned sent;    /* collective messages counted so far */
    unsigned flipped; /* messages corrupted so far */
    void **copies;    /* corrupted copies, freed at cleanup */
    size_t ncopies, cap;
} coll_flip_t;

/* Checks params (UCFT_ERR_INVALID_PARAM with a reason in err when bit >=
 * 2^20, msg == 0 with bit >= 0, or rate outside [0, 1]). */
ucft_status_t coll_flip_check(const coll_flip_params_t *p, char *err,
                              size_t errlen);

/* Sets f up in front of `real` for rank `rank` (params checked). */
void coll_flip_init(coll_flip_t *f, tp_t *real, const coll_flip_params_t *p);

/* Counts one collective message of `len` bytes at `buf`; returns the bytes
 * to send instead (a corrupted copy) or buf. NULL: out of memory (the
 * message is then sent intact). Logs each flip (warning) with the bit and
 * the destination. */
const void *coll_flip_message(coll_flip_t *f, const void *buf, size_t len,
                              int dst);

static inline tp_t *coll_flip_tp(coll_flip_t *f)
{
    return &f->base;
}

/* Frees the copies (no send of them may be pending any more). */
void coll_flip_cleanup(coll_flip_t *f);

#endif
