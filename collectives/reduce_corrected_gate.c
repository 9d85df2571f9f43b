/*
 * The majority gate of the corrected allreduce family (coll_args_t.gate;
 * docs/detector.md, "No split brain").
 *
 * The window it closes: after a partition, a rank cut off together with a
 * candidate root can take that root's result, while the other side, which
 * never saw it, declares the root failed and computes another result in
 * the next attempt. The cut-off rank would hand its caller a result that
 * the side going on does not have, before it learns that it is in a
 * minority and fences.
 *
 * How: a rank that has its result does not hand it over yet. Every rank
 * whose part ended runs a second corrected allreduce, the gate, of a few
 * slots (hash of a result, bitmap of the ranks holding it) merged by hash:
 * it contributes "I hold the result with hash h", or nothing when its part
 * ended with an error (a live rank must join, or the others would wait for
 * it). Once the gate completes, a rank hands its result over only if the
 * holders of its own hash cover the quorum (coll_gate_t.covers: every side
 * that may go on holds one of them); otherwise its part ends with
 * UCFT_ERR_PROC_FAILED and a warning.
 *
 * Why that suffices: a holder keeps its result and answers every later
 * attempt of the main allreduce with it, flagged decided ("a decided value
 * wins", reduce_corrected_impl.h), so the ranks of the side that goes on
 * end up with that same result as long as one holder there lives. The
 * gate's own value needs no agreement: each bit in it is a fact (that rank
 * held that result), whichever attempt of the gate delivered it, and a
 * missing bit costs a rank its result, never a wrong one. Two different
 * results with one 64-bit hash would be taken for one (2^-64 a pair).
 *
 * Kinds: the gate's attempts follow the main instance's (kind_base +
 * ncand on), so the gate needs 2 (f + 1) attempt numbers: f <= 7 alone,
 * f <= 3 inside corrected-ring (two instances of 8). Beyond that the rank
 * ends with UCFT_ERR_NOT_SUPPORTED, logged. Cost: one more corrected
 * allreduce of 4 (8 + n/8) bytes and one allocation per operation, only
 * when the driver gives a gate (the runtime: UCFT_QUORUM=y).
 */
#include "reduce_corrected_impl.h"

#include <stdlib.h>

#define GATE_SLOTS 4

struct rc_gate {
    rc_state_t rc; /* the gate's allreduce */
    coll_args_t args;
    coll_user_op_t merge;
    size_t nb, slot;           /* bitmap bytes per slot; 8 + nb */
    uint64_t hash;             /* of this rank's result; 0: it has none */
    unsigned char *vec, *held; /* GATE_SLOTS slots; n bytes */
    int in_cb; /* inside the gate's completion (its state in use) */
};

static const rc_config_t gate_cfg = {RC_SCHEME_LIST, 1, 0};

static uint64_t rd64(const unsigned char *p)
{
    uint64_t x;
    memcpy(&x, p, 8);
    return x;
}

/* FNV-1a; 0 is kept for "no result". */
static uint64_t result_hash(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h != 0 ? h : 1;
}

/* dst = dst merged with src: the holders of equal hashes united. A hash
 * that finds no free slot is left out (its holders go uncounted here). */
static void merge(void *dst, const void *src, size_t count, int dtype,
                  void *arg)
{
    const struct rc_gate *g = arg;
    unsigned char *d = dst;
    const unsigned char *sv = src;
    (void)count;
    (void)dtype;
    for (int i = 0; i < GATE_SLOTS; i++) {
        const unsigned char *from = sv + (size_t)i * g->slot;
        uint64_t h = rd64(from);
        int j, empty = -1;
        if (h == 0)
            continue;
        for (j = 0; j < GATE_SLOTS; j++) {
            uint64_t dh = rd64(d + (size_t)j * g->slot);
            if (dh == h)
                break;
            if (dh == 0 && empty < 0)
                empty = j;
        }
        if (j == GATE_SLOTS) {
            if (empty < 0)
                continue;
            j = empty;
            memcpy(d + (size_t)j * g->slot, &h, 8);
            memset(d + (size_t)j * g->slot + 8, 0, g->nb);
        }
        unsigned char *to = d + (size_t)j * g->slot + 8;
        for (size_t b = 0; b < g->nb; b++)
            to[b] |= from[8 + b];
    }
}

/* The gate is in: hand the result over, or withhold it. */
static void gate_over(rc_state_t *s, ucft_status_t st)
{
    struct rc_gate *g = s->gate;
    int holders = 0;

    s->gating = 0;
    if (s->done)
        return; /* ended with an error before the gate (it joined empty) */
    if (st != UCFT_OK) {
        rc__finish_now(s, st);
        return;
    }
    memset(g->held, 0, (size_t)s->n);
    for (int j = 0; j < GATE_SLOTS; j++) {
        const unsigned char *sl = g->vec + (size_t)j * g->slot;
        if (rd64(sl) != g->hash)
            continue;
        for (int r = 0; r < s->n; r++)
            if (sl[8 + r / 8] >> (r % 8) & 1) {
                g->held[r] = 1;
                holders++;
            }
    }
    if (s->args->gate->covers(s->args->gate->arg, g->held, s->n)) {
        rc__finish_now(s, UCFT_OK);
        return;
    }
    ucft_warn(s->tp->log,
              "collective #%u: result withheld: %d of the %d ranks hold it, "
              "too few to cover the quorum (this rank may be cut off from "
              "the majority); this rank's part ends with "
              "UCFT_ERR_PROC_FAILED (UCFT_QUORUM)",
              (unsigned)s->args->seq, holders, s->n);
    rc__finish_now(s, UCFT_ERR_PROC_FAILED);
}

static void gate_done(void *arg, int rank, ucft_status_t st)
{
    rc_state_t *s = arg;
    (void)rank;
    /* The gate's instance is inside its own step: a cleanup of the main
     * one from the caller's done_cb must not free it (the instances of
     * this family are kept after done, so drivers clean them up later). */
    s->gate->in_cb = 1;
    gate_over(s, st);
    if (s->gate != NULL)
        s->gate->in_cb = 0;
}

void rc__gate_start(rc_state_t *s, ucft_status_t st)
{
    unsigned base = s->kind_base + (unsigned)s->ncand;
    size_t nb = ((size_t)s->n + 7) / 8, slot = 8 + nb;
    size_t vlen = GATE_SLOTS * slot;

    if (base + (unsigned)s->ncand > RC_MAX_F + 1) {
        ucft_error(s->tp->log,
                   "collective #%u: the majority gate (UCFT_QUORUM) needs "
                   "2 (f + 1) attempt numbers and has %u: use a smaller f "
                   "(at most 7, or 3 with corrected-ring)",
                   (unsigned)s->args->seq, RC_MAX_F + 1 - s->kind_base);
        rc__finish_now(s, st == UCFT_OK ? UCFT_ERR_NOT_SUPPORTED : st);
        return;
    }
    struct rc_gate *g = calloc(1, sizeof(*g) + vlen + (size_t)s->n);
    if (g == NULL) {
        rc__finish_now(s, st == UCFT_OK ? UCFT_ERR_NO_MEMORY : st);
        return;
    }
    g->vec = (unsigned char *)(g + 1);
    g->held = g->vec + vlen;
    g->nb = nb;
    g->slot = slot;
    if (st == UCFT_OK) {
        g->hash = result_hash(s->buf, s->len);
        memcpy(g->vec, &g->hash, 8);
        g->vec[8 + (size_t)s->tp->rank / 8] |=
            (unsigned char)(1u << (s->tp->rank % 8));
    }
    g->merge = (coll_user_op_t){.cb = merge, .arg = g};
    g->args = *s->args;
    g->args.len = g->args.count = vlen;
    g->args.dtype = COLL_DTYPE_UINT8;
    g->args.user_op = &g->merge;
    g->args.gate = NULL;
    g->args.done_cb = gate_done;
    g->args.done_arg = s;
    g->args.ready_cb = NULL;
    g->args.remote_wait = NULL;
    g->args.rndv_min = 0;
    g->args.comm_state = NULL;
    s->gate = g;
    s->gating = st == UCFT_OK;
    ucft_status_t gs = rc_init(&g->rc, s->tp, &g->args, g->vec, &gate_cfg);
    if (gs != UCFT_OK) {
        s->gate = NULL;
        free(g);
        rc__finish_now(s, st == UCFT_OK ? gs : st);
        return;
    }
    g->rc.kind_base = (uint8_t)base;
    g->rc.gate_owner = s;
    if (st != UCFT_OK)
        rc__finish_now(s, st); /* its error now; the gate runs on */
    gs = rc_start(&g->rc);
    if (gs != UCFT_INPROGRESS) {
        gate_over(s, gs);
        return;
    }
    /* Every failure this rank knows, also once the gate is done: it keeps
     * serving the others' later attempts, which need it to have moved on
     * from a dead candidate root as they did. */
    for (unsigned i = 0; i < s->ndead && s->gate != NULL; i++)
        rc_on_failure(&s->gate->rc, s->dead[i]);
}

void rc__gate_failure(rc_state_t *s, int rank)
{
    if (s->gate != NULL && !s->cleaned)
        rc_on_failure(&s->gate->rc, rank);
}

void rc__gate_cleanup(rc_state_t *s)
{
    struct rc_gate *g = s->gate;
    if (g == NULL)
        return;
    rc_cleanup(&g->rc);
    if (rc_idle(&g->rc) && !g->in_cb)
        rc__gate_release(&g->rc);
}

int rc__gate_idle(const rc_state_t *s)
{
    return s->gate == NULL || rc_idle(&s->gate->rc);
}

unsigned rc__gate_stale(const rc_state_t *s, unsigned *kinds, unsigned max)
{
    return s->gate != NULL ? rc_stale_kinds(&s->gate->rc, kinds, max) : 0;
}

void rc__gate_release(rc_state_t *g)
{
    rc_state_t *s = g->gate_owner;
    struct rc_gate *gate = s->gate;
    rc_destroy(g);
    s->gate = NULL;
    free(gate);
}

void rc__gate_destroy(rc_state_t *s)
{
    if (s->gate != NULL)
        rc__gate_release(&s->gate->rc);
}
