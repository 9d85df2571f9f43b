/*
 * The context (runtime/): the object behind ucft_context_h. It owns the
 * job's bootstrap, the transport, the monitor (failure detector), the
 * failed set, the request pool and the context fd; what runs on it (the
 * communicator layer, comm/) attaches as a module (runtime/module.h).
 */
#ifndef UCFT_RT_CONTEXT_H
#define UCFT_RT_CONTEXT_H

#include "ucft.h"
#include "runtime/base/log.h"
#include "bootstrap/bootstrap.h"
#include "runtime/linux/sched_slice.h"
#include "runtime/module.h"
#include "runtime/monitor.h"
#include "runtime/request.h"
#include "runtime/variables.h"
#include "transport/transport.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

/* News handed over to the owner of the context by other threads (the PMIx
 * thread, the heartbeat thread) or by callbacks that must not act at once.
 * An entry is either external (a death event or endpoint error: evidence
 * for the detector) or decided (the detector, or the only source when the
 * detector is off, declared the rank failed: apply it); an external
 * entry of kind RT_INBOX_SUSPECT is transport evidence that the detector
 * confirms first (rt_monitor_report_transport). */
#define RT_INBOX_EVIDENCE 1
#define RT_INBOX_SUSPECT  2
typedef struct rt_inbox {
    pthread_mutex_t lock;
    int *ranks;
    ucft_status_t *why;
    uint8_t *external;
    size_t count, cap;
    atomic_int pending;    /* deaths waiting in ranks[] */
    atomic_int fence_done; /* finalize fence: 0 running, 1 ok, -1 error */
    int evfd;              /* written to wake the owner */
} rt_inbox_t;

struct ucft_context {
    ucft_log_t log;
    rt_config_t cfg;
    rt_slice_t slice; /* UCFT_SLICE, given back at finalize */
    boot_t boot;
    tp_t *tp;
    int epfd;
    rt_inbox_t inbox;
    rt_monitor_t monitor;
    int ready; /* ucft_init has succeeded: callbacks may run */
    int finalizing;

    /* Membership: the monotonic set of failed job ranks (failed_set.c). */
    uint8_t *failed_map;
    uint8_t *watched; /* receives from this rank were posted: tp_watch done */
    int *failed_list;
    size_t nfailed, failed_cap;
    size_t nfailed_reported; /* failure callbacks delivered so far */
    ucft_failure_cb_t failure_cb;
    void *failure_arg;

    rt_req_pool_t reqs;
    rt_modules_t modules;
    /* The world communicator (comm/), made by ucft_init once the context
     * is open; opaque here. */
    struct ucft_comm *world;
};

/* context.c: the phases of ucft_init and ucft_finalize, which the
 * communicator layer's entry points (comm/lib.c) run around the making
 * and the teardown of the world communicator. */
/* Config, PMIx, transport, fd, monitor, and the start-up fence; then
 * `jobwide` (NAME=value lines of the variables that must be the same at
 * every rank, or NULL) is checked across the job (runtime/jobwide.h). */
ucft_status_t rt_context_open(const ucft_params_t *params, const char *jobwide,
                              struct ucft_context **ctx_p);
/* The ring wire-up and the monitor's start; then callbacks may run. */
ucft_status_t rt_context_start(struct ucft_context *ctx);
/* Undoes rt_context_open (and the modules attached since) after a step of
 * ucft_init failed. */
void rt_context_abort(struct ucft_context *ctx);
/* Finalize: stops the monitor (the observer is told, so leaving is not a
 * failure), waiting at most its bound. */
void rt_context_stop_monitor(struct ucft_context *ctx);
/* Finalize, once every module has drained its requests: flush, the final
 * fence, then teardown (modules cleaned up before the transport goes and
 * destroyed after), and the context freed. Returns finalize's status. */
ucft_status_t rt_context_close(struct ucft_context *ctx);

/* failed_set.c */
ucft_status_t rt_failure_init(struct ucft_context *ctx);
void rt_failure_cleanup(struct ucft_context *ctx);
void rt_failure_declare(struct ucft_context *ctx, int rank, ucft_status_t why);
static inline int rt_is_failed(const struct ucft_context *ctx, int rank)
{
    return ctx->failed_map[rank] != 0;
}
void rt_peer_error_cb(void *arg, int rank, ucft_status_t why);
unsigned rt_failure_progress(struct ucft_context *ctx);

/* inbox.c (any thread may push) */
ucft_status_t rt_inbox_init(rt_inbox_t *in);
void rt_inbox_cleanup(rt_inbox_t *in);
void rt_inbox_wake(rt_inbox_t *in);
void rt_inbox_drain_fd(rt_inbox_t *in);
void rt_inbox_push(rt_inbox_t *in, int rank, ucft_status_t why, int external);

/* API misuse: logs "call: what" as an error with the caller's file and
 * line (to stderr when ctx is NULL, where no context log exists) and
 * returns UCFT_ERR_INVALID_PARAM (context.c). */
ucft_status_t rt_bad_arg_at(const struct ucft_context *ctx, const char *call,
                            const char *what, const char *file, int line);
#define rt_bad_arg(ctx, call, what)                                            \
    rt_bad_arg_at((ctx), (call), (what), __FILE__, __LINE__)

/* progress.c: ucft_context_progress, with the transport's polls repeated
 * while they find nothing, `turns` at most (tp_progress_spin): for
 * spinning waits. */
unsigned rt_progress_spin(struct ucft_context *ctx, unsigned turns);
/* The turns of one rt_progress_spin in a spinning wait (a power of 2, at
 * most 64): failure news and the modules are looked at between them. */
#define RT_SPIN_TURNS 8

/* progress.c: progress until cond(arg) holds or timeout_ns passes. Returns
 * UCFT_OK or UCFT_ERR_TIMED_OUT. */
ucft_status_t rt_wait_until(struct ucft_context *ctx, int (*cond)(void *),
                            void *arg, uint64_t timeout_ns);
/* The same; while spin(arg) holds (no yield can help: the collective
 * waits only for ranks off this core), a hybrid wait polls without
 * yielding for up to UCFT_MATE_SPIN_TIME after the last progress. */
ucft_status_t rt_wait_hinted(struct ucft_context *ctx, int (*cond)(void *),
                             int (*spin)(void *), void *arg,
                             uint64_t timeout_ns);

#endif
