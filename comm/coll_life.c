/*
 * The life of collective instances (comm/coll.h): the public calls post one
 * algorithm of the collective table (collectives/coll_op.h) on the
 * context's transport (comm/coll_post.c); this file keeps the instances
 * from completion to reuse.
 *
 * - The algorithm of each operation is chosen once, at init, from
 *   UCFT_<OP>_ALG; f and the sequence number belong to the communicator.
 * - The op buffer holds buf_mult * len bytes; its first len bytes are the
 *   input on entry and the output on exit (every algorithm's convention).
 * - Failures learnt by the context (rt_failure_declare) are passed to every
 *   running collective (on_failure).
 * - States and buffers are reused: a steady loop of operations allocates
 *   nothing. When the request is released the algorithm's cleanup cancels
 *   what is pending; the cancelled transport requests complete from a later
 *   progress call and still touch the state, so the state waits in the
 *   "finishing" list until ops->idle says none is pending (usually the next
 *   progress call), then goes to its operation's free list (at most
 *   CM_COLL_FREE_MAX kept; the others are freed). An algorithm without
 *   idle cannot tell: its state lingers ("zombie") for CM_COLL_LINGER_NS.
 * - Early completion: an algorithm whose output is final before the rank
 *   has finished its part (args.ready_cb: a corrected broadcast rank that
 *   has the data but has corrections to send and hear) completes the
 *   request at once; the state runs on in the running list (failures,
 *   progress) and is retired at its done_cb, even if the caller has let go
 *   of the request ("detached"). At most CM_COLL_EARLY_MAX states run on
 *   this way; beyond that a request completes at done_cb as before, which
 *   is also the flow control of a root that runs ahead.
 * - Late messages of finished operations (corrections keep coming after a
 *   rank is done) are swept out of the transport's unexpected queue
 *   (comm/drain.c): they cannot match a later instance (the tag
 *   carries the sequence) and must not pile up there, where every masked
 *   receive would have to scan them.
 * - Kept instances (ops->keep_after_done: corrected allreduce, barrier):
 *   one that completes with its result stays running after its request
 *   is done, told of failures, its messages neither swept nor lost,
 *   because a candidate root that dies during its broadcast sends the
 *   ranks without the result to the next attempt, and that attempt waits
 *   for this rank (which joins it with the value it delivered). It is
 *   retired when a later kept instance of the communicator, posted after
 *   it completed, completes here: that one needed every live rank's
 *   contribution, so every live rank had posted it, and (calls on a
 *   communicator being made in order) had finished the earlier one; the
 *   retired ones are cleaned up by progress and by the next post. At
 *   most one kept instance per communicator when calls do not overlap;
 *   the last one is cleaned up by finalize, or when a later instance
 *   reuses its tag sequence (coll_retire_aliased). Limit: with several
 *   allreduces in flight at once on a communicator, a rank may still be
 *   in an instance that this rank has retired.
 */
#include "comm/comm.h"
#include "runtime/base/clock.h"

#include <stdlib.h>
#include <string.h>

#define CM_COLL_LINGER_NS (2 * UCFT_NSEC_PER_SEC)
#define CM_COLL_FREE_MAX  (CM_COLL_EARLY_MAX + 4) /* kept for reuse per op */
#define CM_COLL_EARLY_MAX 16 /* states running on after their request */

void cm_coll_list_add(struct cm_coll *head, struct cm_coll *c)
{
    c->next = head;
    c->prev = head->prev;
    head->prev->next = c;
    head->prev = c;
}

void cm_coll_list_del(struct cm_coll *c)
{
    c->prev->next = c->next;
    c->next->prev = c->prev;
    c->next = c->prev = c;
}

static void coll_free(cm_layer_t *cl, struct cm_coll *c)
{
    cl->coll_stats.live--;
    if (c->ops->destroy != NULL)
        c->ops->destroy(c->state);
    free(c->state);
    free(c->buf);
    coll_tree_free(&c->rtree);
    free(c);
}

/* A state from the operation's free list, or a new one. */
struct cm_coll *cm_coll_get(cm_layer_t *cl, int slot, const coll_op_ops_t *ops)
{
    cm_coll_stats_t *cs = &cl->coll_stats;
    struct cm_coll *c = cl->coll_free[slot];
    if (c != NULL) {
        cl->coll_free[slot] = c->next;
        cs->nfree[slot]--;
        /* UCFT_<OP>_ALG tables: the slot's states serve every algorithm
         * of the operation; the last one's leftovers go first. */
        if (c->ops != ops && c->ops != NULL && c->ops->destroy != NULL)
            c->ops->destroy(c->state);
        if (c->state_cap < ops->state_size) {
            void *st = calloc(1, ops->state_size);
            if (st == NULL) {
                coll_free(cl, c);
                return NULL;
            }
            free(c->state);
            c->state = st;
            c->state_cap = ops->state_size;
        }
    } else {
        c = calloc(1, sizeof(*c));
        if (c == NULL)
            return NULL;
        c->state = calloc(1, ops->state_size);
        if (c->state == NULL) {
            free(c);
            return NULL;
        }
        c->state_cap = ops->state_size;
        c->slot = slot;
        cs->allocs++;
        if (++cs->live > cs->peak)
            cs->peak = cs->live;
    }
    c->next = c->prev = c;
    return c;
}

/* The state's requests have all completed: reuse it, or free it. */
void cm_coll_recycle(cm_layer_t *cl, struct cm_coll *c)
{
    if (cl->coll_stats.nfree[c->slot] >= CM_COLL_FREE_MAX) {
        coll_free(cl, c);
        return;
    }
    c->req = NULL;
    c->out = NULL;
    c->present = NULL;
    c->next = cl->coll_free[c->slot];
    c->prev = NULL;
    cl->coll_free[c->slot] = c;
    cl->coll_stats.nfree[c->slot]++;
}

/* After ops->cleanup: recycle at once when nothing is pending, else wait
 * (for idle, or for the linger time). Inside an algorithm's callback
 * (in_cb) the state is still in use up the stack: it waits for the next
 * progress call. */
void cm_coll_retire(cm_layer_t *cl, struct cm_coll *c, int in_cb)
{
    if (c->ops->idle != NULL) {
        if (!in_cb && c->ops->idle(c->state))
            cm_coll_recycle(cl, c);
        else
            cm_coll_list_add(&cl->finishing, c);
        return;
    }
    c->free_at = ucft_clock_now_ns() + CM_COLL_LINGER_NS;
    cm_coll_list_add(&cl->zombies, c);
}

static void coll_release(struct ucft_request *r, int in_cb);

/* `c` completed with its result and stays running for the others (see
 * the top of this file). The kept instances that completed before `c` was
 * posted are no longer needed: marked, and cleaned up from progress (this
 * runs inside a transport callback, possibly inside cm_coll_failure's walk
 * of the list). */
static void coll_keep(cm_layer_t *cl, struct cm_coll *c)
{
    uint64_t posted = c->gen;
    c->kept = 1;
    c->gen = ++c->comm->kept_gen;
    for (struct cm_coll *d = cl->colls.next; d != &cl->colls; d = d->next)
        /* Background agreements start anywhere in the sequence of calls:
         * they retire, and are retired by, only each other. */
        if (d != c && d->kept && !d->retired && d->comm == c->comm &&
            d->gen <= posted && d->bg == c->bg) {
            d->retired = 1;
            cl->coll_retire = 1;
        }
}

/* The request's outcome: OK with the output copied out, or the error. */
/* An allgather run in an epoch (comm/coll_post.c): block and presence byte
 * d of its n' live members go to member live[d]'s place; an agreed-failed
 * member's block is zeros, its presence byte 0 (absent). */
static void spread_out(struct cm_coll *c)
{
    const cm_epoch_t *ep = c->ep;
    const unsigned char *pres = c->buf + (size_t)ep->n * c->blk;
    unsigned char *out = c->out;
    for (int m = 0; m < c->comm->size; m++) {
        int d = ep->dense[m];
        if (out != NULL && c->blk > 0) {
            if (d >= 0)
                memcpy(out + (size_t)m * c->blk, c->buf + (size_t)d * c->blk,
                       c->blk);
            else
                memset(out + (size_t)m * c->blk, 0, c->blk);
        }
        if (c->present != NULL)
            c->present[m] = d >= 0 ? pres[d] : 0;
    }
}

static void coll_complete(struct cm_coll *c, ucft_status_t status)
{
    struct ucft_request *r = c->req;
    if (status == UCFT_OK && c->agree_fn != NULL) {
        const uint32_t *val = (const uint32_t *)c->buf;
        size_t words =
            (c->args.len - sizeof(coll_agree_hdr_t)) / sizeof(uint32_t);
        status =
            c->agree_fn(c->comm, val, (const coll_agree_hdr_t *)(val + words),
                        coll_agree_failed(c->state), c->agree_arg);
        c->agree_fn = NULL;
    }
    if (status == UCFT_OK && c->spread) {
        spread_out(c);
    } else {
        if (status == UCFT_OK && c->out != NULL && c->out_len > 0)
            memcpy(c->out, c->buf + c->out_off, c->out_len);
        if (status == UCFT_OK && c->present != NULL)
            memcpy(c->present,
                   coll_buf_at(&c->args, c->work,
                               c->args.len - (size_t)c->comm->size),
                   (size_t)c->comm->size);
    }
    c->out = NULL;
    c->present = NULL;
    r->info.status = status;
    r->info.length = status == UCFT_OK ? c->out_len : 0;
    r->done = 1;
}

/* The rank's output is final (args.ready_cb), maybe before the state has
 * finished: complete the request now, unless too many states run on. */
void cm_coll_ready(void *arg, int rank, ucft_status_t status)
{
    struct cm_coll *c = arg;
    struct ucft_request *r = c->req;
    (void)rank;
    if (r == NULL || r->done || c->ready || status != UCFT_OK ||
        c->cl->coll_early >= CM_COLL_EARLY_MAX)
        return;
    c->ready = 1;
    c->cl->coll_early++;
    coll_complete(c, UCFT_OK);
    if (r->released) { /* nobody waits for it: detach at once */
        r->owner = NULL;
        c->req = NULL;
        rt_req_put(r);
    }
}

/* The rank has finished its part (done_cb), from a transport callback
 * inside the algorithm (or from cm_coll_post). */
void cm_coll_done(void *arg, int rank, ucft_status_t status)
{
    struct cm_coll *c = arg;
    cm_layer_t *cl = c->cl;
    struct ucft_request *r = c->req;
    (void)rank;
    if (c->kept)
        return; /* its caller has had its answer; it runs on, retired later */
    if (status == UCFT_OK && c->ops->keep_after_done && !c->ready) {
        coll_complete(c, status);
        coll_keep(cl, c);
        if (r->released)
            coll_release(r, 1);
        return;
    }
    cm_coll_list_del(c);
    cm_drain_finished(cl);
    if (c->ready) {
        /* The request completed at ready_cb; the caller has its output. */
        cl->coll_early--;
        if (status != UCFT_OK)
            ucft_debug(&cl->ctx->log,
                       "collective %u: finished its part with %s after "
                       "its output was delivered",
                       (unsigned)c->args.seq, ucft_status_string(status));
        if (r == NULL) { /* detached */
            c->ops->cleanup(c->state);
            cm_coll_retire(cl, c, 1);
        }
        return;
    }
    if (c->work != c->buf && !c->ops->idle(c->state))
        ucft_error(&cl->ctx->log,
                   "collective %u (%s %s): finished while a transport request "
                   "still uses the caller's buffer (direct mode): a defect "
                   "of the algorithm",
                   (unsigned)c->args.seq, c->ops->op, c->ops->alg);
    coll_complete(c, status);
    if (r->released)
        coll_release(r, 1);
}

static void coll_release(struct ucft_request *r, int in_cb)
{
    struct cm_coll *c = r->owner;
    if (c == NULL)
        return;
    cm_layer_t *cl = c->cl;
    r->owner = NULL;
    if (c->kept) {
        c->req = NULL; /* still running; cleaned up once retired */
        cl->coll_retire |= c->retired;
        if (r->released)
            rt_req_put(r);
        return;
    }
    if (c->next != c && c->ready) {
        c->req = NULL; /* detached: runs on until its done_cb */
        if (r->released)
            rt_req_put(r);
        return;
    }
    if (c->next != c) {
        cm_coll_list_del(c); /* still running: the caller gave it up */
        cm_drain_finished(cl);
    }
    c->ops->cleanup(c->state);
    cm_coll_retire(cl, c, in_cb);
    if (r->released)
        rt_req_put(r);
}

/* A kept instance whose 16-bit tag sequence the next instance of its
 * communicator would reuse (65,536 instances later) is retired now, before
 * the new one posts anything: otherwise its pending receives could take
 * the new instance's messages (same tag when the kinds match), and the
 * sweeper, which counts a message of a running instance as wanted, stops
 * at the first late message of the new one and never drops anything again
 * (a barrier followed by only broadcasts, after a failure: 0.35 s for 40k
 * broadcasts, over 120 s for 200k). By then every rank that needed it has
 * had 65,535 further collectives' time to finish it. A caller still
 * holding its completed request keeps the request, not the instance.
 * The instance is cleaned up as every retired one is (coll_retire_kept). */
void cm_coll_retire_aliased(cm_layer_t *cl, struct ucft_comm *comm)
{
    const uint32_t mask = (1u << UCFT_TAG_SEQ_BITS) - 1;
    int any = 0;
    for (struct cm_coll *c = cl->colls.next; c != &cl->colls; c = c->next) {
        uint32_t next = c->ops == comm->agree ? comm->agree_seq : comm->seq;
        if (!c->kept || c->comm != comm || ((c->args.seq ^ next) & mask) != 0)
            continue;
        ucft_debug(&cl->ctx->log,
                   "collective %u: kept instance retired, instance %u "
                   "reuses its tag sequence",
                   (unsigned)c->args.seq, (unsigned)comm->seq);
        if (c->req != NULL) {
            c->req->owner = NULL;
            c->req = NULL;
        }
        c->retired = any = 1;
    }
    if (any)
        cm_coll_retire_kept(cl);
}

/* Whether the collective of request `req` now waits only for ranks off
 * this rank's core (coll_args_t.remote_wait): the `spin` of
 * rt_wait_hinted. */
static int coll_req_spin(void *req)
{
    const struct ucft_request *r = req;
    const struct cm_coll *c = r->owner;
    return c != NULL && c->remote_wait;
}

/* The caller let go of a completed collective request. */
static void coll_req_release(struct ucft_request *r)
{
    coll_release(r, 0);
}

const rt_req_ops_t cm_coll_req_ops = {.release = coll_req_release,
                                      .spin = coll_req_spin};

static int no_early(void *arg)
{
    return ((const cm_layer_t *)arg)->coll_early == 0;
}

void cm_coll_quiesce(cm_layer_t *cl, uint64_t timeout_ns)
{
    if (cl->coll_early > 0 &&
        rt_wait_until(cl->ctx, no_early, cl, timeout_ns) != UCFT_OK)
        ucft_warn(&cl->ctx->log,
                  "finalize: %u collectives still running their part after "
                  "their result was delivered",
                  cl->coll_early);
}

void cm_coll_failure(cm_layer_t *cl, int rank)
{
    cm_coll_cs_failure(cl, rank);
    for (struct cm_coll *c = cl->colls.next, *n; c != &cl->colls; c = n) {
        n = c->next; /* on_failure may complete (and unlink) c */
        int r = cm_coll_peer(c, (uint32_t)rank);
        if (c->ops->on_failure != NULL && r >= 0)
            c->ops->on_failure(c->state, r);
    }
}

/* Cleans up the retired kept instances whose requests are released. */
unsigned cm_coll_retire_kept(cm_layer_t *cl)
{
    unsigned n = 0;
    cl->coll_retire = 0;
    for (struct cm_coll *c = cl->colls.next, *nx; c != &cl->colls; c = nx) {
        nx = c->next;
        if (!c->retired || c->req != NULL)
            continue; /* the release sets coll_retire again */
        cm_coll_list_del(c);
        cm_drain_finished(cl);
        c->ops->cleanup(c->state);
        cm_coll_retire(cl, c, 0);
        n++;
    }
    return n;
}

unsigned cm_coll_progress(cm_layer_t *cl)
{
    unsigned n = 0;
    if (cl->coll_retire)
        n += cm_coll_retire_kept(cl);
    /* Late messages also arrive while no instance ends here (a rank far
     * ahead waits for the others): sweep every 64th call too, and at every
     * call while finalizing. */
    if (cl->ctx->finalizing ||
        ((++cl->coll_tick & 63) == 0 && cl->coll_stats.ops > 0))
        cl->drain.pending = 1;
    if (cl->drain.pending)
        cm_drain_sweep(cl);
    /* Finished states whose cancelled requests have completed by now. */
    for (struct cm_coll *c = cl->finishing.next, *nx; c != &cl->finishing;
         c = nx) {
        nx = c->next;
        if (c->ops->idle(c->state)) {
            cm_coll_list_del(c);
            cm_coll_recycle(cl, c);
        }
    }
    /* Lingering states are freed in bulk now and then: a clock read on
     * every progress call would tax the point-to-point hot path. */
    if (cl->zombies.next == &cl->zombies || (cl->coll_tick & 63) != 0)
        return 0;
    uint64_t now = ucft_clock_now_ns();
    while (cl->zombies.next != &cl->zombies &&
           cl->zombies.next->free_at <= now) {
        struct cm_coll *c = cl->zombies.next;
        cm_coll_list_del(c);
        coll_free(cl, c);
        n++;
    }
    return n;
}

void cm_coll_cleanup(cm_layer_t *cl)
{
    cm_coll_cs_cleanup(cl);
    while (cl->colls.next != &cl->colls) {
        struct cm_coll *c = cl->colls.next;
        cm_coll_list_del(c);
        c->ops->cleanup(c->state);
        cm_coll_list_add(&cl->zombies, c);
    }
    /* Drop the late messages still queued: a rank that ran far ahead of
     * the others gets thousands of them at the end, more than one sweep
     * takes (bounded, like the wait below). */
    uint64_t until = ucft_clock_now_ns() + 200 * UCFT_NSEC_PER_MSEC;
    uint64_t before = cl->drained;
    do {
        cl->drain.pending = 1;
        cm_drain_sweep(cl);
        tp_progress(cl->ctx->tp);
    } while ((cl->drain.pending || cl->drain.posted) &&
             ucft_clock_now_ns() < until);
    if (cl->drained > before)
        ucft_info(&cl->ctx->log,
                  "finalize: %llu late collective messages dropped",
                  (unsigned long long)(cl->drained - before));
    cm_drain_cancel_all(cl);
    /* Let the cancellations complete (their callbacks touch the states):
     * progress until the transport is quiet for a few rounds, bounded. */
    uint64_t end = ucft_clock_now_ns() + 200 * UCFT_NSEC_PER_MSEC;
    for (int quiet = 0;
         (quiet < 3 || !cm_coll_cs_idle(cl)) && ucft_clock_now_ns() < end;)
        quiet = tp_progress(cl->ctx->tp) ? 0 : quiet + 1;
}

void cm_coll_free_all(cm_layer_t *cl)
{
    cm_coll_stats_t *cs = &cl->coll_stats;
    cm_coll_cs_free(cl);
    if (cs->ops > 0)
        ucft_info(&cl->ctx->log,
                  "collectives: %llu operations, %llu states allocated, at "
                  "most %u at once; %llu late messages dropped",
                  (unsigned long long)cs->ops, (unsigned long long)cs->allocs,
                  cs->peak, (unsigned long long)cl->drained);
    /* After the transport is gone: nothing can touch the states now. */
    cm_coll_t *heads[2] = {&cl->finishing, &cl->zombies};
    for (int i = 0; i < 2; i++)
        while (heads[i]->next != heads[i]) {
            struct cm_coll *c = heads[i]->next;
            cm_coll_list_del(c);
            coll_free(cl, c);
        }
    for (int i = 0; i < CM_COLL_NSLOTS; i++)
        while (cl->coll_free[i] != NULL) {
            struct cm_coll *c = cl->coll_free[i];
            cl->coll_free[i] = c->next;
            coll_free(cl, c);
        }
}

/* `comm` was revoked (comm/revoke.c): its running collectives other than
 * agreements end with UCFT_ERR_REVOKED; kept instances run on. */
void cm_coll_revoke(cm_layer_t *cl, struct ucft_comm *comm)
{
    for (struct cm_coll *c = cl->colls.next, *n; c != &cl->colls; c = n) {
        n = c->next;
        if (c->comm != comm || c->kept || c->ops == comm->agree)
            continue;
        struct ucft_request *r = c->req;
        if (c->ready)
            cl->coll_early--;
        cm_coll_list_del(c);
        cm_drain_finished(cl);
        if (r != NULL && !r->done)
            coll_complete(c, UCFT_ERR_REVOKED);
        c->ops->cleanup(c->state);
        cm_coll_retire(cl, c, 1);
        if (r != NULL) {
            r->owner = NULL;
            c->req = NULL;
            if (r->released)
                rt_req_put(r);
        }
    }
}

/* ucft_comm_free: the kept instances of `comm` are no longer needed. */
void cm_coll_retire_comm(cm_layer_t *cl, struct ucft_comm *comm)
{
    for (struct cm_coll *c = cl->colls.next; c != &cl->colls; c = c->next)
        if (c->comm == comm && c->kept && !c->retired) {
            c->retired = 1;
            cl->coll_retire = 1;
        }
    cm_coll_retire_kept(cl);
}
