/*
 * Context lifecycle: open (config, PMIx bootstrap, UCP transport, context
 * fd, monitor, address exchange), start (wire-up, heartbeats), and the
 * close of finalize (flush, fence while progressing, teardown); the
 * queries of the context. ucft_init and ucft_finalize (comm/lib.c) run
 * these phases around the world communicator.
 */
#include "runtime/context.h"
#include "runtime/base/clock.h"
#include "runtime/jobwide.h"
#include "placement/locality.h"
#include "transport/ctrl_kinds.h"
#include "transport/ucp/tp_ucp.h"

#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

/* ---- wire-up ---------------------------------------------------------------
 */

typedef struct wireup {
    struct ucft_context *ctx;
    tp_req_t sreq, rreq;
    int sdone, rdone, left;
} wireup_t;

static void wireup_send_done(tp_req_t *r)
{
    ((wireup_t *)r->arg)->sdone = 1;
}

static void wireup_recv_done(tp_req_t *r)
{
    ((wireup_t *)r->arg)->rdone = 1;
}

static int wireup_done(void *arg)
{
    wireup_t *w = arg;
    return (w->sdone && w->rdone) || rt_is_failed(w->ctx, w->left);
}

/* One message around the ring (right neighbour sends to us, we send to the
 * left one) so that the first endpoints are fully connected before anyone
 * sleeps on the event fd: on tcp, a half-connected endpoint makes the fd
 * fire continuously (PLATFORM.md 0.3). */
static ucft_status_t wireup(struct ucft_context *ctx)
{
    int rank = ctx->boot.rank, size = ctx->boot.size;
    uint64_t out = (uint64_t)rank, in = 0;
    wireup_t w = {.ctx = ctx, .left = (rank + size - 1) % size};
    ucft_status_t st;

    if (size == 1)
        return UCFT_OK;
    w.sreq = (tp_req_t){.cb = wireup_send_done, .arg = &w};
    w.rreq = (tp_req_t){.cb = wireup_recv_done, .arg = &w};
    uint64_t rtag = ucft_tag_make(UCFT_TAG_CLASS_CTRL, 0, (uint32_t)w.left,
                                  UCFT_CTRL_WIREUP);
    st = tp_recv(ctx->tp, rtag, UCFT_TAG_FULL_MASK, &in, sizeof(in), &w.rreq);
    if (st == UCFT_OK)
        w.rdone = 1;
    else if (st != UCFT_INPROGRESS)
        return st;
    uint64_t stag =
        ucft_tag_make(UCFT_TAG_CLASS_CTRL, 0, (uint32_t)rank, UCFT_CTRL_WIREUP);
    st = tp_send(ctx->tp, (rank + 1) % size, stag, &out, sizeof(out), &w.sreq);
    if (st == UCFT_OK) {
        w.sdone = 1;
    } else if (st != UCFT_INPROGRESS) {
        w.sdone = 1; /* the right neighbour is gone: nothing to wire */
        ucft_debug(&ctx->log, "wire-up send to rank %d: %s", (rank + 1) % size,
                   ucft_status_string(st));
    }
    st = rt_wait_until(ctx, wireup_done, &w, ctx->cfg.init_timeout_ns);
    if (!w.rdone) {
        tp_cancel(ctx->tp, &w.rreq);
        while (!w.rdone)
            ucft_context_progress(ctx);
    }
    while (!w.sdone)
        ucft_context_progress(ctx);
    if (st != UCFT_OK)
        ucft_error(&ctx->log, "wire-up with rank %d timed out", w.left);
    return st;
}

/* ---- init / finalize ------------------------------------------------------
 */

static void fence_done(void *arg, ucft_status_t status)
{
    rt_inbox_t *in = arg;
    atomic_store(&in->fence_done, status == UCFT_OK ? 1 : -1);
    rt_inbox_wake(in);
}

static int fence_finished(void *arg)
{
    return atomic_load(&((rt_inbox_t *)arg)->fence_done) != 0;
}

static int fence_or_death(void *arg)
{
    struct ucft_context *ctx = arg;
    return fence_finished(&ctx->inbox) || atomic_load(&ctx->inbox.pending) ||
           ctx->nfailed > 0;
}

/* How long the start-up fence may still take once a death is known. */
#define EXCHANGE_DEATH_GRACE_NS (2 * UCFT_NSEC_PER_SEC)

/* The start-up fence that makes every worker address visible. A rank that
 * dies before it reaches the fence blocks it forever on some servers, so
 * wait for the fence, a death event, or UCFT_INIT_TIMEOUT, whichever comes
 * first: ucft_init ends with an error rather than hanging.
 *
 * A death event does not decide by itself: every survivor must make the
 * same choice, and the event and the fence's completion reach the ranks
 * in either order (the server completes a fence without a rank that died
 * after connecting). So after a death the fence still gets a grace to
 * complete: if it does, start-up goes on with that rank already failed
 * (the collectives leave it out); if not, it fails everywhere. */
static ucft_status_t exchange(struct ucft_context *ctx)
{
    rt_inbox_t *in = &ctx->inbox;
    uint64_t end = ucft_clock_now_ns() + ctx->cfg.init_timeout_ns;
    ucft_status_t st = boot_fence_nb(&ctx->boot, 1, fence_done, in);
    if (st != UCFT_OK)
        return st;
    st = rt_wait_until(ctx, fence_or_death, ctx, ctx->cfg.init_timeout_ns);
    if (!fence_finished(in) && st == UCFT_OK) {
        uint64_t now = ucft_clock_now_ns();
        uint64_t grace = now + EXCHANGE_DEATH_GRACE_NS < end
                             ? EXCHANGE_DEATH_GRACE_NS
                             : (end > now ? end - now : 0);
        st = rt_wait_until(ctx, fence_finished, in, grace);
    }
    ucft_context_progress(ctx); /* hand over death news still in the inbox */
    if (atomic_load(&in->fence_done) == 1) {
        atomic_store(&in->fence_done, 0);
        if (ctx->nfailed > 0)
            ucft_info(&ctx->log,
                      "rank %d died during start-up, after the address "
                      "exchange: going on without it",
                      ctx->failed_list[0]);
        return UCFT_OK;
    }
    if (ctx->nfailed > 0) {
        ucft_error(&ctx->log,
                   "rank %d died during start-up: the address "
                   "exchange cannot complete",
                   ctx->failed_list[0]);
        return UCFT_ERR_PROC_FAILED;
    }
    if (st == UCFT_ERR_TIMED_OUT)
        ucft_error(&ctx->log, "start-up address exchange (PMIx fence) did "
                              "not complete within UCFT_INIT_TIMEOUT");
    else
        ucft_error(&ctx->log, "start-up address exchange (PMIx fence) "
                              "failed");
    return st == UCFT_ERR_TIMED_OUT ? st : UCFT_ERR_BOOTSTRAP;
}

/* PMIx thread: a launcher's death event is evidence for the detector
 * (unless UCFT_DETECTOR_EVENTS=n, for measuring the other paths). */
static void death_event(void *arg, int rank, ucft_status_t why)
{
    struct ucft_context *ctx = arg;
    if (ctx->cfg.detector_events)
        rt_monitor_report(ctx, rank, why);
}

static ucft_status_t setup_fd(struct ucft_context *ctx)
{
    struct epoll_event ev = {.events = EPOLLIN};
    int fds[2] = {ctx->tp->ops->fd(ctx->tp), ctx->inbox.evfd};

    ctx->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (ctx->epfd < 0)
        return UCFT_ERR_IO;
    for (int i = 0; i < 2; i++) {
        ev.data.fd = fds[i];
        if (fds[i] >= 0 && epoll_ctl(ctx->epfd, EPOLL_CTL_ADD, fds[i], &ev)) {
            ucft_error(&ctx->log, "epoll_ctl: cannot watch fd %d", fds[i]);
            return UCFT_ERR_IO;
        }
    }
    return UCFT_OK;
}

/* The start-up publications (worker and heartbeat addresses, this rank's
 * locus) and the fence that makes them visible to every rank. */
static ucft_status_t publish_and_exchange(struct ucft_context *ctx,
                                          const char *jobwide)
{
    const void *addr, *hb_addr;
    size_t addr_len, hb_len;
    tp_address(ctx->tp, &addr, &addr_len);
    rt_monitor_address(ctx, &hb_addr, &hb_len);
    ucft_status_t st = boot_publish(&ctx->boot, addr, addr_len);
    if (st == UCFT_OK && hb_addr != NULL)
        st = boot_publish_hb(&ctx->boot, hb_addr, hb_len);
    if (st == UCFT_OK)
        st = locality_publish(&ctx->boot, &ctx->log);
    if (st == UCFT_OK)
        st = rt_jobwide_publish(&ctx->boot, jobwide);
    if (st == UCFT_OK)
        st = exchange(ctx);
    if (st == UCFT_OK)
        st = rt_jobwide_check(&ctx->boot, &ctx->log, jobwide);
    return st;
}

ucft_status_t rt_context_open(const ucft_params_t *params, const char *jobwide,
                              struct ucft_context **ctx_p)
{
    struct ucft_context *ctx;
    char err[256];
    ucft_status_t st;

    ctx = calloc(1, sizeof(*ctx));
    if (ctx == NULL)
        return UCFT_ERR_NO_MEMORY;
    ctx->epfd = -1;
    ucft__log_init(&ctx->log, UCFT_LOG_WARN, "ucft");
    st = ucft__config_read(&rt_config_table, &ctx->cfg, NULL, NULL, err,
                           sizeof(err));
    if (st != UCFT_OK) {
        ucft_error(&ctx->log, "bad configuration: %s", err);
        goto err_free;
    }
    ctx->log.level = (ucft_log_level_t)ctx->cfg.log_level;
    /* Before UCX and the heartbeat thread start: their threads inherit it. */
    rt_slice_set(&ctx->log, "ucft_init's thread", ctx->cfg.slice_ns,
                 &ctx->slice);
    if (params != NULL && (params->field_mask & UCFT_PARAM_FIELD_FAILURE_CB)) {
        ctx->failure_cb = params->failure_cb;
        ctx->failure_arg = params->failure_cb_arg;
    }
    st = rt_inbox_init(&ctx->inbox);
    if (st != UCFT_OK)
        goto err_slice;
    st = boot_init(&ctx->boot, &ctx->log);
    if (st != UCFT_OK)
        goto err_inbox;
    ucft__log_set_prefix(&ctx->log, "ucft rank %d", ctx->boot.rank);
    st = rt_failure_init(ctx);
    if (st != UCFT_OK)
        goto err_boot;

    tp_ucp_params_t tpp = {.rank = ctx->boot.rank,
                           .size = ctx->boot.size,
                           .log = &ctx->log,
                           .lookup = boot_lookup,
                           .lookup_arg = &ctx->boot,
                           .keepalive_ns = ctx->cfg.keepalive_ns,
                           .probe_wait_ns = ctx->cfg.shm_probe_ns,
                           .shm_mend = ctx->cfg.shm_mend,
                           .cut_off_cb = rt_monitor_cut_off,
                           .cut_off_arg = ctx};
    st = tp_ucp_create(&tpp, &ctx->tp);
    if (st != UCFT_OK)
        goto err_failed_set;
    ctx->tp->peer_error_cb = rt_peer_error_cb;
    ctx->tp->peer_error_arg = ctx;
    st = setup_fd(ctx);
    if (st != UCFT_OK)
        goto err_fd;
    st = rt_monitor_init(ctx);
    if (st != UCFT_OK)
        goto err_monitor;
    st = boot_watch_deaths(&ctx->boot, death_event, ctx);
    if (st != UCFT_OK)
        goto err_monitor;
    st = publish_and_exchange(ctx, jobwide);
    if (st != UCFT_OK)
        goto err_exchange;
    *ctx_p = ctx;
    return UCFT_OK;

err_exchange:
    /* No PMIx death event reaches the monitor from here on (a fence
     * callback still in flight touches only the inbox, freed last). */
    boot_unwatch_deaths(&ctx->boot);
err_monitor:
    rt_monitor_cleanup(ctx);
    rt_monitor_free(ctx);
err_fd:
    if (ctx->epfd >= 0)
        close(ctx->epfd);
    tp_destroy(ctx->tp);
err_failed_set:
    rt_failure_cleanup(ctx);
err_boot:
    boot_finalize(&ctx->boot); /* no PMIx callback from here on */
err_inbox:
    rt_inbox_cleanup(&ctx->inbox);
err_slice:
    rt_slice_restore(&ctx->log, &ctx->slice);
err_free:
    free(ctx);
    return st;
}

ucft_status_t rt_context_start(struct ucft_context *ctx)
{
    ucft_status_t st = wireup(ctx);
    if (st == UCFT_OK)
        st = rt_monitor_start(ctx);
    if (st != UCFT_OK)
        return st;
    ctx->ready = 1;
    ucft_debug(&ctx->log, "initialised: %d ranks", ctx->boot.size);
    return UCFT_OK;
}

void rt_context_abort(struct ucft_context *ctx)
{
    boot_unwatch_deaths(&ctx->boot);
    rt_monitor_cleanup(ctx);
    rt_monitor_free(ctx);
    close(ctx->epfd);
    tp_destroy(ctx->tp);
    rt_modules_destroy(ctx); /* after the transport: its callbacks are done */
    rt_failure_cleanup(ctx);
    boot_finalize(&ctx->boot); /* no PMIx callback from here on */
    rt_inbox_cleanup(&ctx->inbox);
    rt_requests_cleanup(ctx);
    rt_slice_restore(&ctx->log, &ctx->slice);
    free(ctx);
}

void rt_context_stop_monitor(struct ucft_context *ctx)
{
    rt_monitor_stop(ctx);
    rt_wait_until(ctx, rt_monitor_quiet, ctx, RT_MONITOR_STOP_BOUND_NS);
    rt_monitor_stopped(ctx);
}

/* Everyone must keep progressing until everyone is done sending: the final
 * fence goes through PMIx without blocking the transport. */
static ucft_status_t final_fence(struct ucft_context *ctx)
{
    ucft_status_t st = boot_fence_nb(&ctx->boot, 0, fence_done, &ctx->inbox);
    if (st != UCFT_OK)
        return st;
    /* Some PMIx servers (Open MPI 4.1's mpirun) never complete a fence
     * that includes a dead rank: once failures are known, bound the wait
     * more tightly. */
    uint64_t bound = ctx->cfg.finalize_timeout_ns;
    if (ctx->nfailed > 0 && bound > ctx->cfg.finalize_failed_ns)
        bound = ctx->cfg.finalize_failed_ns;
    st = rt_wait_until(ctx, fence_finished, &ctx->inbox, bound);
    if (st != UCFT_OK && ctx->nfailed > 0) {
        /* Expected with some launchers: everyone alive has flushed by now
         * or will fail its own fence the same way. */
        ucft_info(&ctx->log, "finalize: the launcher did not end the "
                             "final fence (failed ranks); closing anyway");
        return UCFT_OK;
    }
    if (st != UCFT_OK) {
        ucft_error(&ctx->log, "finalize: fence did not complete within "
                              "UCFT_FINALIZE_TIMEOUT");
        return st;
    }
    if (atomic_load(&ctx->inbox.fence_done) < 0) {
        /* A fence over a job with dead ranks may also end in an error;
         * with known failures that is expected, not a finalize error:
         * every survivor has flushed its own sends already. */
        if (ctx->nfailed == 0)
            return UCFT_ERR_BOOTSTRAP;
        ucft_info(&ctx->log, "finalize: the final fence reported an "
                             "error (failed ranks); closing anyway");
    }
    return UCFT_OK;
}

ucft_status_t rt_context_close(struct ucft_context *ctx)
{
    uint64_t t = 0;
    if (ctx->log.level >= UCFT_LOG_DEBUG)
        t = ucft_clock_now_ns();
    ucft_status_t st = tp_flush(ctx->tp, ctx->cfg.finalize_timeout_ns);
    if (st != UCFT_OK)
        ucft_debug(&ctx->log, "flush at finalize: %s", ucft_status_string(st));
    ucft_status_t ret = final_fence(ctx);
    rt_monitor_cleanup(ctx);
    rt_modules_cleanup(ctx);
    tp_destroy(ctx->tp);
    rt_modules_destroy(ctx); /* after the transport: its callbacks are done */
    /* After this no PMIx thread callback can reach the inbox. */
    boot_finalize(&ctx->boot);
    rt_monitor_free(ctx);
    if (ctx->log.level >= UCFT_LOG_DEBUG)
        ucft_debug(&ctx->log, "closed in %.3f ms",
                   (double)(ucft_clock_now_ns() - t) / 1e6);
    close(ctx->epfd);
    rt_inbox_cleanup(&ctx->inbox);
    rt_failure_cleanup(ctx);
    rt_requests_cleanup(ctx);
    rt_slice_restore(&ctx->log, &ctx->slice);
    free(ctx);
    return ret;
}

/* ---- queries -------------------------------------------------
 */

ucft_status_t ucft_context_query(ucft_context_h ctx, ucft_context_attr_t *attr)
{
    if (ctx == NULL || attr == NULL)
        return rt_bad_arg(ctx, "ucft_context_query",
                          ctx ? "NULL attribute pointer" : "NULL context");
    attr->rank = ctx->boot.rank;
    attr->size = ctx->boot.size;
    attr->local_rank = ctx->boot.local_rank;
    attr->local_size = ctx->boot.local_size;
    attr->node_id = ctx->boot.node_id;
    attr->singleton = ctx->boot.singleton;
    attr->hostname = ctx->boot.hostname;
    attr->nspace = ctx->boot.nspace;
    return UCFT_OK;
}

ucft_status_t ucft_context_get_fd(ucft_context_h ctx, int *fd)
{
    if (ctx == NULL || fd == NULL)
        return rt_bad_arg(ctx, "ucft_context_get_fd",
                          ctx ? "NULL fd pointer" : "NULL context");
    *fd = ctx->epfd;
    return UCFT_OK;
}

ucft_status_t ucft_context_get_failed_ranks(ucft_context_h ctx, int *ranks,
                                            size_t max, size_t *count)
{
    if (ctx == NULL || count == NULL || (max > 0 && ranks == NULL))
        return rt_bad_arg(ctx, "ucft_context_get_failed_ranks",
                          ctx == NULL     ? "NULL context"
                          : count == NULL ? "NULL count pointer"
                                          : "NULL ranks array with max > 0");
    for (size_t i = 0; i < max && i < ctx->nfailed; i++)
        ranks[i] = ctx->failed_list[i];
    *count = ctx->nfailed;
    return UCFT_OK;
}

ucft_status_t ucft_context_set_failure_cb(ucft_context_h ctx,
                                          ucft_failure_cb_t cb, void *arg)
{
    if (ctx == NULL)
        return rt_bad_arg(ctx, "ucft_context_set_failure_cb", "NULL context");
    ctx->failure_cb = cb;
    ctx->failure_arg = arg;
    return UCFT_OK;
}
