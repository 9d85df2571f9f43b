/* Silent data corruption injection (coll_flip.h). */
#include "coll_flip.h"

#include "gossip_sched.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

ucft_status_t coll_flip_check(const coll_flip_params_t *p, char *err,
                              size_t errlen)
{
    const char *why = NULL;
    if (p->bit >= (1 << 20))
        why = "flip: bit number above 2^20";
    else if (p->bit >= 0 && p->msg == 0)
        why = "flip: message numbers start at 1";
    else if (!(p->rate >= 0 && p->rate <= 1))
        why = "flip_rate: want a probability in [0, 1]";
    if (why == NULL)
        return UCFT_OK;
    if (err != NULL && errlen > 0)
        snprintf(err, errlen, "%s", why);
    return UCFT_ERR_INVALID_PARAM;
}

static uint64_t draw(const coll_flip_t *f, uint64_t what)
{
    return gs_hash3(f->p.seed ^ 0x666c6970ull, (uint64_t)f->rank,
                    ((uint64_t)f->sent << 1) | what);
}

const void *coll_flip_message(coll_flip_t *f, const void *buf, size_t len,
                              int dst)
{
    long bit = -1;

    if (len == 0)
        return buf; /* nothing to corrupt, not counted */
    f->sent++;
    if (f->p.bit >= 0 && f->sent == f->p.msg && (size_t)f->p.bit < len * 8)
        bit = f->p.bit;
    else if (f->p.rate > 0 && len > 0 &&
             (double)(draw(f, 0) >> 11) * 0x1.0p-53 < f->p.rate)
        bit = (long)(draw(f, 1) % (len * 8));
    if (bit < 0)
        return buf;
    if (f->ncopies == f->cap) {
        size_t cap = f->cap ? 2 * f->cap : 8;
        void **c = realloc(f->copies, cap * sizeof(*c));
        if (c == NULL)
            return NULL;
        f->copies = c;
        f->cap = cap;
    }
    unsigned char *copy = malloc(len);
    if (copy == NULL)
        return NULL;
    memcpy(copy, buf, len);
    copy[bit / 8] ^= (unsigned char)(1u << (bit % 8));
    f->copies[f->ncopies++] = copy;
    f->flipped++;
    ucft_warn(f->real->log,
              "flip injection: bit %ld of message %u (%zu bytes) to rank %d "
              "corrupted",
              bit, f->sent, len, dst);
    return copy;
}

void coll_flip_cleanup(coll_flip_t *f)
{
    for (size_t i = 0; i < f->ncopies; i++)
        free(f->copies[i]);
    free(f->copies);
    f->copies = NULL;
    f->ncopies = f->cap = 0;
}

/* ---- the filter transport: sends of the collective class pass through
 * coll_flip_message, everything else is forwarded ---------------------- */

static tp_t *real_of(tp_t *tp)
{
    return ((coll_flip_t *)tp)->real;
}

static ucft_status_t f_send(tp_t *tp, int dst, uint64_t tag, const void *buf,
                            size_t len, tp_req_t *req)
{
    coll_flip_t *f = (coll_flip_t *)tp;
    if (ucft_tag_class(tag) == UCFT_TAG_CLASS_COLL) {
        const void *b = coll_flip_message(f, buf, len, dst);
        if (b != NULL)
            buf = b;
    }
    return tp_send(f->real, dst, tag, buf, len, req);
}

static ucft_status_t f_recv(tp_t *tp, uint64_t tag, uint64_t mask, void *buf,
                            size_t len, tp_req_t *req)
{
    return tp_recv(real_of(tp), tag, mask, buf, len, req);
}

static ucft_status_t f_probe(tp_t *tp, uint64_t tag, uint64_t mask,
                             tp_probe_info_t *info)
{
    return tp_probe(real_of(tp), tag, mask, info);
}

static void f_cancel(tp_t *tp, tp_req_t *req)
{
    tp_cancel(real_of(tp), req);
}

static void f_peer_failed(tp_t *tp, int rank)
{
    tp_peer_failed(real_of(tp), rank);
}

static void f_watch(tp_t *tp, int rank)
{
    tp_watch(real_of(tp), rank);
}

static unsigned f_progress(tp_t *tp)
{
    return tp_progress(real_of(tp));
}

static int f_fd(tp_t *tp)
{
    tp_t *r = real_of(tp);
    return r->ops->fd(r);
}

static ucft_status_t f_arm(tp_t *tp)
{
    tp_t *r = real_of(tp);
    return r->ops->arm(r);
}

static uint64_t f_now(tp_t *tp)
{
    return tp_now(real_of(tp));
}

static ucft_status_t f_timer_start(tp_t *tp, ucft_timer_t *t, uint64_t dl)
{
    return tp_timer_start(real_of(tp), t, dl);
}

static void f_timer_stop(tp_t *tp, ucft_timer_t *t)
{
    tp_timer_stop(real_of(tp), t);
}

static uint64_t f_timer_next(tp_t *tp)
{
    return tp_timer_next(real_of(tp));
}

static void f_destroy(tp_t *tp)
{
    (void)tp; /* the owner calls coll_flip_cleanup */
}

static const tp_ops_t flip_tp_ops = {
    .name = "flip",
    .send = f_send,
    .recv = f_recv,
    .probe = f_probe,
    .cancel = f_cancel,
    .peer_failed = f_peer_failed,
    .watch = f_watch,
    .progress = f_progress,
    .fd = f_fd,
    .arm = f_arm,
    .now = f_now,
    .timer_start = f_timer_start,
    .timer_stop = f_timer_stop,
    .timer_next = f_timer_next,
    .destroy = f_destroy,
};

void coll_flip_init(coll_flip_t *f, tp_t *real, const coll_flip_params_t *p)
{
    memset(f, 0, sizeof(*f));
    f->real = real;
    f->p = *p;
    f->rank = real->rank;
    f->base = (tp_t){.ops = &flip_tp_ops,
                     .rank = real->rank,
                     .size = real->size,
                     .log = real->log};
}
