/*
 * UCP backend: the diagnostics of tp_ucp_diag.h (tp_ucp_config_apply is in
 * tp_ucp_create.c, with its other user).
 */
#include "transport/ucp/tp_ucp_diag.h"
#include "transport/ucp/mm_fifo.h"
#include "transport/ucp/tp_ucp_priv.h"

#include "runtime/base/clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

ucft_status_t tp_ucp_connect(tp_t *t, int rank)
{
    ucp_ep_h ep;
    if (rank < 0 || rank >= t->size)
        return UCFT_ERR_INVALID_PARAM;
    return tp_ucp__ep_get(TP(t), rank, &ep);
}

fifo_probe_state_t tp_ucp_fifo_state(tp_t *t)
{
    return TP(t)->probe.state;
}

int tp_ucp_fifo_probe_pending(tp_t *t)
{
    const tp_ucp_t *tp = TP(t);
    return tp->probe_due != 0 || tp->probe.state == FIFO_PROBE_WAITING;
}

#define HOLD_MAX 256

typedef struct hold {
    mm_fifo_t fifo[HOLD_MAX];
    int n;
} hold_t;

static int hold_add(const mm_fifo_t *f, void *arg)
{
    hold_t *h = arg;
    if (h->n < HOLD_MAX)
        h->fifo[h->n++] = *f;
    return 0; /* every FIFO */
}

int tp_ucp_hold_fifo_slots(void)
{
    hold_t *h = calloc(1, sizeof(*h));
    if (h == NULL || !mm_fifo_supported()) {
        free(h);
        return 0;
    }
    mm_fifo_each(0, hold_add, h);
    /* A full FIFO: its receiver reads on; claim as senders do, as soon
     * as there is room, for up to 1 s in all. */
    int held = 0, left = h->n;
    uint64_t end = ucft_clock_now_ns() + UCFT_NSEC_PER_SEC;
    while (left > 0 && ucft_clock_now_ns() < end)
        for (int i = 0; i < h->n; i++)
            if (h->fifo[i].ctl != NULL && mm_fifo_claim(&h->fifo[i]) == 0) {
                h->fifo[i].ctl = NULL;
                held++;
                left--;
            }
    free(h);
    return held;
}

int tp_ucp_fifo_mends(tp_t *t)
{
    return TP(t)->probe.mends;
}

const char *tp_ucp_fifo_unmended(tp_t *t)
{
    return TP(t)->probe.why;
}

void tp_ucp_peer_transport(tp_t *t, int rank, char *buf, size_t len)
{
    tp_ucp_t *tp = TP(t);
    char *text = NULL;
    size_t tlen = 0;
    FILE *f;

    snprintf(buf, len, "%s", "");
    if (rank < 0 || rank >= t->size || tp->peers[rank].state != PEER_UP)
        return;
    f = open_memstream(&text, &tlen);
    if (f == NULL)
        return;
    ucp_ep_print_info(tp->peers[rank].ep, f);
    fclose(f);
    /* Lines look like "#   lane[0]:  3:sysv/memory.0 md[2] ... am am_bw".
     * Report the transport of the first lane carrying active messages. */
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char *lane = strstr(line, "lane[");
        char *colon = lane ? strchr(lane, ':') : NULL;
        if (colon == NULL || strstr(line, " am") == NULL)
            continue;
        char *name = strchr(colon + 1, ':');
        if (name == NULL)
            continue;
        name++;
        size_t n = strcspn(name, " \t");
        snprintf(buf, len, "%.*s", (int)n, name);
        break;
    }
    free(text);
}
