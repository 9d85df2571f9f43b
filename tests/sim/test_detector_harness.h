/* Shared harness of the failure detector's sim tests (test_detector.c,
 * test_detector_run.c): one detector per simulated rank on a sim world
 * whose own failure notification is off, and per-rank records of what
 * the detectors declared and when. Each test builds its det_params_t
 * and calls h_create_det; the records serve either test's accounting. */
#ifndef UCFT_TEST_DETECTOR_HARNESS_H
#define UCFT_TEST_DETECTOR_HARNESS_H

#include "runtime/detector/detector.h"
#include "transport/sim/sim.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define MS 1000000ull
#define US 1000ull

typedef struct harness harness_t;

typedef struct rank_ctx {
    harness_t *h;
    int rank;
} rank_ctx_t;

struct harness {
    sim_world_t *w;
    int n;
    det_params_t params;
    det_t **dets;
    rank_ctx_t *ctx;
    uint64_t *first;     /* per failed rank: first time anyone knew it */
    uint64_t *last;      /* ... and last time a live rank learned it */
    int *learned;        /* live ranks that learned it */
    int *self_declared;  /* per rank: told it was declared */
    int *false_rank;     /* per rank: declared by somebody while alive */
    det_why_t *why_at;   /* per rank: why `watch` learned it */
    int watch;           /* the rank whose reasons are kept, -1: none */
    uint64_t false_decl; /* declarations of ranks alive in the sim, other
                            than external ones and of self-declared ranks */
    uint64_t hb_decl;    /* declarations by heartbeat timeout */
    uint64_t cleared;    /* cleared_cb calls */
    int kill_on_self;    /* a self-declared rank aborts (sim kill) */
    int node_size;       /* > 0: ranks r / node_size share a "node" */
    int starved;         /* alive, its thread starved (vouched alive) */
    int vouch_live;      /* every live node-mate is vouched alive */
};

static inline void h_failed_cb(void *arg, int rank, uint64_t epoch,
                               det_why_t why)
{
    rank_ctx_t *c = arg;
    harness_t *h = c->h;
    uint64_t now = sim_world_now(h->w);

    (void)epoch;
    if (!sim_world_is_dead(h->w, rank)) {
        h->false_rank[rank] = 1;
        if (why != DET_WHY_EXTERNAL && !h->self_declared[rank])
            h->false_decl++;
    }
    if (why == DET_WHY_HEARTBEAT)
        h->hb_decl++;
    if (h->learned[rank] == 0 || now < h->first[rank])
        h->first[rank] = now;
    if (now > h->last[rank])
        h->last[rank] = now;
    h->learned[rank]++;
    if (c->rank == h->watch)
        h->why_at[rank] = why;
}

/* A rank on the dead rank's node was woken by the kernel (the test
 * declares it there with DET_WHY_EXITED): it needs no message. */
static inline int h_learns_alone_cb(void *arg, int rank, int fact)
{
    rank_ctx_t *c = arg;
    int ns = c->h->node_size;
    return ns > 0 && rank / ns == fact / ns;
}

/* The kernel view of a node-mate: a dead one is dead; a live one is
 * alive (runnable) if it is h->starved or h->vouch_live is set; any
 * other rank's heartbeats decide. */
static inline hb_vouch_t h_vouch_cb(void *arg, int rank, uint64_t silent_ns)
{
    rank_ctx_t *c = arg;
    harness_t *h = c->h;
    int ns = h->node_size;
    (void)silent_ns;
    if (ns <= 0 || rank / ns != c->rank / ns)
        return HB_VOUCH_NONE;
    if (sim_world_is_dead(h->w, rank))
        return HB_VOUCH_DEAD;
    return h->vouch_live || rank == h->starved ? HB_VOUCH_ALIVE : HB_VOUCH_NONE;
}

static inline void h_self_cb(void *arg)
{
    rank_ctx_t *c = arg;
    c->h->self_declared[c->rank] = 1;
    if (c->h->kill_on_self)
        sim_world_kill(c->h->w, c->rank); /* fencing: it aborts */
}

static inline void h_cleared_cb(void *arg, int rank)
{
    rank_ctx_t *c = arg;
    (void)rank;
    c->h->cleared++;
}

/* h_create_det's flags. */
enum {
    H_LEARNS_ALONE = 1 << 0, /* news skips the dead rank's node-mates */
    H_VOUCH_LIVE = 1 << 1,   /* every live node-mate is vouched alive */
};

/* n ranks on a sim world seeded `seed`, each with a started detector of
 * `params`. node_size > 0: ranks r / node_size share a node and vouch
 * for each other (vouch_cb); H_LEARNS_ALONE: learns_alone_cb on. A
 * self-declared rank aborts; nobody is starved or watched until the
 * test says so. */
static inline void h_create_det(harness_t *h, int n, uint64_t seed,
                                const det_params_t *params, int node_size,
                                unsigned flags)
{
    sim_params_t sp;

    memset(h, 0, sizeof(*h));
    h->n = n;
    h->params = *params;
    h->kill_on_self = 1;
    h->node_size = node_size;
    h->starved = -1;
    h->vouch_live = (flags & H_VOUCH_LIVE) != 0;
    h->watch = -1;
    sim_params_default(&sp, n);
    sp.notify = SIM_NOTIFY_NONE;
    sp.seed = seed;
    assert_int_equal(sim_world_create(&sp, &h->w), UCFT_OK);
    h->dets = calloc((size_t)n, sizeof(*h->dets));
    h->ctx = calloc((size_t)n, sizeof(*h->ctx));
    h->first = calloc((size_t)n, sizeof(*h->first));
    h->last = calloc((size_t)n, sizeof(*h->last));
    h->learned = calloc((size_t)n, sizeof(*h->learned));
    h->self_declared = calloc((size_t)n, sizeof(*h->self_declared));
    h->false_rank = calloc((size_t)n, sizeof(*h->false_rank));
    h->why_at = calloc((size_t)n, sizeof(*h->why_at));
    assert_true(h->dets && h->ctx && h->first && h->last && h->learned &&
                h->self_declared && h->false_rank && h->why_at);
    for (int r = 0; r < n; r++) {
        h->ctx[r] = (rank_ctx_t){h, r};
        det_ops_t ops = {.failed_cb = h_failed_cb,
                         .self_cb = h_self_cb,
                         .learns_alone_cb = (flags & H_LEARNS_ALONE)
                                                ? h_learns_alone_cb
                                                : NULL,
                         .vouch_cb = node_size > 0 ? h_vouch_cb : NULL,
                         .cleared_cb = h_cleared_cb,
                         .arg = &h->ctx[r]};
        assert_int_equal(
            det_create(sim_world_tp(h->w, r), &h->params, &ops, &h->dets[r]),
            UCFT_OK);
    }
    for (int r = 0; r < n; r++)
        assert_int_equal(det_start(h->dets[r]), UCFT_OK);
}

static inline void h_destroy(harness_t *h)
{
    void *records[] = {h->dets,    h->ctx,           h->first,      h->last,
                       h->learned, h->self_declared, h->false_rank, h->why_at};

    sim_world_destroy(h->w); /* no callback runs after this */
    for (int r = 0; r < h->n; r++)
        det_destroy(h->dets[r]);
    for (size_t i = 0; i < sizeof(records) / sizeof(records[0]); i++)
        free(records[i]);
}

#endif
