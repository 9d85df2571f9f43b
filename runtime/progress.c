/*
 * Progress and waiting. ucft_context_progress drives the transport, then the
 * failure news (runtime/failed_set.c), then the attached modules
 * (runtime/module.h), in that order; ucft_context_arm prepares a sleep on
 * the context fd.
 *
 * Waiting. spin: progress in a loop. sleep: arm the transport and sleep on
 * the context fd (UCX event fd + our eventfd) with a bounded poll. hybrid:
 * busy-poll for UCFT_SPIN_TIME (default 0), then poll for UCFT_YIELD_TIME
 * (default 2 ms) calling sched_yield after every poll that finds nothing,
 * then sleep. Yielding hands the core to another rank that has work (with
 * more ranks than cores, the one that will send us our message) instead of
 * holding it for a time slice, and costs one system call when nobody else
 * wants the core; sleeping makes every later message a wakeup (tens of
 * microseconds on a loaded node). docs/archive/bench-history.md
 * (2026-11-22, "coll: where the per-operation cost went") has the
 * measurements behind the defaults. Sixteen idle ranks on two cores must
 * not burn the cores: after the yield budget they sleep.
 *
 * A yield can only run the ranks bound to this core. When exactly one other
 * rank shares it and the collective waited for says it needs messages only
 * from other cores (rt_wait_hinted, coll_args_t.remote_wait), a yield
 * would hand the core to a rank that cannot send them and cost a context
 * switch each way: the wait polls instead, for up to UCFT_MATE_SPIN_TIME
 * after the last progress (a bound, in case that rank had other work).
 *
 * Guard against a wakeup fd that fires without work (UCX's tcp wakeup
 * before wire-up completes): after several consecutive empty wakeups the
 * loop backs off with a short sleep. A transport that cannot be armed (work
 * only polling finds) gets a yield per turn, not a busy loop.
 */
#include "runtime/context.h"
#include "runtime/base/clock.h"

#include <poll.h>
#include <sched.h>
#include <time.h>

/* A sched_yield that returns within YIELD_ALONE_NS ran nobody else: the
 * core is not contended, and the next YIELD_ALONE_POLLS empty polls do not
 * yield (a system call per poll delays noticing a message on an idle
 * core). */
#define YIELD_ALONE_NS    (1 * UCFT_NSEC_PER_USEC)
#define YIELD_ALONE_POLLS 15

/* A wait that has lasted this long (and every further stretch as long)
 * flushes what the collectives hold back (the modules' flush: the batched
 * broadcast's copies), as sleeping does at once. A shorter wait, the
 * common one in a loop of collectives on a shared core, does not: its
 * flush would send a batch of a few copies, and its receiver may be a
 * rank the message wakes for nothing. */
#define FLUSH_WAIT_NS (20 * UCFT_NSEC_PER_USEC)

/* The flush of a wait that has lasted until *flush_at, and the next one. */
static void flush_if_due(struct ucft_context *ctx, uint64_t now,
                         uint64_t *flush_at)
{
    if (now < *flush_at)
        return;
    rt_modules_flush(ctx);
    *flush_at = now + FLUSH_WAIT_NS;
}

int ucft_context_progress(ucft_context_h ctx)
{
    if (ctx == NULL)
        return 0;
    return (int)rt_progress_spin(ctx, 1);
}

unsigned rt_progress_spin(struct ucft_context *ctx, unsigned turns)
{
    unsigned n = tp_progress_spin(ctx->tp, turns);
    if (atomic_load_explicit(&ctx->inbox.pending, memory_order_relaxed) ||
        ctx->nfailed_reported < ctx->nfailed)
        n += rt_failure_progress(ctx);
    /* The modules' progress is housekeeping (module.h): a spinning wait
     * calls it once in RT_MODULES_IDLE_EVERY turns, not at each. */
    rt_modules_t *m = &ctx->modules;
    if (n > 0 || m->busy ||
        (++m->idle_calls & (RT_MODULES_IDLE_EVERY - 1)) == 0) {
        unsigned k = rt_modules_progress(ctx);
        m->busy = k > 0;
        n += k;
    }
    return n;
}

ucft_status_t ucft_context_arm(ucft_context_h ctx, int *timeout_ms)
{
    if (ctx == NULL)
        return rt_bad_arg(ctx, "ucft_context_arm", "NULL context");
    rt_modules_flush(ctx); /* nothing is held back while the caller sleeps */
    /* Nor is their housekeeping, which idle progress calls run only now
     * and then. */
    ctx->modules.busy = rt_modules_progress(ctx) > 0;
    if (ctx->modules.busy)
        return UCFT_INPROGRESS;
    if (atomic_load(&ctx->inbox.pending) ||
        ctx->nfailed_reported < ctx->nfailed)
        return UCFT_INPROGRESS;
    /* The eventfd is level-triggered: clear a stale wakeup before sleeping
     * (news that arrives later writes it again). */
    rt_inbox_drain_fd(&ctx->inbox);
    if (atomic_load(&ctx->inbox.pending))
        return UCFT_INPROGRESS;
    ucft_status_t st = ctx->tp->ops->arm(ctx->tp);
    if (st != UCFT_OK)
        return st == UCFT_INPROGRESS ? st : UCFT_INPROGRESS;
    if (timeout_ms != NULL) {
        uint64_t now = ucft_clock_now_ns();
        uint64_t next = ctx->tp->ops->timer_next(ctx->tp);
        uint64_t limit = now + ctx->cfg.poll_ns;
        if (next < limit)
            limit = next;
        *timeout_ms = limit <= now
                          ? 0
                          : (int)((limit - now + UCFT_NSEC_PER_MSEC - 1) /
                                  UCFT_NSEC_PER_MSEC);
    }
    return UCFT_OK;
}

#define EMPTY_WAKEUPS_BEFORE_BACKOFF 8
#define BACKOFF_MIN_NS               (100 * UCFT_NSEC_PER_USEC)
#define BACKOFF_MAX_NS               (5 * UCFT_NSEC_PER_MSEC)

static int poll_ms(const struct ucft_context *ctx, uint64_t now,
                   uint64_t deadline)
{
    uint64_t limit = now + ctx->cfg.poll_ns;
    uint64_t next_timer = ctx->tp->ops->timer_next(ctx->tp);
    if (next_timer < limit)
        limit = next_timer;
    if (deadline < limit)
        limit = deadline;
    if (limit <= now)
        return 0;
    uint64_t ms = (limit - now + UCFT_NSEC_PER_MSEC - 1) / UCFT_NSEC_PER_MSEC;
    return ms > 60000 ? 60000 : (int)ms;
}

static uint64_t deadline_of(uint64_t timeout_ns)
{
    if (timeout_ns == UINT64_MAX)
        return UINT64_MAX;
    return ucft_clock_now_ns() + timeout_ns;
}

ucft_status_t rt_wait_until(struct ucft_context *ctx, int (*cond)(void *),
                            void *arg, uint64_t timeout_ns)
{
    return rt_wait_hinted(ctx, cond, NULL, arg, timeout_ns);
}

ucft_status_t rt_wait_hinted(struct ucft_context *ctx, int (*cond)(void *),
                             int (*spin)(void *), void *arg,
                             uint64_t timeout_ns)
{
    uint64_t deadline = deadline_of(timeout_ns);
    int mode = ctx->cfg.wait_mode;
    unsigned empty = 0;

    if (mode == RT_WAIT_SPIN ||
        (mode == RT_WAIT_HYBRID && ctx->cfg.spin_ns > 0)) {
        uint64_t spin_end =
            mode == RT_WAIT_SPIN ? UINT64_MAX : deadline_of(ctx->cfg.spin_ns);
        if (spin_end > deadline)
            spin_end = deadline;
        uint64_t flush_at = UINT64_MAX;
        for (unsigned i = 1;; i++) {
            if (cond(arg))
                return UCFT_OK;
            rt_progress_spin(ctx, RT_SPIN_TURNS);
            /* Reading the clock costs ~20 ns: do it once every 64 polls. */
            if ((i & (64 / RT_SPIN_TURNS - 1)) != 0)
                continue;
            uint64_t now = ucft_clock_now_ns();
            if (flush_at == UINT64_MAX) /* the first clock read */
                flush_at = now + FLUSH_WAIT_NS;
            flush_if_due(ctx, now, &flush_at);
            if (now >= spin_end)
                break;
        }
    }
    if (mode == RT_WAIT_HYBRID && ctx->cfg.yield_ns > 0) {
        /* One clock read per yield: the one taken after a yield also
         * serves the next empty poll (nothing ran in between but an empty
         * progress call), and polls that skip the yield read it only at
         * the end of their run. */
        uint64_t now = ucft_clock_now_ns();
        uint64_t yield_end = now + ctx->cfg.yield_ns;
        uint64_t flush_at = now + FLUSH_WAIT_NS;
        uint64_t active = now; /* the last progress that did something */
        if (yield_end > deadline || yield_end < now)
            yield_end = deadline;
        for (unsigned skip = 0, stale = 0;;) {
            if (cond(arg))
                return UCFT_OK;
            if (ucft_context_progress(ctx) > 0) {
                stale = 1;
                continue;
            }
            if (cond(arg))
                return UCFT_OK;
            if (stale) {
                active = now = ucft_clock_now_ns();
                stale = 0;
            }
            if (now >= yield_end)
                break;
            if (skip > 0) {
                if (--skip == 0)
                    now = ucft_clock_now_ns();
                continue;
            }
            flush_if_due(ctx, now, &flush_at);
            if (spin != NULL && now - active < ctx->cfg.mate_spin_ns &&
                spin(arg)) {
                now = ucft_clock_now_ns();
                continue; /* the core's other rank cannot help */
            }
            sched_yield(); /* another rank on this core may be the sender */
            /* Back at once: nobody else wanted this core, so the next
             * polls need not pay a system call each. */
            uint64_t after = ucft_clock_now_ns();
            if (after - now < YIELD_ALONE_NS)
                skip = YIELD_ALONE_POLLS;
            now = after;
        }
    }
    for (;;) {
        if (cond(arg))
            return UCFT_OK;
        uint64_t now = ucft_clock_now_ns();
        if (now >= deadline)
            return UCFT_ERR_TIMED_OUT;
        if (ucft_context_progress(ctx) > 0) {
            empty = 0;
            continue;
        }
        if (cond(arg))
            return UCFT_OK;
        int timeout_ms;
        if (ucft_context_arm(ctx, &timeout_ms) != UCFT_OK) {
            /* Work that only polling finds, e.g. a send waiting for room
             * in a peer's shared-memory FIFO: UCX signals nothing when the
             * room appears. Give the core to the peer that makes it. */
            sched_yield();
            continue;
        }
        int ms = poll_ms(ctx, now, deadline);
        struct pollfd pfd = {.fd = ctx->epfd, .events = POLLIN};
        int rc = poll(&pfd, 1, ms);
        if (rc > 0 && ucft_context_progress(ctx) == 0 && !cond(arg)) {
            if (++empty >= EMPTY_WAKEUPS_BEFORE_BACKOFF) {
                unsigned shift = empty - EMPTY_WAKEUPS_BEFORE_BACKOFF;
                uint64_t ns =
                    shift >= 6 ? BACKOFF_MAX_NS : BACKOFF_MIN_NS << shift;
                if (ns > BACKOFF_MAX_NS)
                    ns = BACKOFF_MAX_NS;
                /* Not blind: failure news (the inbox's eventfd) ends
                 * the back-off at once, as a death is what a stalled
                 * operation is most likely waiting for. */
                struct pollfd in = {.fd = ctx->inbox.evfd, .events = POLLIN};
                struct timespec ts = {0, (long)ns};
                (void)ppoll(&in, 1, &ts, NULL);
            }
        } else {
            empty = 0;
        }
    }
}
