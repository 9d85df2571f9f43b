/*
 * Corrected reduce and allreduce (papers/corrected-reduce-allreduce.txt,
 * sections 4 and 5): one parameterized state machine shared by every
 * registered entry (reduce, allreduce and barrier, each with the three
 * failure-information schemes). Private to collectives/.
 */
#ifndef UCFT_COLL_REDUCE_CORRECTED_H
#define UCFT_COLL_REDUCE_CORRECTED_H

#include "coll_op.h"

#include <stdint.h>

/* Failure information sent with each tree message (section 4.4). */
enum rc_scheme {
    RC_SCHEME_LIST,     /* the ranks a subtree could not receive from */
    RC_SCHEME_COUNTBIT, /* the length of that list + "failure in tree" */
    RC_SCHEME_BIT,      /* only "failure in tree" */
};

typedef struct rc_config {
    uint8_t scheme;    /* enum rc_scheme */
    uint8_t allreduce; /* 1: reduce to a candidate root, then broadcast */
    uint8_t barrier;   /* 1: no data at all (len and count ignored) */
} rc_config_t;

/* Largest f: attempt i of an allreduce uses kinds FIRST + 3i .. + 3i + 2,
 * and f + 1 attempts must fit in the corrected-reduce kind range. */
#define RC_MAX_F 15
/* f when args->f is 0 (the communicator default, DESIGN.md §5). */
#define RC_DEFAULT_F 1
/* Scratch kept inside the state: enough for an 8-byte allreduce with the
 * list scheme at f = 1 (112 bytes), so that small operations allocate
 * nothing; larger ones allocate their scratch at init. */
#define RC_INLINE_SCRATCH 128
/* Tree children whose state is kept inside the state (more: allocated). */
#define RC_INLINE_CHILDREN 32

typedef struct rc_state {
    tp_t *tp;
    const coll_args_t *args;
    const rc_config_t *cfg;
    unsigned char *buf; /* input; output at the root / every rank */
    unsigned char *mem; /* scratch: `inline_mem`, or allocated at init */
    unsigned char *sbuf, *rbuf, *ubuf, *usend, *dbuf, *dsend;
    size_t len, count, hfix, ufix, tmax;
    tp_req_t sreq, ureq, rreq, dreq;
    int *dead; /* ranks known to have failed (grown on failure only) */
    unsigned ndead, capdead;
    int n, f, cap, ncand;
    int attempt, root, v, g; /* current attempt: root (job rank), my vrank,
                                my group (the root: the short group) */
    unsigned nchild;
    /* Bit sets: up/down slots 0..f = the member of my group in subtree k,
     * f+1 = the root (short group), f+2 = my tree parent (down only). */
    uint32_t up_need, up_got, up_dead;
    uint32_t dn_need, dn_got, dn_dead;
    /* Tree children, by child index: chst[i] 0 = awaited, RC_CH_GOT,
     * RC_CH_DEAD; ch_open of them awaited. */
    uint8_t *chst;
    unsigned ch_open;
    uint32_t up_todo, dn_todo; /* sends still to post */
    unsigned dn_child_next;
    unsigned dn_nchild; /* down: the tree children, or n - 1 (star) */
    uint32_t acc_flags, fcount, nlist; /* my subtree's failure info */
    int sel;                           /* root: selected subtree, or -1 */
    ucft_status_t status;
    uint8_t busy; /* RC_B_* requests in flight */
    uint8_t tree_state, has_value, err_final, decided, restart, over;
    uint8_t done, cleaned, in_start;
    uint8_t pair;     /* allreduce of two ranks: the up exchange alone */
    uint8_t star;     /* allreduce: the root sends the result to all */
    uint8_t flat;     /* flat subtrees (itree_parent_in) */
    uint8_t mismatch; /* a message of another size came: ends the rank */
    /* args->frame (UCFT_TREE_REPAIR=reroute|lookup): positions, vranks and
     * n are the original ones, a vrank held by no rank (rk < 0) is a hole,
     * and the structures are rerouted around the holes
     * (reduce_corrected_holes.c). `map`: the frame or args->map. */
    uint8_t holes;
    const coll_map_t *map;
    int nlive; /* holes: positions held by a rank */
    int *kids; /* holes: my tree children's vranks (nchild) */
    int empty; /* holes, root: a subtree with no live member, or -1 */
    /* holes, root: per vrank, RC_L_* (the members of groups with a hole,
     * who send their values to the root), lst_open of them awaited, and
     * the next one a down message goes to. */
    uint8_t *lst;
    unsigned lst_open;
    int lst_next;
    /* holes, root: per subtree k, the values of the groups without a live
     * member in k (mk + k * len) and their flags (RC_F_DECIDED, RC_M_HAS). */
    unsigned char *mk;
    uint32_t mkf[RC_MAX_F + 1];
    unsigned kidcap, lstcap; /* allocated entries of kids/chst, lst */
    /* Attempts use kinds from attempt kind_base + i (0: the whole range;
     * a composite that runs two instances under one sequence number gives
     * them disjoint halves; set after rc_init). */
    uint8_t kind_base;
    /* The majority gate (args->gate; coll_gate.h): its state once joined
     * (NULL before, and again once it freed itself), and in a gate's own
     * instance, the gate. */
    uint8_t gating; /* the gate runs: the result waits for it */
    struct coll_gate_run *gate, *gate_self;
    /* Last: init clears the state only up to here. */
    uint8_t ch_inline[RC_INLINE_CHILDREN];
    _Alignas(16) unsigned char inline_mem[RC_INLINE_SCRATCH];
} rc_state_t;

ucft_status_t rc_init(void *state, tp_t *tp, const coll_args_t *args, void *buf,
                      const rc_config_t *cfg);
ucft_status_t rc_start(void *state);
ucft_status_t rc_test(const void *state);
void rc_cleanup(void *state);
void rc_destroy(void *state);
void rc_on_failure(void *state, int rank);
int rc_idle(const void *state);
unsigned rc_stale_kinds(const void *state, unsigned *kinds, unsigned max);

#endif
