/*
 * Communicators made from others (include/ucft.h: ucft_comm_dup, _split,
 * _shrink, _free). Every maker is one agreement on the parent
 * (collectives/agree.h) whose value carries what the members must share:
 * the context ids free at every contributor (an AND of bitmaps), and for
 * a split each rank's (color, key) in a slot of its own (the others
 * contribute all ones, the identity of AND). The agreement gives every
 * survivor the same value and the same failed set F (the ranks that did
 * not contribute), so every survivor computes the same membership and
 * context id: creation is uniform through failures, never a mix of
 * success and error (docs/comms.md).
 *
 *   dup     the parent's group, F included (its failures stay failures);
 *   split   the contributors of each color, ordered by (key, parent rank);
 *   shrink  the parent's group without F.
 *
 * A new communicator gets a context id free at every
 * contributor; the communicators of one split share it (their groups are
 * disjoint). Its f, algorithms and placement are chosen as the world's
 * are (UCFT_F, UCFT_<OP>_ALG, UCFT_PLACEMENT over the members' loci).
 */
#include "comm/comm.h"
#include "placement/placement.h"

#include <stdlib.h>
#include <string.h>

/* The agreement's value: the free context ids, then per parent rank a
 * (color, key) pair for a split. */
typedef struct mk_req {
    struct ucft_comm **out;
    int split; /* 1: the value has the (color, key) slots */
    int inject;
} mk_req_t;

/* create_group rides on split: a member's color is the hash of the group
 * it passed (31 bits), a non-member's the same with bit 31 set; keys are
 * positions in the group. Every survivor sees every contributor's hash,
 * so a group given differently anywhere fails everywhere alike. */
#define GROUP_OUT 0x80000000u

static uint32_t group_hash(const int *ranks, int n)
{
    uint32_t h = 2166136261u;
    for (int i = 0; i < n; i++)
        h = (h ^ (uint32_t)ranks[i]) * 16777619u;
    return h & ~GROUP_OUT;
}

/* create_group: the hashes agree, and this rank is a member. */
static ucft_status_t group_check(struct ucft_comm *parent, const uint32_t *slot,
                                 const uint8_t *failed, int *member)
{
    uint32_t h = slot[2 * parent->rank] & ~GROUP_OUT;
    for (int r = 0; r < parent->size; r++) {
        if (failed != NULL && ((failed[r >> 3] >> (r & 7)) & 1))
            continue;
        if ((slot[2 * r] & ~GROUP_OUT) != h) {
            ucft_error(&parent->ctx->log,
                       "ucft_comm_create_group: rank %d passed another group "
                       "than this rank",
                       r);
            return UCFT_ERR_INVALID_PARAM;
        }
    }
    *member = !(slot[2 * parent->rank] & GROUP_OUT);
    return UCFT_OK;
}

/* The placement of a sub-communicator: the world's loci of its members. */
static ucft_status_t place_sub(struct ucft_comm *c)
{
    place_map_t *pm = &c->place;
    int n = c->size;
    ucft_status_t st =
        place_map_subset(pm, &c->layer->world.place, c->members, n);
    pm->pub_loci = calloc((size_t)n, sizeof(*pm->pub_loci));
    if (st != UCFT_OK || pm->pub_loci == NULL)
        return st != UCFT_OK ? st : UCFT_ERR_NO_MEMORY;
    pm->nnodes = 0;
    for (int r = 0; r < n; r++) {
        int seen = 0;
        for (int q = 0; q < r && !seen; q++)
            seen = pm->loci[q].node == pm->loci[r].node;
        pm->nnodes += !seen;
        pm->pub_loci[r] = (ucft_locus_t){pm->loci[r].node, pm->loci[r].package,
                                         pm->loci[r].numa, pm->loci[r].core};
    }
    return UCFT_OK;
}

/* A communicator of the `n` job ranks `members` (owned by it from here),
 * this rank among them, with context id `ctx_id`. */
static ucft_status_t make(struct ucft_comm *parent, int *members, int n,
                          unsigned ctx_id, struct ucft_comm **out)
{
    cm_layer_t *cl = parent->layer;
    struct ucft_context *ctx = parent->ctx;
    struct ucft_comm *c = calloc(1, sizeof(*c));
    ucft_status_t st = UCFT_ERR_NO_MEMORY;
    if (c == NULL) {
        free(members);
        return st;
    }
    c->ctx = ctx;
    c->layer = cl;
    c->uid = parent->uid * 2654435761u + parent->ncreated;
    /* The tag's context field: the id (the low 10 bits) and 4 bits of the
     * uid, so that a communicator that takes a freed one's id (once its
     * tombstone is gone) most likely has tags of its own. */
    c->ctx_id =
        ctx_id |
        (((c->uid * 2654435761u) >> (32 - (UCFT_TAG_CTX_BITS - CM_CTX_ID_BITS)))
         << CM_CTX_ID_BITS);
    c->size = n;
    c->members = members;
    c->job_to_rank = malloc((size_t)ctx->boot.size * sizeof(int));
    c->view = calloc(1, sizeof(*c->view));
    if (c->job_to_rank != NULL && c->view != NULL) {
        for (int j = 0; j < ctx->boot.size; j++)
            c->job_to_rank[j] = -1;
        for (int r = 0; r < n; r++)
            c->job_to_rank[members[r]] = r;
        c->rank = c->job_to_rank[ctx->boot.rank];
        tp_t *base = cl->cfg.checksum ? &cl->csum.f.tp : cm_layer_below(cl);
        cm_view_init(c->view, base, c->rank, n, members, c->job_to_rank);
        c->tp = &c->view->f.tp;
        st = cm_comm_ack_init(c);
    }
    if (st == UCFT_OK)
        st = place_sub(c);
    if (st == UCFT_OK)
        st = cm_coll_init(cl, c);
    /* On the list from here: finalize frees it whatever happens. */
    cm_comm_attach(cl, c);
    cl->ctx_used[ctx_id / 32] |= 1u << (ctx_id % 32); /* the id's bit */
    if (st != UCFT_OK) {
        c->freed = 1;
        return st;
    }
    /* Failures of members already known: the view's transport refuses
     * them, as the context's does. */
    for (size_t i = 0; i < ctx->nfailed; i++) {
        int r = cm_comm_rank_of(c, (uint32_t)ctx->failed_list[i]);
        if (r >= 0)
            cm_coll_cs_failure_one(c, r);
    }
    *out = c;
    return UCFT_OK;
}

/* The context id of the gen-th communicator made from a parent: the first
 * one free at every contributor from 1 + (gen - 1) mod 1023 on,
 * cyclically, or 0 (none). Every member computes the same (same map, same
 * gen). The ids go round instead of the lowest being taken again at once,
 * and an id counts as free at a rank only once its tombstone is gone
 * there (ucft_comm_free): a freed communicator's late messages (a kept
 * instance's corrections) would otherwise match the next one's first
 * instances, which reuse its tags. */
static unsigned next_free(const uint32_t *free_ids, uint32_t gen)
{
    const unsigned nid = CM_CTX_WORDS * 32 - 1; /* ids 1..1023 */
    for (unsigned k = 0; k < nid; k++) {
        unsigned i = 1 + (unsigned)((gen - 1 + k) % nid);
        if ((free_ids[i / 32] >> (i % 32)) & 1)
            return i;
    }
    return 0;
}

static ucft_status_t made(struct ucft_comm *parent, const uint32_t *val,
                          const coll_agree_hdr_t *hdr, const uint8_t *failed,
                          void *arg)
{
    mk_req_t *m = arg;
    int n = parent->size;
    (void)hdr;
    *m->out = NULL;
    cm_comm_reap(parent->layer);
    /* Every member counts every maker, also where it makes nothing. */
    unsigned id = next_free(val, ++parent->ncreated);
    if (id == 0) {
        ucft_error(&parent->ctx->log,
                   "no context id is free at every rank (%d communicators "
                   "at most)",
                   CM_CTX_WORDS * 32 - 1);
        free(m);
        return UCFT_ERR_NO_RESOURCE;
    }
    int *members = malloc((size_t)n * sizeof(int)), k = 0;
    if (members == NULL) {
        free(m);
        return UCFT_ERR_NO_MEMORY;
    }
    if (m->inject == CM_INJECT_CREATE) {
        int member = 0;
        ucft_status_t gst =
            group_check(parent, val + CM_CTX_WORDS, failed, &member);
        if (gst != UCFT_OK || !member) {
            free(members);
            free(m);
            return gst; /* not a member: no communicator, OK */
        }
    }
    int kind = m->split                     ? COLL_MEMBERS_SPLIT
               : m->inject == CM_INJECT_DUP ? COLL_MEMBERS_DUP
                                            : COLL_MEMBERS_SHRINK;
    k = coll_agree_members(kind, n, parent->rank, val + CM_CTX_WORDS, failed,
                           members);
    if (k == 0) {
        free(members);
        free(m);
        return UCFT_OK; /* split: no communicator for this rank */
    }
    for (int i = 0; i < k; i++)
        members[i] = cm_comm_job_rank(parent, members[i]);
    ucft_status_t st = make(parent, members, k, id, m->out);
    if (st != UCFT_OK)
        ucft_error(&parent->ctx->log, "making a communicator of %d ranks: %s",
                   k, ucft_status_string(st));
    free(m);
    return st;
}

/* Posts the agreement of a maker; *out is written at its completion. */
static ucft_status_t post_make(struct ucft_comm *parent, int inject, int color,
                               int key, struct ucft_comm **out,
                               ucft_request_h *req)
{
    cm_layer_t *cl = parent->layer;
    int split = inject == CM_INJECT_SPLIT || inject == CM_INJECT_CREATE;
    size_t words = CM_CTX_WORDS + (split ? 2 * (size_t)parent->size : 0);
    uint32_t *v = malloc(words * sizeof(uint32_t));
    mk_req_t *m = malloc(sizeof(*m));
    if (v == NULL || m == NULL) {
        free(v);
        free(m);
        return UCFT_ERR_NO_MEMORY;
    }
    for (int i = 0; i < CM_CTX_WORDS; i++)
        v[i] = ~(cl->ctx_used[i] | cl->tomb_ids[i]);
    for (size_t i = CM_CTX_WORDS; i < words; i++)
        v[i] = UINT32_MAX;
    if (inject == CM_INJECT_CREATE) {
        v[CM_CTX_WORDS + 2 * parent->rank] = (uint32_t)color;
        v[CM_CTX_WORDS + 2 * parent->rank + 1] = (uint32_t)key;
    } else if (split) {
        v[CM_CTX_WORDS + 2 * parent->rank] =
            color == UCFT_UNDEFINED ? COLL_SPLIT_UNDEF : (uint32_t)color;
        v[CM_CTX_WORDS + 2 * parent->rank + 1] = (uint32_t)key;
    }
    *m = (mk_req_t){.out = out, .split = split, .inject = inject};
    *out = NULL;
    ucft_status_t st = cm_agree_post(parent, inject, v, words, made, m, req);
    free(v);
    if (st != UCFT_OK)
        free(m);
    return st;
}

static ucft_status_t check(struct ucft_comm *comm, struct ucft_comm **out,
                           const char *call)
{
    if (comm == NULL || out == NULL)
        return rt_bad_arg(comm ? comm->ctx : NULL, call,
                          comm == NULL ? "NULL communicator"
                                       : "NULL output pointer");
    if (comm->freed || comm->ctx->finalizing) {
        ucft_error(&comm->ctx->log, "%s: %s", call,
                   comm->freed ? "the communicator was freed"
                               : "called after ucft_finalize");
        return UCFT_ERR_INVALID_PARAM;
    }
    return UCFT_OK;
}

static ucft_status_t wait_made(ucft_status_t st, ucft_request_h *r)
{
    return st == UCFT_OK ? ucft_wait(r, NULL) : st;
}

ucft_status_t ucft_comm_idup(ucft_comm_h comm, ucft_comm_h *newcomm,
                             ucft_request_h *req)
{
    ucft_status_t st = check(comm, newcomm, "ucft_comm_idup");
    if (st == UCFT_OK && comm->revoked)
        return UCFT_ERR_REVOKED;
    return st == UCFT_OK ? post_make(comm, CM_INJECT_DUP, 0, 0, newcomm, req)
                         : st;
}

ucft_status_t ucft_comm_dup(ucft_comm_h comm, ucft_comm_h *newcomm)
{
    ucft_request_h r;
    return wait_made(ucft_comm_idup(comm, newcomm, &r), &r);
}

ucft_status_t ucft_comm_isplit(ucft_comm_h comm, int color, int key,
                               ucft_comm_h *newcomm, ucft_request_h *req)
{
    ucft_status_t st = check(comm, newcomm, "ucft_comm_isplit");
    if (st == UCFT_OK && color < 0 && color != UCFT_UNDEFINED) {
        ucft_error(&comm->ctx->log,
                   "ucft_comm_split: color %d (must be >= 0 or "
                   "UCFT_UNDEFINED)",
                   color);
        return UCFT_ERR_INVALID_PARAM;
    }
    if (st == UCFT_OK && comm->revoked)
        return UCFT_ERR_REVOKED;
    if (st != UCFT_OK)
        return st;
    return post_make(comm, CM_INJECT_SPLIT, color, key, newcomm, req);
}

ucft_status_t ucft_comm_split(ucft_comm_h comm, int color, int key,
                              ucft_comm_h *newcomm)
{
    ucft_request_h r;
    return wait_made(ucft_comm_isplit(comm, color, key, newcomm, &r), &r);
}

ucft_status_t ucft_comm_create_group(ucft_comm_h comm, int n, const int *ranks,
                                     ucft_comm_h *newcomm)
{
    ucft_request_h r;
    ucft_status_t st = check(comm, newcomm, "ucft_comm_create_group");
    if (st != UCFT_OK)
        return st;
    if (n < 1 || n > comm->size || ranks == NULL) {
        ucft_error(&comm->ctx->log,
                   "ucft_comm_create_group: %d ranks (expected 1 to %d, and "
                   "a non-NULL array)",
                   n, comm->size);
        return UCFT_ERR_INVALID_PARAM;
    }
    int pos = -1;
    for (int i = 0; i < n; i++) {
        int bad = ranks[i] < 0 || ranks[i] >= comm->size;
        for (int j = 0; j < i && !bad; j++)
            bad = ranks[j] == ranks[i];
        if (bad) {
            ucft_error(&comm->ctx->log,
                       "ucft_comm_create_group: ranks[%d] = %d is %s", i,
                       ranks[i],
                       ranks[i] < 0 || ranks[i] >= comm->size
                           ? "no rank of the communicator"
                           : "given twice");
            return UCFT_ERR_INVALID_PARAM;
        }
        if (ranks[i] == comm->rank)
            pos = i;
    }
    if (comm->revoked)
        return UCFT_ERR_REVOKED;
    uint32_t h = group_hash(ranks, n);
    return wait_made(post_make(comm, CM_INJECT_CREATE,
                               (int)(pos >= 0 ? h : h | GROUP_OUT),
                               pos >= 0 ? pos : 0, newcomm, &r),
                     &r);
}

ucft_status_t ucft_comm_ishrink(ucft_comm_h comm, ucft_comm_h *newcomm,
                                ucft_request_h *req)
{
    ucft_status_t st = check(comm, newcomm, "ucft_comm_ishrink");
    return st == UCFT_OK ? post_make(comm, CM_INJECT_SHRINK, 0, 0, newcomm, req)
                         : st;
}

ucft_status_t ucft_comm_shrink(ucft_comm_h comm, ucft_comm_h *newcomm)
{
    ucft_request_h r;
    return wait_made(ucft_comm_ishrink(comm, newcomm, &r), &r);
}

/* A freed communicator's tombstone: its id stays out of this rank's
 * contributions to makers for the next CM_CTX_TOMBS frees here (the oldest
 * tombstone goes first), and the sweeper drops messages of its tag
 * context meanwhile (comm/drain.c). Any member of a new communicator is a
 * member of its parent and contributed to its id, so no communicator
 * takes this id while the tombstone stands here. */
static void tomb_push(cm_layer_t *cl, unsigned ctx_id)
{
    if (cl->ntomb == CM_CTX_TOMBS) {
        unsigned old = cl->tomb[cl->tomb_head] & CM_CTX_ID_MASK;
        cl->tomb_ids[old / 32] &= ~(1u << (old % 32));
        cl->tomb_head = (cl->tomb_head + 1) % CM_CTX_TOMBS;
        cl->ntomb--;
    }
    unsigned id = ctx_id & CM_CTX_ID_MASK;
    cl->tomb[(cl->tomb_head + cl->ntomb) % CM_CTX_TOMBS] = (uint16_t)ctx_id;
    cl->ntomb++;
    cl->tomb_ids[id / 32] |= 1u << (id % 32);
    cm_drain_finished(cl); /* its messages may be queued already */
}

ucft_status_t ucft_comm_free(ucft_comm_h *comm)
{
    if (comm == NULL || *comm == NULL)
        return rt_bad_arg(NULL, "ucft_comm_free", "NULL communicator");
    struct ucft_comm *c = *comm;
    if (c == &c->layer->world || c->freed) {
        ucft_error(&c->ctx->log, "ucft_comm_free: %s",
                   c->freed ? "freed already" : "the world cannot be freed");
        return UCFT_ERR_INVALID_PARAM;
    }
    /* Its kept collectives are no longer needed by this rank's calls; the
     * struct stays (freed) until nothing names it (cm_comm_reap: late
     * callbacks may); its context id gets a tombstone. */
    cm_coll_retire_comm(c->layer, c);
    cm_repair_stop(c);
    c->freed = 1;
    unsigned id = c->ctx_id & CM_CTX_ID_MASK;
    c->layer->ctx_used[id / 32] &= ~(1u << (id % 32));
    tomb_push(c->layer, c->ctx_id);
    *comm = NULL;
    cm_comm_reap(c->layer);
    return UCFT_OK;
}
