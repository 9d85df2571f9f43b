/* A communicator's view of the transport (comm/view.h). */
#include "comm/view.h"

static cm_view_t *view_of(tp_t *tp)
{
    return (cm_view_t *)tp;
}

static uint64_t with_src(uint64_t tag, uint32_t src)
{
    return (tag & ~UCFT_TAG_SRC_MASK) |
           ((uint64_t)(src & (UCFT_TAG_MAX_RANKS - 1)) << UCFT_TAG_SRC_SHIFT);
}

/* A tag naming a comm rank as source -> the same naming its job rank. */
static uint64_t to_job(const cm_view_t *v, uint64_t tag)
{
    uint32_t r = ucft_tag_src(tag);
    return with_src(tag, r < (uint32_t)v->f.tp.size ? (uint32_t)v->members[r]
                                                    : UCFT_TAG_MAX_RANKS - 1);
}

static uint64_t to_comm(const cm_view_t *v, uint64_t tag)
{
    uint32_t j = ucft_tag_src(tag);
    int r = j < (uint32_t)v->f.below->size ? v->job_to_rank[j] : -1;
    return with_src(tag, r >= 0 ? (uint32_t)r : UCFT_TAG_MAX_RANKS - 1);
}

static ucft_status_t v_send(tp_t *tp, int dst, uint64_t tag, const void *buf,
                            size_t len, tp_req_t *req)
{
    cm_view_t *v = view_of(tp);
    if (dst < 0 || dst >= tp->size)
        return UCFT_ERR_INVALID_PARAM;
    return tp_send(v->f.below, v->members[dst],
                   with_src(tag, (uint32_t)v->me_job), buf, len, req);
}

static void v_recv_done(tp_req_t *req)
{
    cm_view_t *v = req->view;
    req->tag = to_comm(v, req->tag);
    req->cb = req->view_cb;
    req->cb(req);
}

static ucft_status_t v_recv(tp_t *tp, uint64_t tag, uint64_t mask, void *buf,
                            size_t len, tp_req_t *req)
{
    cm_view_t *v = view_of(tp);
    if (mask & UCFT_TAG_SRC_MASK)
        tag = to_job(v, tag);
    req->view_cb = req->cb;
    req->view = v;
    req->cb = v_recv_done;
    ucft_status_t st = tp_recv(v->f.below, tag, mask, buf, len, req);
    if (st != UCFT_INPROGRESS) {
        req->cb = req->view_cb;
        if (st == UCFT_OK)
            req->tag = to_comm(v, req->tag);
    }
    return st;
}

static ucft_status_t v_probe(tp_t *tp, uint64_t tag, uint64_t mask,
                             tp_probe_info_t *info)
{
    cm_view_t *v = view_of(tp);
    if (mask & UCFT_TAG_SRC_MASK)
        tag = to_job(v, tag);
    ucft_status_t st = tp_probe(v->f.below, tag, mask, info);
    if (st == UCFT_OK)
        info->tag = to_comm(v, info->tag);
    return st;
}

static void v_peer_failed(tp_t *tp, int rank)
{
    cm_view_t *v = view_of(tp);
    if (rank >= 0 && rank < tp->size)
        tp_peer_failed(v->f.below, v->members[rank]);
}

static void v_watch(tp_t *tp, int rank)
{
    cm_view_t *v = view_of(tp);
    if (rank >= 0 && rank < tp->size)
        tp_watch(v->f.below, v->members[rank]);
}

static void v_disconnect(tp_t *tp, int rank)
{
    cm_view_t *v = view_of(tp);
    if (rank >= 0 && rank < tp->size)
        tp_disconnect(v->f.below, v->members[rank]);
}

static const tp_ops_t view_ops = {.name = "comm-view",
                                  .send = v_send,
                                  .recv = v_recv,
                                  .probe = v_probe,
                                  .peer_failed = v_peer_failed,
                                  .watch = v_watch,
                                  .disconnect = v_disconnect,
                                  .cancel = tp_filter_cancel,
                                  TP_FILTER_PASS_OPS};

void cm_view_init(cm_view_t *v, tp_t *base, int rank, int size,
                  const int *members, const int *job_to_rank)
{
    v->f.tp =
        (tp_t){.ops = &view_ops, .rank = rank, .size = size, .log = base->log};
    v->f.below = base;
    v->me_job = members[rank];
    v->members = members;
    v->job_to_rank = job_to_rank;
}
