/*
 * A filter transport: a tp_t in front of another (`below`) that changes a
 * few operations and passes the rest through. Its struct starts with a
 * tp_filter_t; the pass-through operations below fill the rest of its
 * ops table (TP_FILTER_PASS_OPS). Users: a communicator's view
 * (comm/view.c), UCFT_INJECT's filter (comm/coll_inject.c), the payload
 * checksums (collectives/coll_csum.c).
 */
#ifndef UCFT_TRANSPORT_FILTER_H
#define UCFT_TRANSPORT_FILTER_H

#include "transport/transport.h"

typedef struct tp_filter {
    tp_t tp;     /* first: the filter is its tp */
    tp_t *below; /* the transport it filters */
} tp_filter_t;

static inline tp_t *tp_filter_below(tp_t *tp)
{
    return ((tp_filter_t *)tp)->below;
}

static inline ucft_status_t tp_filter_recv(tp_t *tp, uint64_t tag,
                                           uint64_t mask, void *buf, size_t len,
                                           tp_req_t *req)
{
    return tp_recv(tp_filter_below(tp), tag, mask, buf, len, req);
}

static inline ucft_status_t
tp_filter_probe(tp_t *tp, uint64_t tag, uint64_t mask, tp_probe_info_t *info)
{
    return tp_probe(tp_filter_below(tp), tag, mask, info);
}

static inline void tp_filter_peer_failed(tp_t *tp, int rank)
{
    tp_peer_failed(tp_filter_below(tp), rank);
}

static inline void tp_filter_watch(tp_t *tp, int rank)
{
    tp_watch(tp_filter_below(tp), rank);
}

static inline void tp_filter_cancel(tp_t *tp, tp_req_t *req)
{
    tp_cancel(tp_filter_below(tp), req);
}

static inline void tp_filter_address(tp_t *tp, const void **addr, size_t *len)
{
    tp_address(tp_filter_below(tp), addr, len);
}

static inline ucft_status_t tp_filter_flush(tp_t *tp, uint64_t timeout_ns)
{
    return tp_flush(tp_filter_below(tp), timeout_ns);
}

static inline unsigned tp_filter_progress(tp_t *tp)
{
    return tp_progress(tp_filter_below(tp));
}

static inline int tp_filter_fd(tp_t *tp)
{
    tp_t *b = tp_filter_below(tp);
    return b->ops->fd(b);
}

static inline ucft_status_t tp_filter_arm(tp_t *tp)
{
    tp_t *b = tp_filter_below(tp);
    return b->ops->arm(b);
}

static inline uint64_t tp_filter_now(tp_t *tp)
{
    return tp_now(tp_filter_below(tp));
}

static inline ucft_status_t tp_filter_timer_start(tp_t *tp, ucft_timer_t *t,
                                                  uint64_t deadline)
{
    return tp_timer_start(tp_filter_below(tp), t, deadline);
}

static inline void tp_filter_timer_stop(tp_t *tp, ucft_timer_t *t)
{
    tp_timer_stop(tp_filter_below(tp), t);
}

static inline uint64_t tp_filter_timer_next(tp_t *tp)
{
    return tp_timer_next(tp_filter_below(tp));
}

/* The filter does not own what it filters. */
static inline void tp_filter_destroy(tp_t *tp)
{
    (void)tp;
}

/* The pass-through part of an ops table (every filter picks its own send,
 * recv, probe, cancel, peer_failed, watch, disconnect: its own or the
 * tp_filter_* ones above). */
#define TP_FILTER_PASS_OPS                                                     \
    .address = tp_filter_address, .flush = tp_filter_flush,                    \
    .progress = tp_filter_progress, .fd = tp_filter_fd, .arm = tp_filter_arm,  \
    .now = tp_filter_now, .timer_start = tp_filter_timer_start,                \
    .timer_stop = tp_filter_timer_stop, .timer_next = tp_filter_timer_next,    \
    .destroy = tp_filter_destroy

#endif
