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
 * Runs (params.run > 1): a vanished host takes consecutive ranks with
 * it. A suspicion probes its head and the live predecessor before it;
 * when that one was silent for a whole round too, the run widens at once
 * to params.run ranks (stopping before this rank, and after a rank this
 * rank's own kernel can see: probed, never declared here). Each entry has
 * its own nonce, helpers and window (asked in two rounds, half a round
 * for the answers). The first entry that answers is the boundary: the
 * entries beyond it are dropped. When the head's window ends unanswered,
 * the entries between it and the boundary whose windows ended too are
 * declared with it (confirmed_cb's run); the others go on, the first of
 * them the new head. Without a boundary (no answer came at all, which
 * this rank's own deafness would also explain) the head goes alone.
 *
 * Transport evidence (pb_evidence): an endpoint error about a rank is
 * probed like a silence, in up to PB_MAX_EVIDENCE slots beside the run,
 * and ends with evidence_cb: confirmed after params.window_ns without an
 * answer, or refuted by one.
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

#include "runtime/detector/ctrl_wire.h"
#include "runtime/detector/heartbeat.h"
#include "runtime/detector/membership.h"
#include "runtime/detector/standing.h"
#include "transport/transport.h"

#include <stdint.h>

#define PB_MAX_HELPERS 8 /* per round */
#define PB_MAX_RUN                                                             \
    16 /* a head and its silent predecessors, probed together                  \
        */
#define PB_MAX_EVIDENCE 8  /* transport-evidence suspicions at once */
#define PB_NSEND        64 /* probe messages in flight */

typedef struct pb_params {
    int helpers;        /* k: helpers asked per round; 0: probes off */
    uint64_t window_ns; /* confirmation window */
    uint64_t round_ns;  /* a new round this often within the window */
    /* The longest run of consecutive ranks probed together from one
     * suspicion (the head, the observed rank, and its live predecessors
     * as far as they are silent too: a vanished host). 0 or 1: the head
     * alone; at most PB_MAX_RUN. */
    int run;
} pb_params_t;

typedef struct pb_ops {
    /* No answer from `suspect` (the head) within its window. run[0..n-1]:
     * the silent ranks beyond it, each unanswered for its own window
     * (at least two rounds), that are declared with it: only when a rank
     * farther along the ring answered (so this rank's probes and their
     * answers went through). Returns 1 when the owner declared them. */
    int (*confirmed_cb)(void *arg, int suspect, const int *run, int n);
    /* `helper` relayed the head's answer. */
    void (*refuted_cb)(void *arg, int suspect, int helper);
    /* A transport-evidence suspicion (pb_evidence) ended: confirmed = 1
     * when no answer came within the window (begun at `since`), 0 when a
     * helper relayed the rank's answer. Optional. */
    void (*evidence_cb)(void *arg, int rank, int confirmed, uint64_t since);
    /* Optional: what the kernel says of `rank`, silent for silent_ns to
     * its observer (heartbeat.h); NONE when this rank cannot see it. */
    hb_vouch_t (*vouch_cb)(void *arg, int rank, uint64_t silent_ns);
    void *arg;
} pb_ops_t;

typedef struct pb_stats {
    uint64_t suspicions;   /* pb_suspect calls */
    uint64_t rounds;       /* rounds begun */
    uint64_t requests;     /* requests sent (origin) */
    uint64_t pings;        /* pings sent (helper) */
    uint64_t acks;         /* acks sent (suspect) */
    uint64_t relays;       /* relays sent (helper) */
    uint64_t vouched;      /* relays sent on the kernel's word (helper) */
    uint64_t unvouched;    /* requests not answered: kernel says dead */
    uint64_t refuted;      /* suspicions ended by an answer */
    uint64_t confirmed;    /* suspicions whose window ended unanswered */
    uint64_t alone;        /* suspicions begun with no helper to ask */
    uint64_t stale;        /* answers to a suspicion no longer pending */
    uint64_t fenced;       /* messages from failed ranks, dropped */
    uint64_t malformed;    /* dropped by ctrl_wire_probe */
    uint64_t skipped;      /* sends skipped: pool exhausted */
    uint64_t widened;      /* run entries added beyond the head */
    uint64_t boundary;     /* runs ended by an answer beyond the head */
    uint64_t with_run;     /* ranks declared with a head (confirmed_cb n) */
    uint64_t evidence;     /* pb_evidence suspicions begun */
    uint64_t ev_refuted;   /* ... ended by an answer */
    uint64_t ev_confirmed; /* ... whose window ended unanswered */
    uint64_t ev_full;      /* ... not begun: no free slot */
} pb_stats_t;

typedef struct pb pb_t;

typedef struct pb_send {
    tp_req_t req; /* first */
    uint32_t body[5];
    int busy;
} pb_send_t;

/* One rank being probed by this origin. */
typedef struct pb_entry {
    int rank;          /* -1: free */
    int answered;      /* a relay came (a run's boundary) */
    int viewed;        /* this rank's kernel sees it: never declared here */
    unsigned cursor;   /* its next helper candidate */
    uint32_t nonce;    /* answers carry it */
    uint64_t since;    /* silent since (helpers get the silence) */
    uint64_t added;    /* probed since */
    uint64_t deadline; /* unanswered then: confirmed */
} pb_entry_t;

struct pb {
    tp_t *tp;
    const mb_t *mb;
    int me;
    pb_params_t params;
    pb_ops_t ops;
    int suspect;    /* the run's head (pending suspicion), -1 none */
    uint32_t nonce; /* the head's nonce */
    uint32_t nonces;
    /* The run: run[0] the head, run[i] the i-th live predecessor beyond
     * it; boundary: the first index that answered, -1 none yet. */
    pb_entry_t run[PB_MAX_RUN];
    int nrun;
    int boundary;
    int alive; /* the boundary of the last run confirmed whole, -1 */
    pb_entry_t ev[PB_MAX_EVIDENCE];
    uint64_t next_round;
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
/* Begins the confirmation of `suspect` (the observed rank), last heard at
 * `since` (replacing any pending run), confirmed after `window_ns` (0:
 * params.window_ns) without an answer. Its silent predecessors are probed
 * with it (params.run). If `suspect` is the head of a run that continues
 * (pb_continues), nothing is done. */
void pb_suspect(pb_t *pb, int suspect, uint64_t since, uint64_t window_ns);
/* Transport evidence against `rank` (an endpoint error): confirmed through
 * helpers within params.window_ns, as a silence is (evidence_cb). 0 when
 * it could not begin (probes off, no free slot) or `rank` is probed
 * already (then 1). */
int pb_evidence(pb_t *pb, int rank);
/* Forgets every pending suspicion of `rank` (a run whose head it is). */
void pb_cancel(pb_t *pb, int rank);
/* 1 when `rank` answered within the pending run (it is alive). */
int pb_answered(const pb_t *pb, int rank);

/* Internal, between probe.c (the helper and suspect roles, the wire) and
 * probe_origin.c (the origin's suspicions). */
int pb__post(pb_t *pb, int dst, ctrl_probe_op_t op, int origin, int suspect,
             uint32_t nonce, uint32_t silent_ms);
void pb__relay(pb_t *pb, int helper, int suspect, uint32_t nonce);
void pb__timer_cb(ucft_timer_t *t);
void pb__reset(pb_t *pb);

#endif
