/*
 * UCP backend: tagged send and receive, probe, cancel. Receives of a
 * declared peer's messages are dropped and posted again; the messages it
 * had sent before the declaration are kept (kept.h) and served first.
 */
#include "transport/ucp/tp_ucp_priv.h"

#include <stdlib.h>
#include <string.h>

static int peer_is_failed(tp_ucp_t *tp, uint64_t tag)
{
    uint32_t src = ucft_tag_src(tag);
    return src < (uint32_t)tp->super.size &&
           tp->peers[src].state == PEER_FAILED;
}

static void send_cb(void *request, ucs_status_t status, void *user_data)
{
    tp_req_t *req = user_data;
    tp_ucp_t *tp = req->priv_owner;
    req->status = from_ucs(status);
    if (req->status != UCFT_OK &&
        tp->peers[req->priv_peer].state == PEER_FAILED)
        req->status = UCFT_ERR_PROC_FAILED;
    tp->outstanding--;
    ucp_request_free(request);
    tp_ucp__complete(tp, req);
}

ucft_status_t tp_ucp_send(tp_t *t, int dst, uint64_t tag, const void *buf,
                          size_t len, tp_req_t *req)
{
    tp_ucp_t *tp = TP(t);
    ucp_ep_h ep;
    ucft_status_t st;

    if (dst < 0 || dst >= t->size)
        return UCFT_ERR_INVALID_PARAM;
    if (tp->peers[dst].state == PEER_UP) { /* the common case, in line */
        ep = tp->peers[dst].ep;
    } else {
        st = tp_ucp__ep_get(tp, dst, &ep);
        if (st != UCFT_OK)
            return st;
    }
    ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK |
                                             UCP_OP_ATTR_FIELD_USER_DATA,
                             .cb.send = send_cb,
                             .user_data = req};
    /* Buffered sends (T7): local completion selects UCX's eager protocols
     * up to RNDV_SEND_NBR_THRESH, which tp_ucp_config_apply lifts to inf. */
    if (req->buffered)
        p.op_attr_mask |= UCP_OP_ATTR_FLAG_FAST_CMPL;
    req->priv_owner = tp;
    req->priv_peer = dst;
    req->priv = NULL;
    tp->outstanding++;
    void *r;
    if (ucft_tag_class(tag) == UCFT_TAG_CLASS_CTRL) {
        req->priv_tag = tag;
        r = tp_ucp__ctrl_send(tp, ep, buf, len, req, &p);
    } else {
        r = ucp_tag_send_nbx(ep, buf, len, tag, &p);
    }
    if (r == NULL || UCS_PTR_IS_ERR(r))
        tp->outstanding--;
    if (r == NULL)
        return UCFT_OK;
    if (UCS_PTR_IS_ERR(r))
        return tp->peers[dst].state == PEER_FAILED
                   ? UCFT_ERR_PROC_FAILED
                   : from_ucs(UCS_PTR_STATUS(r));
    req->priv = r;
    return UCFT_INPROGRESS;
}

static void *post_recv(tp_ucp_t *tp, tp_req_t *req);

/* Receives are posted with UCP_OP_ATTR_FLAG_NO_IMM_CMPL: UCX 1.13 does not
 * fill recv_info when a receive completes inside ucp_tag_recv_nbx, so we
 * let it run this callback there instead. A completion during the post is
 * recorded and reported as "done at once" by tp_ucp_recv (T2, T3). */
#define RECV_DONE_AT_POST ((void *)1)

static void recv_cb(void *request, ucs_status_t status,
                    const ucp_tag_recv_info_t *info, void *user_data)
{
    tp_req_t *req = user_data;
    tp_ucp_t *tp = req->priv_owner;
    /* `info` lives inside the UCX request: read it before freeing that. */
    uint64_t sender_tag = info->sender_tag;
    size_t length = info->length;

    ucp_request_free(request);
    if ((status == UCS_OK || status == UCS_ERR_MESSAGE_TRUNCATED) &&
        peer_is_failed(tp, sender_tag)) {
        /* A message of a fenced rank: drop it and keep waiting. */
        ucft_debug(tp->super.log,
                   "dropped a message of fenced rank %u (tag 0x%016llx)",
                   ucft_tag_src(sender_tag), (unsigned long long)sender_tag);
        void *r = post_recv(tp, req);
        if (!UCS_PTR_IS_ERR(r)) {
            if (req->priv != RECV_DONE_AT_POST) {
                req->priv = r; /* still pending */
            } else if (!tp->posting) {
                req->priv = NULL; /* completed inside the repost */
                tp_ucp__complete(tp, req);
            }
            return;
        }
        status = UCS_PTR_STATUS(r);
    } else {
        req->tag = sender_tag;
        req->length = status == UCS_OK ? length : 0; /* T2 */
        if (status == UCS_OK || status == UCS_ERR_MESSAGE_TRUNCATED) {
            uint32_t src = ucft_tag_src(sender_tag);
            if (src < (uint32_t)tp->super.size)
                tp->peers[src].heard = 1;
        }
    }
    req->status = from_ucs(status);
    tp->outstanding--;
    if (tp->posting) {
        req->priv = RECV_DONE_AT_POST;
        return;
    }
    tp_ucp__complete(tp, req);
}

static void *post_recv(tp_ucp_t *tp, tp_req_t *req)
{
    ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK |
                                             UCP_OP_ATTR_FIELD_USER_DATA |
                                             UCP_OP_ATTR_FLAG_NO_IMM_CMPL,
                             .cb.recv = recv_cb,
                             .user_data = req};
    tp->posting++;
    void *r = ucp_tag_recv_nbx(tp->worker, req->priv_buf, req->priv_len,
                               req->priv_tag, req->priv_mask, &p);
    tp->posting--;
    return r;
}

ucft_status_t tp_ucp_recv(tp_t *t, uint64_t tag, uint64_t mask, void *buf,
                          size_t len, tp_req_t *req)
{
    tp_ucp_t *tp = TP(t);
    if (tp->kept.head != NULL) {
        tp_kept_msg_t *m = tp_kept_take(&tp->kept, tag, mask);
        if (m != NULL) { /* done at once (T2) */
            int fits = m->len <= len;
            if (fits && m->len > 0)
                memcpy(buf, m->data, m->len);
            req->tag = m->tag;
            req->length = fits ? m->len : 0;
            req->status = fits ? UCFT_OK : UCFT_ERR_TRUNCATED;
            req->priv = NULL;
            free(m);
            return UCFT_OK;
        }
    }
    if (tp_ucp__is_ctrl(tag, mask))
        return tp_ucp__ctrl_recv(tp, tag, mask, buf, len, req);
    tp_ucp__recv_fields(tp, req, buf, len, tag, mask);
    req->priv = NULL;
    tp->outstanding++;
    void *r = post_recv(tp, req);
    if (req->priv == RECV_DONE_AT_POST) {
        req->priv = NULL; /* status, tag and length are set */
        return UCFT_OK;
    }
    if (UCS_PTR_IS_ERR(r)) {
        tp->outstanding--;
        return from_ucs(UCS_PTR_STATUS(r));
    }
    req->priv = r;
    return UCFT_INPROGRESS;
}

ucft_status_t tp_ucp_probe(tp_t *t, uint64_t tag, uint64_t mask,
                           tp_probe_info_t *info)
{
    tp_ucp_t *tp = TP(t);
    const tp_kept_msg_t *k = tp_kept_find(&tp->kept, tag, mask);
    if (k == NULL)
        k = tp_ucp__ctrl_find(tp, tag, mask);
    if (k != NULL) {
        info->tag = k->tag;
        info->length = k->len;
        return UCFT_OK;
    }
    if (tp_ucp__is_ctrl(tag, mask))
        return UCFT_ERR_NO_MESSAGE;
    ucp_tag_recv_info_t ri;
    ucp_tag_message_h m = ucp_tag_probe_nb(tp->worker, tag, mask, 0, &ri);
    if (m == NULL)
        return UCFT_ERR_NO_MESSAGE;
    info->tag = ri.sender_tag;
    info->length = ri.length;
    return UCFT_OK;
}

void tp_ucp_cancel(tp_t *t, tp_req_t *req)
{
    tp_ucp_t *tp = TP(t);
    if (req->priv == NULL || tp_ucp__ctrl_cancel(tp, req))
        return;
    /* Already done, its callback waiting for our next progress (req->priv
     * links the deferred list then): it completes normally (T4). */
    for (const tp_req_t *d = tp->deferred; d != NULL; d = d->priv)
        if (d == req)
            return;
    tp->deferring++;
    ucp_request_cancel(tp->worker, req->priv);
    tp->deferring--;
}
