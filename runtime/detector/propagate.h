/*
 * Reliable broadcast of failure news over a binomial graph (ALGORITHMS.md
 * §5), one rank's side.
 *
 * Links: rank me links to me + 2^i and me - 2^i (mod N) for every i with
 * 2^i <= N/2, about 2 log2 N links. The first time a rank learns a fact
 * ("rank f failed") it forwards it to every live link; at distance 1, if
 * the neighbour is failed it walks on in that direction to the next live
 * rank, which keeps the ring (and so the graph) connected whatever fails.
 * Links at larger distances that are failed are skipped. A fact already
 * known is neither delivered nor forwarded again (dedup by the failed set).
 *
 * Facts are the failed set itself (mb_t, shared with the owner), in the
 * order they were learned. Each link has a cursor: the facts before it
 * have been sent on that link (or skipped). A send carries every fact
 * after the link's cursor, up to CTRL_WIRE_MAX_BATCH: a burst of facts
 * (a whole node dying, the N - 1 others each forwarding each of its k
 * ranks) costs one message per link instead of k, and since a send is
 * posted only when a request of the fixed pool is free, the facts that
 * arrive while the pool is busy join the next message of each link.
 * Nothing is allocated per message, and a burst never overflows
 * anything: it waits in the failed set. Links are evaluated at send time,
 * so a relay uses everything it knows by then.
 *
 * Wire: UCFT_CTRL_FAILED, body {fact 0, sender's epoch, fact 1, ...}
 * (uint32 each, 8 + 4k bytes, ctrl_wire_nfacts). The context id (0) is in
 * the tag; the epoch is informational (a fact is idempotent, so a late
 * message is harmless and deduplicated).
 *
 * Fencing: messages from a rank in the failed set are dropped. A message
 * saying that this rank itself failed is handed to self_cb: the owner
 * must stop (DESIGN.md §4). The declaring rank also sends the fact to the
 * declared rank itself (prop_notify), so a falsely declared live rank
 * learns it; this is best effort (one dedicated request).
 *
 * Threads: one thread (the one driving tp's progress); callbacks run from
 * tp's progress.
 */
#ifndef UCFT_DETECTOR_PROPAGATE_H
#define UCFT_DETECTOR_PROPAGATE_H

#include "runtime/detector/ctrl_wire.h"
#include "runtime/detector/membership.h"
#include "runtime/detector/standing.h"
#include "transport/transport.h"

#include <stdint.h>

#define PROP_DEFAULT_WINDOW 8 /* sends in flight per rank */

typedef struct prop_ops {
    /* A message told us that `rank` failed; the owner adds it to the
     * membership (prop_learn) and does whatever else it does. Required. */
    void (*news_cb)(void *arg, int rank, int from);
    /* A message told us that we failed. Required. */
    void (*self_cb)(void *arg, int from);
    /* Optional: 1 when link `rank` will learn that `fact` failed without
     * our message (e.g. the kernel woke it as it woke us: both watch the
     * dying process). It is then not sent the fact; since it forwards the
     * fact itself once it learns it, every other rank still hears. */
    int (*learns_alone_cb)(void *arg, int rank, int fact);
    void *arg;
} prop_ops_t;

typedef struct prop_stats {
    uint64_t sent;       /* FAILED messages sent (forwards and notices) */
    uint64_t facts_sent; /* facts in them */
    uint64_t received;   /* FAILED messages received */
    uint64_t dups;       /* received facts already known */
    uint64_t fenced;     /* dropped: sender in the failed set */
    uint64_t walked;     /* distance-1 links that walked on past failures */
    uint64_t notices_skipped;
    uint64_t skipped_alone; /* links that learnt the fact by themselves */
} prop_stats_t;

typedef struct prop prop_t;

typedef struct prop_send {
    tp_req_t req; /* first */
    prop_t *p;
    uint32_t body[1 + CTRL_WIRE_MAX_BATCH];
    int busy;
} prop_send_t;

struct prop {
    tp_t *tp;
    mb_t *mb;
    int me;
    int nlinks;   /* 2 * number of levels */
    size_t *upto; /* per link: facts [0, upto) sent on it or skipped */
    int link;     /* the link the next pump looks at first */
    int held;     /* prop_hold depth: no pumping while > 0 */
    int running;
    prop_ops_t ops;
    prop_send_t *sends; /* window entries, the last one for notices */
    int window;
    standing_t recv;
    uint32_t rbuf[1 + CTRL_WIRE_MAX_BATCH];
    prop_stats_t stats;
};

/* Sets up `p` for tp->rank; window = sends in flight (>= 1, 0: default),
 * plus one request for notices. Allocates the request pool. */
ucft_status_t prop_init(prop_t *p, tp_t *tp, mb_t *mb, int window,
                        const prop_ops_t *ops);
void prop_cleanup(prop_t *p);
/* Posts the receive, and asks the transport to connect every link now
 * (tp_watch): a failure then finds the connections made, instead of
 * every survivor opening several at the moment it should be quick. */
ucft_status_t prop_start(prop_t *p);
/* Stops forwarding and cancels the receive (its callback still runs). */
void prop_stop(prop_t *p);
int prop_idle(const prop_t *p);

/* The failed set grew (from here or from news): forward what is new. */
void prop_pump(prop_t *p);
/* Several facts about to be learnt at once (a message of several, or a
 * run of declarations): prop_pump does nothing until the matching
 * prop_release, which pumps, so that they leave together. Nests. */
void prop_hold(prop_t *p);
void prop_release(prop_t *p);
/* Tell `rank` itself that it was declared failed (best effort). */
void prop_notify(prop_t *p, int rank);

/* The rank at the end of link `link` from the current membership, or -1
 * when that link is skipped (failed, self, or a duplicate of another). */
int prop_link_target(const prop_t *p, int link);

#endif
