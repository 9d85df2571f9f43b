/*
 * The engine of corrected reduce / allreduce (reduce_corrected.h), after
 * sections 4.2-4.5 and 5 of papers/corrected-reduce-allreduce.txt.
 *
 * One attempt = up-correction + tree phase to a root (+ for allreduce a
 * broadcast from it). Reduce runs attempt 0 with root args->root.
 * Allreduce tries the candidate roots i = 0..f positions after args->root
 * in the placement order (coll_rank_of; identity: args->root + i mod n):
 * every survivor that learns that the root of its attempt failed moves to
 * the next candidate whose failure it does not know of (section 5.2).
 *
 * Per rank, virtual rank v = coll_vrank_of(rank) (itree.h; identity
 * placement: (rank - root) mod n):
 *  up    send my input to every other member of my group (no failure
 *        information, section 4.2) and combine what each member sends;
 *  tree  combine what each tree child sends, then send (value, failure
 *        information) to the parent. The root instead takes the first
 *        answer of a child whose subtree reports no failure (lists: no
 *        listed rank in that subtree; count+bit and bit: the bit clear)
 *        and adds its own up-corrected value when the subtree holds no
 *        member of its group (section 4.3). No such answer once every
 *        child has answered or failed: UCFT_ERR_PROC_FAILED.
 *  down  (allreduce) the root sends the result to its tree children and
 *        its group; a rank forwards the value to its children once it has
 *        it, and sends each member of its group one message: the value as
 *        soon as it has it, or "none" once its parent failed or had none.
 *        With a live root and <= f failures some subtree is intact and its
 *        member of each group (or the root, for its own group) delivers.
 *        Group messages wait only on the parent, so waits are acyclic: with
 *        more failures every rank ends, possibly with an error.
 *        Up to ITREE_FLAT_MAX ranks ("star") the root sends to every rank
 *        instead and each waits for the root alone: with the root as
 *        everyone's parent no parent failure is left to correct (a dead
 *        root moves every survivor on), and two hops become one.
 * Every receive is a wildcard on the source for the attempt's kind; a
 * message from a peer already counted as failed is ignored. A wait on a
 * peer ends when its message arrives or on_failure names it: the
 * outcome of the receive decides (a dead peer's message that arrived is
 * used; the failure information then reports nothing about it).
 *
 * Allreduce of two ranks ("pair"): the up-correction exchange already
 * gives each rank both values, and a failure leaves a single survivor, so
 * nothing is left to agree on: no tree message, no broadcast (2 messages
 * in one hop instead of 4 in three). A rank ends with what it received:
 * its own value, plus the other's if it arrived (entirely or not at all).
 *
 * Allreduce with a root that fails during the operation (outside the
 * paper's assumption that f + 1 candidates fail only before it): ranks
 * that already delivered a value join the next attempt as "decided" and
 * contribute that value with a flag that wins every combination, so the
 * next root broadcasts the same value and no survivor waits for them.
 *
 * Sends go through one request, chained on completion, in the order up,
 * tree, down. Scratch is allocated at init; nothing per message.
 */
#include "reduce_corrected.h"
#include "dtype.h"
#include "reduce_corrected_impl.h"
#include "coll_gate.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* ---- sends ---- */

/* The next message to send, or 0. */
static int next_send(rc_state_t *s, int *dst, const void **b, size_t *l,
                     int *what)
{
    if (s->up_todo) {
        int k = __builtin_ctz(s->up_todo);
        s->up_todo &= s->up_todo - 1;
        *dst = rk(s, slot_vrank(s, k));
        *b = s->usend;
        *l = s->ufix + s->len;
        *what = RC_UP;
        return 1;
    }
    if (s->tree_state == 1) {
        s->tree_state = 2;
        wr32(s->sbuf, s->acc_flags);
        if (s->hfix == 8)
            wr32(s->sbuf + 4,
                 s->cfg->scheme == RC_SCHEME_LIST ? s->nlist : s->fcount);
        *dst = rk(s, tparent(s, s->v));
        *b = s->sbuf;
        *l = s->hfix + s->len + 4 * s->nlist;
        *what = RC_TREE;
        return 1;
    }
    if (!s->cfg->allreduce || (s->v > 0 && s->tree_state != 2))
        return 0;
    int val = s->has_value || s->err_final;
    if (!val && !(s->v > 0 && (s->dn_dead | s->dn_got) >> slot_parent(s) & 1))
        return 0;
    if (!s->has_value)
        wr32(s->dsend, RC_F_NONE);
    *b = s->dsend;
    *l = 4 + s->len;
    *what = RC_DOWN;
    while (val && s->dn_child_next < s->dn_nchild) {
        unsigned i = s->dn_child_next++;
        *dst = rk(s, s->star ? (int)i + 1 : tchild(s, i));
        if (*dst >= 0) /* (star: a hole is nobody) */
            return 1;
    }
    if (s->dn_todo) {
        int k = __builtin_ctz(s->dn_todo);
        s->dn_todo &= s->dn_todo - 1;
        *dst = rk(s, slot_vrank(s, k));
        return 1;
    }
    /* Holes, binomial subtrees: the root also reaches the members of
     * holed groups that are not its children. */
    while (val && s->holes && s->v == 0 && !s->star && s->lst_next < s->n) {
        int v = s->lst_next++;
        if (s->lst[v] && tparent(s, v) != 0 && !is_dead(s, rk(s, v))) {
            *dst = rk(s, v);
            return 1;
        }
    }
    return 0;
}

static int sends_drained(const rc_state_t *s)
{
    if ((s->busy & RC_B_SEND) || s->up_todo || s->tree_state == 1)
        return 0;
    if (!s->cfg->allreduce)
        return 1;
    return s->dn_todo == 0 && s->dn_child_next >= s->dn_nchild &&
           !(s->holes && s->v == 0 && !s->star && s->lst_next < s->n);
}

/* ---- the driver of the state machine ---- */

typedef struct rc_post {
    tp_req_t *req;
    uint8_t bit, what;
    unsigned char *buf;
    size_t len;
    void (*handle)(rc_state_t *s);
} rc_post_t;

static void fail_now(rc_state_t *s, ucft_status_t st)
{
    s->over = 1;
    finish(s, st);
}

static void step_on(rc_state_t *s)
{
    for (int changed = 1; changed && !s->cleaned && !s->over;) {
        changed = 0;
        if (s->mismatch) {
            fail_now(s, UCFT_ERR_TRUNCATED);
            return;
        }
        if (s->restart) {
            if (s->busy)
                return;
            rc__begin_attempt(s, s->attempt + 1);
            changed = 1;
            continue;
        }
        uint32_t up_open = s->up_need & ~(s->up_got | s->up_dead);
        unsigned ch_open = s->ch_open;
        uint32_t dn_open = s->dn_need & ~(s->dn_got | s->dn_dead);
        int want_tree = ch_open && !(s->v == 0 && s->sel >= 0);
        int want_up = up_open != 0 || (s->holes && s->v == 0 && s->lst_open);
        rc_post_t posts[3] = {
            {&s->ureq, RC_B_UP, RC_UP, s->ubuf, s->ufix + s->len,
             rc__handle_up},
            {&s->rreq, RC_B_TREE, RC_TREE, s->rbuf, s->tmax, rc__handle_tree},
            {&s->dreq, RC_B_DOWN, RC_DOWN, s->dbuf, 4 + s->len,
             rc__handle_down},
        };
        int want[3] = {want_up, want_tree, dn_open != 0};
        if (s->done && !s->cfg->allreduce)
            want[0] = want[1] = want[2] = 0;
        for (int i = 0; i < 3; i++) {
            rc_post_t *p = &posts[i];
            if (!want[i] || (s->busy & p->bit))
                continue;
            ucft_status_t st =
                tp_recv(s->tp, tag(s, 0, p->what), ~UCFT_TAG_SRC_MASK, p->buf,
                        p->len, p->req);
            if (st == UCFT_INPROGRESS) {
                s->busy |= p->bit;
            } else if (st == UCFT_OK) {
                if (p->req->status == UCFT_OK)
                    p->handle(s);
                else if (p->req->status == UCFT_ERR_TRUNCATED)
                    rc__mismatch(s, p->req);
                changed = 1;
            } else {
                fail_now(s, st);
                return;
            }
        }
        up_open = s->up_need & ~(s->up_got | s->up_dead);
        ch_open = s->ch_open;
        dn_open = s->dn_need & ~(s->dn_got | s->dn_dead);
        if (s->v > 0 && s->tree_state == 0 && !up_open && !ch_open)
            s->tree_state = 1;
        if (s->pair) {
            if (!s->has_value && !up_open)
                got_value(s, s->sbuf + s->hfix);
        } else if (s->v == 0) {
            rc__root_result(s);
        }
        if (s->cfg->allreduce && s->v > 0 && !s->has_value && !dn_open &&
            !s->err_final && !s->pair)
            s->err_final = 1; /* every source failed or had nothing */
        /* Sends, one at a time. */
        while (!(s->busy & RC_B_SEND)) {
            int dst, what;
            const void *b;
            size_t l;
            if (!next_send(s, &dst, &b, &l, &what))
                break;
            RC_TRACE(s, "send %s to %d",
                     what == RC_UP     ? "up"
                     : what == RC_TREE ? "tree"
                                       : "down",
                     dst);
            ucft_status_t st =
                tp_send(s->tp, dst, tag(s, s->tp->rank, what), b, l, &s->sreq);
            if (st == UCFT_INPROGRESS)
                s->busy |= RC_B_SEND;
            else if (st != UCFT_OK)
                ucft_debug(s->tp->log, "reduce: send to rank %d: %s", dst,
                           ucft_status_string(st));
        }
        if (!s->done && sends_drained(s)) {
            if (s->has_value && (s->v == 0 || s->cfg->allreduce))
                finish(s, UCFT_OK);
            else if (s->err_final)
                finish(s, UCFT_ERR_PROC_FAILED);
            else if (!s->cfg->allreduce && s->v > 0 && s->tree_state == 2)
                finish(s, UCFT_OK);
        }
        if (s->done && !s->cfg->allreduce) {
            /* The root stops listening once it has its answer. */
            if (s->busy & RC_B_UP)
                tp_cancel(s->tp, &s->ureq);
            if (s->busy & RC_B_TREE)
                tp_cancel(s->tp, &s->rreq);
        }
    }
}

/* coll_args_t.remote_wait of the allreduce (1: nothing this rank waits
 * for needs more work of its mate). Only on the first attempt without a
 * known failure, with the star down phase, and neither this rank nor its
 * mate the root; this rank's sends posted:
 *   - collecting (no tree child left to hear from): the members' up
 *     messages, sent first thing in their instance. A member starts it
 *     once it has the previous result, which the root (not the mate) has
 *     sent or will send by itself; the mate is no member still awaited.
 *   - waiting for the result: the mate is this rank's tree child and its
 *     answer is in; it sent its up messages before (next_send), so it
 *     has nothing left to add to the root's result.
 * Everything else 0, the root included (any child answer may be the one
 * it takes, the mate's too). */
static void note_wait(rc_state_t *s)
{
    int vm = s->holes ? -1 : coll_vmate_of(s->args, s->tp->rank, s->root, s->n);
    uint8_t remote = 0;
    if (vm > 0 /* a mate, not the root */ && s->v > 0 && s->cfg->allreduce &&
        !s->holes && s->star && s->attempt == 0 && s->ndead == 0 && !s->done &&
        !(s->busy & RC_B_SEND)) {
        if (s->tree_state == 0) {
            uint32_t up_open = s->up_need & ~(s->up_got | s->up_dead);
            remote = s->ch_open == 0;
            for (int k = 0; remote && k <= slot_root(s); k++)
                if ((up_open >> k & 1) && slot_vrank(s, k) == vm)
                    remote = 0;
        } else {
            int ci = child_index(s, vm);
            remote = ci >= 0 && s->chst[ci] == RC_CH_GOT;
        }
    }
    *s->args->remote_wait = remote;
}

static void step(rc_state_t *s)
{
    step_on(s);
    if (s->args->remote_wait != NULL)
        note_wait(s);
}

static void free_mem(rc_state_t *s)
{
    if (s->mem != s->inline_mem)
        free(s->mem);
    s->mem = NULL;
}

static void req_cb(tp_req_t *req)
{
    rc_state_t *s = req->arg;
    uint8_t bit = req == &s->sreq   ? RC_B_SEND
                  : req == &s->ureq ? RC_B_UP
                  : req == &s->rreq ? RC_B_TREE
                                    : RC_B_DOWN;
    s->busy &= (uint8_t)~bit;
    if (req->status != UCFT_OK)
        RC_TRACE(s, "request %x: %s", bit, ucft_status_string(req->status));
    if (s->cleaned && s->busy == 0) {
        if (s->gate_self != NULL) {
            coll_gate_release(s->gate_self); /* a gate's instance: frees s */
            return;
        }
        free_mem(s);
    }
    if (s->cleaned || s->over)
        return;
    if (bit != RC_B_SEND && req->status == UCFT_ERR_TRUNCATED)
        rc__mismatch(s, req);
    if (bit != RC_B_SEND && req->status == UCFT_OK) {
        /* A value that arrives while moving on is still taken. */
        if (!s->restart)
            (bit == RC_B_UP     ? rc__handle_up
             : bit == RC_B_TREE ? rc__handle_tree
                                : rc__handle_down)(s);
        else if (bit == RC_B_DOWN && !(rd32(s->dbuf) & RC_F_NONE) &&
                 !s->has_value && s->dreq.length == 4 + s->len)
            got_value(s, s->dbuf + 4);
    }
    step(s);
}

/* ---- the majority gate (coll_gate.h) ---- */

static void gate_verdict(void *arg, ucft_status_t st)
{
    rc_state_t *s = arg;
    s->gating = 0;
    rc__finish_now(s, st);
}

void rc__gate_start(rc_state_t *s, ucft_status_t st)
{
    if (st != UCFT_OK)
        rc__finish_now(s, st); /* its error now; it joins with nothing */
    s->gating = st == UCFT_OK;
    ucft_status_t gs = coll_gate_join(
        &s->gate, s->tp, s->args, s->kind_base + (unsigned)s->ncand, s->buf,
        s->len, st, s->dead, s->ndead, gate_verdict, s);
    if (gs != UCFT_OK) {
        s->gating = 0;
        rc__finish_now(s, gs);
    }
}

/* ---- the coll_op_ops_t entry points ---- */

ucft_status_t rc_init(void *state, tp_t *tp, const coll_args_t *args, void *buf,
                      const rc_config_t *cfg)
{
    rc_state_t *s = state;
    int f = args->f > 0 ? args->f : RC_DEFAULT_F;
    size_t es = dtype_size(args->dtype), count = args->count;

    size_t len = cfg->barrier ? 0 : args->len;

    if (args->root < 0 || args->root >= tp->size || f > RC_MAX_F || es == 0)
        return UCFT_ERR_INVALID_PARAM;
    if (cfg->barrier)
        count = 0;
    else if (count == 0 && len % es == 0)
        count = len / es; /* a driver that gives bytes only */
    if (count * es != len || (len > 0 && buf == NULL) ||
        !coll_redop_valid(args))
        return UCFT_ERR_INVALID_PARAM;
    memset(s, 0, offsetof(rc_state_t, inline_mem));
    s->tp = tp;
    s->args = args;
    s->cfg = cfg;
    s->buf = buf;
    /* Holes (reduce_corrected_holes.c): the frame's original positions,
     * every rank holding one. */
    s->holes = args->frame != NULL;
    s->map = s->holes ? args->frame : args->map;
    s->n = s->holes ? args->frame->n : tp->size;
    s->chst = s->ch_inline;
    if (s->holes && (s->n < tp->size || s->n > (1 << 24)))
        return UCFT_ERR_INVALID_PARAM;
    s->f = f;
    s->len = len;
    s->count = count;
    s->cap = 2 * (f + 1);
    s->ncand = cfg->allreduce ? (f + 1 < tp->size ? f + 1 : tp->size) : 1;
    s->pair = cfg->allreduce && s->n == 2;
    s->flat = itree_flat(s->n);
    s->star = cfg->allreduce && !s->pair && s->flat;
    s->hfix = cfg->scheme == RC_SCHEME_BIT ? 4 : 8;
    s->ufix = cfg->allreduce ? 4 : 0;
    s->tmax = s->hfix + s->len +
              (cfg->scheme == RC_SCHEME_LIST ? 4 * (size_t)s->cap : 0);
    size_t ul = s->ufix + s->len, dl = 4 + s->len;
    size_t need = 2 * s->tmax + 2 * ul + (cfg->allreduce ? 2 * dl : 0);
    s->mem = need <= sizeof(s->inline_mem) ? s->inline_mem : malloc(need);
    if (s->mem == NULL)
        return UCFT_ERR_NO_MEMORY;
    s->sbuf = s->mem;
    s->rbuf = s->sbuf + s->tmax;
    s->ubuf = s->rbuf + s->tmax;
    s->usend = s->ubuf + ul;
    s->dbuf = s->usend + ul;
    s->dsend = s->dbuf + dl;
    s->status = UCFT_INPROGRESS;
    tp_req_t *reqs[4] = {&s->sreq, &s->ureq, &s->rreq, &s->dreq};
    for (int i = 0; i < 4; i++) {
        reqs[i]->cb = req_cb;
        reqs[i]->arg = s;
    }
    s->sreq.buffered = 1; /* copies that may go unreceived (transport T7) */
    return UCFT_OK;
}

ucft_status_t rc_start(void *state)
{
    rc_state_t *s = state;

    s->in_start = 1;
    rc__begin_attempt(s, 0);
    step(s);
    s->in_start = 0;
    return s->done ? s->status : UCFT_INPROGRESS;
}

ucft_status_t rc_test(const void *state)
{
    return ((const rc_state_t *)state)->status;
}

void rc_on_failure(void *state, int rank)
{
    rc_state_t *s = state;

    if (!s->cleaned)
        coll_gate_failure(s->gate, rank);
    if (s->cleaned || s->over || is_dead(s, rank))
        return;
    if (s->ndead == s->capdead) {
        unsigned cap = s->capdead ? 2 * s->capdead : 4;
        int *d = realloc(s->dead, cap * sizeof(*d));
        if (d == NULL) {
            fail_now(s, UCFT_ERR_NO_MEMORY);
            return;
        }
        s->dead = d;
        s->capdead = cap;
    }
    s->dead[s->ndead++] = rank;
    RC_TRACE(s, "failure of rank %d%s", rank, s->restart ? " (moving on)" : "");
    if (s->restart)
        return;
    if (s->cfg->allreduce && rank == s->root) {
        /* The root of this attempt failed: every survivor moves on. */
        s->restart = 1;
        tp_req_t *rq[3] = {&s->ureq, &s->rreq, &s->dreq};
        for (int i = 0; i < 3; i++)
            if (s->busy & (RC_B_UP << i))
                tp_cancel(s->tp, rq[i]);
        step(s);
        return;
    }
    int v = vr(s, rank);
    for (int k = 0; k <= s->f + 2; k++) {
        uint32_t b = 1u << k;
        if (!((s->up_need | s->dn_need) & b) || slot_vrank(s, k) != v)
            continue;
        if ((s->up_need & b) && !((s->up_got | s->up_dead) & b)) {
            s->up_dead |= b;
            note_failure(s, rank, 0);
        }
        if ((s->dn_need & b) && !((s->dn_got | s->dn_dead) & b))
            s->dn_dead |= b;
    }
    int ci = v > 0 && tparent(s, v) == s->v ? child_index(s, v) : -1;
    if (ci >= 0 && !s->chst[ci]) {
        ch_set(s, (unsigned)ci, RC_CH_DEAD);
        note_failure(s, rank, 1);
    }
    if (s->holes && s->v == 0 && v > 0 && s->lst[v] == RC_L_OPEN) {
        s->lst[v] = RC_L_DEAD;
        s->lst_open--;
    }
    step(s);
}

void rc_cleanup(void *state)
{
    rc_state_t *s = state;
    tp_req_t *rq[3] = {&s->ureq, &s->rreq, &s->dreq};

    coll_gate_cleanup(s->gate);
    s->cleaned = 1;
    for (int i = 0; i < 3; i++)
        if (s->busy & (RC_B_UP << i))
            tp_cancel(s->tp, rq[i]);
    /* The scratch outlives the requests that use it: a send still in
     * flight reads it (UCX's rendezvous and zero-copy protocols read the
     * buffer after the call returned; a kept instance retired by a later
     * one may still have one), and a receive that had matched before the
     * cancel writes it. req_cb frees it once the last one is done. */
    if (s->busy == 0)
        free_mem(s);
    free(s->dead);
    s->dead = NULL;
    rc__hfree(s);
    s->ndead = s->capdead = 0;
}

void rc_destroy(void *state)
{
    coll_gate_destroy(((rc_state_t *)state)->gate);
    rc__hfree(state);
    free_mem(state);
}

unsigned rc_stale_kinds(const void *state, unsigned *kinds, unsigned max)
{
    const rc_state_t *s = state;
    unsigned n = 0;

    if (s->cleaned)
        return 0;
    /* Every kind of the attempts left behind (all of them once over). */
    unsigned gone = (unsigned)s->attempt + (s->restart || s->over);
    for (unsigned a = 0; a < gone; a++)
        for (int what = RC_UP; what <= RC_DOWN && n < max; what++)
            kinds[n++] = kind_of(s, a, what);
    /* A root that has picked its answer does not hear the others. */
    if (!s->restart && !s->over && s->v == 0 && s->sel >= 0 && n < max)
        kinds[n++] = kind_of(s, (unsigned)s->attempt, RC_TREE);
    return n + coll_gate_stale(s->gate, kinds + n, max - n);
}

int rc_idle(const void *state)
{
    const rc_state_t *s = state;
    return s->busy == 0 && coll_gate_idle(s->gate);
}
