/*
 * Corrected reduce / allreduce / barrier around holes (args->frame;
 * UCFT_TREE_REPAIR=reroute|lookup, docs/trees.md): the communicator's
 * original I(f)-tree and up-correction groups over its original
 * positions, with the positions of excluded members (holes) routed
 * around, as Hursey & Graham reroute a binomial tree.
 *
 * Tree. A live v's parent is its nearest live ancestor in the original
 * tree (itree.h). Subtree k's head (position k + 1) may be a hole: then
 * the subtree's first live member by local index (its *acting head*)
 * becomes the root's child, and every live member whose ancestors in the
 * subtree are all holes becomes the acting head's child. So every
 * subtree still answers the root with one message; a subtree with no
 * live member answers nothing.
 *
 * Groups. Group g keeps its original members, less its holes. A group
 * with a hole (one with no live member in some subtree k, the short last
 * group included) is *holed*: its live members also send their
 * up-corrected input to the root, one way (the root joins no exchange).
 * Subtree k's answer then holds every group that has a live member in k;
 * the root adds its own value and, for each group without a live member
 * in k, what that group's members sent it (mk, per subtree). An empty
 * subtree's answer is thus the root's sums alone: every group lacks a
 * member there, and the root heard them all. The root waits for every
 * member it listens to (its value, or its failure). Each value is in the
 * result at most once (a member's value reaches the root through its
 * subtree's answer only when its group has a live member there, and then
 * not through mk), and every survivor's is in it: so the corrected
 * semantics of section 4.1 hold with at most f new failures (a new
 * failure taints one subtree's answer; f + 1 subtrees).
 *
 * Down (allreduce, binomial subtrees): the root also sends the result to
 * every holed group's member that is not its child, who waits for it as
 * for its parent and its group: a hole takes one of its paths away, the
 * root (whose failure restarts the attempt) gives one that no other
 * failure breaks. Star (up to ITREE_FLAT_MAX original positions): the
 * root sends to every live rank.
 *
 * Candidate roots (allreduce): the first f + 1 live positions after the
 * root in the original order.
 */
#include "reduce_corrected_impl.h"

#include <stdlib.h>

/* The first live member of subtree k by local index, or -1. */
static int head(const rc_state_t *s, int k)
{
    for (long v = k + 1; v < s->n; v += s->f + 1)
        if (!is_hole(s, (int)v))
            return (int)v;
    return -1;
}

/* Live v is its subtree's first live member: every earlier one (local
 * index below v's) is a hole. (A walk down from v: one step for most.) */
static int acting_head(const rc_state_t *s, int v)
{
    for (int u = v - (s->f + 1); u > 0; u -= s->f + 1)
        if (!is_hole(s, u))
            return 0;
    return 1;
}

int rc__hparent(const rc_state_t *s, int v)
{
    int p = v;
    do
        p = itree_parent_in(p, s->f, s->flat);
    while (p > 0 && is_hole(s, p));
    if (p > 0)
        return p;
    int h = head(s, itree_subtree(v, s->f));
    return h == v ? 0 : h;
}

int rc__ch_room(rc_state_t *s, unsigned need)
{
    if (need <= s->kidcap || (!s->holes && need <= RC_INLINE_CHILDREN))
        return 0;
    unsigned cap = s->kidcap ? 2 * s->kidcap : 16;
    while (cap < need)
        cap *= 2;
    int *k = realloc(s->kids, cap * sizeof(*k));
    if (k == NULL)
        return -1;
    s->kids = k;
    if (cap > RC_INLINE_CHILDREN) {
        uint8_t *c = s->chst == s->ch_inline ? NULL : s->chst;
        c = realloc(c, cap);
        if (c == NULL)
            return -1;
        s->chst = c;
    }
    s->kidcap = cap;
    return 0;
}

static int push(rc_state_t *s, int v)
{
    if (rc__ch_room(s, s->nchild + 1) != 0)
        return -1;
    s->kids[s->nchild++] = v;
    return 0;
}

/* Appends the live nodes below hole c whose path up to c holds only
 * holes (their nearest live ancestor is whoever adopts c's place), all
 * but `skip`. */
static int frontier(rc_state_t *s, int c, int skip)
{
    for (unsigned i = 0;; i++) {
        int d = itree_child_in(c, i, s->n, s->f, s->flat);
        if (d < 0)
            return 0;
        if (is_hole(s, d) ? frontier(s, d, skip) != 0
                          : d != skip && push(s, d) != 0)
            return -1;
    }
}

int rc__hkids(rc_state_t *s)
{
    int v = s->v, f = s->f;
    s->nchild = 0;
    if (v == 0) {
        for (int k = 0; k <= f; k++) {
            int h = head(s, k);
            if (h >= 0 && push(s, h) != 0)
                return -1;
        }
        return 0;
    }
    for (unsigned i = 0;; i++) {
        int d = itree_child_in(v, i, s->n, f, s->flat);
        if (d < 0)
            break;
        if (is_hole(s, d) ? frontier(s, d, -1) != 0 : push(s, d) != 0)
            return -1;
    }
    /* The acting head adopts the orphans of a holed head. */
    int k = itree_subtree(v, f);
    if (is_hole(s, k + 1) && acting_head(s, v) && frontier(s, k + 1, v) != 0)
        return -1;
    return 0;
}

/* Group g has no live member in subtree k. */
static int hole_in(const rc_state_t *s, int g, int k)
{
    int m = itree_member(g, k, s->n, s->f);
    return m < 0 || is_hole(s, m);
}

int rc__hole_group(const rc_state_t *s, int g)
{
    for (int k = 0; k <= s->f; k++)
        if (hole_in(s, g, k))
            return 1;
    return 0;
}

int rc__hroot_begin(rc_state_t *s)
{
    int n = s->n, f = s->f;
    if ((unsigned)n > s->lstcap) {
        uint8_t *l = realloc(s->lst, (size_t)n);
        if (l == NULL)
            return -1;
        s->lst = l;
        s->lstcap = (unsigned)n;
    }
    if (s->mk == NULL) {
        /* (len 0: never written, any pointer will do) */
        s->mk = s->len > 0 ? malloc((size_t)(f + 1) * s->len) : s->ch_inline;
        if (s->mk == NULL)
            return -1;
    }
    memset(s->lst, 0, (size_t)n);
    memset(s->mkf, 0, sizeof(s->mkf));
    s->lst_open = 0;
    s->lst_next = 1;
    s->empty = -1;
    for (int k = f; k >= 0; k--)
        if (head(s, k) < 0)
            s->empty = k;
    for (int g = 0; g <= itree_full_groups(n, f); g++) {
        if (!rc__hole_group(s, g))
            continue;
        for (int k = 0; k <= f; k++) {
            int m = itree_member(g, k, n, f);
            if (m < 0 || is_hole(s, m))
                continue;
            if (is_dead(s, rk(s, m))) {
                s->lst[m] = RC_L_DEAD;
                continue;
            }
            s->lst[m] = RC_L_OPEN;
            s->lst_open++;
        }
    }
    return 0;
}

/* mk[k] = mk[k] op val (flags fl). */
static void fold(rc_state_t *s, int k, uint32_t fl, const unsigned char *val)
{
    unsigned char *d = s->mk + (size_t)k * s->len;
    if (!(s->mkf[k] & RC_M_HAS)) {
        if (s->len > 0)
            memcpy(d, val, s->len);
        s->mkf[k] = RC_M_HAS | (fl & RC_F_DECIDED);
        return;
    }
    combine(s, &s->mkf[k], d, fl & RC_F_DECIDED, val);
}

void rc__hroot_up(rc_state_t *s, int src, uint32_t fl, const unsigned char *val)
{
    if (src <= 0 || src >= s->n || s->lst[src] != RC_L_OPEN) {
        RC_TRACE(s, "up from v%d ignored", src);
        return;
    }
    RC_TRACE(s, "up from v%d (holed group)", src);
    s->lst[src] = RC_L_GOT;
    s->lst_open--;
    int g = itree_group(src, s->f);
    for (int k = 0; k <= s->f; k++)
        if (hole_in(s, g, k))
            fold(s, k, fl, val);
}

void rc__hroot_result(rc_state_t *s)
{
    if (s->has_value || s->err_final || s->lst_open)
        return;
    if (s->sel < 0 && s->empty < 0) {
        if (s->ch_open == 0)
            s->err_final = 1; /* no failure-free subtree */
        return;
    }
    int k = s->sel >= 0 ? itree_subtree(s->kids[s->sel], s->f) : s->empty;
    unsigned char *res;
    uint32_t fl;
    if (s->sel >= 0) {
        res = s->rbuf + s->hfix;
        fl = rd32(s->rbuf) & RC_F_DECIDED;
        combine(s, &fl, res, s->acc_flags, s->sbuf + s->hfix);
    } else {
        res = s->sbuf + s->hfix;
        fl = s->acc_flags & RC_F_DECIDED;
        s->sel = -2;
    }
    if (s->mkf[k] & RC_M_HAS)
        combine(s, &fl, res, s->mkf[k], s->mk + (size_t)k * s->len);
    if (s->cfg->allreduce) {
        got_value(s, res);
    } else {
        s->has_value = 1;
        if (s->len > 0)
            memcpy(s->buf, res, s->len);
    }
}

int rc__cand_rank(const rc_state_t *s, int i)
{
    const coll_map_t *m = s->map;
    int root = s->args->root;
    if (!s->holes) /* s->map is args->map */
        return coll_rank_of(s->args, i, root, s->n);
    for (int j = 0; j < s->n; j++) {
        int r = m->rank[(j + m->pos[root]) % s->n];
        if (r >= 0 && i-- == 0)
            return r;
    }
    return -1;
}

void rc__hfree(rc_state_t *s)
{
    free(s->kids);
    if (s->chst != s->ch_inline)
        free(s->chst);
    free(s->lst);
    if (s->len > 0)
        free(s->mk);
    s->kids = NULL;
    s->chst = s->ch_inline;
    s->lst = NULL;
    s->mk = NULL;
    s->kidcap = s->lstcap = 0;
}
