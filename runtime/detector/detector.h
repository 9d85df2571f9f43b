/*
 * The failure detector of one rank: the membership (failed set + epoch),
 * the heartbeat ring and the failure broadcast tied together. The runtime
 * instantiates one per context (later: driven by its heartbeat thread on
 * its own transport); the sim tests instantiate one per simulated rank.
 *
 * Flow:
 *  - heartbeat suspicion of the observed rank -> det_declare(rank,
 *    DET_WHY_HEARTBEAT), at once when probes are off or the kernel says
 *    the rank is dead, else once indirect probes (probe.h) through other
 *    ranks got no answer within the confirmation window either;
 *  - external fast-path news (PMIx event, an endpoint error about a rank
 *    of this node) -> det_declare(rank, DET_WHY_EXTERNAL);
 *  - an endpoint error about a rank the kernel cannot see -> det_suspect:
 *    declared (DET_WHY_EXTERNAL) only once the probes confirm it;
 *  - the kernel saying the rank's process is ending (alive slot, pidfd:
 *    runtime/linux/procwatch.h) -> det_declare(rank, DET_WHY_EXITED): like
 *    external news, but no fencing notice is sent to the dead process
 *    (it would only open a connection to it).
 *  - failure news from the broadcast -> declared with DET_WHY_NEWS.
 * Declaring a rank that is not yet failed: add it to the failed set (epoch
 * + 1), call failed_cb, forward the fact over the binomial graph, tell the
 * rank itself when we were the one to declare it (fencing), and re-target
 * the heartbeat ring if the rank was our observed rank or our observer.
 * Links that learns_alone_cb says will learn a fact by themselves (the
 * kernel woke them too) are not sent that fact; they forward it to their
 * own links, so everyone else still hears of it.
 * Declaring ourselves (or hearing that we were declared) calls self_cb
 * once and silences the detector: the owner must abort (fencing).
 *
 * The detector never calls tp_peer_failed(): what a failure means for the
 * transport (cancel sends, drop messages) is the owner's decision, taken in
 * failed_cb.
 *
 * Lifetime: det_create, det_start, ..., det_stop (clean finalize: tells the
 * observer), drive progress until det_idle() (the cancelled receives
 * complete), det_destroy. If the transport is destroyed first (the sim
 * world), det_destroy may be called at once.
 *
 * Threads: everything from the thread that drives the transport; callbacks
 * run from its progress.
 */
#ifndef UCFT_DETECTOR_DETECTOR_H
#define UCFT_DETECTOR_DETECTOR_H

#include "runtime/detector/heartbeat.h"
#include "runtime/detector/membership.h"
#include "runtime/detector/probe.h"
#include "runtime/detector/propagate.h"
#include "runtime/detector/reconcile.h"
#include "transport/transport.h"

#include <stdint.h>

/* Recommended defaults for the real runtime, see docs/detector.md. */
#define DET_DEFAULT_ETA_NS   20000000ull  /* 20 ms */
#define DET_DEFAULT_DELTA_NS 100000000ull /* 100 ms */
#define DET_MIN_ETA_NS       10ull        /* the shortest period accepted */

typedef enum det_why {
    DET_WHY_HEARTBEAT = 1, /* our heartbeat observation timed out */
    DET_WHY_NEWS,          /* the failure broadcast told us */
    DET_WHY_EXTERNAL,      /* fed in by the owner (PMIx, endpoint error) */
    DET_WHY_EXITED,        /* the kernel: its process is ending or gone */
} det_why_t;

typedef struct det_params {
    hb_params_t hb;
    int prop_window; /* failure-news sends in flight, 0: default */
    /* Indirect probes (probe.h): a heartbeat suspicion without the
     * kernel's word is declared only if `probe.helpers` other ranks per
     * round cannot reach the rank within `probe.window_ns` either. 0
     * helpers (det_params_default): declared at once. */
    pb_params_t probe;
} det_params_t;

typedef struct det_ops {
    /* `rank` is now failed; `epoch` = failed ranks known, counting it. */
    void (*failed_cb)(void *arg, int rank, uint64_t epoch, det_why_t why);
    /* This rank was declared failed: stop and abort. Called once. */
    void (*self_cb)(void *arg);
    /* Our own heartbeat was gap_ns late (optional). */
    void (*warn_late_cb)(void *arg, uint64_t gap_ns);
    /* Optional: 1 when `rank` is known to learn that `fact` failed without
     * a message (see propagate.h). */
    int (*learns_alone_cb)(void *arg, int rank, int fact);
    /* Optional: what the kernel says about an overdue rank, and this
     * thread's run-queue wait (heartbeat.h, hb_ops_t). */
    hb_vouch_t (*vouch_cb)(void *arg, int rank, uint64_t silent_ns);
    uint64_t (*run_delay_cb)(void *arg);
    /* Optional: transport evidence about `rank` (det_suspect) was refuted
     * (it answered the probes): the owner may reconnect to it. */
    void (*cleared_cb)(void *arg, int rank);
    void *arg;
} det_ops_t;

typedef struct det {
    tp_t *tp;
    int me;
    det_ops_t ops;
    mb_t mb;
    hb_t hb;
    pb_t pb;
    prop_t prop;
    rec_t rec;
    int self_declared;
    int running;
} det_t;

void det_params_default(det_params_t *params);

/* Creates the detector of tp->rank on `tp` (not owned). */
ucft_status_t det_create(tp_t *tp, const det_params_t *params,
                         const det_ops_t *ops, det_t **det_p);
/* Starts heartbeats and the broadcast receive. */
ucft_status_t det_start(det_t *det);
/* Declares `rank` failed (no effect if already failed). */
void det_declare(det_t *det, int rank, det_why_t why);
/* Around several det_declare calls made together (a batch of outside
 * evidence, a whole node): their news leaves in one message per link
 * (prop_hold). Nests. */
void det_hold(det_t *det);
void det_release(det_t *det);
/* Evidence that may be wrong (a transport's endpoint error about a rank
 * whose process this rank's kernel cannot see): confirmed through other
 * ranks by the indirect probes, as a silence is, and declared
 * (DET_WHY_EXTERNAL) only if none reaches the rank within the probes'
 * window and no heartbeat of it arrives meanwhile; refuted: cleared_cb.
 * With probes off: declared at once. */
void det_suspect(det_t *det, int rank);
/* Clean stop: tells our observer to stop watching, cancels receives. */
void det_stop(det_t *det);
int det_idle(const det_t *det);
void det_destroy(det_t *det);

static inline const mb_t *det_membership(const det_t *det)
{
    return &det->mb;
}

static inline int det_is_failed(const det_t *det, int rank)
{
    return mb_is_failed(&det->mb, rank);
}

static inline uint64_t det_epoch(const det_t *det)
{
    return mb_epoch(&det->mb);
}

#endif
