/*
 * Internals of the corrected broadcast shared by bcast_corrected.c (tree,
 * correction schedule, entry points) and bcast_corrected_recv.c (receives).
 * Private.
 */
#ifndef UCFT_COLL_BCAST_CORRECTED_IMPL_H
#define UCFT_COLL_BCAST_CORRECTED_IMPL_H

#include "coll_op.h"
#include "rankset.h"

enum {
    BC_KIND_TREE = COLL_KIND_BCAST_CORRECTED_FIRST, /* 16 */
    BC_KIND_CORR_R = BC_KIND_TREE + 1,              /* 17 */
    BC_KIND_CORR_L = BC_KIND_TREE + 2,              /* 18 */
};
/* Kinds 16..19: low two bits of the kind are wildcards (19 is no kind:
 * bc_take drops it). */
#define BC_RECV_MASK (~(UCFT_TAG_SRC_MASK | (uint64_t)3))

enum { BC_TREE_BINOMIAL, BC_TREE_KARY, BC_TREE_LAME };
enum { BC_MODE_HEARD, BC_MODE_WINDOW };
enum { BC_R = 0, BC_L = 1 };

#define BC_MAX_F 8

/* Opportunistic: the root waits for a copy in one instance of this many
 * (bc__needless), which bounds how far it runs ahead of its receivers. */
#define BC_HOLD_EVERY 8
static inline int bc_hold(uint32_t seq)
{
    return seq % BC_HOLD_EVERY == 0;
}

/* Exact receives of a rank whose failure-free senders are known (h = 1):
 * the tree message from the parent and the corrections of its two ring
 * neighbours at offset 1. */
enum { BC_X_TREE, BC_X_LEFT, BC_X_RIGHT, BC_NX };

typedef struct bc_cfg {
    uint8_t tree;
    uint8_t k; /* k-ary arity or Lamé order */
    uint8_t mode;
    uint8_t h_is_f1;    /* HEARD: h = f + 1 (else h = 1) */
    uint8_t takes_tree; /* binomial: runs on coll_args_t.tree when given */
} bc_cfg_t;

typedef struct bcast_corrected {
    tp_t *tp;
    const coll_args_t *args;
    const bc_cfg_t *cfg;
    unsigned char *buf;
    tp_req_t rreq;        /* the receive from any source (wild) */
    tp_req_t xreq[BC_NX]; /* exact receives (BC_X_*), posted at start */
    tp_req_t sreq;
    int n;
    int vrank;
    int lame_m;             /* Lamé block of vrank */
    coll_rankset_t dead;    /* vranks known dead */
    int next[2];            /* next correction offset per side */
    int heard_max[2];       /* farthest sender heard per side */
    uint64_t heard_bits[2]; /* offsets 1..64 heard per side */
    uint16_t heard[2];      /* distinct senders heard per side */
    uint16_t nchild;        /* tree children handled */
    uint8_t dead_overflow;  /* a failure could not be remembered */
    uint8_t h;              /* HEARD threshold (unconditional per side) */
    uint8_t w[2];           /* offsets sent per side at most (WINDOW) */
    uint8_t tol;            /* failures tolerated at any time */
    uint8_t has_data;
    uint8_t sender; /* got the tree message (or is the root) */
    uint8_t side_done[2];
    uint8_t turn;
    uint8_t started;
    uint8_t recv_pending; /* rreq */
    uint8_t xpending;     /* bit i: xreq[i] */
    uint8_t xshrink;      /* bit i: xreq[i] cancelled, to be reposted empty */
    uint8_t rshrink;      /* rreq cancelled, to be reposted empty */
    uint8_t lazy;         /* copies are rendezvous sends (args->rndv_min) */
    uint8_t wild;         /* rreq is kept posted */
    uint8_t send_pending;
    uint8_t ready_told; /* args->ready_cb has run */
    uint8_t cleaned;
    uint8_t in_step;
    uint8_t mismatch;   /* a payload of another size came (bc_take) */
    uint8_t given_tree; /* the tree is args->tree (cfg->takes_tree) */
    ucft_status_t status;
} bcast_corrected_t;

/* Both broadcasts (bcast_corrected.c, bcast_batched.c) learn of the
 * failure of `rank`: its vrank goes to `dead`; 0 when it was known (or is
 * no rank), 1 when it is news. Without memory to remember it the rank
 * says so and sets *overflow: it then expects nothing of anybody. */
static inline int bc_note_dead(tp_t *tp, const coll_args_t *a, int n, int rank,
                               coll_rankset_t *dead, uint8_t *overflow)
{
    if (rank < 0 || rank >= n)
        return 0;
    int v = coll_vrank_of(a, rank, a->root, n);
    if (coll_rankset_has(dead, v))
        return 0;
    if (coll_rankset_add(dead, v) != 0) {
        ucft_error(tp->log,
                   "bcast: no memory to record the failure of rank %d: "
                   "expecting nothing of anybody",
                   rank);
        *overflow = 1;
    }
    return 1;
}

/* The rank has the data: tell the driver (args->ready_cb) once. */
static inline void bc__ready(bcast_corrected_t *s)
{
    if (!s->ready_told && s->args->ready_cb != NULL &&
        s->status == UCFT_INPROGRESS) {
        s->ready_told = 1;
        s->args->ready_cb(s->args->done_arg, s->tp->rank, UCFT_OK);
    }
}

/* bcast_corrected.c */
ucft_status_t bc__step(bcast_corrected_t *s, int in_cb);
void bc__finish(bcast_corrected_t *s, ucft_status_t status, int in_cb);
int bc__parent(const bcast_corrected_t *s, int v);
int bc__ring(const bcast_corrected_t *s, int side, int off);
int bc__needless(const bcast_corrected_t *s, int v);

/* bcast_corrected_recv.c */
/* Posts the receives of a starting rank; UCFT_OK or the error that ends
 * it. */
ucft_status_t bc__recv_start(bcast_corrected_t *s);
/* A failure is known: from now on receive from any source too (a
 * correction may then come from beyond offset 1). UCFT_OK or an error. */
ucft_status_t bc__recv_any(bcast_corrected_t *s);
void bc__recv_cancel(bcast_corrected_t *s);
int bc__recv_idle(const bcast_corrected_t *s);

#endif
