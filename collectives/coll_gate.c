/*
 * The majority gate (coll_gate.h; docs/detector.md, "No split brain") of
 * the corrected allreduce family. (The agreement is not gated: its
 * decision would need acknowledging with any number of failures, which
 * this gate, a corrected allreduce tolerating f, cannot give.)
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
 * Kinds: the gate is a corrected allreduce under the instance's sequence
 * number. Its attempts follow the instance's (kind_base + ncand on), so
 * 2 (f + 1) attempt numbers are needed: f <= 7 alone, f <= 3 inside
 * corrected-ring (two instances of 8). Beyond that the rank ends
 * with UCFT_ERR_NOT_SUPPORTED, logged. Cost: one more corrected allreduce
 * of 4 (8 + n/8) bytes and one allocation per operation, only when the
 * driver gives a gate (the runtime: UCFT_QUORUM=y).
 */
#include "coll_gate.h"
#include "reduce_corrected.h"
#include "runtime/base/fnv.h"

#include <string.h>

#include <stdlib.h>

#define GATE_SLOTS 4

struct coll_gate_run {
    rc_state_t rc; /* the gate's allreduce */
    coll_args_t args;
    coll_user_op_t merge;
    coll_gate_run_t **slot; /* the owner's pointer to this gate */
    coll_gate_done_t done;  /* the verdict, once */
    void *done_arg;
    const coll_gate_t *gate;   /* the driver's rule */
    unsigned seq;              /* for the log */
    size_t nb, slot_len;       /* bitmap bytes per slot; 8 + nb */
    uint64_t hash;             /* of this rank's result; 0: it has none */
    unsigned char *vec, *held; /* GATE_SLOTS slots; n bytes */
    int in_cb;                 /* inside the verdict (its state in use) */
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
    uint64_t h = ucft_fnv1a(UCFT_FNV_BASIS, p, n);
    return h != 0 ? h : 1;
}

/* dst = dst merged with src: the holders of equal hashes united. A hash
 * that finds no free slot is left out (its holders go uncounted here). */
static void merge(void *dst, const void *src, size_t count, int dtype,
                  void *arg)
{
    const coll_gate_run_t *g = arg;
    unsigned char *d = dst;
    const unsigned char *sv = src;
    (void)count;
    (void)dtype;
    for (int i = 0; i < GATE_SLOTS; i++) {
        const unsigned char *from = sv + (size_t)i * g->slot_len;
        uint64_t h = rd64(from);
        int j, empty = -1;
        if (h == 0)
            continue;
        for (j = 0; j < GATE_SLOTS; j++) {
            uint64_t dh = rd64(d + (size_t)j * g->slot_len);
            if (dh == h)
                break;
            if (dh == 0 && empty < 0)
                empty = j;
        }
        if (j == GATE_SLOTS) {
            if (empty < 0)
                continue;
            j = empty;
            memcpy(d + (size_t)j * g->slot_len, &h, 8);
            memset(d + (size_t)j * g->slot_len + 8, 0, g->nb);
        }
        unsigned char *to = d + (size_t)j * g->slot_len + 8;
        for (size_t b = 0; b < g->nb; b++)
            to[b] |= from[8 + b];
    }
}

/* The gate is in: the verdict on this rank's result. */
static void gate_over(coll_gate_run_t *g, ucft_status_t st)
{
    /* The transport's ranks (the gate's own allreduce may number by an
     * operation's frame, whose n counts holes too). */
    int n = g->rc.tp->size, holders = 0;
    coll_gate_done_t done = g->done;

    if (done == NULL)
        return;
    g->done = NULL;
    if (st == UCFT_OK && g->hash != 0) {
        memset(g->held, 0, (size_t)n);
        for (int j = 0; j < GATE_SLOTS; j++) {
            const unsigned char *sl = g->vec + (size_t)j * g->slot_len;
            if (rd64(sl) != g->hash)
                continue;
            for (int r = 0; r < n; r++)
                if (sl[8 + r / 8] >> (r % 8) & 1) {
                    g->held[r] = 1;
                    holders++;
                }
        }
        if (!g->gate->covers(g->gate->arg, g->held, n)) {
            ucft_warn(g->rc.tp->log,
                      "collective #%u: result withheld: %d of the %d ranks "
                      "hold it, too few to cover the quorum (this rank may "
                      "be cut off from the majority); this rank's part ends "
                      "with UCFT_ERR_PROC_FAILED (UCFT_QUORUM)",
                      g->seq, holders, n);
            st = UCFT_ERR_PROC_FAILED;
        }
    }
    /* The gate's instance is inside its own step: a cleanup from the
     * verdict must not free it (coll_gate_cleanup waits for idle). */
    g->in_cb = 1;
    done(g->done_arg, st);
    g->in_cb = 0;
}

static void gate_done(void *arg, int rank, ucft_status_t st)
{
    (void)rank;
    gate_over(arg, st);
}

/* The attempt numbers a gate takes (candidate roots, as rc_init). */
static unsigned gate_attempts(const coll_args_t *a, int n)
{
    int f = a->f > 0 ? a->f : RC_DEFAULT_F;
    return (unsigned)(f + 1 < n ? f + 1 : n);
}

ucft_status_t coll_gate_join(coll_gate_run_t **slot, tp_t *tp,
                             const coll_args_t *a, unsigned kind_base,
                             const void *res, size_t len, ucft_status_t st,
                             const int *dead, unsigned ndead,
                             coll_gate_done_t done, void *arg)
{
    int n = tp->size;
    size_t nb = ((size_t)n + 7) / 8, slot_len = 8 + nb;
    size_t vlen = GATE_SLOTS * slot_len;

    if (kind_base + gate_attempts(a, n) > RC_MAX_F + 1) {
        ucft_error(tp->log,
                   "collective #%u: the majority gate (UCFT_QUORUM) needs "
                   "f + 1 attempt numbers after the operation's own and has "
                   "%u: use a smaller f (at most 7, or 3 with "
                   "corrected-ring)",
                   (unsigned)a->seq,
                   kind_base > RC_MAX_F + 1 ? 0 : RC_MAX_F + 1 - kind_base);
        return UCFT_ERR_NOT_SUPPORTED;
    }
    coll_gate_run_t *g = calloc(1, sizeof(*g) + vlen + (size_t)n);
    if (g == NULL)
        return UCFT_ERR_NO_MEMORY;
    g->vec = (unsigned char *)(g + 1);
    g->held = g->vec + vlen;
    g->nb = nb;
    g->slot_len = slot_len;
    g->slot = slot;
    g->done = done;
    g->done_arg = arg;
    g->gate = a->gate;
    g->seq = (unsigned)a->seq;
    if (st == UCFT_OK) {
        g->hash = result_hash(res, len);
        memcpy(g->vec, &g->hash, 8);
        g->vec[8 + (size_t)tp->rank / 8] |=
            (unsigned char)(1u << (tp->rank % 8));
    }
    g->merge = (coll_user_op_t){.cb = merge, .arg = g};
    g->args = *a;
    g->args.len = g->args.count = vlen;
    g->args.dtype = COLL_DTYPE_UINT8;
    g->args.user_op = &g->merge;
    g->args.gate = NULL;
    g->args.done_cb = gate_done;
    g->args.done_arg = g;
    g->args.ready_cb = NULL;
    g->args.remote_wait = NULL;
    g->args.rndv_min = 0;
    g->args.comm_state = NULL;
    g->args.root = 0; /* candidate roots 0, 1, ... (the same everywhere) */
    ucft_status_t gs = rc_init(&g->rc, tp, &g->args, g->vec, &gate_cfg);
    if (gs != UCFT_OK) {
        free(g);
        return gs;
    }
    g->rc.kind_base = (uint8_t)kind_base;
    g->rc.gate_self = g;
    *slot = g;
    gs = rc_start(&g->rc);
    if (gs != UCFT_INPROGRESS) {
        gate_over(g, gs);
        return UCFT_OK;
    }
    /* Every failure this rank knows, also once the gate is done: it keeps
     * serving the others' later attempts, which need it to have moved on
     * from a dead candidate root as they did. */
    for (unsigned i = 0; i < ndead && *slot == g; i++)
        rc_on_failure(&g->rc, dead[i]);
    return UCFT_OK;
}

void coll_gate_failure(coll_gate_run_t *g, int rank)
{
    if (g != NULL)
        rc_on_failure(&g->rc, rank);
}

void coll_gate_cleanup(coll_gate_run_t *g)
{
    if (g == NULL)
        return;
    g->done = NULL; /* no verdict after this */
    rc_cleanup(&g->rc);
    if (rc_idle(&g->rc) && !g->in_cb)
        coll_gate_release(g);
}

int coll_gate_idle(const coll_gate_run_t *g)
{
    return g == NULL || rc_idle(&g->rc);
}

unsigned coll_gate_stale(const coll_gate_run_t *g, unsigned *kinds,
                         unsigned max)
{
    return g != NULL ? rc_stale_kinds(&g->rc, kinds, max) : 0;
}

void coll_gate_release(coll_gate_run_t *g)
{
    *g->slot = NULL;
    rc_destroy(&g->rc);
    free(g);
}

void coll_gate_destroy(coll_gate_run_t *g)
{
    if (g != NULL)
        coll_gate_release(g);
}
