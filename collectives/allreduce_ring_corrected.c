/*
 * Corrected allreduce at bandwidth ("corrected-ring"): the ring allreduce
 * (ring_bw.c, 2 (n - 1) / n of the vector sent per rank), then an
 * agreement on whether it worked everywhere, then, only if it did not,
 * the corrected allreduce of the inputs (reduce_corrected.c).
 *
 *   1. ring    every rank runs the fault-aware ring allreduce on its
 *              vector (keeping a copy of its input). It ends at every
 *              live rank, with the full reduction or with an error
 *              (baseline.h: never a hang).
 *   2. flag    a corrected allreduce (min) of one byte: 1 if this rank's
 *              ring succeeded, 0 if not.
 *   3. result  flag 1: the ring's result. flag 0: every survivor restores
 *              its input and runs the corrected allreduce of the inputs.
 *
 * Why every survivor ends with the same value, and the one the corrected
 * allreduce defines (the paper's section 5.1: the reduction over every
 * live rank's input and over a set D of failed ones, each included
 * entirely once or not at all), with at most f failures in all: the flag
 * allreduce is corrected, so every survivor completes it with the same
 * flag, and that flag includes every survivor's byte. Flag 1 therefore
 * means that every survivor's ring succeeded, and a ring that succeeds
 * holds the reduction over all n inputs, each once (D = every failed
 * rank), the same bits at every rank (each block is combined once and
 * copied: ring_bw.c). Flag 0 sends every survivor to the corrected
 * allreduce, which gives its own guarantee. Nobody waits for ever: the
 * ring ends everywhere whatever fails, the corrected parts end with at
 * most f failures (more: an error, never a hang), and no phase waits for
 * a later one Beyond f the flag allreduce may end with an error at
 * some ranks and with 0 at others, which then run the fallback: a rank
 * that ends with the error joins the fallback all the same (the state is
 * kept after done), or they would wait for it for ever (found by
 * ucft-campaign).
 *
 * Reduce-scatter ("corrected-ring" too): the ring reduce-scatter, and
 * as fallback the corrected reduce-scatter (the corrected allreduce of
 * the kept inputs): flag 1 means every survivor's own block holds all n
 * inputs.
 *
 * Allgather ("corrected-ring" too): the same with the ring allgather,
 * and as fallback the corrected allgather's encoding (gather_corrected.c:
 * the own block, zeros, the own presence byte, combined with bitwise or),
 * so its semantics: every survivor the same blocks and presence bytes,
 * a failed rank's block whole or absent; flag 1 means every block is
 * present. The input copy is then the own block only.
 *
 * Broadcast ("corrected-ring" too): the scatter-ring broadcast (a
 * binomial scatter and a ring allgather, ring_bw.c), and as fallback a
 * broadcast written as an allreduce: the corrected allreduce (bitwise or
 * of bytes) of len + 1 bytes, the root's data and a presence byte 1 at
 * the root, zeros everywhere else. Its semantics: the root's bytes are
 * included whole or not at all, the same at every survivor; a survivor
 * whose result has the presence byte 0 (the root failed and its bytes
 * were left out) ends with UCFT_ERR_PROC_FAILED, and so does every other
 * survivor. So: every survivor holds the root's data, or every survivor
 * ends with UCFT_ERR_PROC_FAILED, and the latter only when the root
 * failed (with at most f failures). Stronger than the corrected
 * broadcast (bcast_corrected.c), where a failed root may leave some
 * survivors with the data and some with the error. Buffer (buf_mult 3):
 * the vector, its presence byte during the fallback, the root's copy.
 *
 * Failure-free, the traffic per rank is the ring's plus a one-byte
 * corrected allreduce: within a small constant of the bandwidth-optimal
 * one, where the corrected allreduce alone moves several whole copies.
 * A failure costs the ring and then a corrected allreduce.
 *
 * The two corrected instances share the operation's sequence number, so
 * they take disjoint kind ranges (rc_state_t.kind_base: attempts 0..7 and
 * 8..15; hence f <= 7). Failures are remembered and replayed to a phase
 * that starts later. Buffer (buf_mult 3): the vector (the result), the
 * ring's receive slots, the input copy (allgather, buf_mult 2: the
 * blocks and presence bytes, then the own block's copy). The fallback's
 * scratch is
 * allocated only when it runs.
 */
#include "reduce_corrected.h"
#include "ring_bw.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CR_MAX_F     7
#define CR_FB_BASE   8 /* the fallback's first attempt number */
#define CR_RING_DONE 1
#define CR_FLAG_RUN  2
#define CR_FB_RUN    4

typedef struct cr_state {
    tp_t *tp;
    const coll_args_t *args;
    unsigned char *buf, *copy;
    size_t len;
    int *dead; /* failures so far (replayed to a phase that starts) */
    unsigned ndead, capdead;
    ucft_status_t status; /* INPROGRESS until done */
    uint8_t phases;       /* CR_* bits */
    uint8_t flag;         /* the flag allreduce's byte */
    uint8_t in_start, cleaned;
    /* The input copy's place in the buffer; `copy` points elsewhere (the
     * caller's input, coll_args_t.input) while that input is lent. */
    unsigned char *spare;
    uint8_t mode; /* RB_ALLREDUCE, _REDUCE_SCATTER, _ALLGATHER, _BCAST */
    uint8_t pres; /* broadcast of 0 bytes: the fallback's vector */
    size_t own_off, own_len; /* allgather: this rank's block */
    coll_args_t ra, fa, ca;  /* ring, flag, fallback */
    ring_op_t ring;
    rc_state_t flagrc, fbrc;
} cr_state_t;

static const rc_config_t cr_cfg = {RC_SCHEME_LIST, 1, 0};

static void finish(cr_state_t *s, ucft_status_t st)
{
    if (s->status != UCFT_INPROGRESS)
        return;
    s->status = st;
    if (!s->in_start && s->args->done_cb != NULL)
        s->args->done_cb(s->args->done_arg, s->tp->rank, st);
}

static void replay(cr_state_t *s, rc_state_t *rc)
{
    for (unsigned i = 0; i < s->ndead; i++)
        rc_on_failure(rc, s->dead[i]);
}

/* Starts a corrected phase; UCFT_INPROGRESS (its done_cb reports the
 * outcome, also one that the replayed failures bring at once), or its
 * outcome when it ended inside its start. */
static ucft_status_t start_rc(cr_state_t *s, rc_state_t *rc, coll_args_t *a,
                              void *buf, unsigned base, uint8_t bit)
{
    ucft_status_t st = rc_init(rc, s->tp, a, buf, &cr_cfg);
    if (st != UCFT_OK)
        return st;
    rc->kind_base = (uint8_t)base;
    s->phases |= bit;
    st = rc_start(rc);
    if (st == UCFT_INPROGRESS)
        replay(s, rc);
    return st;
}

static void fb_done(void *arg, int rank, ucft_status_t st)
{
    cr_state_t *s = arg;
    (void)rank;
    /* Broadcast: the root's bytes left out everywhere (it failed). */
    if (st == UCFT_OK && s->mode == RB_BCAST &&
        (s->len > 0 ? s->buf[s->len] : s->pres) == 0)
        st = UCFT_ERR_PROC_FAILED;
    finish(s, st);
}

/* A lent input (coll_args_t.input) is the caller's only until done_cb:
 * copied before a finish after which the fallback still reads it. */
static void keep_input(cr_state_t *s)
{
    if (s->copy == s->spare)
        return;
    size_t n = s->mode == RB_ALLGATHER ? s->own_len : s->len;
    if (n > 0)
        memcpy(s->spare, s->copy, n);
    s->copy = s->spare;
}

/* The agreement is in: the ring's result, or the fallback. */
static void flag_over(cr_state_t *s, ucft_status_t st)
{
    if (st != UCFT_OK) {
        keep_input(s);
        /* More than f failures: this rank ends with the error. Another
         * may have completed the flag with 0 and run the fallback, which
         * would wait for this live rank for ever: it joins the fallback
         * with its input all the same (the state is kept after done), and
         * the fallback's outcome changes nothing here. */
        finish(s, st);
    } else if (s->flag == 1) {
        finish(s, UCFT_OK);
        return;
    }
    if (s->cleaned)
        return;
    void *fbuf = s->buf;
    if (s->mode == RB_BCAST) {
        /* The root's data and presence byte, zeros elsewhere. */
        int root = s->tp->rank == s->args->root;
        if (s->len > 0) {
            if (root)
                memcpy(s->buf, s->copy, s->len);
            else
                memset(s->buf, 0, s->len);
            s->buf[s->len] = (uint8_t)root;
        } else {
            s->pres = (uint8_t)root;
            fbuf = &s->pres;
        }
    } else if (s->mode == RB_ALLGATHER) {
        /* The corrected allgather's encoding (gather_corrected.c). */
        size_t vbytes = s->len - (size_t)s->tp->size;
        memset(s->buf, 0, s->len);
        if (s->own_len > 0)
            memcpy(s->buf + s->own_off, s->copy, s->own_len);
        s->buf[vbytes + (size_t)s->tp->rank] = 1;
    } else if (s->len > 0) {
        memcpy(s->buf, s->copy, s->len);
    }
    st = start_rc(s, &s->fbrc, &s->ca, fbuf, CR_FB_BASE, CR_FB_RUN);
    if (st != UCFT_INPROGRESS)
        finish(s, st);
}

static void flag_done(void *arg, int rank, ucft_status_t st)
{
    (void)rank;
    flag_over(arg, st);
}

static void ring_over(cr_state_t *s, ucft_status_t st)
{
    s->phases |= CR_RING_DONE;
    s->flag = st == UCFT_OK;
    st = start_rc(s, &s->flagrc, &s->fa, &s->flag, 0, CR_FLAG_RUN);
    if (st != UCFT_INPROGRESS)
        flag_over(s, st);
}

static void ring_done(void *arg, int rank, ucft_status_t st)
{
    (void)rank;
    ring_over(arg, st);
}

static ucft_status_t cr_init_mode(void *state, tp_t *tp, const coll_args_t *a,
                                  void *buf, int mode)
{
    cr_state_t *s = state;
    int f = a->f > 0 ? a->f : RC_DEFAULT_F;
    size_t n = (size_t)tp->size;

    if (f > CR_MAX_F || (mode == RB_ALLGATHER && (a->len < n || !buf)))
        return UCFT_ERR_INVALID_PARAM;
    memset(s, 0, offsetof(cr_state_t, ring));
    s->tp = tp;
    s->args = a;
    s->len = a->len;
    s->buf = buf;
    s->mode = (uint8_t)mode;
    s->copy = a->len ? (unsigned char *)buf + 2 * a->len : NULL;
    if (mode == RB_ALLGATHER) {
        s->own_len = (a->len - n) / n;
        s->own_off = (size_t)tp->rank * s->own_len;
        s->copy = (unsigned char *)buf + a->len;
    }
    /* A blocking call's input, unchanged until this rank's done_cb
     * (coll_args_t.input): the fallback, which only starts before it,
     * reads it there, and no copy is taken. Not for the reduce-scatter
     * (its driver may pack the input). */
    s->spare = s->copy;
    if (a->input != NULL && mode != RB_REDUCE_SCATTER)
        s->copy = (unsigned char *)(uintptr_t)a->input;
    s->status = UCFT_INPROGRESS;
    s->ra = *a;
    s->ra.done_cb = ring_done;
    s->ra.done_arg = s;
    s->ra.ready_cb = NULL;
    s->ra.remote_wait = NULL;
    s->ra.comm_state = NULL;
    s->fa = s->ra;
    s->fa.done_cb = flag_done;
    s->fa.len = s->fa.count = 1;
    s->fa.dtype = COLL_DTYPE_UINT8;
    s->fa.redop = COLL_REDOP_MIN;
    s->fa.user_op = NULL;
    s->fa.rndv_min = 0;
    s->ca = s->ra;
    s->ca.done_cb = fb_done;
    if (mode == RB_ALLGATHER || mode == RB_BCAST) {
        s->ca.dtype = COLL_DTYPE_UINT8;
        s->ca.redop = COLL_REDOP_BOR;
        s->ca.user_op = NULL;
        s->ca.count = a->len;
    }
    if (mode == RB_BCAST) /* the presence byte after the data */
        s->ca.len = s->ca.count = a->len + 1;
    ucft_status_t st = rb_init(&s->ring, tp, &s->ra, buf, mode);
    if (st != UCFT_OK || s->copy != s->spare) /* failed, or lent */
        return st;
    if (mode == RB_ALLGATHER && s->own_len > 0)
        memcpy(s->copy, s->buf + s->own_off, s->own_len);
    else if (mode == RB_BCAST) {
        if (tp->rank == a->root && a->len > 0) /* only the root's counts */
            memcpy(s->copy, buf, a->len);
    } else if (a->len > 0)
        memcpy(s->copy, buf, a->len);
    return st;
}

static ucft_status_t cr_init(void *state, tp_t *tp, const coll_args_t *a,
                             void *buf)
{
    return cr_init_mode(state, tp, a, buf, RB_ALLREDUCE);
}

static ucft_status_t cr_rs_init(void *state, tp_t *tp, const coll_args_t *a,
                                void *buf)
{
    return cr_init_mode(state, tp, a, buf, RB_REDUCE_SCATTER);
}

static ucft_status_t cr_ag_init(void *state, tp_t *tp, const coll_args_t *a,
                                void *buf)
{
    return cr_init_mode(state, tp, a, buf, RB_ALLGATHER);
}

static ucft_status_t cr_bc_init(void *state, tp_t *tp, const coll_args_t *a,
                                void *buf)
{
    if (a->root < 0 || a->root >= tp->size)
        return UCFT_ERR_INVALID_PARAM;
    return cr_init_mode(state, tp, a, buf, RB_BCAST);
}

static ucft_status_t cr_start(void *state)
{
    cr_state_t *s = state;

    s->in_start = 1;
    ucft_status_t st = rb_start(&s->ring);
    if (st != UCFT_INPROGRESS)
        ring_over(s, st);
    s->in_start = 0;
    return s->status;
}

static ucft_status_t cr_test(const void *state)
{
    return ((const cr_state_t *)state)->status;
}

static void cr_on_failure(void *state, int rank)
{
    cr_state_t *s = state;

    if (s->cleaned)
        return;
    if (s->ndead == s->capdead) {
        unsigned cap = s->capdead ? 2 * s->capdead : 4;
        int *d = realloc(s->dead, cap * sizeof(*d));
        if (d == NULL) {
            finish(s, UCFT_ERR_NO_MEMORY);
            return;
        }
        s->dead = d;
        s->capdead = cap;
    }
    s->dead[s->ndead++] = rank;
    /* A phase started by these calls replays the list (rc_on_failure
     * ignores a rank it knows). */
    if (!(s->phases & CR_RING_DONE))
        rb_on_failure(&s->ring, rank);
    if (s->phases & CR_FLAG_RUN)
        rc_on_failure(&s->flagrc, rank);
    if (s->phases & CR_FB_RUN)
        rc_on_failure(&s->fbrc, rank);
}

static void cr_cleanup(void *state)
{
    cr_state_t *s = state;

    s->cleaned = 1;
    rb_cleanup(&s->ring);
    if (s->phases & CR_FLAG_RUN)
        rc_cleanup(&s->flagrc);
    if (s->phases & CR_FB_RUN)
        rc_cleanup(&s->fbrc);
    free(s->dead);
    s->dead = NULL;
    s->ndead = s->capdead = 0;
}

static void cr_destroy(void *state)
{
    cr_state_t *s = state;

    if (s->phases & CR_FLAG_RUN)
        rc_destroy(&s->flagrc);
    if (s->phases & CR_FB_RUN)
        rc_destroy(&s->fbrc);
    free(s->dead);
    s->dead = NULL;
}

static int cr_idle(const void *state)
{
    const cr_state_t *s = state;
    return rb_idle(&s->ring) &&
           (!(s->phases & CR_FLAG_RUN) || rc_idle(&s->flagrc)) &&
           (!(s->phases & CR_FB_RUN) || rc_idle(&s->fbrc));
}

/* The ring's kinds once its part is over here (a failed neighbour's
 * messages may still come), and what the corrected phases name. */
static unsigned cr_stale_kinds(const void *state, unsigned *kinds, unsigned max)
{
    const cr_state_t *s = state;
    unsigned n = 0;

    for (unsigned k = COLL_KIND_RING_BW;
         (s->phases & CR_RING_DONE) && k <= COLL_KIND_RING_BW_LAST && n < max;
         k++)
        kinds[n++] = k;
    if (s->phases & CR_FLAG_RUN)
        n += rc_stale_kinds(&s->flagrc, kinds + n, max - n);
    if ((s->phases & CR_FB_RUN) && n < max)
        n += rc_stale_kinds(&s->fbrc, kinds + n, max - n);
    return n;
}

#define CR_OPS(var, opname, doc_, mult, init_, cons)                           \
    const coll_op_ops_t var = {                                                \
        .op = opname,                                                          \
        .alg = "corrected-ring",                                               \
        .doc = doc_,                                                           \
        .state_size = sizeof(cr_state_t),                                      \
        .buf_mult = mult,                                                      \
        .init = init_,                                                         \
        .start = cr_start,                                                     \
        .test = cr_test,                                                       \
        .cleanup = cr_cleanup,                                                 \
        .destroy = cr_destroy,                                                 \
        .on_failure = cr_on_failure,                                           \
        .idle = cr_idle,                                                       \
        .stale_kinds = cr_stale_kinds,                                         \
        .consistent = cons,                                                    \
        .keep_after_done = 1,                                                  \
    };

CR_OPS(coll_allreduce_corrected_ring_ops, "allreduce",
       "ring allreduce, a corrected one-byte agreement that it worked "
       "everywhere, else the corrected allreduce: corrected semantics at "
       "the ring's traffic when nothing fails (f <= 7)",
       3, cr_init, 1)
CR_OPS(coll_bcast_corrected_ring_ops, "bcast",
       "scatter-ring broadcast, a corrected one-byte agreement that it "
       "worked everywhere, else a corrected allreduce (or) of the root's "
       "data and a presence byte: the data at every survivor, or "
       "UCFT_ERR_PROC_FAILED at every survivor when the root failed, at "
       "the scatter-ring's traffic when nothing fails (f <= 7)",
       3, cr_bc_init, 1)
CR_OPS(coll_allgather_corrected_ring_ops, "allgather",
       "ring allgather, a corrected one-byte agreement that it worked "
       "everywhere, else the corrected allgather: its semantics at the "
       "ring's traffic when nothing fails (f <= 7)",
       2, cr_ag_init, 1)
/* Reduce-scatter: the ring leaves only the own block final (the others
 * differ from rank to rank), so no whole-buffer comparison. */
CR_OPS(coll_reduce_scatter_corrected_ring_ops, "reduce_scatter",
       "ring reduce-scatter, a corrected one-byte agreement that it worked "
       "everywhere, else the corrected reduce-scatter: its semantics at "
       "the ring's traffic when nothing fails (f <= 7)",
       3, cr_rs_init, 0)
