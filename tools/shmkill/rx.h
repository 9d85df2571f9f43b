/*
 * The receiving side of ucft-shmkill: raw UCP (rx_raw.c) or a ucft
 * transport (rx_ucft.c). Senders tag their messages as ucft point-to-point
 * messages from job rank index + 1, so both receivers count them alike.
 */
#ifndef UCFT_SHMKILL_RX_H
#define UCFT_SHMKILL_RX_H

#include "transport/tag.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <ucp/api/ucp.h>

#define MAX_SENDERS   16
#define MAX_PAYLOAD   4096         /* one shared-memory segment, sent eagerly */
#define PROBE_WAIT_NS 300000000ull /* the self-probe's wait (fifo_probe.h) */

typedef struct ucx {
    ucp_context_h ctx;
    ucp_worker_h worker;
} ucx_t;

/* A context with ucft's UCX settings and one worker; 0 or -1. */
int ucx_open(ucx_t *u);
void ucx_close(ucx_t *u);

typedef struct rx rx_t;
struct rx {
    /* The address the senders connect to (valid until close). */
    void (*address)(rx_t *rx, const void **addr, size_t *len);
    /* Receives what has arrived; cnt[i] counts sender i's messages. */
    void (*drain)(rx_t *rx, uint64_t *cnt, int senders);
    /* After sender `victim` was killed: the self-probe's verdict, 1 it
     * arrived, 2 it arrived after the transport mended the FIFO, 0 the
     * FIFO is blocked, -1 an error. */
    int (*probe)(rx_t *rx, int victim, uint64_t *cnt, int senders);
    void (*close)(rx_t *rx);
    /* Messages that arrived out of their sender's sequence (lost,
     * repeated or reordered): each sender numbers its messages 0, 1, ...
     * in their first 8 bytes. */
    uint64_t disorder;
};

rx_t *rx_raw_open(void);
rx_t *rx_ucft_open(int senders, int mend);

static inline uint64_t sender_tag(int index)
{
    return ucft_tag_make(UCFT_TAG_CLASS_P2P, 0, (uint32_t)index + 1, 0);
}

/* Counts a message that arrived with `tag` and starts with `msg`. */
static inline void rx_count(rx_t *rx, uint64_t tag, const void *msg,
                            uint64_t *cnt, int senders)
{
    uint32_t src = ucft_tag_src(tag);
    if (ucft_tag_class(tag) != UCFT_TAG_CLASS_P2P || src < 1 ||
        src > (uint32_t)senders)
        return;
    uint64_t seq;
    memcpy(&seq, msg, sizeof(seq));
    rx->disorder += seq != cnt[src - 1];
    cnt[src - 1]++;
}

static inline uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

#endif
