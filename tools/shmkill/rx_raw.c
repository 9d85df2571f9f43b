/*
 * ucft-shmkill's raw-UCP receiver: one worker, messages taken from UCX's
 * unexpected queue, and the self-probe run by hand (fifo_probe.h), as
 * ucft's transport runs it after a death.
 */
#include "tools/shmkill/rx.h"
#include "transport/ucp/fifo_probe.h"
#include "transport/ucp/tp_ucp_diag.h"

#include <stdlib.h>

#define PROBE_TAG ucft_tag_make(UCFT_TAG_CLASS_PROBE, 0, 0, 0)

int ucx_open(ucx_t *u)
{
    ucp_config_t *cfg;
    if (ucp_config_read(NULL, NULL, &cfg) != UCS_OK)
        return -1;
    tp_ucp_config_apply(cfg, 0); /* ucft's settings (shared memory on) */
    ucp_params_t pp = {.field_mask = UCP_PARAM_FIELD_FEATURES,
                       .features = UCP_FEATURE_TAG};
    ucs_status_t st = ucp_init(&pp, cfg, &u->ctx);
    ucp_config_release(cfg);
    if (st != UCS_OK)
        return -1;
    ucp_worker_params_t wp = {.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
                              .thread_mode = UCS_THREAD_MODE_SINGLE};
    if (ucp_worker_create(u->ctx, &wp, &u->worker) != UCS_OK) {
        ucp_cleanup(u->ctx);
        return -1;
    }
    return 0;
}

void ucx_close(ucx_t *u)
{
    ucp_worker_destroy(u->worker);
    ucp_cleanup(u->ctx);
}

typedef struct rx_raw {
    rx_t super;
    ucx_t u;
    ucp_address_t *addr;
    size_t alen;
    unsigned char buf[MAX_PAYLOAD]; /* messages land here */
} rx_raw_t;

static void raw_address(rx_t *rx, const void **addr, size_t *len)
{
    rx_raw_t *r = (rx_raw_t *)rx;
    *addr = r->addr;
    *len = r->alen;
}

static void raw_drain(rx_t *rx, uint64_t *cnt, int senders)
{
    rx_raw_t *raw = (rx_raw_t *)rx;
    ucp_worker_h w = raw->u.worker;
    ucp_tag_recv_info_t info;
    ucp_tag_message_h m;
    ucp_worker_progress(w);
    while ((m = ucp_tag_probe_nb(w, 0, 0, 1, &info)) != NULL) {
        ucp_request_param_t p = {.op_attr_mask = 0};
        void *r = ucp_tag_msg_recv_nbx(w, raw->buf, sizeof(raw->buf), m, &p);
        if (UCS_PTR_IS_PTR(r)) {
            while (ucp_request_check_status(r) == UCS_INPROGRESS)
                ucp_worker_progress(w);
            ucp_request_free(r);
        }
        rx_count(rx, info.sender_tag, raw->buf, cnt, senders);
    }
}

static int raw_probe(rx_t *rx, int victim, uint64_t *cnt, int senders)
{
    rx_raw_t *r = (rx_raw_t *)rx;
    fifo_probe_t p;
    fifo_probe_state_t s;
    (void)victim;
    fifo_probe_init(&p, r->u.worker, PROBE_TAG, PROBE_WAIT_NS, 0);
    if (fifo_probe_start(&p, r->u.ctx, r->addr, now_ns()) != UCS_OK)
        return -1;
    while ((s = fifo_probe_poll(&p, now_ns())) == FIFO_PROBE_WAITING)
        raw_drain(rx, cnt, senders);
    fifo_probe_cleanup(&p);
    return s == FIFO_PROBE_ARRIVED;
}

static void raw_close(rx_t *rx)
{
    rx_raw_t *r = (rx_raw_t *)rx;
    ucp_worker_release_address(r->u.worker, r->addr);
    ucx_close(&r->u);
    free(r);
}

rx_t *rx_raw_open(void)
{
    rx_raw_t *r = calloc(1, sizeof(*r));
    if (r == NULL)
        return NULL;
    if (ucx_open(&r->u) != 0) {
        free(r);
        return NULL;
    }
    if (ucp_worker_get_address(r->u.worker, &r->addr, &r->alen) != UCS_OK) {
        ucx_close(&r->u);
        free(r);
        return NULL;
    }
    r->super = (rx_t){.address = raw_address,
                      .drain = raw_drain,
                      .probe = raw_probe,
                      .close = raw_close};
    return &r->super;
}
