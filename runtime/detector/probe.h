/*
 * Indirect probes: a heartbeat suspicion confirmed by other observers
 * before it becomes a declaration (SWIM's ping-req, Das et al. 2002).
 *
 * Why. On a lossy link the heartbeat ring alone mistakes a slow link for
 * a dead rank: TCP retransmits a lost segment after at least 200 ms and
 * holds every later heartbeat behind it, so with delta = 100 ms one lost
 * packet looks like a death (docs/detector.md, "Partitions and loss on
 * TCP"). Other ranks reach the suspect over other connections.
 *
 * Roles, per suspicion:
 *  origin  the observer that suspects `suspect` (heartbeat.h: its
 *          deadline is near); pb_suspect() sends a request to `helpers`
 *          ranks (a round), and one more round to the next helpers every
 *          `round_ns`, until an answer comes or the window has passed:
 *          then confirmed_cb.
 *  helper  any live rank asked: pings the suspect, and relays the
 *          suspect's ack to the origin. It keeps no state. A helper that
 *          has a kernel view of the suspect (vouch_cb: a rank of its
 *          node) answers from it instead: alive (runnable, starved,
 *          asleep, within UCFT_HB_LOCAL_LIMIT of the origin's silence) is
 *          relayed at once; stopped or dead is not answered.
 *  suspect answers a ping with an ack to the helper that sent it.
 * An answer carrying the suspicion's nonce calls refuted_cb: the suspect's
 * heartbeat thread ran after the suspicion began. A heartbeat that
 * arrives meanwhile is the owner's business (heartbeat.c clears the
 * suspicion, and the owner checks it again at confirmed_cb).
 *
 * Helpers are the origin's binomial links (r +- 2^i, the failure
 * broadcast's peers, connected at start), in turn, never the origin, the
 * suspect or a failed rank; with none at all the window passes without
 * requests (the rank's own heartbeat may still come). pb_start connects the
 * paths of the first ring: this rank as a helper of its links' suspects, and as
 * a suspect of its observer's helpers.
 *
 * Wire: UCFT_CTRL_PROBE (transport/ctrl_kinds.h), checked by
 * ctrl_wire_probe; a malformed or forged message is counted and dropped
 * with a warning. Messages from a rank in the failed set are dropped.
 *
 * Cost: nothing while heartbeats arrive; per suspicion, `helpers`
 * requests per round, and four messages per helper that is reached.
 * Memory: a fixed pool of sends, no allocation.
 *
 * Threads: the one driving tp's progress.
 */
#ifndef UCFT_DETECTOR_PROBE_H
#define UCFT_DETECTOR_PROBE_H

#include "runtime/detector/heartbeat.h"
#include "runtime/detector/membership.h"
#include "runtime/detector/standing.h"
#include "transport/transport.h"

#include <stdint.h>

#define PB_MAX_HELPERS 8  /* per round */
#define PB_NSEND       16 /* probe messages in flight */

typedef struct pb_params {
    int helpers;        /* k: helpers asked per round; 0: probes off */
    uint64_t window_ns; /* confirmation window */
    uint64_t round_ns;  /* a new round this often within the window */
} pb_params_t;

typedef struct pb_ops {
    /* No answer within the window. */
    void (*confirmed_cb)(void *arg, int suspect);
    /* `helper` relayed the suspect's answer. */
    void (*refuted_cb)(void *arg, int suspect, int helper);
    /* Optional: what the kernel says of `rank`, silent for silent_ns to
     * its observer (heartbeat.h); NONE when this rank cannot see it. */
    hb_vouch_t (*vouch_cb)(void *arg, int rank, uint64_t silent_ns);
    void *arg;
} pb_ops_t;

typedef struct pb_stats {
    uint64_t suspicions; /* pb_suspect calls */
    uint64_t rounds;     /* rounds begun */
    uint64_t requests;   /* requests sent (origin) */
    uint64_t pings;      /* pings sent (helper) */
    uint64_t acks;       /* acks sent (suspect) */
    uint64_t relays;     /* relays sent (helper) */
    uint64_t vouched;    /* relays sent on the kernel's word (helper) */
    uint64_t unvouched;  /* requests not answered: kernel says dead */
    uint64_t refuted;    /* suspicions ended by an answer */
    uint64_t confirmed;  /* suspicions whose window ended unanswered */
    uint64_t alone;      /* suspicions begun with no helper to ask */
    uint64_t stale;      /* answers to a suspicion no longer pending */
    uint64_t fenced;     /* messages from failed ranks, dropped */
    uint64_t malformed;  /* dropped by ctrl_wire_probe */
    uint64_t skipped;    /* sends skipped: pool exhausted */
} pb_stats_t;

typedef struct pb pb_t;

typedef struct pb_send {
    tp_req_t req; /* first */
    uint32_t body[5];
    int busy;
} pb_send_t;

struct pb {
    tp_t *tp;
    const mb_t *mb;
    int me;
    pb_params_t params;
    pb_ops_t ops;
    int suspect; /* pending suspicion, -1 none */
    uint32_t nonce;
    uint64_t since;    /* the suspect was last heard then (origin) */
    uint64_t deadline; /* confirmation at this time */
    unsigned cursor;   /* the next helper candidate */
    int timer_on;
    ucft_timer_t timer;
    pb_send_t sends[PB_NSEND];
    standing_t recv;
    uint32_t rbuf[5];
    pb_stats_t stats;
};

void pb_init(pb_t *pb, tp_t *tp, const mb_t *mb, const pb_params_t *params,
             const pb_ops_t *ops);
/* Posts the receive (answering pings and requests needs it even with
 * helpers = 0) and connects the first ring's probe paths. */
ucft_status_t pb_start(pb_t *pb);
/* Stops the timer and the receive (its callback still runs). */
void pb_stop(pb_t *pb);
int pb_idle(const pb_t *pb);
static inline int pb_enabled(const pb_t *pb)
{
    return pb->params.helpers > 0;
}
/* Begins the confirmation of `suspect`, last heard at `since` (replacing
 * any pending one), confirmed after `window_ns` (0: params.window_ns)
 * without an answer. */
void pb_suspect(pb_t *pb, int suspect, uint64_t since, uint64_t window_ns);
/* Forgets the pending suspicion of `suspect`, if it is the one. */
void pb_cancel(pb_t *pb, int suspect);

#endif
