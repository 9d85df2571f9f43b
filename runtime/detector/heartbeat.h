/*
 * The heartbeat ring detector of one rank (ALGORITHMS.md §4), as a state
 * machine over one tp_t.
 *
 * Roles. Each rank is *observed* by its observer (the next live rank after
 * it, initially rank+1) and *observes* its observed rank (the next live
 * rank before it, initially rank-1). The observed rank sends a heartbeat
 * (UCFT_CTRL_HB) to its observer about every eta; the observer suspects the
 * observed rank when nothing came for more than delta.
 *
 * Tick (a timer of the transport, set for whichever comes first: our next
 * heartbeat, or the observed rank's deadline; never sooner than eta/10 nor
 * later than 1.1 eta from the last tick; hb_next_tick):
 *  1. send a heartbeat when it is due (0.9 eta after the last one sent by
 *     the tick, 1.1 eta after the last heartbeat followed, below); after a
 *     gap of >= 2 eta, call warn_late_cb first (this rank was descheduled
 *     and may be falsely suspected);
 *  2. suspect the observed rank when now > last_heard + delta, unless the
 *     tick itself fired more than eta late and the previous tick was still
 *     within the deadline (jitter guard: the silence may be our own
 *     descheduling, and the heartbeats may be waiting in the network; the
 *     next tick decides). A target is suspected at most once.
 *
 * Following: a heartbeat from the observed rank that arrives when ours is
 * at least eta/2 old makes us send ours at once (the heartbeat woke the
 * thread anyway); one that arrives sooner makes us wait for the next one
 * and send with it. Either way the tick only backs the next send up, 1.1
 * eta after that heartbeat. The first live rank of the ring never follows:
 * its tick starts a wave that travels around the ring, one wake-up per
 * rank and period instead of two (the first rank has both). An observer sees
 * periods between eta/2 and 1.4 eta, 2 eta at most when the rank it follows
 * dies.
 *
 * Re-targeting is driven by the owner's membership (a const mb_t shared
 * with the owner): after the owner declares the observed rank failed it
 * calls hb_membership_changed(), which walks to the next live predecessor
 * and sends it a UCFT_CTRL_HB_REQUEST ("send your heartbeats to me"), and
 * moves our own heartbeats to the next live successor if our observer
 * failed.
 *
 * Stale-request rule: a request from a rank farther away (forward ring
 * distance) than our current observer is ignored while that observer is
 * not known to have failed; if it fails later, hb_membership_changed()
 * moves the heartbeats to the next live successor anyway, so ignoring a
 * request never loses a watcher.
 *
 * Clean stop: hb_stop(notify=1) sends UCFT_CTRL_HB_STOP to the observer,
 * which then stops watching us (its observed rank becomes -1) and never
 * suspects us.
 *
 * Messages from a rank in the failed set are dropped (fencing); the
 * optional fenced_cb lets the owner tell such a rank that it was declared.
 *
 * Cost: one heartbeat per rank per 0.9-1 eta, whatever N is; nothing is
 * allocated after hb_init (a small pool of send requests; a heartbeat is
 * skipped and counted if the pool is exhausted).
 *
 * Threads: one thread (the one driving tp's progress) calls everything;
 * callbacks run from tp's progress.
 */
#ifndef UCFT_DETECTOR_HEARTBEAT_H
#define UCFT_DETECTOR_HEARTBEAT_H

#include "runtime/detector/membership.h"
#include "runtime/detector/standing.h"
#include "transport/transport.h"

#include <stdint.h>

#define HB_NSEND 3 /* heartbeat, request and stop sends in flight */
#define HB_NRECV 3 /* one receive per kind: HB, HB_REQUEST, HB_STOP */

typedef struct hb_params {
    uint64_t eta_ns;   /* heartbeat period */
    uint64_t delta_ns; /* suspicion timeout, > eta */
    /* No suspicion before start + start_grace_ns: ranks do not start their
     * detectors at the same instant on a loaded node (0: delta only). */
    uint64_t start_grace_ns;
    /* Until the first heartbeat of the observed rank arrives, no
     * suspicion before start + first_hb_ns either (0: none): a rank still
     * connecting to its peers at start-up (seconds with hundreds of ranks
     * on a few cores) is not dead. */
    uint64_t first_hb_ns;
    /* Starvation-aware timeout for ranks the owner has no kernel view of
     * (vouch_cb answers NONE): the deadline becomes last_heard +
     * max(delta, HB_ADAPT_FACTOR x the longest gap between that rank's
     * heartbeats in the last 1-2 s), at most HB_ADAPT_CAP x delta. 0: off
     * (delta alone, as the sim tests expect). */
    int adapt;
    /* The owner confirms a suspicion before declaring (probe.h) within
     * this time: suspect_cb comes this long before the deadline, so that
     * the confirmation ends about when the deadline passes. Not for a rank
     * the owner's vouch_cb has a kernel view of: the kernel decides at
     * the deadline. 0: at the deadline. */
    uint64_t early_ns;
} hb_params_t;

#define HB_ADAPT_FACTOR    3
#define HB_ADAPT_CAP       20            /* x delta */
#define HB_ADAPT_WINDOW_NS 1000000000ull /* one of the two gap windows */

/* What the owner knows about an overdue rank beyond its silence
 * (vouch_cb). */
typedef enum hb_vouch {
    HB_VOUCH_NONE = 0, /* nothing (another node): the timeout decides */
    HB_VOUCH_ALIVE,    /* the kernel shows it alive: ask again in eta */
    HB_VOUCH_DEAD,     /* the kernel shows it stopped, dead or stuck */
} hb_vouch_t;

typedef struct hb_ops {
    /* The observed rank was silent for more than delta (kernel = 1: and
     * the owner's vouch_cb said it is dead). Required. The owner may
     * declare it, or confirm first (probe.h) and call hb_refute() if it
     * is alive after all; until either, the rank is not suspected again,
     * and a heartbeat from it ends the suspicion (stats.recovered). */
    void (*suspect_cb)(void *arg, int rank, int kernel);
    /* Our own heartbeat went out gap_ns after the previous one (>= 2 eta).
     * Optional. */
    void (*warn_late_cb)(void *arg, uint64_t gap_ns);
    /* A message came from a rank in the failed set. Optional. */
    void (*fenced_cb)(void *arg, int rank);
    /* Two heartbeats in a row from `rank` carried a failed set other than
     * ours (mb_summary): one of us missed a fact. Optional. */
    void (*diverged_cb)(void *arg, int rank);
    /* The observed rank has been silent for silent_ns, past its deadline:
     * what does the owner know (the kernel's view of a rank on this
     * node)? ALIVE holds the suspicion for eta, then asks again. Optional
     * (NULL: the timeout alone decides). */
    hb_vouch_t (*vouch_cb)(void *arg, int rank, uint64_t silent_ns);
    /* This thread's total wait on run queues so far (ns): the time it was
     * runnable but not running. The wait since the observed rank was last
     * heard (beyond what the stall credit already gave back) is added to
     * its deadline: silence our own scheduling made. Optional. */
    uint64_t (*run_delay_cb)(void *arg);
    void *arg;
} hb_ops_t;

typedef struct hb_stats {
    uint64_t sent;       /* heartbeats sent */
    uint64_t received;   /* heartbeats from the observed rank */
    uint64_t requests;   /* requests sent */
    uint64_t suspicions; /* suspect_cb calls */
    uint64_t guarded;    /* suspicions held back by the jitter guard */
    uint64_t stale;      /* stale requests ignored */
    uint64_t fenced;     /* messages dropped from failed ranks */
    uint64_t skipped;    /* sends skipped: request pool exhausted */
    uint64_t warnings;   /* warn_late_cb calls */
    uint64_t credited;   /* late ticks whose lateness was credited back */
    uint64_t followed;   /* heartbeats sent on receiving one (no tick) */
    uint64_t diverged;   /* diverged_cb calls */
    uint64_t vouched;    /* overdue checks the owner answered ALIVE */
    uint64_t kernel;     /* suspicions on the owner's DEAD */
    uint64_t own_wait;   /* deadlines moved by our own run-queue wait */
    uint64_t adapted;    /* deadlines moved by the rank's recent gaps */
    uint64_t recovered;  /* suspicions ended by the rank's own heartbeat */
    uint64_t refuted;    /* suspicions ended by hb_refute */
    uint64_t presumed;   /* hb_presume calls */
    uint64_t ticks;
} hb_stats_t;

typedef struct hb hb_t;

typedef struct hb_send {
    tp_req_t req; /* first */
    hb_t *hb;
    uint64_t body;
    int busy;
} hb_send_t;

struct hb {
    tp_t *tp;
    const mb_t *mb;
    int me;
    hb_params_t params;
    hb_ops_t ops;
    int observed;  /* the rank we watch, -1 none */
    int observer;  /* the rank that watches us, -1 none */
    int suspected; /* the last rank we suspected, -1 none */
    int running;   /* timer armed, receives posted */
    int sent_once;
    int followed;         /* we follow the observed rank's heartbeats */
    uint64_t follow_base; /* when we last did (send or defer) */
    uint64_t last_heard;  /* last heartbeat from observed (or retarget) */
    uint64_t last_send;   /* our last heartbeat */
    uint64_t prev_tick;
    uint64_t grace_until;       /* no suspicion before this (start-up grace) */
    uint64_t first_until;       /* nor before this until heard_once */
    int heard_once;             /* a heartbeat of an observed rank arrived */
    int viewed;                 /* vouch_cb had a kernel view of it */
    uint64_t hold_until;        /* vouched alive: no suspicion before this */
    uint64_t credit;            /* stall credit given since last_heard */
    uint64_t wait_credit;       /* own run-queue wait added to the deadline */
    uint64_t rd_base;           /* run_delay_cb at (about) last_heard */
    uint64_t rd_at;             /* when rd_base was read */
    uint64_t adapt_until;       /* no suspicion before this (recent gaps) */
    uint64_t gap_cur, gap_prev; /* longest heartbeat gaps, two windows */
    uint64_t gap_win;           /* start of the current window */
    uint64_t tick_deadline;
    int div_src; /* the last heartbeat's sender if its set differed */
    ucft_timer_t tick;
    hb_send_t sends[HB_NSEND];
    standing_t recvs[HB_NRECV];
    uint64_t rbufs[HB_NRECV];
    hb_stats_t stats;
};

/* Sets up `hb` (caller-allocated) for tp->rank; `mb` is the owner's
 * membership, read at every decision. Nothing is sent yet. */
void hb_init(hb_t *hb, tp_t *tp, const mb_t *mb, const hb_params_t *params,
             const hb_ops_t *ops);
/* Posts the receives, sends a first heartbeat and arms the tick. */
ucft_status_t hb_start(hb_t *hb);
/* The membership grew: re-target the observed rank and/or the observer if
 * they are now failed. */
void hb_membership_changed(hb_t *hb);
/* The owner suspects the observed rank `rank` before its deadline (it
 * confirms it by other means, probe.h): as after suspect_cb, it is not
 * suspected again until hb_refute or its own heartbeat. 0 when `rank` is
 * not the observed rank (nothing done). */
int hb_presume(hb_t *hb, int rank);
/* The owner found the suspected observed rank `rank` alive (another
 * observer reached it): no longer suspected, a full delta from now. */
void hb_refute(hb_t *hb, int rank);
/* Stops the tick and cancels the receives (their callbacks still run, from
 * progress). notify = 1: tell the observer to stop watching (clean
 * finalize); 0: just go quiet (this rank was declared failed). */
void hb_stop(hb_t *hb, int notify);
/* 1 when no request of hb is pending (safe to free after hb_stop). */
int hb_idle(const hb_t *hb);

/* The tick's logic at time `now` for a tick that was due at `deadline`:
 * exposed so that tests can drive it with a fake clock. */
void hb_tick_at(hb_t *hb, uint64_t now, uint64_t deadline);
/* When the next tick is due, after a tick at `now`. */
uint64_t hb_next_tick(const hb_t *hb, uint64_t now);

#endif
