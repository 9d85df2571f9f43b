/*
 * Private structures of the simulated transport, shared by sim_world.c (the
 * world, event loop, injection) and sim_tp.c (the tp operations).
 *
 * Memory per rank is what a million ranks can afford: a sim_rank_t (the tp
 * embedded, two port clocks, four queue pointers, one pointer to lazily
 * allocated extras) is about 100 bytes. Messages, posted receives and
 * events come from pools or one array; nothing is allocated per rank unless
 * that rank uses timers or declares a peer failed.
 */
#ifndef UCFT_TRANSPORT_SIM_PRIV_H
#define UCFT_TRANSPORT_SIM_PRIV_H

#include "transport/sim/sim.h"

#include <stddef.h>
#include <stdint.h>

/* Payloads up to this size live inside the message block. */
#define SIM_MSG_INLINE 32

typedef struct sim_msg {
    struct sim_msg *next; /* unexpected queue */
    uint64_t tag;
    uint64_t start; /* send start time ts */
    size_t len;
    uint32_t src;
    uint32_t dst;
    tp_req_t *sreq; /* a rendezvous send's request (params.rndv_min), or
                       NULL: completes when this message is matched */
    char *data;     /* inl or a heap copy */
    char inl[SIM_MSG_INLINE];
} sim_msg_t;

typedef struct sim_recv {
    struct sim_recv *next, *prev;
    uint64_t tag;
    uint64_t mask;
    void *buf;
    size_t len;
    tp_req_t *req;
} sim_recv_t;

/* A rendezvous send waiting for its receiver (params.rndv_min). */
typedef struct sim_rndv {
    tp_req_t *req;
    uint32_t dst;
} sim_rndv_t;

/* Allocated on first use of timers, peer_failed or a rendezvous send. */
typedef struct sim_rank_ext {
    ucft_timerq_t timers;
    int *failed; /* peers this rank declared failed, sorted */
    size_t nfailed;
    size_t failed_cap;
    sim_rndv_t *rndv; /* rendezvous sends not yet matched */
    size_t nrndv;
    size_t rndv_cap;
} sim_rank_ext_t;

enum {
    SIM_RANK_DEAD = 1u << 0,
    SIM_RANK_SEND_RULES = 1u << 1, /* kill_before_send rules exist */
};

typedef struct sim_rank {
    tp_t tp; /* first: (sim_rank_t *)tp */
    uint64_t send_free;
    uint64_t recv_free;
    sim_recv_t *posted_head, *posted_tail;
    sim_msg_t *unexp_head, *unexp_tail;
    sim_rank_ext_t *ext;
    uint32_t flags;
    /* This rank's messages not yet arrived at their receiver plus its
     * send completions not yet handled: what flush waits for (T9). */
    uint32_t inflight;
} sim_rank_t;

typedef enum sim_ev_type {
    SIM_EV_SEND_DONE = 1, /* ptr = req, rank = src, aux = dst */
    SIM_EV_ARRIVE,        /* ptr = msg: at ta + o, receive port check */
    SIM_EV_DELIVER,       /* ptr = msg: after waiting for the port */
    SIM_EV_RECV_DONE,     /* ptr = req, rank = receiver */
    SIM_EV_TIMER,         /* rank */
    SIM_EV_KILL,          /* rank */
    SIM_EV_NOTIFY,        /* aux = dead rank */
    SIM_EV_NOTIFY_ONE,    /* rank = the one told, aux = dead rank */
} sim_ev_type_t;

typedef struct sim_event {
    uint64_t time;
    uint64_t key; /* insertion number << 4 | type: ties in insertion order */
    void *ptr;
    uint32_t rank;
    uint32_t aux;
} sim_event_t;

/* Fixed-size block pool: blocks come from 64 KiB slabs, freed blocks go to
 * a free list; all memory is released with the pool. */
typedef struct sim_pool {
    size_t elem;
    void *free;
    void **slabs;
    size_t nslabs, slab_cap;
} sim_pool_t;

typedef struct sim_rule {
    uint32_t rank;
    uint32_t k;     /* 0 for kill_before_op */
    uint32_t count; /* matching sends seen */
    int is_op;
    int lose;     /* a loss rule: rank = sender, dst, k = messages to lose */
    uint32_t dst; /* loss rules: the receiver, SIM_ANY_RANK for any */
    uint64_t match, mask;
} sim_rule_t;

typedef struct sim_death {
    uint32_t rank;
    uint64_t time;
} sim_death_t;

/* The ranks array sits behind a header naming the world, so that a tp finds
 * its world without a pointer per rank. */
typedef struct sim_rank_block {
    sim_world_t *world;
    uint64_t pad;
    sim_rank_t ranks[];
} sim_rank_block_t;

struct sim_world {
    sim_params_t params;
    /* The rank whose timers are being fired, or -1: a rank killed from one
     * of its own timer callbacks is released only after the firing loop,
     * which still walks that rank's timer heap. */
    int64_t in_timers;
    sim_rank_block_t *block;
    sim_rank_t *ranks; /* block->ranks */
    uint64_t now;
    sim_event_t *heap;
    size_t nev, ev_cap;
    uint64_t seq;
    uint64_t hash;
    sim_stats_t st;
    sim_pool_t msg_pool;
    sim_pool_t recv_pool;
    sim_rule_t *rules;
    size_t nrules, rules_cap;
    size_t nlose;        /* loss rules among them (a quick test on arrival) */
    sim_death_t *deaths; /* in death order */
    size_t ndeaths, deaths_cap;
    uint64_t rng;
    int running;
};

static inline sim_rank_t *sim_rank_of(tp_t *tp)
{
    return (sim_rank_t *)tp;
}

extern const tp_ops_t sim_tp_ops;

/* sim_world.c */
/* Makes room for `more` events so that the next pushes cannot fail. */
ucft_status_t sim__reserve(sim_world_t *w, size_t more);
ucft_status_t sim__push(sim_world_t *w, uint64_t time, sim_ev_type_t type,
                        uint32_t rank, uint32_t aux, void *ptr);
sim_world_t *sim__world_of(tp_t *tp);
void sim__kill_now(sim_world_t *w, int rank);
void *sim__pool_get(sim_pool_t *p);
void sim__pool_put(sim_pool_t *p, void *block);
void sim__msg_free(sim_world_t *w, sim_msg_t *m);
/* Room for element n of the array *arr of *cap elements of `size` bytes
 * (capacity doubled, first `first` elements). 0, or -1 without memory
 * (the array unchanged). */
int sim__grow(void **arr, size_t *cap, size_t n, size_t size, size_t first);
/* Applies kill_before_send rules to a send of `tag` by `rank`: 1 if the
 * rank dies now. */
int sim__send_rules(sim_world_t *w, int rank, uint64_t tag);

/* sim_tp.c */
/* Hands an arrived message to its receiver: matching or unexpected queue. */
void sim__deliver(sim_world_t *w, sim_msg_t *m);
/* Frees everything a rank holds (queues, timers, failed set). With
 * `disarm`, its timers are marked disarmed (at a death; not at world
 * destruction, when the owners' memory may be gone). */
void sim__rank_release(sim_world_t *w, sim_rank_t *r, int disarm);
int sim__rank_declared_failed(const sim_rank_t *r, int peer);
uint64_t sim__bytes_ns(const sim_loggp_t *p, size_t len);

#endif
