/*
 * Reliable broadcast of small facts (rbcast.c), on the transport interface
 * only, so the simulator proves it: a fact (two 32-bit words) that one
 * live rank has goes to every live rank of its group, whoever dies. A rank
 * that learns a fact for the first time (its own rbc_publish, or a message)
 * sends it to every other rank of the group the owner's deliver callback
 * names; so once one message of a fact has left a rank that lives until
 * its sends are out, every live member gets it. n (n - 1) messages per
 * fact. The communicator layer floods revokes with it (comm/revoke.c,
 * docs/comms.md).
 *
 * Messages: class CTRL, `kind`, body = the two words (8 bytes); anything
 * else is logged and dropped.
 */
#ifndef UCFT_COLL_RBCAST_H
#define UCFT_COLL_RBCAST_H

#include "transport/transport.h"

#include <stdint.h>

/* A fact arrived (or was published here). Returns 1 when it is news for
 * the owner, with the group to pass it on to (*to: n job ranks; NULL:
 * ranks 0 .. n - 1), else 0 (known already, or no group of this rank). */
typedef int (*rbc_deliver_fn)(void *arg, const uint32_t fact[2], const int **to,
                              int *n);

typedef struct rbc_item {
    struct rbc_item *next;
    uint32_t fact[2];
    const int *to; /* NULL: identity; else group */
    int n, next_i;
    int group[]; /* a copy of the n ranks passed */
} rbc_item_t;

typedef struct rbcast {
    tp_t *tp;
    unsigned kind;
    rbc_deliver_fn deliver;
    void *arg;
    tp_req_t rreq, sreq;
    uint32_t rbuf[2], sbuf[2];
    uint8_t rbusy, sbusy, stopped;
    rbc_item_t *head, *tail; /* facts still to send */
} rbcast_t;

void rbc_init(rbcast_t *rb, tp_t *tp, unsigned kind, rbc_deliver_fn deliver,
              void *arg);
/* Posts the receive. */
void rbc_start(rbcast_t *rb);
/* This rank knows `fact` now; it goes to the n ranks of `to` (NULL:
 * 0 .. n - 1; copied), this rank aside. UCFT_ERR_NO_MEMORY or UCFT_OK. */
ucft_status_t rbc_publish(rbcast_t *rb, const uint32_t fact[2], const int *to,
                          int n);
/* 1 when every fact has been handed to the transport. */
int rbc_sent(const rbcast_t *rb);
/* Stops: the receive is cancelled, nothing more is sent. */
void rbc_stop(rbcast_t *rb);
/* Frees what is queued (no callback may run any more). */
void rbc_destroy(rbcast_t *rb);

#endif
