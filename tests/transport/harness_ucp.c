/*
 * The conformance harness on the UCP backend: n UCP workers in this
 * process, each behind its own tp, addresses exchanged in memory. A "kill"
 * destroys a worker abruptly. Run over TCP (the CTest entry sets UCX_TLS):
 * on shared memory UCX checks whether the peer *process* is alive, which a
 * destroyed worker inside a live process still is.
 */
#include "harness.h"

#include "runtime/base/clock.h"
#include "transport/ucp/tp_ucp.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define UCP_HARNESS_MAX       8
#define UCP_HARNESS_MSG_NS    (5 * UCFT_NSEC_PER_SEC)
#define UCP_HARNESS_FAIL_NS   (30 * UCFT_NSEC_PER_SEC)
#define UCP_HARNESS_SETTLE_NS (100 * UCFT_NSEC_PER_MSEC)

struct tp_harness {
    int n;
    tp_t *tps[UCP_HARNESS_MAX];
    int dead[UCP_HARNESS_MAX];
    void *addr[UCP_HARNESS_MAX];
    size_t len[UCP_HARNESS_MAX];
};

const char *harness_name(void)
{
    return "ucp";
}

static ucft_status_t lookup(void *arg, int rank, void **addr, size_t *len)
{
    tp_harness_t *h = arg;
    if (rank < 0 || rank >= h->n || h->addr[rank] == NULL)
        return UCFT_ERR_INVALID_PARAM;
    *addr = malloc(h->len[rank]);
    if (*addr == NULL)
        return UCFT_ERR_NO_MEMORY;
    memcpy(*addr, h->addr[rank], h->len[rank]);
    *len = h->len[rank];
    return UCFT_OK;
}

tp_harness_t *harness_create(int n, tp_t **tps)
{
    tp_harness_t *h;
    if (n < 1 || n > UCP_HARNESS_MAX)
        return NULL;
    h = calloc(1, sizeof(*h));
    if (h == NULL)
        return NULL;
    h->n = n;
    for (int i = 0; i < n; i++) {
        tp_ucp_params_t p = {.rank = i,
                             .size = n,
                             .lookup = lookup,
                             .lookup_arg = h,
                             .keepalive_ns = UCFT_NSEC_PER_SEC};
        const void *a;
        if (tp_ucp_create(&p, &h->tps[i]) != UCFT_OK)
            goto err;
        tp_address(h->tps[i], &a, &h->len[i]);
        h->addr[i] = malloc(h->len[i]);
        if (h->addr[i] == NULL)
            goto err;
        memcpy(h->addr[i], a, h->len[i]);
        tps[i] = h->tps[i];
    }
    return h;
err:
    harness_destroy(h);
    return NULL;
}

unsigned harness_progress(tp_harness_t *h)
{
    unsigned n = 0;
    for (int i = 0; i < h->n; i++) {
        if (!h->dead[i] && h->tps[i] != NULL)
            n += tp_progress(h->tps[i]);
    }
    return n;
}

int harness_wait(tp_harness_t *h, harness_pred_t pred, void *arg,
                 harness_wait_t kind)
{
    uint64_t end =
        ucft_clock_now_ns() +
        (kind == HARNESS_WAIT_MSG ? UCP_HARNESS_MSG_NS : UCP_HARNESS_FAIL_NS);
    while (!pred(arg)) {
        if (ucft_clock_now_ns() > end)
            return 0;
        harness_progress(h);
    }
    return 1;
}

void harness_settle(tp_harness_t *h)
{
    uint64_t end = ucft_clock_now_ns() + UCP_HARNESS_SETTLE_NS;
    while (ucft_clock_now_ns() < end)
        harness_progress(h);
}

void harness_kill(tp_harness_t *h, int rank)
{
    if (rank < 0 || rank >= h->n || h->dead[rank])
        return;
    h->dead[rank] = 1;
    tp_destroy(h->tps[rank]);
    h->tps[rank] = NULL;
}

void harness_destroy(tp_harness_t *h)
{
    if (h == NULL)
        return;
    for (int i = 0; i < h->n; i++) {
        if (!h->dead[i] && h->tps[i] != NULL)
            tp_destroy(h->tps[i]);
        free(h->addr[i]);
    }
    free(h);
}
