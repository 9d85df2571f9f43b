/*
 * Requests (runtime/request.c): one operation the caller may wait for.
 * The context owns a pool of them; the layer that starts an operation
 * (comm/: point-to-point and collectives) fills one in and gives it its
 * ops, so that test, wait, cancel and free never switch on what kind of
 * operation a request is.
 */
#ifndef UCFT_RT_REQUEST_H
#define UCFT_RT_REQUEST_H

#include "ucft.h"
#include "transport/transport.h"

#include <stdint.h>

struct ucft_context;
struct ucft_comm;
struct ucft_request;

typedef struct rt_req_ops {
    /* ucft_cancel of a request that is not done. NULL: cancel the
     * transport request (r->tp), which then completes with
     * UCFT_ERR_CANCELED (or cancel_status). */
    ucft_status_t (*cancel)(struct ucft_request *r);
    /* For test and wait of a request that is not done: a status other
     * than UCFT_INPROGRESS ends the wait with that status while the
     * request stays pending (UCFT_ERR_PROC_FAILED_PENDING). NULL: never. */
    ucft_status_t (*blocked)(const struct ucft_request *r);
    /* The caller lets go of a completed request (ucft_test and ucft_wait
     * that return it, ucft_request_free of a done one), just before it
     * goes back to the pool. NULL: nothing to do. */
    void (*release)(struct ucft_request *r);
    /* The `spin` of rt_wait_hinted for this request. NULL: none. */
    int (*spin)(void *r);
} rt_req_ops_t;

struct ucft_request {
    tp_req_t tp; /* first: the transport hands it back in callbacks */
    struct ucft_context *ctx;
    const rt_req_ops_t *ops;
    struct ucft_comm *comm;
    struct ucft_request *prev, *next; /* owner's pending list; pool: next */
    ucft_info_t info;
    int peer;       /* point-to-point: comm rank, or UCFT_ANY_SOURCE */
    int peer_world; /* point-to-point: job rank, or -1 for ANY_SOURCE */
    uint8_t done;
    uint8_t released;            /* the user let go; recycle on completion */
    uint8_t in_pool;             /* on the free list: a stale handle */
    ucft_status_t cancel_status; /* reported instead of CANCELED */
    void *owner; /* the starting layer's own (a collective's instance) */
};

typedef struct rt_req_chunk {
    struct rt_req_chunk *next;
    struct ucft_request reqs[64];
} rt_req_chunk_t;

typedef struct rt_req_pool {
    rt_req_chunk_t *chunks;
    struct ucft_request *free;
} rt_req_pool_t;

/* A request from the pool (NULL: out of memory), reset, with `ops`. */
struct ucft_request *rt_req_get(struct ucft_context *ctx,
                                const rt_req_ops_t *ops);
void rt_req_put(struct ucft_request *r);
/* Finalize: frees the pool (every request handed out is gone with it). */
void rt_requests_cleanup(struct ucft_context *ctx);

#endif
