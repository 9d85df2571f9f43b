/*
 * A peer declared failed (tp_peer_failed) or fenced (tp_disconnect): the
 * messages of a failed peer already here are kept (kept.h), its endpoint
 * closed, and this worker's shared-memory FIFO probed (fifo_probe.h).
 */
#include "transport/ucp/tp_ucp_priv.h"
#include <stdlib.h>
#include <string.h>

enum { KEPT_PENDING = 0, KEPT_DONE = 1, KEPT_ABANDONED = 2 };

static void kept_cb(void *request, ucs_status_t status,
                    const ucp_tag_recv_info_t *info, void *user_data)
{
    tp_kept_msg_t *m = user_data;
    (void)info;
    ucp_request_free(request);
    if (m->state == KEPT_ABANDONED) {
        m->state = KEPT_DONE; /* on tp->abandoned: freed from there */
        return;
    }
    m->state = KEPT_DONE;
    m->status = status;
}

/* Lets UCX read what already sits in its transports (a shared-memory FIFO
 * is read only by progress; an eager message may have fragments there),
 * with every completion deferred to our next progress call: no owner
 * callback runs inside tp_peer_failed. Bounded; not from inside UCX. */
static void pull_arrived(tp_ucp_t *tp, int max)
{
    if (tp->progressing)
        return;
    tp->deferring++;
    for (int i = 0; i < max && ucp_worker_progress(tp->worker) > 0; i++)
        ;
    tp->deferring--;
}

/* Takes `rank`'s messages out of UCX's unexpected queue into tp->kept
 * before the rank is declared (kept.h): first what already sits in the
 * transports, then every message of the rank. An eager message's data is
 * here (at most a few progress turns for its fragments); a rendezvous
 * message would need its dead sender: that receive is cancelled and the
 * message dropped. */
static size_t keep_unexpected(tp_ucp_t *tp, int rank)
{
    const uint64_t tag = (uint64_t)(uint32_t)rank << UCFT_TAG_SRC_SHIFT;
    size_t kept = 0, lost = 0;
    tp_kept_free_state(&tp->abandoned, KEPT_DONE);
    pull_arrived(tp, 64);
    for (;;) {
        ucp_tag_recv_info_t ri;
        ucp_tag_message_h h =
            ucp_tag_probe_nb(tp->worker, tag, UCFT_TAG_SRC_MASK, 1, &ri);
        if (h == NULL)
            break;
        tp_kept_msg_t *m = tp_kept_alloc(ri.sender_tag, ri.length);
        if (m == NULL) { /* receive it into nothing: dropped */
            static char none;
            ucp_request_param_t q = {.op_attr_mask = 0};
            void *r = ucp_tag_msg_recv_nbx(tp->worker, &none, 0, h, &q);
            if (r != NULL && !UCS_PTR_IS_ERR(r))
                tp_ucp__keep_closing(tp, r);
            lost++;
            continue;
        }
        ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK |
                                                 UCP_OP_ATTR_FIELD_USER_DATA,
                                 .cb.recv = kept_cb,
                                 .user_data = m};
        void *r = ucp_tag_msg_recv_nbx(tp->worker, m->data, ri.length, h, &p);
        if (UCS_PTR_IS_ERR(r)) {
            free(m);
            lost++;
            continue;
        }
        if (r != NULL) { /* fragments to read, or a rendezvous */
            for (int i = 0; i < 16 && m->state == KEPT_PENDING; i++)
                pull_arrived(tp, 4);
            if (m->state == KEPT_PENDING) {
                /* UCX may never call back a cancelled rendezvous receive
                 * of a dead sender: listed, so that destroy frees it. */
                m->state = KEPT_ABANDONED;
                tp_kept_push(&tp->abandoned, m);
                ucp_request_cancel(tp->worker, r);
                lost++;
                continue;
            }
            if (m->status != UCS_OK) {
                free(m);
                lost++;
                continue;
            }
        }
        tp_kept_push(&tp->kept, m);
        kept++;
    }
    if (kept + lost > 0)
        ucft_debug(tp->super.log,
                   "rank %d declared failed: %zu of its message(s) already "
                   "here kept, %zu dropped (rendezvous or no memory)",
                   rank, kept, lost);
    return kept + lost;
}

/* The self-probe after `rank` died or was fenced, when it ever wrote to
 * this worker, or when this worker's FIFO holds a slot claimed and not
 * yet written (a sender that never wrote to us may have died inside its
 * very first message; tp_ucp__fifo_claim_open). On a node of N ranks a
 * death used to make
 * every survivor create a private worker at once, twice (the data and the
 * heartbeat worker): 2N worker creations competing for the cores, the
 * longest stall a survivor saw after a kill (about 100 ms at N = 32 and
 * 370 ms at N = 64 on 2 cores); now only the few ranks the victim talked
 * to probe. */
static void probe_after(tp_ucp_t *tp, int rank, size_t arrived)
{
    if (tp->peers[rank].heard || arrived > 0 || tp_ucp__fifo_claim_open(tp))
        tp_ucp__probe_fifo(tp);
    else
        ucft_debug(tp->super.log,
                   "rank %d never wrote to this worker and no slot of its "
                   "FIFO is claimed unwritten: no FIFO self-probe",
                   rank);
}

/* UCX's own endpoint to a peer that connected to this worker while we
 * never sent to it: UCP made it on the peer's connection request, and it
 * is the endpoint that UCX ties our receives of the peer's rendezvous
 * messages to (and its keepalive). Over shared memory nothing ever fails
 * it after the peer's death, so such a receive stays matched for ever:
 * cancelling cannot end it (T4 broken: the ring that waits for the
 * cancel never sends its error on, a hang), and at destroy UCX asserts
 * that the endpoint still holds the request. Creating our endpoint to
 * the peer returns that same endpoint (UCP pairs it by connection
 * number); closing it by force then fails every request on it. Taken
 * only when the peer reached this worker (`heard`, or messages of it
 * kept just now): otherwise there is none, and a new endpoint to a dead
 * peer's shared memory would only make UCX log its attach errors. And
 * only when we never called ucp_ep_create for the peer: an endpoint of
 * ours (closed by a fence since) was the pair of the peer's, and after a
 * failed attempt the connection numbers no longer pair, so UCX's
 * endpoint cannot be found (docs/transport.md, "Not covered"). */
static void adopt_ucx_ep(tp_ucp_t *tp, int rank, size_t arrived)
{
    ucp_ep_h ep;
    tp_ucp_peer_t *peer = &tp->peers[rank];
    if (peer->state != PEER_NONE || (!peer->heard && arrived == 0))
        return;
    if (peer->ep_tried) {
        ucft_debug(tp->super.log,
                   "rank %d declared failed: an endpoint UCX made for it, "
                   "if any, cannot be found (ours was made or tried "
                   "before)",
                   rank);
        return;
    }
    if (tp_ucp__ep_get(tp, rank, &ep) == UCFT_OK)
        ucft_debug(tp->super.log,
                   "rank %d declared failed: closing the endpoint UCX made "
                   "for its connection (its pending requests end)",
                   rank);
}

void tp_ucp_peer_failed(tp_t *t, int rank)
{
    tp_ucp_t *tp = TP(t);
    tp_ucp_peer_t *peer;
    if (rank < 0 || rank >= t->size)
        return;
    peer = &tp->peers[rank];
    if (peer->state == PEER_FAILED)
        return;
    if (rank != t->rank) {
        size_t arrived = keep_unexpected(tp, rank);
        probe_after(tp, rank, arrived);
        adopt_ucx_ep(tp, rank, arrived);
    }
    int had_ep = peer->state == PEER_UP;
    peer->state = PEER_FAILED; /* before close: completions see it */
    if (had_ep) {
        tp_ucp__ep_close(tp, peer->ep);
        peer->ep = NULL;
    }
}

void tp_ucp_disconnect(tp_t *t, int rank)
{
    tp_ucp_t *tp = TP(t);
    if (rank < 0 || rank >= t->size || rank == t->rank)
        return;
    probe_after(tp, rank, 0); /* the owner fences the rank: it is gone */
    tp_ucp_peer_t *peer = &tp->peers[rank];
    if (peer->state != PEER_FAILED)
        peer->error_reported = 0; /* a new endpoint's errors count again */
    if (peer->state != PEER_UP)
        return;
    peer->state = PEER_NONE; /* the next send creates a new endpoint */
    tp_ucp__ep_close(tp, peer->ep);
    peer->ep = NULL;
}
