/*
 * ucft-shmkill's ucft receiver (--ucft): a UCP transport of ucft
 * (transport/ucp/tp_ucp.h) as job rank 0 of senders + 1, one ANY_SOURCE
 * receive kept posted. After a kill the victim is declared failed
 * (tp_peer_failed), as the runtime does, and the transport's own
 * self-probe gives the verdict: through its cut_off_cb when blocked.
 */
#include "tools/shmkill/rx.h"
#include "transport/ucp/tp_ucp_diag.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct rx_ucft {
    rx_t super;
    tp_t *tp;
    tp_req_t req;
    int posted, done, cut_off;
    unsigned char buf[MAX_PAYLOAD];
} rx_ucft_t;

static void got(tp_req_t *req)
{
    ((rx_ucft_t *)req->arg)->done = 1;
}

static void cut_off(void *arg)
{
    ((rx_ucft_t *)arg)->cut_off++;
}

static ucft_status_t no_lookup(void *arg, int rank, void **addr, size_t *len)
{
    (void)arg;
    (void)rank;
    (void)addr;
    (void)len;
    return UCFT_ERR_PROC_FAILED; /* this receiver never sends */
}

static void tpx_address(rx_t *rx, const void **addr, size_t *len)
{
    tp_address(((rx_ucft_t *)rx)->tp, addr, len);
}

static void tpx_drain(rx_t *rx, uint64_t *cnt, int senders)
{
    rx_ucft_t *r = (rx_ucft_t *)rx;
    const uint64_t mask = ~(UCFT_TAG_SRC_MASK | UCFT_TAG_PAYLOAD_MASK);
    tp_progress(r->tp);
    for (int i = 0; i < 4096; i++) {
        if (!r->posted) {
            r->req = (tp_req_t){.cb = got, .arg = r};
            ucft_status_t st =
                tp_recv(r->tp, ucft_tag_make(UCFT_TAG_CLASS_P2P, 0, 0, 0), mask,
                        r->buf, sizeof(r->buf), &r->req);
            if (st == UCFT_OK) {
                rx_count(rx, r->req.tag, r->buf, cnt, senders);
                continue;
            }
            if (st != UCFT_INPROGRESS)
                return;
            r->posted = 1;
        }
        if (!r->done)
            return;
        r->posted = r->done = 0;
        if (r->req.status == UCFT_OK)
            rx_count(rx, r->req.tag, r->buf, cnt, senders);
    }
}

static int tpx_probe(rx_t *rx, int victim, uint64_t *cnt, int senders)
{
    rx_ucft_t *r = (rx_ucft_t *)rx;
    tp_peer_failed(r->tp, victim + 1);
    if (!tp_ucp_fifo_probe_pending(r->tp) &&
        tp_ucp_fifo_state(r->tp) == FIFO_PROBE_IDLE) {
        /* The victim never wrote to this worker: the transport does not
         * probe (tp_ucp_peer.c) and takes the FIFO as clear; the trial
         * still compares that with the survivors' deliveries. */
        fprintf(stderr,
                "ucft-shmkill: sender %d never reached the "
                "receiver: no self-probe (taken as clear)\n",
                victim);
        return r->cut_off == 0;
    }
    uint64_t end = now_ns() + 10 * PROBE_WAIT_NS;
    fifo_probe_state_t s;
    do {
        tpx_drain(rx, cnt, senders);
        s = tp_ucp_fifo_state(r->tp);
    } while ((s == FIFO_PROBE_IDLE || s == FIFO_PROBE_WAITING) &&
             now_ns() < end);
    if (s == FIFO_PROBE_ARRIVED && r->cut_off == 0)
        return tp_ucp_fifo_mends(r->tp) > 0 ? 2 : 1;
    if (s == FIFO_PROBE_BLOCKED && r->cut_off == 1) {
        fprintf(stderr, "ucft-shmkill: not mended: %s\n",
                tp_ucp_fifo_unmended(r->tp));
        return 0;
    }
    fprintf(stderr,
            "ucft-shmkill: the transport's self-probe is in state %d with "
            "%d cut-off report(s)%s\n",
            (int)s, r->cut_off,
            s == FIFO_PROBE_IDLE ? " (no probe: shared memory off in "
                                   "UCX_TLS?)"
                                 : "");
    return -1;
}

static void tpx_close(rx_t *rx)
{
    rx_ucft_t *r = (rx_ucft_t *)rx;
    if (r->posted) {
        tp_cancel(r->tp, &r->req);
        while (!r->done)
            tp_progress(r->tp);
    }
    tp_destroy(r->tp);
    free(r);
}

rx_t *rx_ucft_open(int senders, int mend)
{
    rx_ucft_t *r = calloc(1, sizeof(*r));
    if (r == NULL)
        return NULL;
    tp_ucp_params_t p = {.rank = 0,
                         .size = senders + 1,
                         .lookup = no_lookup,
                         .probe_wait_ns = PROBE_WAIT_NS,
                         .shm_mend = mend,
                         .cut_off_cb = cut_off,
                         .cut_off_arg = r};
    if (tp_ucp_create(&p, &r->tp) != UCFT_OK) {
        free(r);
        return NULL;
    }
    r->super = (rx_t){.address = tpx_address,
                      .drain = tpx_drain,
                      .probe = tpx_probe,
                      .close = tpx_close};
    return &r->super;
}
