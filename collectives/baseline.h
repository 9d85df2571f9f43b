/*
 * What the fault-aware baselines (reduce_binomial.c, recdbl.c) share: the
 * error message convention and the validation of a reduction's arguments.
 * Private to collectives/.
 *
 * Fault-aware, not fault-tolerant: a baseline never corrects for a failed
 * rank, it only makes sure that nobody waits forever for one. A rank that
 * learns of a failure it depends on (on_failure names a peer it still
 * waits for, a send fails, or a peer tells it that it failed) ends with
 * UCFT_ERR_PROC_FAILED, and first sends an empty message of the error kind
 * (data kind + 1) to every peer that still expects a message from it, in
 * place of that message. Every rank that waits for a live peer therefore
 * receives either the data or the error, and waits for a dead one end
 * through on_failure: every live rank ends.
 */
#ifndef UCFT_COLL_BASELINE_H
#define UCFT_COLL_BASELINE_H

#include "coll_op.h"
#include "dtype.h"

/* Receives take the data kind and its error kind (they differ in bit 0). */
#define COLL_BASELINE_RECV_MASK (UCFT_TAG_FULL_MASK & ~(uint64_t)1)

/* 1 if the message a receive matched is an error message. */
static inline int coll_baseline_is_err(const tp_req_t *req)
{
    return (int)(ucft_tag_coll_kind(req->tag) & 1u);
}

/* Validates the reduction arguments of a baseline and yields the element
 * count (a driver may give bytes only: count 0, len a multiple of the
 * element size). `nodata`: a barrier, no payload at all. */
static inline ucft_status_t coll_baseline_args(const tp_t *tp,
                                               const coll_args_t *a,
                                               const void *buf, int nodata,
                                               size_t *count, size_t *len)
{
    size_t es = dtype_size(a->dtype);

    if (a->root < 0 || a->root >= tp->size || es == 0)
        return UCFT_ERR_INVALID_PARAM;
    if (nodata) {
        *count = *len = 0;
        return UCFT_OK;
    }
    *count = a->count;
    if (*count == 0 && a->len % es == 0)
        *count = a->len / es;
    if (*count * es != a->len || (a->len > 0 && buf == NULL) ||
        !coll_redop_valid(a))
        return UCFT_ERR_INVALID_PARAM;
    *len = a->len;
    return UCFT_OK;
}

#endif
