/*
 * Corrected reduce / allreduce: what happens when a message arrives, how
 * an attempt starts and how the root picks its answer (section 4.3). See
 * reduce_corrected.c for the whole state machine and its invariants.
 */
#include "reduce_corrected_impl.h"
#include "coll_wire.h"

/* ---- message handlers (no sends, no receives posted here) ---- */

/* The sender of a received message as a virtual rank of this attempt, or
 * -1 (logged: the message is dropped) when it is no rank of the job. */
static int src_vr(rc_state_t *s, const tp_req_t *req)
{
    int src = coll_wire_src(req->tag, s->tp->size);
    if (src < 0) {
        coll_log_bad(s->tp, s->args, req,
                     "no rank of the job has that number: dropped");
        return -1;
    }
    return vr(s, src);
}

void rc__mismatch(rc_state_t *s, const tp_req_t *req)
{
    coll_log_mismatch(s->tp, s->args, req);
    s->mismatch = 1;
}

void rc__handle_up(rc_state_t *s)
{
    int src = src_vr(s, &s->ureq);
    if (src < 0)
        return;
    if (s->holes && s->v == 0) {
        if (s->ureq.length != s->ufix + s->len)
            rc__mismatch(s, &s->ureq);
        else
            rc__hroot_up(s, src, s->ufix ? rd32(s->ubuf) : 0,
                         s->ubuf + s->ufix);
        return;
    }
    int k = src == 0 ? slot_root(s) : itree_subtree(src, s->f);
    uint32_t bit = 1u << k;

    if ((s->up_need & bit) && slot_vrank(s, k) != src) {
        coll_log_bad(s->tp, s->args, &s->ureq,
                     "an up-correction from a rank outside this rank's "
                     "group: dropped");
        return;
    }
    if (s->ureq.length != s->ufix + s->len) {
        rc__mismatch(s, &s->ureq);
        return;
    }
    if (!(s->up_need & bit) || ((s->up_got | s->up_dead) & bit)) {
        RC_TRACE(s, "up from v%d ignored", src);
        return;
    }
    RC_TRACE(s, "up from v%d", src);
    s->up_got |= bit;
    combine(s, &s->acc_flags, s->sbuf + s->hfix,
            s->ufix ? rd32(s->ubuf) & RC_F_DECIDED : 0, s->ubuf + s->ufix);
}

/* Root: is the answer in rbuf from child ci free of failures? (Its list
 * was checked by tree_msg_check.) */
static int answer_clean(const rc_state_t *s, int ci)
{
    uint32_t fl = rd32(s->rbuf);
    int k = s->holes ? itree_subtree(s->kids[ci], s->f) : ci;
    if (s->cfg->scheme != RC_SCHEME_LIST)
        return !(fl & RC_F_TREEFAIL);
    if (fl & RC_F_OVERFLOW)
        return 0;
    uint32_t nl = rd32(s->rbuf + 4);
    for (uint32_t i = 0; i < nl; i++) {
        int e = vr(s, (int)rd32(s->rbuf + s->hfix + s->len + 4 * i));
        if (e > 0 && itree_subtree(e, s->f) == k)
            return 0;
    }
    return 1;
}

/* The tree message in rbuf checked against the shape that a peer calling
 * with this rank's arguments sends, as next_send builds it
 * (coll_wire.h): its size, the flags of this operation, and for the list
 * scheme the count of entries that follow, matching the length, each a
 * rank of the job. */
static coll_wire_verdict_t tree_msg_check(const rc_state_t *s, const char **why)
{
    coll_wire_tree_t shape = {.hfix = s->hfix,
                              .len = s->len,
                              .list = s->cfg->scheme == RC_SCHEME_LIST,
                              .cap = (uint32_t)s->cap,
                              .known = RC_F_TREEFAIL | RC_F_OVERFLOW |
                                       RC_F_TRUNC |
                                       (s->cfg->allreduce ? RC_F_DECIDED : 0),
                              .n = (uint32_t)s->tp->size};
    return coll_wire_tree_check(&shape, s->rbuf, s->rreq.length, why);
}

void rc__handle_tree(rc_state_t *s)
{
    int src = src_vr(s, &s->rreq);
    if (src < 0)
        return;
    int ci = child_index(s, src);
    size_t base = s->hfix + s->len;

    if (ci < 0 || s->chst[ci]) {
        RC_TRACE(s, "tree from v%d ignored", src);
        return;
    }
    const char *bad = NULL;
    coll_wire_verdict_t verdict = tree_msg_check(s, &bad);
    if (verdict == COLL_WIRE_SIZE) {
        rc__mismatch(s, &s->rreq);
        return;
    }
    if (verdict == COLL_WIRE_BAD) {
        coll_log_bad(s->tp, s->args, &s->rreq, bad);
        return;
    }
    RC_TRACE(s, "tree from v%d, flags %x", src, rd32(s->rbuf));
    ch_set(s, (unsigned)ci, RC_CH_GOT);
    uint32_t fl = rd32(s->rbuf);
    if (s->v == 0) {
        if (s->sel < 0 && answer_clean(s, ci))
            s->sel = ci; /* rbuf is kept until the result is built */
        return;
    }
    uint32_t nl = s->cfg->scheme == RC_SCHEME_BIT ? 0 : rd32(s->rbuf + 4);
    s->acc_flags |= fl & (RC_F_TREEFAIL | RC_F_OVERFLOW | RC_F_TRUNC);
    if (s->cfg->scheme == RC_SCHEME_COUNTBIT)
        s->fcount = nl > UINT32_MAX - s->fcount ? UINT32_MAX : s->fcount + nl;
    for (uint32_t i = 0; s->cfg->scheme == RC_SCHEME_LIST && i < nl; i++)
        list_add(s, rd32(s->rbuf + base + 4 * i));
    combine(s, &s->acc_flags, s->sbuf + s->hfix, fl & RC_F_DECIDED,
            s->rbuf + s->hfix);
}

void rc__handle_down(rc_state_t *s)
{
    int src = src_vr(s, &s->dreq);
    int k = -1;

    if (src < 0)
        return;
    if (s->star)
        k = src == 0 ? slot_root(s) : -1;
    else if (src == tparent(s, s->v))
        k = slot_parent(s);
    else if (src == 0)
        k = slot_root(s);
    else if (itree_group(src, s->f) == s->g)
        k = itree_subtree(src, s->f);
    if (k >= 0 && s->dreq.length != 4 + s->len) {
        rc__mismatch(s, &s->dreq);
        return;
    }
    if (k < 0 || ((s->dn_got | s->dn_dead) >> k) & 1) {
        RC_TRACE(s, "down from v%d ignored", src);
        return;
    }
    RC_TRACE(s, "down from v%d, flags %x", src, rd32(s->dbuf));
    s->dn_got |= 1u << k;
    if (!(rd32(s->dbuf) & RC_F_NONE) && !s->has_value)
        got_value(s, s->dbuf + 4);
}

/* ---- attempts ---- */

void rc__begin_attempt(rc_state_t *s, int i)
{
    int n = s->n, f = s->f;

    /* Candidate i: the rank i positions after args->root in the
     * placement order (identity: args->root + i mod n; holes: the i-th
     * live position). */
    while (i < s->ncand && is_dead(s, rc__cand_rank(s, i)))
        i++;
    s->restart = 0;
    if (i >= s->ncand || (!s->cfg->allreduce && i > 0)) {
        s->over = 1;
        finish(s, UCFT_ERR_PROC_FAILED);
        return;
    }
    s->attempt = i;
    s->root = rc__cand_rank(s, i);
    s->v = vr(s, s->tp->rank);
    s->g = s->v == 0 ? itree_full_groups(n, f) : itree_group(s->v, f);
    int holed = s->holes && s->v > 0 && rc__hole_group(s, s->g);
    int nomem;
    if (s->holes) {
        nomem = rc__hkids(s) != 0 || (s->v == 0 && rc__hroot_begin(s) != 0);
    } else {
        s->nchild = itree_nchildren_in(s->v, n, f, s->flat);
        nomem = rc__ch_room(s, s->nchild) != 0;
    }
    if (nomem) {
        s->over = 1;
        finish(s, UCFT_ERR_NO_MEMORY);
        return;
    }
    s->up_need = s->up_got = s->up_dead = 0;
    s->dn_need = s->dn_got = s->dn_dead = 0;
    if (s->v > 0 || (!s->holes && itree_root_in_group(n, f)))
        for (int k = 0; k <= f; k++) {
            int m = itree_member(s->g, k, n, f);
            if (m > 0 && m != s->v && !is_hole(s, m))
                s->up_need |= 1u << k;
        }
    if (!s->holes && itree_grouped_with_root(s->v, n, f))
        s->up_need |= 1u << slot_root(s);
    /* A holed group's member also sends its value to the root. */
    s->up_todo = s->up_need | (holed ? 1u << slot_root(s) : 0);
    s->tree_state = 0;
    s->has_value = s->err_final = 0;
    s->acc_flags = s->fcount = s->nlist = 0;
    s->sel = -1;
    s->dn_child_next = 0;
    s->dn_todo = 0;
    if (s->cfg->allreduce) {
        /* Down: to my children and my group, never to the root; the
         * root's group members that are its children (group 0 is the
         * short group when n <= f + 1) get one message, as children. */
        s->dn_todo = s->up_need & ~(1u << slot_root(s));
        if (s->v == 0 && s->g == 0)
            s->dn_todo = 0;
        if (s->v > 0)
            s->dn_need = s->up_need | 1u << slot_parent(s);
        if (s->v > 0 && s->g == 0)
            s->dn_need &= ~(1u << slot_root(s));
        /* A holed group's member that is no child of the root hears from
         * it too (reduce_corrected_holes.c). */
        if (holed && tparent(s, s->v) != 0)
            s->dn_need |= 1u << slot_root(s);
    }
    if (s->pair) {
        /* Two ranks (reduce_corrected.c): the up exchange alone. */
        s->nchild = 0;
        s->dn_need = s->dn_todo = 0;
        if (s->v > 0)
            s->tree_state = 2;
    }
    if (s->star) {
        /* Down by star: the root sends to every rank, which waits for it
         * alone (a live root reaches every survivor; a dead one makes
         * every survivor move on). */
        s->dn_todo = 0;
        s->dn_need = s->v > 0 ? 1u << slot_root(s) : 0;
    }
    s->dn_nchild = s->star ? (s->v == 0 ? (unsigned)n - 1 : 0) : s->nchild;
    memset(s->chst, 0, s->nchild);
    s->ch_open = s->nchild;
    /* My contribution: the input, or the value I delivered earlier. */
    uint32_t mine = s->decided ? RC_F_DECIDED : 0;
    if (s->len > 0) {
        memcpy(s->sbuf + s->hfix, s->buf, s->len);
        memcpy(s->usend + s->ufix, s->buf, s->len);
    }
    s->acc_flags = mine;
    if (s->ufix)
        wr32(s->usend, mine);
    /* Peers whose failure is already known: their waits are over. */
    for (int k = 0; k <= f + 2; k++) {
        uint32_t b = 1u << k;
        if (!((s->up_need | s->dn_need) & b))
            continue;
        int r = rk(s, slot_vrank(s, k));
        tp_watch(s->tp, r);
        if (!is_dead(s, r))
            continue;
        if (s->up_need & b) {
            s->up_dead |= b;
            note_failure(s, r, 0);
        }
        s->dn_dead |= s->dn_need & b;
    }
    for (unsigned c = 0; c < s->nchild; c++) {
        int r = rk(s, tchild(s, c));
        tp_watch(s->tp, r);
        if (is_dead(s, r)) {
            ch_set(s, c, RC_CH_DEAD);
            note_failure(s, r, 1);
        }
    }
    for (int v = 1; s->holes && s->v == 0 && v < n; v++)
        if (s->lst[v])
            tp_watch(s->tp, rk(s, v));
    RC_TRACE(s,
             "root %d, v%d; need up %x ch %u dn %x; known dead up %x ch %u "
             "dn %x (%u dead); holes: %u listened",
             s->root, s->v, s->up_need, s->nchild, s->dn_need, s->up_dead,
             s->nchild - s->ch_open, s->dn_dead, s->ndead,
             s->holes && s->v == 0 ? s->lst_open : 0);
}

/* Root: build the result once the selected answer (and, if needed, my own
 * up-corrected value) is complete. */
void rc__root_result(rc_state_t *s)
{
    int n = s->n, f = s->f;
    uint32_t upres = s->up_need & ~(s->up_got | s->up_dead);

    if (s->holes) {
        rc__hroot_result(s);
        return;
    }
    if (s->has_value || s->err_final)
        return;
    if (s->sel >= 0) {
        int own = itree_root_adds_own(s->sel, n, f);
        if (own && upres)
            return;
        uint32_t fl = rd32(s->rbuf) & RC_F_DECIDED;
        if (own)
            combine(s, &fl, s->rbuf + s->hfix, s->acc_flags, s->sbuf + s->hfix);
        if (s->cfg->allreduce) {
            got_value(s, s->rbuf + s->hfix);
        } else {
            s->has_value = 1;
            if (s->len > 0)
                memcpy(s->buf, s->rbuf + s->hfix, s->len);
        }
        return;
    }
    if (n == 1) {
        if (s->cfg->allreduce)
            got_value(s, s->buf);
        else
            s->has_value = 1;
        return;
    }
    if (s->ch_open != 0)
        return;
    if (itree_full_groups(n, f) == 0 && !upres) {
        /* n - 1 < f + 1: every rank is in the root's group and sent its
         * value to the root directly; the I(f)-tree has fewer than f + 1
         * subtrees, so their answers prove nothing (our reading of 4.2
         * for tiny n). */
        s->sel = -2;
        if (s->cfg->allreduce)
            got_value(s, s->sbuf + s->hfix);
        else {
            s->has_value = 1;
            if (s->len > 0)
                memcpy(s->buf, s->sbuf + s->hfix, s->len);
        }
        return;
    }
    s->err_final = 1; /* no failure-free subtree */
}
