/*
 * The heartbeat failure detector inside a context (runtime/detector/ is the
 * algorithm; this is where it runs).
 *
 * Modes (UCFT_DETECTOR, UCFT_DETECTOR_THREAD):
 *  OFF     no heartbeats; external evidence (death events, endpoint
 *          errors) declares a rank failed at once.
 *  INLINE  the detector runs on the context's own transport and is driven
 *          by ucft_context_progress (a rank that stops calling ucft stops
 *          sending heartbeats and will be suspected).
 *  THREAD  the one documented internal thread: it owns a second UCP worker
 *          (its address travels in the same PMIx exchange) and the
 *          detector, so a rank that computes for minutes is still watched
 *          and still watches.
 *
 * Flow of failure knowledge:
 *   evidence (PMIx thread, endpoint errors) --rt_monitor_report--> detector
 *   endpoint errors about ranks the kernel cannot see
 *     --rt_monitor_report_transport--> detector's probes (det_suspect)
 *   detector's decision --inbox (decided)--> owner: failed set, transport
 *   fencing, pending operations, failure callback (ucft_context_progress).
 * In THREAD mode evidence also goes to the owner's inbox directly (the
 * detector accepts outside evidence unvetted anyway), so the fast path
 * does not wait for a heartbeat-thread wake-up; the detector's own
 * decision for that rank then finds it already failed.
 * In THREAD mode the heartbeat thread also watches the processes of the
 * ranks on this node (runtime/linux/procwatch.h): a death there is evidence
 * too. With UCFT_DETECTOR_FASTPATH=n evidence is ignored and only heartbeats
 * decide. A rank that learns it was declared failed logs why and aborts
 * (fencing: a declared rank is dead to the job forever).
 */
#ifndef UCFT_RT_MONITOR_H
#define UCFT_RT_MONITOR_H

#include "ucft.h"
#include "runtime/base/clock.h"
#include "runtime/linux/procwatch.h"
#include "runtime/quorum.h"
#include "transport/transport.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

struct ucft_context;
struct det;

typedef enum rt_monitor_mode {
    RT_MONITOR_OFF = 0,
    RT_MONITOR_INLINE,
    RT_MONITOR_THREAD,
} rt_monitor_mode_t;

typedef struct rt_monitor {
    int inited; /* rt_monitor_init ran (its fds are set) */
    rt_monitor_mode_t mode;
    int fastpath;
    struct ucft_context *ctx;
    struct det *det; /* INLINE: owner's thread; THREAD: the thread only */
    /* THREAD mode */
    tp_t *hb_tp;
    pthread_t thread;
    int thread_started;
    int evfd;             /* wakes the thread */
    pthread_mutex_t lock; /* queue and stop */
    int lock_ready;
    int *queue; /* external evidence for the detector */
    size_t nqueue, capqueue;
    int stop;    /* owner asks: stop the detector (keep the worker) */
    int stopped; /* thread says: detector stopped, worker still serving */
    int quit;    /* owner asks: destroy the worker and exit */
    int *fence;  /* thread only: ranks to fence on hb_tp after progress */
    size_t nfence, capfence;
    uint64_t fence_due; /* when the pending fences are applied */
    /* Ranks the detector has declared and handed to the owner (set by the
     * thread, read by any reporter): later evidence about them wakes
     * nobody. */
    _Atomic unsigned char *decided;
    int inline_stopping; /* INLINE: det_stop done, det not yet destroyed */
    int pidfd;         /* watch local ranks' processes (UCFT_DETECTOR_PIDFD) */
    rt_procwatch_t pw; /* the thread's once started */
    int delay_fd;      /* the heartbeat thread's schedstat, -1: none */
    int held_rank;     /* the rank the kernel last vouched for (log once) */
    uint64_t held_silent;
    int quorum_on;      /* UCFT_QUORUM: fence when in a minority */
    rt_quorum_t quorum; /* the thread driving the detector's only */
} rt_monitor_t;

/* UCFT_QUORUM's majority gate (rt_quorum_covers): 1 when the world ranks
 * marked in held[size] cover the quorum, or when UCFT_QUORUM is off. The
 * owner's thread. */
int rt_monitor_quorum_covers(struct ucft_context *ctx,
                             const unsigned char *held);

/* Before the address exchange: chooses the mode and, for THREAD, creates
 * the heartbeat worker (whose address rt_monitor_address returns). */
ucft_status_t rt_monitor_init(struct ucft_context *ctx);
/* The heartbeat worker's address, or NULL/0 when there is none. */
void rt_monitor_address(struct ucft_context *ctx, const void **addr,
                        size_t *len);
/* After wire-up: starts heartbeats (and the thread). */
ucft_status_t rt_monitor_start(struct ucft_context *ctx);
/* Evidence that `rank` failed (a launcher's death event). Any thread. */
void rt_monitor_report(struct ucft_context *ctx, int rank, ucft_status_t why);
/* An endpoint error of the context's transport about `rank`, from its
 * progress (the owner's thread). About a rank whose process this node's
 * kernel shows (procwatch.h), or with probes off: rt_monitor_report. About
 * any other rank: a suspicion that the detector confirms through other
 * ranks before declaring it (det_suspect); the broken endpoint is closed
 * at once, so that a later send connects anew. */
void rt_monitor_report_transport(struct ucft_context *ctx, int rank,
                                 ucft_status_t why);
/* Proof, not evidence, that `rank` misbehaves (it sent a corrupted
 * message, UCFT_CHECKSUM): declared at once like outside evidence, also
 * when only heartbeats decide (UCFT_DETECTOR_FASTPATH=n), and propagated
 * and fenced by the detector. Without a detector (UCFT_DETECTOR=n) the
 * rank is failed here only. Any thread. */
void rt_monitor_accuse(struct ucft_context *ctx, int rank, ucft_status_t why);
/* INLINE only, from the owner's progress: evidence taken from the inbox. */
void rt_monitor_declare(struct ucft_context *ctx, int rank);
void rt_monitor_suspect(struct ucft_context *ctx, int rank);
/* Clean stop (finalize), in steps so that no heartbeat worker goes away
 * while another rank's detector may still connect to it:
 * rt_monitor_stop stops the detector (the observer is told not to watch us;
 * the worker keeps serving; evidence is applied directly from now on).
 * In the INLINE mode the detector's last messages go out on the context's
 * transport: the caller progresses the context until rt_monitor_quiet
 * (at most RT_MONITOR_STOP_BOUND_NS), then calls rt_monitor_stopped.
 * After a barrier, rt_monitor_cleanup destroys the worker. */
#define RT_MONITOR_STOP_BOUND_NS (1000 * UCFT_NSEC_PER_MSEC)
void rt_monitor_stop(struct ucft_context *ctx);
int rt_monitor_quiet(void *ctx);
void rt_monitor_stopped(struct ucft_context *ctx);
void rt_monitor_cleanup(struct ucft_context *ctx);
/* cut_off_cb of the context's transports (tp_ucp.h): the FIFO self-probe
 * found this rank deaf to its node; fail-stop (logs, aborts). */
void rt_monitor_cut_off(void *ctx);
/* What another thread's rt_monitor_report may still touch (its lock, the
 * decided set, the wake-up fd): freed only once no PMIx callback can run,
 * i.e. after boot_finalize. */
void rt_monitor_free(struct ucft_context *ctx);

#endif
