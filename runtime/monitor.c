/* The failure detector inside a context: modes, the heartbeat thread, and
 * the hand-over of evidence and decisions (see detect.h). */
#include "runtime/context.h"
#include "runtime/base/clock.h"
#include "runtime/detector/detector.h"
#include "runtime/linux/sched_slice.h"
#include "transport/ucp/tp_ucp.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/eventfd.h>
#include <unistd.h>

/* After a decision the heartbeat worker closes the rank's UCX endpoint,
 * which unmaps the dead process's shared-memory segments (and frees them
 * when this was the last mapping: milliseconds). The detector itself
 * already ignores the rank, so that work waits until the survivors' main
 * threads have been told, instead of running ahead of them. The close
 * does not fence the rank on this worker (tp_disconnect): the detector
 * fences by itself, and must still see a falsely declared rank's
 * heartbeats to answer them with a notice (which connects again). */
#define FENCE_DELAY_NS (10 * UCFT_NSEC_PER_MSEC)

/* A queued rank with this bit is transport evidence to confirm
 * (det_suspect), not a declaration. */
#define QUEUE_SUSPECT (1 << 30)

/* ---- detector callbacks (the thread driving the detector's transport) -- */

/* The quorum's view, under the lock that rt_monitor_quorum_covers takes
 * on the owner's thread (THREAD mode). */
static int quorum_failed(rt_monitor_t *d, int rank)
{
    if (d->lock_ready)
        pthread_mutex_lock(&d->lock);
    int ok = rt_quorum_on_failed(&d->quorum, rank, ucft_clock_now_ns());
    if (d->lock_ready)
        pthread_mutex_unlock(&d->lock);
    return ok;
}

static void on_failed(void *arg, int rank, uint64_t epoch, det_why_t why)
{
    rt_monitor_t *d = arg;
    /* This rank's own decisions at info: who declared whom, and why, is
     * what an operator needs after a false suspicion. */
    ucft_log_(&d->ctx->log,
              why == DET_WHY_HEARTBEAT || why == DET_WHY_EXTERNAL
                  ? UCFT_LOG_INFO
                  : UCFT_LOG_DEBUG,
              "detector: rank %d failed (epoch %llu, %s)", rank,
              (unsigned long long)epoch,
              why == DET_WHY_HEARTBEAT ? "heartbeat timeout"
              : why == DET_WHY_NEWS    ? "failure news"
              : why == DET_WHY_EXITED  ? "its process is ending (kernel)"
                                       : "launcher or transport evidence");
    /* Decided: the owner applies it from its progress. */
    if (d->decided != NULL)
        atomic_store_explicit(&d->decided[rank], 1, memory_order_release);
    if (d->quorum_on && !quorum_failed(d, rank)) {
        /* No split brain (quorum.h): the ranks this rank still holds
         * alive are no majority of the last agreed membership; the other
         * side may go on, so this one must not. Fenced like a rank the
         * job declared failed, and for the same reason. */
        ucft_error(&d->ctx->log,
                   "in a minority after failures or a partition: %d of the "
                   "%d ranks of the last agreed membership alive in this "
                   "rank's view (lowest rank %d %s); fencing: aborting "
                   "(UCFT_QUORUM)",
                   d->quorum.live, d->quorum.base, d->quorum.lowest,
                   d->quorum.failed[d->quorum.lowest] ? "lost" : "held");
        abort();
    }
    rt_inbox_push(&d->ctx->inbox, rank, UCFT_ERR_PROC_FAILED, 0);
    if (d->mode == RT_MONITOR_THREAD && d->nfence < d->capfence) {
        if (d->nfence == 0)
            d->fence_due = ucft_clock_now_ns() + FENCE_DELAY_NS;
        d->fence[d->nfence++] = rank; /* disconnected on hb_tp later */
    }
}

static void on_self(void *arg)
{
    rt_monitor_t *d = arg;
    /* Fencing: the job has declared this rank dead; being alive anyway
     * would break every survivor's view. One of the two documented
     * aborts (the other: rt_monitor_cut_off below). */
    ucft_error(&d->ctx->log,
               "this rank was declared failed by the job (its heartbeats "
               "stopped for longer than UCFT_HB_TIMEOUT, e.g. it was "
               "stopped or starved, or it sent a corrupted message under "
               "UCFT_CHECKSUM); aborting to keep the job consistent");
    abort();
}

/* A transport found its shared-memory FIFO blocked (it logged how): this
 * rank can no longer hear its node, and a rank that cannot receive would
 * hang every collective that needs it. Stopping turns that into one more
 * failure, which the survivors detect and correct. The library's second
 * documented abort, beside fencing (on_self above). */
void rt_monitor_cut_off(void *arg)
{
    struct ucft_context *ctx = arg;
    ucft_error(&ctx->log, "stopping this rank (fail-stop): it can no "
                          "longer receive from the ranks of its node");
    abort();
}

static void on_late(void *arg, uint64_t gap_ns)
{
    rt_monitor_t *d = arg;
    ucft_warn(&d->ctx->log,
              "own heartbeat went out %.1f ms late (this rank was "
              "descheduled; a false suspicion may follow)",
              (double)gap_ns / 1e6);
}

static int learns_alone(void *arg, int rank, int fact)
{
    rt_monitor_t *d = arg;
    return rt_procwatch_learns_alone(&d->pw, rank, fact);
}

/* Kernel truth (runtime/linux/kview.h): the observed rank is overdue; if
 * it runs on this node, its process and heartbeat thread say whether it
 * is stopped, dead or stuck (declare) or merely starved (hold). */
static hb_vouch_t vouch(void *arg, int rank, uint64_t silent_ns)
{
    rt_monitor_t *d = arg;
    const rt_config_t *cfg = &d->ctx->cfg;
    rt_kview_limits_t lim = {.limit_ns = cfg->hb_local_limit_ns,
                             .start_limit_ns = cfg->init_timeout_ns};
    const char *why;
    char state;
    rt_kview_verdict_t v =
        rt_procwatch_judge(&d->pw, rank, silent_ns, &lim, &why, &state);
    switch (v) {
    case RT_KVIEW_ALIVE:
        if (rank != d->held_rank || silent_ns < d->held_silent)
            ucft_debug(&d->ctx->log,
                       "rank %d: no heartbeat for %.1f ms, but the kernel "
                       "shows it alive (%s, state %c): not declared",
                       rank, (double)silent_ns / 1e6, why, state);
        d->held_rank = rank;
        d->held_silent = silent_ns;
        return HB_VOUCH_ALIVE;
    case RT_KVIEW_DEAD:
        ucft_info(&d->ctx->log,
                  "rank %d: no heartbeat for %.1f ms and the kernel shows "
                  "it %s (state %c): dead to the detector",
                  rank, (double)silent_ns / 1e6, why, state ? state : '-');
        return HB_VOUCH_DEAD;
    case RT_KVIEW_UNKNOWN:
        break;
    }
    return HB_VOUCH_NONE;
}

static uint64_t run_delay(void *arg)
{
    return rt_kview_delay(((rt_monitor_t *)arg)->delay_fd);
}

/* Transport evidence about `rank` was refuted: it answered the probes.
 * The endpoint that failed is closed (and its errors count again), so
 * that the detector's next message to it connects anew. */
static void cleared(void *arg, int rank)
{
    rt_monitor_t *d = arg;
    if (d->mode == RT_MONITOR_THREAD)
        tp_disconnect(d->hb_tp, rank);
}

static ucft_status_t make_det(rt_monitor_t *d, tp_t *tp)
{
    const rt_config_t *cfg = &d->ctx->cfg;
    det_params_t p;
    det_ops_t ops = {.failed_cb = on_failed,
                     .self_cb = on_self,
                     .warn_late_cb = on_late,
                     .learns_alone_cb = learns_alone,
                     .cleared_cb = cleared,
                     .arg = d};
    if (d->mode == RT_MONITOR_THREAD) {
        if (d->pidfd && rt_procwatch_fd(&d->pw) >= 0)
            ops.vouch_cb = vouch;
        if (d->delay_fd >= 0)
            ops.run_delay_cb = run_delay;
    }
    det_params_default(&p);
    p.hb.eta_ns = cfg->hb_period_ns;
    p.hb.delta_ns = cfg->hb_timeout_ns;
    p.hb.start_grace_ns = cfg->hb_grace_ns;
    p.hb.adapt = 1; /* starvation-aware where the kernel cannot see */
    p.hb.first_hb_ns = cfg->init_timeout_ns; /* a peer still starting */
    /* Confirm a suspicion through other ranks (probe.h). */
    p.probe.helpers = (int)cfg->hb_probes;
    p.probe.window_ns =
        cfg->hb_confirm_ns > 0 ? cfg->hb_confirm_ns : cfg->hb_timeout_ns / 2;
    p.probe.round_ns = cfg->hb_period_ns;
    p.probe.run = (int)cfg->hb_run;
    ucft_status_t st = det_create(tp, &p, &ops, &d->det);
    if (st == UCFT_OK)
        st = det_start(d->det);
    /* Connect to the rank we observe while it is alive: the transport then
     * watches it too, and the fencing notice sent to it after a suspicion
     * needs no new connection to a possibly dead peer. */
    int size = d->ctx->boot.size, me = d->ctx->boot.rank;
    tp_watch(tp, (me + size - 1) % size);
    return st;
}

/* ---- the heartbeat thread -------------------------------------------- */

/* An endpoint error of the heartbeat worker: the kernel's word decides
 * for a rank of this node (its process gone: declared at once); about any
 * other rank it is a suspicion that the probes confirm (a TCP connection
 * stalled by losses fails too; det_suspect). If the rank answers, its
 * broken endpoint goes (cleared, below): the next send connects anew. */
static void hb_peer_error(void *arg, int rank, ucft_status_t why)
{
    rt_monitor_t *d = arg;
    (void)why;
    /* `stopped` is written by this thread only: no lock needed to read. */
    if (!d->fastpath || d->stopped)
        return;
    if (rt_procwatch_sees(&d->pw, rank) || !pb_enabled(&d->det->pb)) {
        det_declare(d->det, rank, DET_WHY_EXTERNAL);
        return;
    }
    det_suspect(d->det, rank);
}

static void apply_fences(rt_monitor_t *d)
{
    for (size_t i = 0; i < d->nfence; i++)
        tp_disconnect(d->hb_tp, d->fence[i]);
    d->nfence = 0;
}

/* Takes the queued evidence; returns 1 when asked to stop. */
static int take_queue(rt_monitor_t *d, int *ranks, size_t max, size_t *n)
{
    pthread_mutex_lock(&d->lock);
    *n = d->nqueue < max ? d->nqueue : max;
    for (size_t i = 0; i < *n; i++)
        ranks[i] = d->queue[i];
    for (size_t i = *n; i < d->nqueue; i++)
        d->queue[i - *n] = d->queue[i];
    d->nqueue -= *n;
    int stop = d->stop;
    pthread_mutex_unlock(&d->lock);
    return stop;
}

/* Local ranks whose processes ended: outside evidence. */
static void take_procwatch(rt_monitor_t *d)
{
    int ranks[32];
    size_t n;
    while ((n = rt_procwatch_take(&d->pw, ranks, 32)) > 0) {
        det_hold(d->det); /* node-mates dying together: one message */
        for (size_t i = 0; i < n; i++) {
            ucft_debug(
                &d->ctx->log,
                "rank %d: its process is dying or ended (alive slot or pidfd)",
                ranks[i]);
            if (!d->stopped)
                det_declare(d->det, ranks[i], DET_WHY_EXITED);
        }
        det_release(d->det);
    }
}

/* The heartbeat thread's own scheduling (Linux: per thread). A short time
 * slice (Linux 6.12+: sched_runtime of a SCHED_OTHER thread) lets it
 * preempt a computing thread as soon as it wakes, without the weight of a
 * lower nice value, which slowed every collective of an oversubscribed
 * node (docs/detector.md). Older kernels ignore the slice. A nice value
 * below the process's is a privilege: without it the thread stays as it
 * is, and says so. */
static void set_sched(rt_monitor_t *d)
{
    const rt_config_t *cfg = &d->ctx->cfg;
    id_t tid = (id_t)syscall(SYS_gettid);
    int nice = cfg->hb_nice;

    if (nice < -20 || nice > 19) {
        ucft_warn(&d->ctx->log, "UCFT_HB_NICE=%d: outside -20..19, ignored",
                  nice);
        nice = 0;
    }
    if (nice != 0 && setpriority(PRIO_PROCESS, tid, nice) != 0)
        ucft_debug(&d->ctx->log,
                   "heartbeat thread: cannot set nice %d (%s); it competes "
                   "with the other threads as they are",
                   nice, strerror(errno));
    rt_slice_set(&d->ctx->log, "heartbeat thread", cfg->hb_slice_ns, NULL);
}

/* What the heartbeats cost, for people tuning eta (debug log). */
static void log_hb_stats(const rt_monitor_t *d)
{
    const hb_stats_t *s = &d->det->hb.stats;
    ucft_debug(&d->ctx->log,
               "heartbeats: %llu sent (%llu on receiving one), %llu received, "
               "%llu ticks; overdue: %llu held (kernel: alive), %llu "
               "declared on the kernel's word, %llu deadlines moved by our "
               "own run-queue wait, %llu by a late tick, %llu by the "
               "rank's recent gaps",
               (unsigned long long)s->sent, (unsigned long long)s->followed,
               (unsigned long long)s->received, (unsigned long long)s->ticks,
               (unsigned long long)s->vouched, (unsigned long long)s->kernel,
               (unsigned long long)s->own_wait, (unsigned long long)s->credited,
               (unsigned long long)s->adapted);
    const pb_stats_t *pb = &d->det->pb.stats;
    if (pb->suspicions + pb->pings + pb->acks + pb->malformed > 0)
        ucft_debug(
            &d->ctx->log,
            "indirect probes: %llu suspicions (%llu refuted by "
            "helpers, %llu by a late heartbeat, %llu confirmed), "
            "%llu requests sent; as helper %llu pings, %llu relays; "
            "as suspect %llu acks; %llu malformed, %llu skipped",
            (unsigned long long)pb->suspicions, (unsigned long long)pb->refuted,
            (unsigned long long)s->recovered, (unsigned long long)pb->confirmed,
            (unsigned long long)pb->requests, (unsigned long long)pb->pings,
            (unsigned long long)pb->relays, (unsigned long long)pb->acks,
            (unsigned long long)pb->malformed, (unsigned long long)pb->skipped);
    const rec_stats_t *r = &d->det->rec.stats;
    if (r->offers + r->received > 0)
        ucft_debug(
            &d->ctx->log,
            "failed-set reconciliation: %llu offers, %llu answers, "
            "%llu received, %llu facts learnt, %llu malformed",
            (unsigned long long)r->offers, (unsigned long long)r->answers,
            (unsigned long long)r->received, (unsigned long long)r->learnt,
            (unsigned long long)r->malformed);
}

static void *hb_thread_main(void *arg)
{
    rt_monitor_t *d = arg;
    tp_t *tp = d->hb_tp;
    struct pollfd pfd[3] = {{.fd = tp->ops->fd(tp), .events = POLLIN},
                            {.fd = d->evfd, .events = POLLIN},
                            {.fd = rt_procwatch_fd(&d->pw), .events = POLLIN}};
    int ranks[64];
    size_t n;

    /* Named for people looking at threads (top -H, ps -L, traces). */
    pthread_setname_np(pthread_self(), "ucft-hb");
    set_sched(d);
    d->delay_fd = rt_kview_delay_open(); /* this thread's schedstat */
    rt_procwatch_hold(&d->pw);           /* until this thread ends */
    if (make_det(d, tp) != UCFT_OK) {
        ucft_error(&d->ctx->log, "heartbeat thread: cannot start the "
                                 "detector; failures are learnt from "
                                 "launcher events and endpoint errors only");
        rt_procwatch_release(&d->pw); /* this thread's end is no death */
        if (d->delay_fd >= 0)
            close(d->delay_fd);
        d->delay_fd = -1;
        return NULL;
    }
    for (;;) {
        rt_procwatch_beat(&d->pw); /* this thread turns (kview.h) */
        int stop = take_queue(d, ranks, 64, &n);
        if (n > 0) /* nothing queued: no pump on this idle turn */
            det_hold(d->det);
        for (size_t i = 0; i < n; i++) {
            if (ranks[i] & QUEUE_SUSPECT) {
                det_suspect(d->det, ranks[i] & ~QUEUE_SUSPECT);
                continue;
            }
            /* A launcher event or endpoint error about a local rank whose
             * process the kernel shows gone: the kernel's word, which
             * sends the dead process no notice (a notice would open a
             * connection to it: UCX errors attaching its removed
             * shared-memory segments, work for nothing). */
            det_declare(d->det, ranks[i],
                        rt_procwatch_gone(&d->pw, ranks[i]) ? DET_WHY_EXITED
                                                            : DET_WHY_EXTERNAL);
        }
        if (n > 0)
            det_release(d->det);
        if (stop)
            break;
        unsigned work = tp_progress(tp);
        if (d->nfence > 0 && ucft_clock_now_ns() >= d->fence_due)
            apply_fences(d);
        rt_procwatch_arm(&d->pw);
        if (work > 0 || n > 0 || tp->ops->arm(tp) != UCFT_OK)
            continue;
        uint64_t now = ucft_clock_now_ns(), next = tp_timer_next(tp);
        if (d->nfence > 0 && d->fence_due < next)
            next = d->fence_due;
        int ms = next <= now ? 0
                 : next - now > 1000 * UCFT_NSEC_PER_MSEC
                     ? 1000
                     : (int)((next - now + UCFT_NSEC_PER_MSEC - 1) /
                             UCFT_NSEC_PER_MSEC);
        if (poll(pfd, 3, ms) > 0) {
            if (pfd[1].revents & POLLIN) {
                uint64_t v;
                ssize_t r = read(d->evfd, &v, sizeof(v));
                (void)r;
            }
            if (pfd[2].revents & POLLIN)
                take_procwatch(d);
        }
    }
    log_hb_stats(d);
    det_stop(d->det);
    uint64_t end = ucft_clock_now_ns() + RT_MONITOR_STOP_BOUND_NS;
    while (!det_idle(d->det) && ucft_clock_now_ns() < end)
        tp_progress(tp);
    apply_fences(d);
    pthread_mutex_lock(&d->lock);
    d->stopped = 1;
    pthread_mutex_unlock(&d->lock);
    /* Keep serving the worker (peers may still be finishing with it) until
     * the owner says every rank has stopped its detector. */
    for (;;) {
        pthread_mutex_lock(&d->lock);
        int quit = d->quit;
        pthread_mutex_unlock(&d->lock);
        if (quit)
            break;
        if (tp_progress(tp) > 0 || tp->ops->arm(tp) != UCFT_OK)
            continue;
        if (poll(pfd, 2, 100) > 0 && (pfd[1].revents & POLLIN)) {
            uint64_t v;
            ssize_t r = read(d->evfd, &v, sizeof(v));
            (void)r;
        }
    }
    rt_procwatch_release(&d->pw); /* a clean end for the peers' slots */
    if (d->delay_fd >= 0)
        close(d->delay_fd);
    d->delay_fd = -1;
    /* The transport first: closing its endpoints completes sends still
     * pending in UCX, whose callbacks touch the detector's requests. */
    tp_destroy(tp);
    d->hb_tp = NULL; /* the owner reads it after joining this thread */
    det_destroy(d->det);
    d->det = NULL;
    return NULL;
}

/* ---- owner side ------------------------------------------------------------
 */

/* 1 when duration a (variable na) exceeds b (strict) or is at least b;
 * else 0, logged. */
static int ordered(struct ucft_context *ctx, const char *na, uint64_t a,
                   const char *nb, uint64_t b, int strict)
{
    if (strict ? a > b : a >= b)
        return 1;
    ucft_error(&ctx->log, "%s (%llu ms) must %s %s (%llu ms)", na,
               (unsigned long long)(a / 1000000),
               strict ? "exceed" : "be at least", nb,
               (unsigned long long)(b / 1000000));
    return 0;
}

ucft_status_t rt_monitor_init(struct ucft_context *ctx)
{
    rt_monitor_t *d = &ctx->monitor;
    const rt_config_t *cfg = &ctx->cfg;
    ucft_status_t st;

    d->ctx = ctx;
    d->evfd = -1;
    d->delay_fd = -1;
    d->held_rank = -1;
    rt_procwatch_init(&d->pw, &ctx->log);
    d->inited = 1;
    d->fastpath = cfg->detector_fastpath;
    if (!cfg->detector || ctx->boot.size < 2) {
        d->mode = RT_MONITOR_OFF;
        return UCFT_OK;
    }
    if (cfg->hb_period_ns < DET_MIN_ETA_NS) {
        ucft_error(&ctx->log,
                   "UCFT_HB_PERIOD=%lluns: the heartbeat period must be at "
                   "least %lluns",
                   (unsigned long long)cfg->hb_period_ns,
                   (unsigned long long)DET_MIN_ETA_NS);
        return UCFT_ERR_INVALID_PARAM;
    }
    if (!ordered(ctx, "UCFT_HB_TIMEOUT", cfg->hb_timeout_ns, "UCFT_HB_PERIOD",
                 cfg->hb_period_ns, 1) ||
        !ordered(ctx, "UCFT_HB_LOCAL_LIMIT", cfg->hb_local_limit_ns,
                 "UCFT_HB_TIMEOUT", cfg->hb_timeout_ns, 0))
        return UCFT_ERR_INVALID_PARAM;
    if (cfg->hb_probes > 0 && cfg->hb_confirm_ns > 0 &&
        !ordered(ctx, "UCFT_HB_TIMEOUT", cfg->hb_timeout_ns, "UCFT_HB_CONFIRM",
                 cfg->hb_confirm_ns, 1))
        return UCFT_ERR_INVALID_PARAM;
    if (cfg->hb_run < 1 || cfg->hb_run > PB_MAX_RUN) {
        ucft_error(&ctx->log,
                   "UCFT_HB_RUN=%u: from 1 to %d ranks probed together",
                   cfg->hb_run, PB_MAX_RUN);
        return UCFT_ERR_INVALID_PARAM;
    }
    if (cfg->hb_probes > PB_MAX_HELPERS) {
        ucft_error(&ctx->log,
                   "UCFT_HB_PROBES=%u: at most %d helpers per round of "
                   "indirect probes",
                   cfg->hb_probes, PB_MAX_HELPERS);
        return UCFT_ERR_INVALID_PARAM;
    }
    if (cfg->quorum) {
        ucft_status_t qs =
            rt_quorum_init(&d->quorum, ctx->boot.size, cfg->quorum_settle_ns,
                           ucft_clock_now_ns());
        if (qs != UCFT_OK)
            return qs;
        d->quorum_on = 1;
    }
    if (!cfg->detector_thread) {
        d->mode = RT_MONITOR_INLINE;
        return UCFT_OK;
    }
    d->mode = RT_MONITOR_THREAD;
    d->capfence = (size_t)ctx->boot.size;
    d->fence = calloc(d->capfence, sizeof(*d->fence));
    d->decided = calloc((size_t)ctx->boot.size, sizeof(*d->decided));
    if (d->fence == NULL || d->decided == NULL)
        return UCFT_ERR_NO_MEMORY;
    d->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (d->evfd < 0)
        return UCFT_ERR_IO;
    if (pthread_mutex_init(&d->lock, NULL) != 0)
        return UCFT_ERR_NO_RESOURCE;
    d->lock_ready = 1;
    tp_ucp_params_t p = {.rank = ctx->boot.rank,
                         .size = ctx->boot.size,
                         .log = &ctx->log,
                         .lookup = boot_lookup_hb,
                         .lookup_arg = &ctx->boot,
                         .keepalive_ns = cfg->keepalive_ns,
                         .serialized = 1,
                         .probe_wait_ns = cfg->shm_probe_ns,
                         .shm_mend = cfg->shm_mend,
                         .cut_off_cb = rt_monitor_cut_off,
                         .cut_off_arg = ctx};
    st = tp_ucp_create(&p, &d->hb_tp);
    if (st != UCFT_OK)
        return st;
    d->hb_tp->peer_error_cb = hb_peer_error;
    d->hb_tp->peer_error_arg = d;
    d->pidfd = cfg->detector_fastpath && cfg->detector_pidfd;
    return d->pidfd ? rt_procwatch_publish(&d->pw, &ctx->boot) : UCFT_OK;
}

void rt_monitor_address(struct ucft_context *ctx, const void **addr,
                        size_t *len)
{
    *addr = NULL;
    *len = 0;
    if (ctx->monitor.hb_tp != NULL)
        tp_address(ctx->monitor.hb_tp, addr, len);
}

ucft_status_t rt_monitor_start(struct ucft_context *ctx)
{
    rt_monitor_t *d = &ctx->monitor;
    switch (d->mode) {
    case RT_MONITOR_OFF:
        return UCFT_OK;
    case RT_MONITOR_INLINE:
        return make_det(d, ctx->tp);
    case RT_MONITOR_THREAD:
        if (d->pidfd)
            rt_procwatch_open(&d->pw, &ctx->boot);
        if (pthread_create(&d->thread, NULL, hb_thread_main, d) != 0) {
            ucft_error(&ctx->log, "cannot start the heartbeat thread");
            return UCFT_ERR_NO_RESOURCE;
        }
        d->thread_started = 1;
        return UCFT_OK;
    }
    return UCFT_ERR_INTERNAL;
}

void rt_monitor_report(struct ucft_context *ctx, int rank, ucft_status_t why)
{
    rt_monitor_t *d = &ctx->monitor;
    if (d->mode != RT_MONITOR_OFF && !d->fastpath)
        return; /* only heartbeats decide */
    rt_monitor_accuse(ctx, rank, why);
}

/* Hands `rank` (with QUEUE_SUSPECT: to confirm) to the heartbeat thread;
 * 0 when the detector is stopping (the caller decides then). */
static int enqueue(rt_monitor_t *d, int rank)
{
    pthread_mutex_lock(&d->lock);
    if (d->stop) {
        pthread_mutex_unlock(&d->lock);
        return 0;
    }
    if (d->nqueue == d->capqueue) {
        size_t cap = d->capqueue ? 2 * d->capqueue : 16;
        int *q = realloc(d->queue, cap * sizeof(*q));
        if (q == NULL) {
            pthread_mutex_unlock(&d->lock);
            return 1; /* heartbeats will still find it */
        }
        d->queue = q;
        d->capqueue = cap;
    }
    d->queue[d->nqueue++] = rank;
    pthread_mutex_unlock(&d->lock);
    uint64_t one = 1;
    ssize_t r = write(d->evfd, &one, sizeof(one));
    (void)r;
    return 1;
}

/* Already decided and handed over (e.g. the launcher's event after the
 * kernel's word): nothing to wake anybody for. */
static int decided(const rt_monitor_t *d, int rank)
{
    return rank >= 0 && rank < d->ctx->boot.size &&
           atomic_load_explicit(&d->decided[rank], memory_order_acquire);
}

void rt_monitor_accuse(struct ucft_context *ctx, int rank, ucft_status_t why)
{
    rt_monitor_t *d = &ctx->monitor;
    switch (d->mode) {
    case RT_MONITOR_OFF:
        rt_inbox_push(&ctx->inbox, rank, why, 0);
        return;
    case RT_MONITOR_INLINE:
        rt_inbox_push(&ctx->inbox, rank, why, RT_INBOX_EVIDENCE);
        return;
    case RT_MONITOR_THREAD:
        if (decided(d, rank))
            return;
        /* The detector declares this evidence at once and unvetted
         * (det_declare, DET_WHY_EXTERNAL), so the owner may apply it now
         * instead of after a heartbeat-thread wake-up: one thread hop
         * less on the fast path. The detector still propagates and
         * fences; its own decision then finds the rank already failed.
         * A stopping detector: decided here. */
        enqueue(d, rank);
        rt_inbox_push(&ctx->inbox, rank, why, 0);
        return;
    }
}

void rt_monitor_report_transport(struct ucft_context *ctx, int rank,
                                 ucft_status_t why)
{
    rt_monitor_t *d = &ctx->monitor;
    if (d->mode == RT_MONITOR_OFF || !d->fastpath || rank < 0 ||
        rank >= ctx->boot.size || ctx->cfg.hb_probes == 0 || ctx->finalizing ||
        rt_procwatch_sees(&d->pw, rank)) {
        rt_monitor_report(ctx, rank, why);
        return;
    }
    /* The broken endpoint goes: if the rank answers the probes, the next
     * send connects anew; if it is dead, that send fails again. */
    tp_disconnect(ctx->tp, rank);
    ucft_debug(&ctx->log,
               "endpoint error about rank %d, whose process this node "
               "cannot see: to be confirmed by the detector's probes",
               rank);
    if (d->mode == RT_MONITOR_INLINE) {
        rt_inbox_push(&ctx->inbox, rank, why, RT_INBOX_SUSPECT);
        return;
    }
    if (!decided(d, rank) && !enqueue(d, rank | QUEUE_SUSPECT))
        rt_inbox_push(&ctx->inbox, rank, why, 0); /* stopping: as before */
}

void rt_monitor_declare(struct ucft_context *ctx, int rank)
{
    if (ctx->monitor.det != NULL)
        det_declare(ctx->monitor.det, rank, DET_WHY_EXTERNAL);
}

void rt_monitor_suspect(struct ucft_context *ctx, int rank)
{
    if (ctx->monitor.det != NULL)
        det_suspect(ctx->monitor.det, rank);
}

static void wake(rt_monitor_t *d)
{
    uint64_t one = 1;
    ssize_t r = write(d->evfd, &one, sizeof(one));
    (void)r;
}

void rt_monitor_stop(struct ucft_context *ctx)
{
    rt_monitor_t *d = &ctx->monitor;
    if (d->mode == RT_MONITOR_INLINE && d->det != NULL) {
        if (!d->inline_stopping) {
            log_hb_stats(d);
            det_stop(d->det);
            d->inline_stopping = 1;
        }
    } else if (d->mode == RT_MONITOR_THREAD && d->thread_started) {
        pthread_mutex_lock(&d->lock);
        d->stop = 1;
        pthread_mutex_unlock(&d->lock);
        wake(d);
        /* Wait (bounded) until the detector has told its observer. */
        uint64_t end = ucft_clock_now_ns() + 2 * RT_MONITOR_STOP_BOUND_NS;
        for (;;) {
            pthread_mutex_lock(&d->lock);
            int stopped = d->stopped;
            pthread_mutex_unlock(&d->lock);
            if (stopped || ucft_clock_now_ns() > end)
                break;
            nanosleep(&(struct timespec){0, 200 * 1000}, NULL);
        }
    }
}

int rt_monitor_quiet(void *arg)
{
    const rt_monitor_t *d = &((struct ucft_context *)arg)->monitor;
    return d->mode != RT_MONITOR_INLINE || d->det == NULL || det_idle(d->det);
}

void rt_monitor_stopped(struct ucft_context *ctx)
{
    rt_monitor_t *d = &ctx->monitor;
    if (d->mode == RT_MONITOR_INLINE && d->det != NULL) {
        det_destroy(d->det);
        d->det = NULL;
    }
}

/* Destroys the heartbeat worker (after rt_monitor_stop and a barrier). */
static void quit_thread(rt_monitor_t *d)
{
    if (d->mode != RT_MONITOR_THREAD || !d->thread_started)
        return;
    pthread_mutex_lock(&d->lock);
    d->stop = 1;
    d->quit = 1;
    pthread_mutex_unlock(&d->lock);
    wake(d);
    pthread_join(d->thread, NULL);
    d->thread_started = 0;
}

void rt_monitor_cleanup(struct ucft_context *ctx)
{
    rt_monitor_t *d = &ctx->monitor;
    if (!d->inited)
        return; /* init failed before the detector: its fds are not ours */
    rt_monitor_stop(ctx);
    rt_monitor_stopped(ctx);
    quit_thread(d);
    rt_procwatch_close(&d->pw);
    if (d->mode == RT_MONITOR_THREAD) {
        tp_destroy(d->hb_tp);
        d->hb_tp = NULL;
    }
}

void rt_monitor_free(struct ucft_context *ctx)
{
    rt_monitor_t *d = &ctx->monitor;
    if (!d->inited)
        return;
    if (d->mode == RT_MONITOR_THREAD) {
        if (d->evfd >= 0)
            close(d->evfd);
        d->evfd = -1;
        if (d->lock_ready)
            pthread_mutex_destroy(&d->lock);
        d->lock_ready = 0;
    }
    if (d->quorum_on)
        rt_quorum_cleanup(&d->quorum);
    d->quorum_on = 0;
    free(d->queue);
    free(d->fence);
    free((void *)d->decided);
    d->decided = NULL;
    d->queue = NULL;
    d->fence = NULL;
    d->mode = RT_MONITOR_OFF;
    d->inited = 0;
}

int rt_monitor_quorum_covers(struct ucft_context *ctx,
                             const unsigned char *held)
{
    rt_monitor_t *d = &ctx->monitor;
    if (!d->quorum_on)
        return 1;
    if (d->lock_ready)
        pthread_mutex_lock(&d->lock);
    int c = rt_quorum_covers(&d->quorum, held);
    if (d->lock_ready)
        pthread_mutex_unlock(&d->lock);
    return c;
}
