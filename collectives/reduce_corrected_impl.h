/*
 * Internals of corrected reduce / allreduce shared by reduce_corrected.c
 * (sends, the step loop, entry points) and reduce_corrected_phase.c
 * (message handlers, attempts, the root's choice). Private.
 */
#ifndef UCFT_COLL_REDUCE_CORRECTED_IMPL_H
#define UCFT_COLL_REDUCE_CORRECTED_IMPL_H

#include "dtype.h"
#include "itree.h"
#include "reduce_corrected.h"

#include <string.h>

enum { RC_UP = 0, RC_TREE = 1, RC_DOWN = 2 };
enum { RC_B_SEND = 1, RC_B_UP = 2, RC_B_TREE = 4, RC_B_DOWN = 8 };
/* Header flags (first word of tree, allreduce up and down messages). */
enum {
    RC_F_TREEFAIL = 1, /* a tree child of this subtree failed */
    RC_F_OVERFLOW = 2, /* a tree entry did not fit: treat as failed */
    RC_F_DECIDED = 4,  /* allreduce: the value is a delivered result */
    RC_F_NONE = 8,     /* down: no value (error or parent lost) */
    RC_F_TRUNC = 16,   /* up-correction entries left out of the list */
};

/* Trace line of this instance and attempt (UCFT_LOG_LEVEL=trace). */
#define RC_TRACE(s, fmt, ...)                                                  \
    ucft_trace((s)->tp->log, "rc #%u a%d: " fmt, (unsigned)(s)->args->seq,     \
               (s)->attempt, __VA_ARGS__)

static inline int slot_root(const rc_state_t *s)
{
    return s->f + 1;
}

static inline int slot_parent(const rc_state_t *s)
{
    return s->f + 2;
}

/* Holes (args->frame): a tree child / listened member's state. */
enum { RC_CH_GOT = 1, RC_CH_DEAD = 2 };
enum { RC_L_OPEN = 1, RC_L_GOT = 2, RC_L_DEAD = 3 };
#define RC_M_HAS 0x80000000u /* mkf: the subtree's sum holds a value */

/* Virtual rank of `rank` in this attempt (the positions of s->map). */
static inline int vr(const rc_state_t *s, int rank)
{
    if (s->map == NULL)
        return (rank - s->root + s->n) % s->n;
    return (s->map->pos[rank] - s->map->pos[s->root] + s->n) % s->n;
}

/* The rank at virtual rank v, or -1: a hole (holes only). */
static inline int rk(const rc_state_t *s, int v)
{
    if (s->map == NULL)
        return (v + s->root) % s->n;
    return s->map->rank[(v + s->map->pos[s->root]) % s->n];
}

static inline int is_hole(const rc_state_t *s, int v)
{
    return s->holes && rk(s, v) < 0;
}

static inline int is_dead(const rc_state_t *s, int rank)
{
    for (unsigned i = 0; i < s->ndead; i++)
        if (s->dead[i] == rank)
            return 1;
    return 0;
}

/* reduce_corrected_holes.c: the I(f)-tree and groups around holes. */
int rc__hparent(const rc_state_t *s, int v);
/* Room for `need` tree children (kids, chst); 0, or -1 without memory. */
int rc__ch_room(rc_state_t *s, unsigned need);
int rc__hkids(rc_state_t *s);
int rc__hole_group(const rc_state_t *s, int g);
int rc__hroot_begin(rc_state_t *s);
void rc__hroot_up(rc_state_t *s, int src, uint32_t fl,
                  const unsigned char *val);
void rc__hroot_result(rc_state_t *s);
int rc__cand_rank(const rc_state_t *s, int i);
void rc__hfree(rc_state_t *s);

/* Tree parent of v > 0 in this operation's I(f)-tree (rerouted around
 * the holes), and my i-th tree child (i < nchild). */
static inline int tparent(const rc_state_t *s, int v)
{
    return s->holes ? rc__hparent(s, v) : itree_parent_in(v, s->f, s->flat);
}

static inline int tchild(const rc_state_t *s, unsigned i)
{
    return s->holes ? s->kids[i] : itree_child_in(s->v, i, s->n, s->f, s->flat);
}

/* Records that tree child i answered (RC_CH_GOT) or failed. */
static inline void ch_set(rc_state_t *s, unsigned i, uint8_t st)
{
    if (s->chst[i] == 0) {
        s->chst[i] = st;
        s->ch_open--;
    }
}

/* Vrank of up/down slot k. */
static inline int slot_vrank(const rc_state_t *s, int k)
{
    if (k == slot_root(s))
        return 0;
    if (k == slot_parent(s))
        return tparent(s, s->v);
    return itree_member(s->g, k, s->n, s->f);
}

static inline int child_index(const rc_state_t *s, int cv)
{
    for (unsigned i = 0; i < s->nchild; i++)
        if (tchild(s, i) == cv)
            return (int)i;
    return -1;
}

static inline unsigned kind_of(const rc_state_t *s, unsigned attempt, int what)
{
    return COLL_KIND_REDUCE_CORRECTED_FIRST + 3 * (s->kind_base + attempt) +
           (unsigned)what;
}

static inline uint64_t tag(const rc_state_t *s, int src, int what)
{
    return coll_tag(s->args, src, kind_of(s, (unsigned)s->attempt, what));
}

static inline uint32_t rd32(const unsigned char *p)
{
    uint32_t x;
    memcpy(&x, p, 4);
    return x;
}

static inline void wr32(unsigned char *p, uint32_t x)
{
    memcpy(p, &x, 4);
}

/* dst (flags *df) = dst op src (flags sf); a decided value wins. */
static inline void combine(const rc_state_t *s, uint32_t *df,
                           unsigned char *dst, uint32_t sf,
                           const unsigned char *src)
{
    if (*df & RC_F_DECIDED)
        return;
    if (sf & RC_F_DECIDED) {
        memcpy(dst, src, s->len);
        *df |= RC_F_DECIDED;
        return;
    }
    coll_combine(s->args, dst, src, s->count);
}

/* A listed rank is a tree entry of my subtree (a rank of it, which makes
 * the root reject the subtree) rather than an up-correction entry (a
 * member of my group in another subtree, or the root: information only,
 * answer_clean ignores it). */
static inline int list_is_tree(const rc_state_t *s, uint32_t rank)
{
    int e = vr(s, (int)rank);
    return e > 0 && s->v > 0 &&
           itree_subtree(e, s->f) == itree_subtree(s->v, s->f);
}

/* Appends `rank` to my subtree's list (section 4.4). The list has room for
 * cap = 2(f+1) entries; when it is full, what the root needs wins: a tree
 * entry takes the place of an up-correction entry, a tree entry that finds
 * none sets RC_F_OVERFLOW (the subtree has a failure: the root rejects it
 * either way), and an up-correction entry that finds no room is left out
 * (RC_F_TRUNC). Many failures spread over other subtrees (a whole node
 * under the interleave placement) thus never disqualify a clean subtree. */
static inline void list_add(rc_state_t *s, uint32_t rank)
{
    unsigned char *list = s->sbuf + s->hfix + s->len;
    int tree = list_is_tree(s, rank);

    if ((int)s->nlist < s->cap) {
        wr32(list + 4 * s->nlist++, rank);
        return;
    }
    for (uint32_t i = 0; tree && i < s->nlist; i++) {
        if (!list_is_tree(s, rd32(list + 4 * i))) {
            wr32(list + 4 * i, rank);
            s->acc_flags |= RC_F_TRUNC;
            return;
        }
    }
    s->acc_flags |= tree ? RC_F_OVERFLOW : RC_F_TRUNC;
}

/* Records that `rank` could not be received from (section 4.4). */
static inline void note_failure(rc_state_t *s, int rank, int in_tree)
{
    if (in_tree && s->cfg->scheme != RC_SCHEME_LIST)
        s->acc_flags |= RC_F_TREEFAIL;
    if (s->cfg->scheme == RC_SCHEME_COUNTBIT)
        s->fcount++;
    if (s->cfg->scheme == RC_SCHEME_LIST)
        list_add(s, (uint32_t)rank);
}

/* The rank's part ends now with `st` (the caller's done_cb). */
static inline void rc__finish_now(rc_state_t *s, ucft_status_t st)
{
    if (s->done)
        return;
    s->done = 1;
    s->status = st;
    RC_TRACE(s, "done: %s", ucft_status_string(st));
    if (!s->in_start && s->args->done_cb != NULL)
        s->args->done_cb(s->args->done_arg, s->tp->rank, st);
}

void rc__gate_start(rc_state_t *s, ucft_status_t st);

/* The rank's part is over with `st`. Under a majority gate
 * (coll_args_t.gate, allreduce) it first joins the gate (coll_gate.h):
 * with its result, handed over when the gate allows, or, after an error,
 * with nothing (the error ends its part now). A rank whose message sizes
 * did not match leaves at once. */
static inline void finish(rc_state_t *s, ucft_status_t st)
{
    if (s->done || s->gating)
        return;
    if (s->args->gate != NULL && s->cfg->allreduce && !s->cfg->barrier &&
        s->gate == NULL && !s->mismatch) {
        rc__gate_start(s, st);
        return;
    }
    rc__finish_now(s, st);
}

/* The value is known for this attempt (allreduce: the result). */
static inline void got_value(rc_state_t *s, const unsigned char *val)
{
    s->has_value = 1;
    if (val != s->dsend + 4 && s->len > 0)
        memcpy(s->dsend + 4, val, s->len);
    wr32(s->dsend, 0);
    if (!s->decided && val != s->buf && s->len > 0)
        memcpy(s->buf, s->dsend + 4, s->len); /* output, on success only */
    s->decided = 1;
}

/* reduce_corrected_phase.c */
/* A received message whose size no peer calling with this rank's
 * arguments sends (or a truncated one): logged, s->mismatch set, and
 * the rank's part ends with UCFT_ERR_TRUNCATED (reduce_corrected.c). */
void rc__mismatch(rc_state_t *s, const tp_req_t *req);
void rc__handle_up(rc_state_t *s);
void rc__handle_tree(rc_state_t *s);
void rc__handle_down(rc_state_t *s);
void rc__begin_attempt(rc_state_t *s, int i);
void rc__root_result(rc_state_t *s);

#endif
