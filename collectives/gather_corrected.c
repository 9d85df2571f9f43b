/*
 * Corrected allgather and reduce-scatter, built on the corrected allreduce
 * (reduce_corrected.c, docs/reduce.md, the paper's section 5.1) whose
 * guarantee is: with at most f failures every surviving rank completes,
 * and all of them hold the same value, the reduction over every live
 * rank's input and over the inputs of a subset D of the failed ranks,
 * each input included entirely once or not at all.
 *
 * Allgather: the buffer is the n blocks then n presence bytes
 * (coll_args_t.len = n (block bytes + 1), as the ring baseline). Rank r
 * zeroes every block but its own and every presence byte but its own,
 * which it sets to 1, and the corrected allreduce combines these vectors
 * as bytes with bitwise or. Since the blocks of different ranks do not
 * overlap, block r of the result is rank r's data when r is in the live
 * set or D, and zero otherwise, and presence byte r is 1 exactly then.
 * Hence (docs/api.md): every survivor ends with the same blocks and
 * presence bytes; every live rank's block is present; a failed rank's
 * block is its data in full (present) or zero (absent), the same at every
 * survivor.
 *
 * Reduce-scatter: the corrected allreduce of the whole vector with the
 * caller's operation; rank r's output is block r of it. Every survivor's
 * block is therefore the reduction over the live ranks plus the same set
 * D of failed ranks for every block (one allreduce value).
 *
 * Cost: the traffic of a corrected allreduce of the whole output vector
 * (n blocks), not the (n - 1) / n of a bandwidth-optimal ring: these are
 * the forms that tolerate failures, the ring ones (ring_bw.c) the fast
 * ones (docs/reduce.md, "Allgather and reduce-scatter").
 */
#include "reduce_corrected.h"

#include <string.h>

typedef struct gather_corrected {
    rc_state_t rc;   /* first: the rc_* entry points take this state */
    coll_args_t ars; /* the allreduce's arguments */
} gather_corrected_t;

static const rc_config_t gc_cfg = {RC_SCHEME_LIST, 1, 0};

static ucft_status_t gc_ag_init(void *state, tp_t *tp, const coll_args_t *a,
                                void *buf)
{
    gather_corrected_t *s = state;
    size_t es = dtype_size(a->dtype), n = (size_t)tp->size;
    size_t vbytes = a->count * es;

    if (es == 0 || a->count % n != 0 || a->len != vbytes + n || buf == NULL)
        return UCFT_ERR_INVALID_PARAM;
    s->ars = *a;
    s->ars.dtype = COLL_DTYPE_UINT8;
    s->ars.redop = COLL_REDOP_BOR;
    s->ars.user_op = NULL;
    s->ars.count = a->len;
    unsigned char *b = buf;
    size_t bl = vbytes / n, own = (size_t)tp->rank * bl;
    memset(b, 0, own);
    memset(b + own + bl, 0, vbytes - own - bl);
    memset(b + vbytes, 0, n);
    b[vbytes + (size_t)tp->rank] = 1;
    return rc_init(&s->rc, tp, &s->ars, buf, &gc_cfg);
}

static ucft_status_t gc_rs_init(void *state, tp_t *tp, const coll_args_t *a,
                                void *buf)
{
    gather_corrected_t *s = state;

    if (a->count % (size_t)tp->size != 0)
        return UCFT_ERR_INVALID_PARAM;
    s->ars = *a;
    return rc_init(&s->rc, tp, &s->ars, buf, &gc_cfg);
}

#define GC_OPS(var, opname, doc_, init_)                                       \
    const coll_op_ops_t var = {                                                \
        .op = opname,                                                          \
        .alg = "corrected",                                                    \
        .doc = doc_,                                                           \
        .state_size = sizeof(gather_corrected_t),                              \
        .buf_mult = 1,                                                         \
        .init = init_,                                                         \
        .start = rc_start,                                                     \
        .test = rc_test,                                                       \
        .cleanup = rc_cleanup,                                                 \
        .destroy = rc_destroy,                                                 \
        .on_failure = rc_on_failure,                                           \
        .idle = rc_idle,                                                       \
        .stale_kinds = rc_stale_kinds,                                         \
        .consistent = 1,                                                       \
        .keep_after_done = 1,                                                  \
    };

GC_OPS(coll_allgather_corrected_ops, "allgather",
       "corrected allreduce (bitwise or) of the zero-padded blocks and "
       "presence bytes: every survivor the same blocks, a failed rank's "
       "block whole or marked absent",
       gc_ag_init)
GC_OPS(coll_reduce_scatter_corrected_ops, "reduce_scatter",
       "corrected allreduce of the whole vector, each rank keeps its block: "
       "every block over the live ranks and the same subset of failed ones",
       gc_rs_init)
