/*
 * The launcher's PMIx server: server module (upcalls from the PMIx progress
 * thread), job registration and death notifications.
 *
 * Threads: the PMIx library runs its own progress thread, and every upcall
 * of the module runs there. Upcalls only set atomics in the rank record or
 * record an abort under `lock`, then wake the main loop through `wake_fd`
 * (an eventfd). All other functions here are called by the main thread.
 */
#ifndef UCFTRUN_SERVER_H
#define UCFTRUN_SERVER_H

#include "launcher/nodes.h"
#include "launcher/spawn.h"
#include "runtime/base/log.h"

#include <pmix.h>
#include <pmix_server.h>
#include <pthread.h>
#include <stdatomic.h>

/* A PMIx_Abort() from a rank, as the main loop sees it. */
typedef struct ucftrun_abort {
    int requested;
    int taken; /* handed to the main loop */
    int rank;
    int status;
    char msg[256];
    pmix_op_cbfunc_t cbfunc; /* releases the aborting client */
    void *cbdata;
} ucftrun_abort_t;

typedef struct ucftrun_server {
    pmix_server_module_t module; /* our upcalls, kept alive for the library */
    pmix_nspace_t nspace;        /* the job's namespace */
    int initialized;
    int wake_fd; /* eventfd (owned): readable after an abort upcall */
    ucft_log_t *log;
    pthread_mutex_t lock; /* protects abort */
    ucftrun_abort_t abort;
    atomic_int pending_notify; /* notifications whose callback is pending */
    atomic_int finalized;      /* PMIx_server_finalize returned */
} ucftrun_server_t;

/*
 * Starts the PMIx server with its rendezvous files in `tmpdir` (private to
 * this job). Call with the launcher's signals blocked: the PMIx progress
 * thread inherits the mask. `tcp_if` NULL: clients connect over the
 * loopback (ranks on this machine); else the interface (e.g. "br0",
 * --netns) whose address remote clients connect to. Returns 0 or -1
 * (message in err).
 */
int ucftrun_server_init(ucftrun_server_t *srv, const char *tmpdir,
                        const char *tcp_if, ucft_log_t *log, char *err,
                        size_t errlen);

/*
 * Registers the job of nodes->nprocs ranks: job-level info (sizes, number
 * of nodes, node and process maps) and per rank its pretend node's id and
 * hostname, its local and node rank on that node and, when bound,
 * PMIX_CPUSET and PMIX_LOCALITY_STRING. Then registers each rank as a
 * client with `procs` as server object.
 */
int ucftrun_server_register_job(ucftrun_server_t *srv, ucftrun_proc_t *procs,
                                const ucftrun_nodes_t *nodes, char *err,
                                size_t errlen);

/* Adds the PMIx variables for `rank` to `*env` (PMIx_server_setup_fork). */
int ucftrun_server_setup_fork(ucftrun_server_t *srv, int rank, char ***env);

/*
 * Tells the surviving ranks that `rank` ended: PMIx_Notify_event(code)
 * with source = the dead proc, range PMIX_RANGE_NAMESPACE and infos
 * PMIX_EVENT_AFFECTED_PROC, PMIX_EXIT_CODE.
 */
int ucftrun_server_notify_death(ucftrun_server_t *srv, int rank,
                                pmix_status_t code, int exit_code);

/* Takes a pending abort (if any) out of the server; returns 1 if taken. */
int ucftrun_server_take_abort(ucftrun_server_t *srv, ucftrun_abort_t *out);

/* Waits (bounded) for pending notifications, deregisters the job and
 * finalizes the server. Idempotent. Returns 0, or -1 when the PMIx
 * library did not finish within a bound and was left running: the caller
 * must then end the process with _exit (no library destructor may run). */
int ucftrun_server_fini(ucftrun_server_t *srv);

#endif
