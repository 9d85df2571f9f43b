/*
 * Messages of a peer that were already here when the owner declared it
 * failed (transport contract T5: only messages that arrive *afterwards*
 * are dropped).
 *
 * UCX keeps unexpected messages in its own queue and tells us the sender
 * only when a receive matches one, so the UCP backend cannot tell a
 * message that arrived before the declaration from one that arrived
 * after it. At tp_peer_failed it therefore lets UCX read what already
 * sits in its transports (a few progress turns, completions deferred),
 * takes every message of that peer out of UCX's unexpected queue into
 * this list (eager messages, whose data is here; a rendezvous message
 * needs its dead sender and is dropped), marks the peer failed, and
 * serves later receives and probes from the list first. Until 2026-11-22 such
 * messages were dropped when a receive matched them later: a corrected
 * broadcast's correction that a rank had queued from a rank that then died was
 * lost at the moment the rank started that instance, although the dead rank had
 * sent it (and the algorithm counts on that, docs/bcast.md), and ranks hung.
 *
 * FIFO: messages of one peer keep their order (T1). Memory: one block
 * per message, freed when it is received; the rest at destroy.
 */
#ifndef UCFT_TRANSPORT_UCP_KEPT_H
#define UCFT_TRANSPORT_UCP_KEPT_H

#include <stddef.h>
#include <stdint.h>

typedef struct tp_kept_msg {
    struct tp_kept_msg *next;
    uint64_t tag;
    size_t len;
    int state; /* the backend's, while UCX fills it in */
    int status;
    unsigned char data[];
} tp_kept_msg_t;

typedef struct tp_kept {
    tp_kept_msg_t *head, **tail;
} tp_kept_t;

void tp_kept_init(tp_kept_t *k);
/* A block for a message of `len` bytes (NULL without memory); fill its
 * data, then tp_kept_push it. */
tp_kept_msg_t *tp_kept_alloc(uint64_t tag, size_t len);
void tp_kept_push(tp_kept_t *k, tp_kept_msg_t *m);
/* The first kept message whose tag matches (tag & mask), or NULL. */
const tp_kept_msg_t *tp_kept_find(const tp_kept_t *k, uint64_t tag,
                                  uint64_t mask);
/* Takes the first matching message out of the list (the caller frees it
 * with free()), or NULL. */
tp_kept_msg_t *tp_kept_take(tp_kept_t *k, uint64_t tag, uint64_t mask);
/* Frees the messages whose state is `state`, keeps the others. */
void tp_kept_free_state(tp_kept_t *k, int state);
void tp_kept_free_all(tp_kept_t *k);

#endif
