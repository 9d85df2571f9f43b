/*
 * UCP backend: control messages (tag class CTRL) travel as UCP active
 * messages, and this file matches them against the control receives
 * itself; everything else stays a UCP tagged message.
 *
 * Why: control receives are the long-lived ANY_SOURCE ones (revoke
 * notices, and on the detector's worker heartbeats and failure news).
 * Posted as tagged receives, they sit in UCX's wildcard queue for the
 * life of the context, and while that queue is not empty UCX matches
 * every arriving message against it as well (ucp_tag_exp_search_all):
 * about 80 instructions per point-to-point message here
 * (docs/bench.md, "Per-message cost"). Active messages bypass tag
 * matching, so the data path's receives stay in UCX's hashed queues.
 *
 * The contract (transport.h) is kept: a control receive matches
 * (tag & mask) in post order; a message that no receive takes waits in
 * arrival order (ctrl_unexp) for the next one, or a probe; truncation
 * reports the tag and length 0 (T2); completions run from progress (T3);
 * a message of a declared rank is dropped on arrival, one that arrived
 * before the declaration is kept (T5: with active messages the backend
 * sees when each arrives); cancel completes with UCFT_ERR_CANCELED. Sends
 * are eager (UCP_AM_SEND_FLAG_EAGER), so the whole message is here when
 * the handler runs. A receive or probe whose mask leaves the class open
 * sees both kinds of message.
 */
#include "transport/ucp/tp_ucp_priv.h"

#include <stdlib.h>
#include <string.h>

#define CTRL_AM_ID 0

/* req->priv of a posted control receive (no UCX request behind it); the
 * posted list is linked through req->priv_owner. */
#define CTRL_POSTED ((void *)2)

static int matches(uint64_t tag, uint64_t want, uint64_t mask)
{
    return ((tag ^ want) & mask) == 0;
}

/* Takes `req` out of the posted list, where the link `*p` names it. */
static void unlink_posted(tp_ucp_t *tp, void **p, tp_req_t *req)
{
    *p = req->priv_owner;
    if (tp->ctrl_tail == &req->priv_owner)
        tp->ctrl_tail = p;
    req->priv_owner = tp;
}

/* Takes the first posted receive that matches `tag`, or NULL. */
static tp_req_t *take_posted(tp_ucp_t *tp, uint64_t tag)
{
    for (void **p = &tp->ctrl_posted; *p != NULL;) {
        tp_req_t *req = *p;
        if (matches(tag, req->priv_tag, req->priv_mask)) {
            unlink_posted(tp, p, req);
            return req;
        }
        p = &req->priv_owner;
    }
    return NULL;
}

/* Fills a receive with a message (T2: the tag always, the data and its
 * length only when it fits). */
static void deliver(tp_req_t *req, uint64_t tag, const void *data, size_t len)
{
    int fits = len <= req->priv_len;
    if (fits && len > 0)
        memcpy(req->priv_buf, data, len);
    req->tag = tag;
    req->length = fits ? len : 0;
    req->status = fits ? UCFT_OK : UCFT_ERR_TRUNCATED;
}

static ucs_status_t am_cb(void *arg, const void *header, size_t header_length,
                          void *data, size_t length,
                          const ucp_am_recv_param_t *param)
{
    tp_ucp_t *tp = arg;
    uint64_t tag;

    if (header_length != sizeof(tag) ||
        (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)) {
        ucft_warn(tp->super.log,
                  "a control message with a %zu-byte header%s: dropped "
                  "(expected 8 bytes, sent eagerly)",
                  header_length,
                  (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)
                      ? " by rendezvous"
                      : "");
        return UCS_OK;
    }
    memcpy(&tag, header, sizeof(tag));
    uint32_t src = ucft_tag_src(tag);
    if (ucft_tag_class(tag) != UCFT_TAG_CLASS_CTRL ||
        src >= (uint32_t)tp->super.size) {
        ucft_warn(tp->super.log,
                  "a control message with tag 0x%016llx (class %u, sender "
                  "%u of %d ranks): dropped",
                  (unsigned long long)tag, ucft_tag_class(tag), (unsigned)src,
                  tp->super.size);
        return UCS_OK;
    }
    if (tp->peers[src].state == PEER_FAILED) {
        ucft_debug(tp->super.log,
                   "dropped a control message of fenced rank %u (tag "
                   "0x%016llx)",
                   (unsigned)src, (unsigned long long)tag);
        return UCS_OK;
    }
    tp->peers[src].heard = 1;
    tp_req_t *req = take_posted(tp, tag);
    if (req != NULL) {
        deliver(req, tag, data, length);
        tp->outstanding--;
        tp_ucp__complete(tp, req);
        return UCS_OK;
    }
    tp_kept_msg_t *m = tp_kept_alloc(tag, length);
    if (m == NULL) {
        ucft_warn(tp->super.log,
                  "no memory to keep a control message (tag 0x%016llx, %zu "
                  "bytes): dropped",
                  (unsigned long long)tag, length);
        return UCS_OK;
    }
    if (length > 0)
        memcpy(m->data, data, length);
    tp_kept_push(&tp->ctrl_unexp, m);
    return UCS_OK;
}

ucs_status_t tp_ucp__ctrl_init(tp_ucp_t *tp)
{
    ucp_am_handler_param_t p = {.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID |
                                              UCP_AM_HANDLER_PARAM_FIELD_CB |
                                              UCP_AM_HANDLER_PARAM_FIELD_ARG,
                                .id = CTRL_AM_ID,
                                .cb = am_cb,
                                .arg = tp};
    return ucp_worker_set_am_recv_handler(tp->worker, &p);
}

int tp_ucp__is_ctrl(uint64_t tag, uint64_t mask)
{
    const uint64_t cls = (uint64_t)3 << UCFT_TAG_CLASS_SHIFT;
    return (mask & cls) == cls && ucft_tag_class(tag) == UCFT_TAG_CLASS_CTRL;
}

void *tp_ucp__ctrl_send(tp_ucp_t *tp, ucp_ep_h ep, const void *buf, size_t len,
                        tp_req_t *req, ucp_request_param_t *p)
{
    (void)tp;
    p->op_attr_mask |= UCP_OP_ATTR_FIELD_FLAGS;
    p->flags = UCP_AM_SEND_FLAG_EAGER;
    /* The header lives in the request until the send completes. */
    return ucp_am_send_nbx(ep, CTRL_AM_ID, &req->priv_tag,
                           sizeof(req->priv_tag), buf, len, p);
}

ucft_status_t tp_ucp__ctrl_recv(tp_ucp_t *tp, uint64_t tag, uint64_t mask,
                                void *buf, size_t len, tp_req_t *req)
{
    tp_ucp__recv_fields(tp, req, buf, len, tag, mask);
    tp_kept_msg_t *m = tp_kept_take(&tp->ctrl_unexp, tag, mask);
    if (m != NULL) { /* done at once (T2) */
        deliver(req, m->tag, m->data, m->len);
        req->priv = NULL;
        free(m);
        return UCFT_OK;
    }
    req->priv = CTRL_POSTED;
    req->priv_owner = NULL;
    *tp->ctrl_tail = req;
    tp->ctrl_tail = &req->priv_owner;
    tp->outstanding++;
    return UCFT_INPROGRESS;
}

const tp_kept_msg_t *tp_ucp__ctrl_find(const tp_ucp_t *tp, uint64_t tag,
                                       uint64_t mask)
{
    return tp_kept_find(&tp->ctrl_unexp, tag, mask);
}

int tp_ucp__ctrl_cancel(tp_ucp_t *tp, tp_req_t *req)
{
    if (req->priv != CTRL_POSTED)
        return 0;
    for (void **p = &tp->ctrl_posted; *p != NULL;
         p = &((tp_req_t *)*p)->priv_owner) {
        if (*p != req)
            continue;
        unlink_posted(tp, p, req);
        req->status = UCFT_ERR_CANCELED;
        req->length = 0;
        tp->outstanding--;
        tp->deferring++; /* never inside the cancel call (T3) */
        tp_ucp__complete(tp, req);
        tp->deferring--;
        break;
    }
    return 1;
}

void tp_ucp__ctrl_cleanup(tp_ucp_t *tp)
{
    size_t n = 0;
    for (const tp_kept_msg_t *m = tp->ctrl_unexp.head; m != NULL; m = m->next)
        n++;
    if (n > 0)
        ucft_info(tp->super.log,
                  "discarded %zu unmatched control message(s) at destroy", n);
    tp_kept_free_all(&tp->ctrl_unexp);
    /* Posted control receives hold nothing of UCX's: they never complete,
     * and do not keep the worker alive. */
    for (const tp_req_t *r = tp->ctrl_posted; r != NULL; r = r->priv_owner)
        tp->outstanding--;
    tp->ctrl_posted = NULL;
    tp->ctrl_tail = &tp->ctrl_posted;
}
