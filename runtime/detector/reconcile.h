/*
 * Anti-entropy for the failed set, one rank's side.
 *
 * The failure broadcast (propagate.h) sends each fact once. A message that
 * is lost (a send that fails, an endpoint closed under it, a receiver that
 * drops it) would leave two live ranks with different failed sets for
 * good, and collectives whose members disagree on who is dead can hang.
 * Heartbeats therefore carry the sender's mb_summary; when two in a row
 * differ from ours (heartbeat.h, diverged_cb), rec_offer sends our whole
 * set to that rank and asks for its own if it knows more. Each side adds
 * what it lacks as news (which the failure broadcast then forwards) and
 * the pair agrees within about two heartbeat periods plus one round
 * trip. Ring neighbours reconcile pairwise, so every difference between
 * live ranks is repaired along the ring.
 *
 * A set that names the receiver tells it that it was declared failed
 * (self_cb), and a set from a rank that is itself in our failed set is
 * answered with a notice (fenced_cb) and otherwise ignored: a rank the job
 * has declared is out, and what it thinks no longer counts.
 *
 * Wire: UCFT_CTRL_FAILED_SET (transport/ctrl_kinds.h). At most REC_MAX_FACTS
 * facts per message; a larger set is sent a window at a time, the window
 * moving on with every offer, so repeated offers cover it. A malformed
 * message (short, n too large, length not matching n) is counted and
 * dropped; ranks outside the job are skipped.
 *
 * Threads: one thread (the one driving tp's progress); callbacks run from
 * tp's progress. Memory: one send and one receive buffer, fixed size.
 */
#ifndef UCFT_DETECTOR_RECONCILE_H
#define UCFT_DETECTOR_RECONCILE_H

#include "runtime/detector/membership.h"
#include "runtime/detector/standing.h"
#include "transport/transport.h"

#include <stdint.h>

#define REC_MAX_FACTS   256
#define REC_FLAG_ANSWER 1u /* answer with your set if it has more */

typedef struct rec_ops {
    /* `rank` failed, says `from`'s set; the owner learns it as news. */
    void (*news_cb)(void *arg, int rank, int from);
    /* `from`'s set names this rank. */
    void (*self_cb)(void *arg, int from);
    /* `from` is in our failed set but still talks to us. */
    void (*fenced_cb)(void *arg, int from);
    void *arg;
} rec_ops_t;

typedef struct rec_stats {
    uint64_t offers;    /* sets sent asking for an answer */
    uint64_t answers;   /* sets sent as answers */
    uint64_t received;  /* sets received */
    uint64_t learnt;    /* facts learnt from them */
    uint64_t fenced;    /* sets from ranks in our failed set */
    uint64_t malformed; /* dropped: bad length or count */
    uint64_t skipped;   /* sends skipped: the send buffer was busy */
} rec_stats_t;

typedef struct rec {
    tp_t *tp;
    const mb_t *mb;
    int me;
    rec_ops_t ops;
    size_t window; /* where the next window of a large set starts */
    tp_req_t send;
    int send_busy;
    uint32_t sbuf[2 + REC_MAX_FACTS];
    standing_t recv;
    uint32_t rbuf[2 + REC_MAX_FACTS];
    rec_stats_t stats;
} rec_t;

void rec_init(rec_t *r, tp_t *tp, const mb_t *mb, const rec_ops_t *ops);
/* Posts the receive. */
ucft_status_t rec_start(rec_t *r);
/* Cancels the receive (its callback still runs); no more sends. */
void rec_stop(rec_t *r);
int rec_idle(const rec_t *r);
/* Sends our set to `rank`, asking for its own if it knows more. */
void rec_offer(rec_t *r, int rank);

#endif
