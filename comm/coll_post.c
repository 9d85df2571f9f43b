/*
 * Posting a collective (comm/coll.h): the checks of the call, the
 * instance's arguments (the communicator's f, sequence, placement map and
 * algorithm state), UCFT_INJECT, the failures already known, and the flow
 * control of reduce loops. The instance's life after its start is
 * comm/coll_life.c's.
 */
#include "comm/comm.h"
#include "runtime/base/clock.h"
#include "collectives/dtype.h"

#include <stdlib.h>
#include <string.h>

static const char *const op_names[CM_COLL_NSLOTS] = {
    "bcast",          "reduce",  "allreduce", "barrier",         "allgather",
    "reduce_scatter", "barrier", "agree",     "allreduce_approx"};
static const char *const var_names[CM_COLL_NOPS] = {
    "BCAST", "REDUCE", "ALLREDUCE", "BARRIER", "ALLGATHER", "REDUCE_SCATTER"};

ucft_status_t cm_coll_init(cm_layer_t *cl, struct ucft_comm *comm)
{
    const cm_config_t *cfg = &cl->cfg;
    for (int i = 0; i < CM_COLL_NOPS; i++) {
        char why[96];
        if (cm_sel_parse(cfg->alg[i], op_names[i], &comm->sel[i], why,
                         sizeof(why)) != UCFT_OK) {
            ucft_error(&cl->ctx->log,
                       "UCFT_%s_ALG='%s': %s (an algorithm, 'fast', or "
                       "SIZE:ALG,SIZE:ALG...; ucft-sim --list shows the "
                       "algorithms)",
                       var_names[i], cfg->alg[i], why);
            return UCFT_ERR_INVALID_PARAM;
        }
        /* The communicator state, if any, is the first entry's. */
        comm->alg[i] = comm->sel[i].ops[0];
    }
    comm->sync = coll_op_find("barrier", "corrected");
    comm->agree = coll_op_find("agree", "era");
    if (comm->sync == NULL || comm->agree == NULL)
        return UCFT_ERR_INTERNAL;
    if (cfg->f < 1 || cfg->f > 64) {
        ucft_error(&cl->ctx->log, "UCFT_F=%d: must be 1..64", cfg->f);
        return UCFT_ERR_INVALID_PARAM;
    }
    if (cfg->coll_batch < 1 || cfg->coll_batch > 64) {
        ucft_error(&cl->ctx->log, "UCFT_COLL_BATCH=%u: must be 1..64",
                   cfg->coll_batch);
        return UCFT_ERR_INVALID_PARAM;
    }
    if (cfg->tree_window < 1 || cfg->tree_window > 65536) {
        ucft_error(&cl->ctx->log,
                   "UCFT_TREE_REPAIR_WINDOW=%u: must be 1..65536",
                   cfg->tree_window);
        return UCFT_ERR_INVALID_PARAM;
    }
    comm->f = cfg->f;
    return cm_coll_cs_init(cl, comm);
}

/* Whether the collectives of `comm` tell the wait when a yield cannot help
 * (coll_args_t.remote_wait): a hybrid wait with a mate to spin for. */
static int mate_spin(const cm_layer_t *cl, const struct ucft_comm *comm)
{
    return comm->place.mate >= 0 && cl->ctx->cfg.wait_mode == RT_WAIT_HYBRID &&
           cl->ctx->cfg.mate_spin_ns > 0;
}

/* The next sequence number of an application's agreement. Tag sequences
 * with CM_REPAIR_SEQ_BIT set are the background agreements' (comm/repair.h):
 * skipped. */
static uint32_t agree_next(struct ucft_comm *comm)
{
    uint32_t s = comm->agree_seq++;
    if (comm->agree_seq & CM_REPAIR_SEQ_BIT)
        comm->agree_seq += CM_REPAIR_SEQ_BIT;
    return s;
}

/* cm_coll_post; `inject_op` is the operation UCFT_INJECT counts the call
 * as (-1: none). */
static void coll_flow(struct ucft_comm *comm, int op);

static ucft_status_t coll_post(ucft_comm_h comm, int op, int inject_op,
                               int root, const void *in, void *out,
                               uint8_t *present, size_t count, int dtype,
                               int redop, ucft_request_h *req,
                               const cm_coll_t *hook, const coll_op_ops_t *aops,
                               const coll_gossip_params_t *gp, unsigned flags)
{
    ucft_status_t st;

    if (comm == NULL)
        return rt_bad_arg(NULL, op_names[op], "NULL communicator");
    cm_layer_t *cl = comm->layer;
    if (comm->revoked && op != CM_COLL_AGREE)
        return UCFT_ERR_REVOKED;
    size_t esize = dtype_size(dtype);
    int reduces = op != CM_COLL_BCAST && op != CM_COLL_BARRIER &&
                  op != CM_COLL_SYNC && op != CM_COLL_ALLGATHER &&
                  op != CM_COLL_AGREE;
    /* Allgather and reduce-scatter: `count` per block, n blocks. */
    int blocks = op == CM_COLL_ALLGATHER || op == CM_COLL_REDUCE_SCATTER;
    size_t nb = blocks ? (size_t)comm->size : 1;
    const coll_user_op_t *uop = reduces ? cm_user_op(cl, redop) : NULL;
    /* The algorithm depends on the size (comm/coll_select.h): checked
     * against the largest buffer any of the table's takes. */
    unsigned mult = op == CM_COLL_SYNC     ? comm->sync->buf_mult
                    : op == CM_COLL_AGREE  ? comm->agree->buf_mult
                    : op == CM_COLL_APPROX ? aops->buf_mult
                                           : cm_sel_buf_mult(&comm->sel[op]);
    const char *bad =
        req == NULL                      ? "NULL request pointer"
        : cl->ctx->finalizing            ? "called after ucft_finalize"
        : esize == 0                     ? "unknown datatype"
        : root < 0 || root >= comm->size ? "root out of range"
        : count > 0 && in == NULL && op != CM_COLL_BCAST ? "NULL send buffer"
        : reduces && uop == NULL && dtype_validate(dtype, redop) != UCFT_OK
            ? "unknown operation, or one the datatype does not "
              "support"
        : count > 0 && esize * mult * nb + nb > SIZE_MAX / count
            ? "count too large"
            : NULL;
    if (bad != NULL) {
        ucft_error(&cl->ctx->log,
                   "%s: %s (count %zu, datatype %d, op %d, root %d of %d, "
                   "buffers %p/%p)",
                   op_names[op], bad, count, dtype, redop, root, comm->size, in,
                   out);
        return UCFT_ERR_INVALID_PARAM;
    }
    coll_flow(comm, op); /* may post and wait for a barrier first */
    /* Tree repair (comm/repair.h): the epoch this instance runs in. */
    cm_epoch_t *ep = cm_repair_op(op) ? cm_repair_epoch(comm, comm->seq) : NULL;
    int rooted = op == CM_COLL_BCAST || op == CM_COLL_REDUCE;
    if (ep != NULL && !rooted)
        root = ep->live[0]; /* allreduce, barrier: not a root of the call */
    if (ep != NULL && ep->dense[root] < 0) {
        ucft_debug(&cl->ctx->log,
                   "%s: root %d is a failed member (agreed): "
                   "UCFT_ERR_PROC_FAILED",
                   op_names[op], root);
        return UCFT_ERR_PROC_FAILED;
    }
    /* Allgather: the n blocks, then n presence bytes (collectives/
     * ring_bw.c, gather_corrected.c). In an epoch, the blocks of its n'
     * live members only, in their dense order (the agreed-failed members'
     * blocks are absent: presence 0 in the output). */
    if (blocks && ep != NULL)
        nb = (size_t)ep->n;
    int me = blocks && ep != NULL ? ep->rank : comm->rank;
    size_t blk = count * esize, len = blk * nb;
    size_t in_off = op == CM_COLL_ALLGATHER ? (size_t)me * blk : 0;
    size_t in_len = op == CM_COLL_ALLGATHER ? blk : len;
    const coll_op_ops_t *ops = op == CM_COLL_SYNC    ? comm->sync
                               : op == CM_COLL_AGREE ? comm->agree
                               : op == CM_COLL_APPROX
                                   ? aops
                                   : cm_sel_pick(&comm->sel[op], len);
    /* Direct mode (include/ucft.h R4): a large blocking broadcast,
     * allreduce or allgather whose algorithm allows it works in the
     * caller's output (the root's buffer of a broadcast); the algorithm's
     * other bytes (receive slots, presence bytes) stay in c->buf. Not for
     * an allgather in an epoch: its n' blocks are spread over n. */
    size_t vlen = len;
    /* A blocking broadcast, allreduce or allgather: the caller leaves its
     * buffers alone until the call returns (direct mode, .input below). */
    int blocking = (flags & CM_POST_BLOCKING) &&
                   (op == CM_COLL_BCAST || op == CM_COLL_ALLREDUCE ||
                    op == CM_COLL_ALLGATHER);
    int direct = blocking && ops->direct && hook == NULL && gp == NULL &&
                 cl->cfg.coll_direct_min > 0 &&
                 vlen >= cl->cfg.coll_direct_min &&
                 !(op == CM_COLL_ALLGATHER && ep != NULL);
    if (op == CM_COLL_ALLGATHER)
        len += nb;
    /* A rank whose operations complete at once (a broadcast root) never
     * waits, so nothing else progresses it: without this, the late messages
     * of its finished instances would stay in the transport until the next
     * wait (thousands of them), and the cancellations of its finished
     * instances would not complete (their states could not be reused). */
    if ((cl->coll_free[op] == NULL && cl->finishing.next != &cl->finishing) ||
        (cl->drain.pending && (++cl->coll_post_tick & 7) == 0))
        ucft_context_progress(cl->ctx);
    /* Retired kept instances are cleaned up from progress; a rank whose
     * operations all complete inside their post (a job of one rank)
     * never progresses, and would keep one per operation. */
    if (cl->coll_retire)
        cm_coll_retire_kept(cl);
    cm_coll_retire_aliased(cl, comm);
    if (cl->drain.pending)
        cm_drain_sweep(cl); /* before this instance posts its receives */
    struct cm_coll *c = cm_coll_get(cl, op, ops);
    if (c == NULL)
        return UCFT_ERR_NO_MEMORY;
    c->ops = ops;
    size_t need = len * ops->buf_mult - (direct ? vlen : 0);
    if (need > c->bufcap) {
        free(c->buf);
        c->buf = malloc(need);
        c->bufcap = c->buf != NULL ? need : 0;
    }
    struct ucft_request *r = rt_req_get(cl->ctx, &cm_coll_req_ops);
    if ((need && c->buf == NULL) || r == NULL) {
        if (r != NULL)
            rt_req_put(r);
        cm_coll_recycle(cl, c); /* nothing was posted */
        return UCFT_ERR_NO_MEMORY;
    }
    /* UCFT_TREE_REPAIR=reroute|lookup: a binomial algorithm and the
     * corrected broadcast in an epoch run on the original tree around the
     * excluded members (and the broadcast's ring in the original order),
     * the corrected reduce family on its frame with holes. */
    const coll_tree_t *tree = NULL;
    const coll_map_t *frame = NULL, *order = NULL;
    if (ep != NULL && (ops->takes_tree || ops->takes_frame) &&
        ((ops->takes_tree && cm_repair_tree(comm, ep, rooted ? root : -1,
                                            &c->rtree, &tree) != UCFT_OK) ||
         cm_repair_frame(comm, ep, &frame, &order) != UCFT_OK)) {
        rt_req_put(r);
        cm_coll_recycle(cl, c); /* nothing was posted */
        return UCFT_ERR_NO_MEMORY;
    }
    cl->coll_stats.ops++;
    c->work = c->buf;
    if (direct) {
        /* The broadcast root's buffer is the caller's `void *buf`. */
        c->work =
            op == CM_COLL_BCAST && out == NULL ? (void *)(uintptr_t)in : out;
        if (op != CM_COLL_BCAST && in_len > 0 && in != c->work + in_off)
            memcpy(c->work + in_off, in, in_len);
    } else if (op == CM_COLL_REDUCE_SCATTER && ep != NULL && in_len > 0)
        for (size_t d = 0; d < nb; d++) /* the live members' blocks */
            memcpy(c->buf + d * blk,
                   (const unsigned char *)in + (size_t)ep->live[d] * blk, blk);
    else if (in_len > 0 && in != NULL)
        memcpy(c->buf + in_off, in, in_len);
    c->out = direct ? NULL : out; /* direct: written in place */
    c->present = present;
    c->spread = op == CM_COLL_ALLGATHER && ep != NULL;
    c->blk = blk;
    c->out_off = op == CM_COLL_REDUCE_SCATTER ? (size_t)me * blk : 0;
    c->out_len = op == CM_COLL_REDUCE_SCATTER ? blk
                 : c->spread                  ? blk * (size_t)comm->size
                 : op == CM_COLL_ALLGATHER    ? len - nb
                                              : len;
    c->req = r;
    c->cl = cl;
    c->ready = 0;
    c->comm = comm;
    c->gen = comm->kept_gen;
    c->kept = c->retired = 0;
    c->bg = hook != NULL && hook->bg;
    c->ep = ep;
    c->args = (coll_args_t){
        .root = ep != NULL ? ep->dense[root] : root,
        .len = len,
        .ctx = comm->ctx_id,
        .seq = c->bg ? CM_REPAIR_SEQ_BIT |
                           (comm->repair.nbg++ & (CM_REPAIR_SEQ_BIT - 1))
               : op == CM_COLL_AGREE ? agree_next(comm)
                                     : comm->seq++,
        .f = comm->f,
        .count = count * nb,
        .dtype = dtype,
        .redop = redop,
        .user_op = uop,
        /* reroute|lookup: a given tree goes with the original order (the
         * corrected broadcast's ring); a frame replaces the map. */
        .map = ep != NULL && ops->takes_tree && order != NULL ? order
               : ep != NULL                                   ? &ep->place.map
               : comm->place.map.n > 0                        ? &comm->place.map
                                                              : NULL,
        .rndv_min = cl->cfg.coll_rndv_min,
        .comm_state = ep == NULL && op < CM_COLL_NOPS && ops == comm->alg[op]
                          ? comm->coll_cs[op]
                          : NULL,
        .done_cb = cm_coll_done,
        .done_arg = c,
        .ready_cb = cm_coll_ready,
        .remote_wait = mate_spin(cl, comm) ? &c->remote_wait : NULL,
        .mate = ep != NULL ? ep->place.mate : comm->place.mate,
        .tree = tree,
        .frame = ops->takes_frame ? frame : NULL,
        .tail = direct ? c->buf : NULL,
        .tail_off = direct ? vlen : 0,
        /* A blocking call's input stays as it is until the call returns,
         * which is after the rank's done_cb (no ready_cb with it). */
        .input = blocking && in_len > 0 ? in : NULL};
    c->remote_wait = 0;
    c->agree_fn = hook != NULL ? hook->agree_fn : NULL;
    c->agree_arg = hook != NULL ? hook->agree_arg : NULL;
    cm_coll_gate(c);
    if (gp != NULL) {
        c->gossip = *gp;
        c->args.gossip = &c->gossip;
    }
    r->comm = comm;
    r->owner = c;
    /* UCFT_INJECT: a call it names runs on a filter that may kill us. */
    tp_t *tp = comm->tp;
    if (cm_inject_active(&cl->inject)) {
        /* A sub-communicator's view sits on the filter already (its
         * armed instances are told apart by context id and sequence). */
        tp_t *itp =
            cm_inject_call(&cl->inject, inject_op, comm->ctx_id, c->args.seq);
        if (comm->view == NULL && ep == NULL)
            tp = itp;
    }
    if (cl->cfg.checksum) {
        /* In front of the injection (flips hit it), under the views. */
        tp_t *ctp = coll_csum_tp(&cl->csum, cm_layer_below(cl));
        if (comm->view == NULL && ep == NULL)
            tp = ctp;
    }
    if (ep != NULL)
        tp = &ep->view.f.tp; /* on the checksum filter or the injection */
    st = ops->init(c->state, tp, &c->args, c->work);
    if (st == UCFT_OK && op == CM_COLL_AGREE)
        coll_agree_set_acked(c->state, comm->ackmap);
    if (st == UCFT_OK) {
        cm_coll_list_add(&cl->colls, c);
        st = ops->start(c->state);
    }
    /* Failures known before this operation began are news to it too (the
     * algorithm must not wait for a rank this context knows is dead), all
     * of them while the state runs: also when the request has completed
     * already (ready_cb, or a kept instance), as the state then runs on
     * and still waits for its peers; so also a kept state done inside its
     * start (an agreement decided at once: a later coordinator may query
     * it, and it answers only a coordinator it knows to be one). */
    int runs = st == UCFT_INPROGRESS || (st == UCFT_OK && ops->keep_after_done);
    for (size_t i = 0; runs && i < cl->ctx->nfailed; i++) {
        int fr = cm_coll_peer(c, (uint32_t)cl->ctx->failed_list[i]);
        if (ops->on_failure != NULL && fr >= 0)
            ops->on_failure(c->state, fr);
        if (c->next == c)
            return *req = r, UCFT_OK; /* finished by that news */
    }
    if (st == UCFT_OK) {
        /* Done at once (e.g. one rank): done_cb did not run. */
        cm_coll_done(c, comm->rank, ops->test(c->state));
    } else if (st != UCFT_INPROGRESS) {
        if (c->ready)
            cl->coll_early--;
        cm_coll_list_del(c);
        cm_drain_finished(cl);
        ops->cleanup(c->state);
        cm_coll_retire(cl, c, 0);
        r->owner = NULL;
        rt_req_put(r);
        return st;
    }
    *req = r;
    return UCFT_OK;
}

ucft_status_t cm_coll_post(ucft_comm_h comm, int op, int root, const void *in,
                           void *out, size_t count, int dtype, int redop,
                           ucft_request_h *req, unsigned flags)
{
    return coll_post(comm, op, op, root, in, out, NULL, count, dtype, redop,
                     req, NULL, NULL, NULL, flags);
}

ucft_status_t cm_coll_post_blocks(ucft_comm_h comm, int op, const void *in,
                                  void *out, uint8_t *present, size_t count,
                                  int dtype, int redop, ucft_request_h *req,
                                  unsigned flags)
{
    return coll_post(comm, op, op, 0, in, out, present, count, dtype, redop,
                     req, NULL, NULL, NULL, flags);
}

ucft_status_t cm_agree_post(struct ucft_comm *comm, int inject_op,
                            const uint32_t *in, size_t words, cm_agree_fn_t fn,
                            void *arg, ucft_request_h *req)
{
    /* The value words then room for the header (collectives/agree.h). */
    cm_coll_t hook = {.agree_fn = fn, .agree_arg = arg};
    if (words == 0 || words > (1u << 24))
        return UCFT_ERR_INVALID_PARAM;
    uint32_t *buf = calloc(1, coll_agree_len(words));
    if (buf == NULL)
        return UCFT_ERR_NO_MEMORY;
    memcpy(buf, in, words * sizeof(uint32_t));
    ucft_status_t st = coll_post(comm, CM_COLL_AGREE, inject_op, 0, buf, NULL,
                                 NULL, coll_agree_len(words), UCFT_UINT8, 0,
                                 req, &hook, NULL, NULL, 0);
    free(buf);
    return st;
}

ucft_status_t cm_agree_post_bg(struct ucft_comm *comm, const uint32_t *in,
                               size_t words, cm_agree_fn_t fn, void *arg,
                               ucft_request_h *req)
{
    cm_coll_t hook = {.agree_fn = fn, .agree_arg = arg, .bg = 1};
    uint32_t *buf = calloc(1, coll_agree_len(words));
    if (buf == NULL)
        return UCFT_ERR_NO_MEMORY;
    memcpy(buf, in, words * sizeof(uint32_t));
    ucft_status_t st = coll_post(comm, CM_COLL_AGREE, -1, 0, buf, NULL, NULL,
                                 coll_agree_len(words), UCFT_UINT8, 0, req,
                                 &hook, NULL, NULL, 0);
    free(buf);
    return st;
}

ucft_status_t cm_coll_post_approx(ucft_comm_h comm, const coll_op_ops_t *ops,
                                  const coll_gossip_params_t *gp,
                                  const void *in, void *out, size_t count,
                                  int dtype, ucft_request_h *req)
{
    return coll_post(comm, CM_COLL_APPROX, CM_COLL_APPROX, 0, in, out, NULL,
                     count, dtype, COLL_REDOP_SUM, req, NULL, ops, gp, 0);
}

ucft_status_t cm_coll_sync(ucft_comm_h comm)
{
    ucft_request_h r;
    ucft_status_t st = cm_coll_post(comm, CM_COLL_SYNC, 0, NULL, NULL, 0,
                                    UCFT_UINT8, 0, &r, 0);
    return st == UCFT_OK ? ucft_wait(&r, NULL) : st;
}

/* ---- flow control of reduce loops ---------------------------------------- */

/* A reduce does not synchronise: a leaf
 * sends its value and is done, so in a loop of reduces the leaves run
 * ahead of the ranks that combine, without bound, and their messages pile
 * up unmatched there (every receive then pays for the pile; with 8 ranks on
 * 2 cores a loop of 20,000 reduces took 3-10x longer per operation than
 * one of 5,000, docs/bench.md).
 *
 * After every UCFT_REDUCE_WINDOW reduces in a row on a communicator, a
 * corrected barrier (CM_COLL_SYNC) is posted without waiting; the reduce
 * that ends the next window waits for it before it posts its own barrier.
 * A rank that passes that wait knows every live rank has posted the
 * previous barrier, so no rank runs more than two windows ahead of
 * another. Every rank takes these decisions at the same place in the
 * sequence of the communicator's collectives (they count the same calls),
 * so the barriers match. An allreduce or a barrier synchronises by itself
 * and restarts the count; a broadcast neither counts nor restarts it.
 *
 * The barrier is corrected: with up to f failures it completes, with more
 * it ends with an error and never hangs. Its outcome is not the reduce's:
 * an error is logged (the reduces themselves report what they see).
 */

static void flow_log(const struct ucft_comm *comm, ucft_status_t st)
{
    if (st != UCFT_OK)
        ucft_debug(&comm->ctx->log, "reduce flow-control barrier: %s",
                   ucft_status_string(st));
}

/* A collective's request always completes: the wait releases it and
 * clears flow_req. */
static void flow_wait(struct ucft_comm *comm)
{
    if (comm->flow_req != NULL)
        flow_log(comm, ucft_wait(&comm->flow_req, NULL));
}

static void coll_flow(struct ucft_comm *comm, int op)
{
    unsigned window = comm->layer->cfg.reduce_window;

    if (op == CM_COLL_ALLREDUCE || op == CM_COLL_BARRIER ||
        op == CM_COLL_ALLGATHER || op == CM_COLL_REDUCE_SCATTER ||
        op == CM_COLL_SYNC || op == CM_COLL_APPROX) {
        comm->flow_run = 0;
        return;
    }
    if (op != CM_COLL_REDUCE || window == 0 || ++comm->flow_run < window)
        return;
    comm->flow_run = 0;
    flow_wait(comm);
    /* A post that fails creates no request: flow_req stays NULL. */
    flow_log(comm,
             coll_post(comm, CM_COLL_SYNC, -1, 0, NULL, NULL, NULL, 0,
                       UCFT_UINT8, 0, &comm->flow_req, NULL, NULL, NULL, 0));
}

void cm_coll_flow_end(struct ucft_comm *comm)
{
    flow_wait(comm);
    comm->flow_run = 0;
}
