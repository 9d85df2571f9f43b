/*
 * The launcher's PMIx server (see server.h).
 */
#include "launcher/server.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

/* How long finalization waits for outstanding notification callbacks. */
#define SERVER_NOTIFY_DRAIN_NS (1000ull * 1000 * 1000)
/* How long PMIx_server_finalize may take before it is left behind. */
#define SERVER_FINALIZE_BOUND_NS (3000ull * 1000 * 1000)

static void server_wake(ucftrun_server_t *srv)
{
    uint64_t one = 1;

    (void)!write(srv->wake_fd, &one, sizeof(one));
}

/* --- Upcalls (PMIx progress thread) ------------------------------------ */

static pmix_status_t srv_client_connected(const pmix_proc_t *proc,
                                          void *server_object,
                                          pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    ucftrun_proc_t *p = server_object;

    if (p != NULL) {
        atomic_store(&p->connected, 1);
        ucft_debug(p->srv->log, "rank %d connected", p->rank);
        server_wake(p->srv); /* --times-from connected may start its clock */
    }
    return PMIX_OPERATION_SUCCEEDED;
}

static pmix_status_t srv_client_finalized(const pmix_proc_t *proc,
                                          void *server_object,
                                          pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    ucftrun_proc_t *p = server_object;

    /* Set before the client's PMIx_Finalize returns, hence before the
     * rank can exit: the main loop reads it when it reaps the rank. */
    if (p != NULL) {
        atomic_store(&p->finalized, 1);
        ucft_debug(p->srv->log, "rank %d finalized", p->rank);
    }
    return PMIX_OPERATION_SUCCEEDED;
}

static pmix_status_t srv_abort(const pmix_proc_t *proc, void *server_object,
                               int status, const char msg[],
                               pmix_proc_t procs[], size_t nprocs,
                               pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    ucftrun_proc_t *p = server_object;
    ucftrun_server_t *srv;
    int first = 0;

    if (p == NULL)
        return PMIX_ERR_NOT_SUPPORTED;
    srv = p->srv;
    pthread_mutex_lock(&srv->lock);
    if (!srv->abort.requested) {
        first = 1;
        srv->abort.requested = 1;
        srv->abort.rank = p->rank;
        srv->abort.status = status;
        snprintf(srv->abort.msg, sizeof(srv->abort.msg), "%s",
                 msg != NULL ? msg : "");
        /* The client stays blocked in PMIx_Abort until the main loop has
         * signalled the job and calls this back. */
        srv->abort.cbfunc = cbfunc;
        srv->abort.cbdata = cbdata;
    }
    pthread_mutex_unlock(&srv->lock);
    if (!first)
        return PMIX_OPERATION_SUCCEEDED; /* the job is going down anyway */
    server_wake(srv);
    return PMIX_SUCCESS;
}

/* One node: the data we are given is the data of every participant. The
 * library only calls this when PMIX_MCA_pmix_server_fence_localonly_opt=0;
 * otherwise it completes local fences itself. */
static pmix_status_t srv_fence_nb(const pmix_proc_t procs[], size_t nprocs,
                                  const pmix_info_t info[], size_t ninfo,
                                  char *data, size_t ndata,
                                  pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    if (cbfunc != NULL)
        cbfunc(PMIX_SUCCESS, data, ndata, cbdata, NULL, NULL);
    return PMIX_SUCCESS;
}

/* Only called for procs on other nodes, and there are none. */
static pmix_status_t srv_direct_modex(const pmix_proc_t *proc,
                                      const pmix_info_t info[], size_t ninfo,
                                      pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    if (cbfunc != NULL)
        cbfunc(PMIX_ERR_NOT_FOUND, NULL, 0, cbdata, NULL, NULL);
    return PMIX_SUCCESS;
}

/* An event from a client beyond the local range: one node, nothing to
 * forward. */
static pmix_status_t srv_notify_event(pmix_status_t code,
                                      const pmix_proc_t *source,
                                      pmix_data_range_t range,
                                      pmix_info_t info[], size_t ninfo,
                                      pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    return PMIX_OPERATION_SUCCEEDED;
}

/* --- Main thread ------------------------------------------------------- */

int ucftrun_server_init(ucftrun_server_t *srv, const char *tmpdir,
                        const char *tcp_if, ucft_log_t *log, char *err,
                        size_t errlen)
{
    bool remote = true;
    size_t ninfo = tcp_if != NULL ? 6 : 4;
    pmix_info_t *info;
    pmix_rank_t zero = 0;
    char srv_ns[64], job_ns[64];
    pmix_status_t rc;

    /* The server's own namespace and the job's: "ucftrun.<pid>.0/1". */
    snprintf(srv_ns, sizeof(srv_ns), "ucftrun.%d.0", (int)getpid());
    snprintf(job_ns, sizeof(job_ns), "ucftrun.%d.1", (int)getpid());
    PMIX_LOAD_NSPACE(srv->nspace, job_ns);
    srv->log = log;
    srv->initialized = 0;
    memset(&srv->abort, 0, sizeof(srv->abort));
    atomic_init(&srv->pending_notify, 0);
    /* PMIx 4.2.2's default job-data store (gds ds21) is a shared-memory
     * segment guarded by process-shared mutexes that are not robust: a
     * rank killed while it reads the store (PMIx_Get takes the read
     * lock) leaves the lock held forever, and the server's next commit blocks
     * its progress thread for good (every fence of the job then hangs, and so
     * does PMIx_server_finalize). The hash store keeps each process's copy in
     * its own memory and shares no lock. The ranks inherit the choice. A
     * choice made by the user stands. */
    if (setenv("PMIX_MCA_gds", "hash", 0) != 0) {
        snprintf(err, errlen, "setenv PMIX_MCA_gds: %s", strerror(errno));
        return -1;
    }
    ucft_debug(log, "PMIx job-data store: %s", getenv("PMIX_MCA_gds"));

    srv->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (srv->wake_fd < 0) {
        snprintf(err, errlen, "eventfd: %s", strerror(errno));
        return -1;
    }
    pthread_mutex_init(&srv->lock, NULL);

    PMIX_INFO_CREATE(info, ninfo);
    PMIX_INFO_LOAD(&info[0], PMIX_SERVER_TMPDIR, tmpdir, PMIX_STRING);
    PMIX_INFO_LOAD(&info[1], PMIX_SYSTEM_TMPDIR, tmpdir, PMIX_STRING);
    PMIX_INFO_LOAD(&info[2], PMIX_SERVER_NSPACE, srv_ns, PMIX_STRING);
    PMIX_INFO_LOAD(&info[3], PMIX_SERVER_RANK, &zero, PMIX_PROC_RANK);
    if (tcp_if != NULL) {
        /* --netns: the ranks are in other network namespaces and reach
         * the listener over the hub's bridge. */
        PMIX_INFO_LOAD(&info[4], PMIX_SERVER_REMOTE_CONNECTIONS, &remote,
                       PMIX_BOOL);
        PMIX_INFO_LOAD(&info[5], PMIX_TCP_IF_INCLUDE, tcp_if, PMIX_STRING);
    }
    /* The upcalls this server implements; NULL entries are "not
     * supported". The library keeps the pointer, so it lives in `srv`. */
    memset(&srv->module, 0, sizeof(srv->module));
    srv->module.client_connected = srv_client_connected;
    srv->module.client_finalized = srv_client_finalized;
    srv->module.abort = srv_abort;
    srv->module.fence_nb = srv_fence_nb;
    srv->module.direct_modex = srv_direct_modex;
    srv->module.notify_event = srv_notify_event;
    rc = PMIx_server_init(&srv->module, info, (size_t)ninfo);
    PMIX_INFO_FREE(info, ninfo);
    if (rc != PMIX_SUCCESS) {
        snprintf(err, errlen, "PMIx_server_init failed: %s",
                 PMIx_Error_string(rc));
        pthread_mutex_destroy(&srv->lock);
        close(srv->wake_fd);
        srv->wake_fd = -1;
        return -1;
    }
    srv->initialized = 1;
    ucft_debug(log, "PMIx server up (%s), job namespace %s", PMIx_Get_version(),
               srv->nspace);
    return 0;
}

/* Per-rank PMIX_PROC_DATA; the info takes ownership of the array. The
 * node id, hostname, local and node rank are the rank's pretend node's. */
static int load_proc_data(pmix_info_t *dst, const ucftrun_proc_t *p,
                          const ucftrun_nodes_t *nodes)
{
    pmix_data_array_t *da;
    pmix_info_t *pi;
    pmix_rank_t rank = (pmix_rank_t)p->rank;
    uint16_t lrank = (uint16_t)nodes->local_rank_of[p->rank];
    uint32_t nodeid = (uint32_t)nodes->node_of[p->rank], appnum = 0;
    size_t n = 6, k = 0;
    char host[320], *cpustr = NULL, *locstr = NULL;

    if (ucftrun_nodes_hostname(nodes, (int)nodeid, host, sizeof(host)) != 0)
        return -1;
    if (p->cpuset != NULL) {
        pmix_cpuset_t cs = {.source = (char *)"hwloc", .bitmap = p->cpuset};

        if (PMIx_server_generate_cpuset_string(&cs, &cpustr) != PMIX_SUCCESS)
            cpustr = NULL;
        if (PMIx_server_generate_locality_string(&cs, &locstr) != PMIX_SUCCESS)
            locstr = NULL;
        n += (cpustr != NULL) + (locstr != NULL);
    }
    PMIX_DATA_ARRAY_CREATE(da, n, PMIX_INFO);
    if (da == NULL) {
        free(cpustr);
        free(locstr);
        return -1;
    }
    pi = da->array;
    /* PMIX_RANK must come first. */
    PMIX_INFO_LOAD(&pi[k++], PMIX_RANK, &rank, PMIX_PROC_RANK);
    PMIX_INFO_LOAD(&pi[k++], PMIX_LOCAL_RANK, &lrank, PMIX_UINT16);
    /* One job per node: the node rank is the local rank. */
    PMIX_INFO_LOAD(&pi[k++], PMIX_NODE_RANK, &lrank, PMIX_UINT16);
    PMIX_INFO_LOAD(&pi[k++], PMIX_NODEID, &nodeid, PMIX_UINT32);
    PMIX_INFO_LOAD(&pi[k++], PMIX_HOSTNAME, host, PMIX_STRING);
    PMIX_INFO_LOAD(&pi[k++], PMIX_APPNUM, &appnum, PMIX_UINT32);
    if (cpustr != NULL)
        PMIX_INFO_LOAD(&pi[k++], PMIX_CPUSET, cpustr, PMIX_STRING);
    if (locstr != NULL)
        PMIX_INFO_LOAD(&pi[k++], PMIX_LOCALITY_STRING, locstr, PMIX_STRING);
    free(cpustr);
    free(locstr);
    PMIX_LOAD_KEY(dst->key, PMIX_PROC_DATA);
    dst->value.type = PMIX_DATA_ARRAY;
    dst->value.data.darray = da;
    return 0;
}

/* PMIX_NODE_INFO_ARRAY of pretend node `node`: its id and hostname (the
 * library's node map has the hostnames but no ids), its ranks, how many
 * and the lowest. The info takes ownership of the array. */
static int load_node_data(pmix_info_t *dst, const ucftrun_nodes_t *nodes,
                          int node)
{
    pmix_data_array_t *da;
    pmix_info_t *pi;
    uint32_t id = (uint32_t)node, size = (uint32_t)nodes->node_size[node];
    pmix_rank_t leader = 0;
    size_t n = size > 0 ? 5 : 4;
    char host[320], *ranks;

    if (ucftrun_nodes_hostname(nodes, node, host, sizeof(host)) != 0 ||
        (ranks = ucftrun_nodes_ranks(nodes, node)) == NULL)
        return -1;
    PMIX_DATA_ARRAY_CREATE(da, n, PMIX_INFO);
    if (da == NULL) {
        free(ranks);
        return -1;
    }
    pi = da->array;
    PMIX_INFO_LOAD(&pi[0], PMIX_NODEID, &id, PMIX_UINT32);
    PMIX_INFO_LOAD(&pi[1], PMIX_HOSTNAME, host, PMIX_STRING);
    PMIX_INFO_LOAD(&pi[2], PMIX_LOCAL_PEERS, ranks, PMIX_STRING);
    PMIX_INFO_LOAD(&pi[3], PMIX_LOCAL_SIZE, &size, PMIX_UINT32);
    if (size > 0) {
        /* The lowest rank on the node: the first in the list. */
        leader = (pmix_rank_t)strtoul(ranks, NULL, 10);
        PMIX_INFO_LOAD(&pi[4], PMIX_LOCALLDR, &leader, PMIX_PROC_RANK);
    }
    free(ranks);
    PMIX_LOAD_KEY(dst->key, PMIX_NODE_INFO_ARRAY);
    dst->value.type = PMIX_DATA_ARRAY;
    dst->value.data.darray = da;
    return 0;
}

int ucftrun_server_register_job(ucftrun_server_t *srv, ucftrun_proc_t *procs,
                                const ucftrun_nodes_t *nodes, char *err,
                                size_t errlen)
{
    enum { JOB_KEYS = 12 };
    int nprocs = nodes->nprocs;
    char *hosts = NULL, *ppn = NULL;
    char *node_map = NULL, *proc_map = NULL;
    pmix_info_t *info = NULL;
    size_t ninfo = JOB_KEYS + (size_t)nprocs + (size_t)nodes->nnodes, k = 0;
    uint32_t n32 = (uint32_t)nprocs, one = 1;
    uint32_t nnodes = (uint32_t)nodes->nnodes;
    pmix_rank_t zero_rank = 0;
    pmix_status_t rc;
    int ret = -1;

    hosts = ucftrun_nodes_host_list(nodes);
    ppn = ucftrun_nodes_ppn_list(nodes);
    if (hosts == NULL || ppn == NULL ||
        PMIx_generate_regex(hosts, &node_map) != PMIX_SUCCESS ||
        PMIx_generate_ppn(ppn, &proc_map) != PMIX_SUCCESS) {
        snprintf(err, errlen, "cannot build the node and process maps");
        goto out;
    }

    PMIX_INFO_CREATE(info, ninfo);
    PMIX_INFO_LOAD(&info[k++], PMIX_JOBID, srv->nspace, PMIX_STRING);
    PMIX_INFO_LOAD(&info[k++], PMIX_UNIV_SIZE, &n32, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[k++], PMIX_JOB_SIZE, &n32, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[k++], PMIX_MAX_PROCS, &n32, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[k++], PMIX_APP_SIZE, &n32, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[k++], PMIX_JOB_NUM_APPS, &one, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[k++], PMIX_NPROC_OFFSET, &zero_rank, PMIX_PROC_RANK);
    /* Node-level data (local peers and size, node id, hostname) comes only
     * per node, in the node map and one PMIX_NODE_INFO_ARRAY per pretend
     * node: each client takes the node named by its own PMIX_HOSTNAME as
     * its node, so a rank's PMIX_LOCAL_PEERS are its pretend node's ranks.
     * Job-level copies of these keys would be filed under this machine's
     * real hostname, a node that is not in the job. For the server side
     * of the library every rank stays local (they are all clients of this
     * server, and the job is registered with nlocalprocs = all ranks):
     * fences complete here and gets of a peer's data are served here. */
    PMIX_INFO_LOAD(&info[k++], PMIX_NUM_NODES, &nnodes, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[k++], PMIX_NODE_MAP, node_map, PMIX_REGEX);
    PMIX_INFO_LOAD(&info[k++], PMIX_PROC_MAP, proc_map, PMIX_REGEX);
    for (int node = 0; node < nodes->nnodes; node++) {
        if (load_node_data(&info[k++], nodes, node) != 0) {
            snprintf(err, errlen, "out of memory");
            goto out;
        }
    }
    for (int r = 0; r < nprocs; r++) {
        if (load_proc_data(&info[k++], &procs[r], nodes) != 0) {
            snprintf(err, errlen, "out of memory");
            goto out;
        }
    }
    rc = PMIx_server_register_nspace(srv->nspace, nprocs, info, k, NULL, NULL);
    if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED) {
        snprintf(err, errlen, "PMIx_server_register_nspace failed: %s",
                 PMIx_Error_string(rc));
        goto out;
    }
    rc = PMIx_server_setup_local_support(srv->nspace, NULL, 0, NULL, NULL);
    if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED) {
        snprintf(err, errlen, "PMIx_server_setup_local_support failed: %s",
                 PMIx_Error_string(rc));
        goto out;
    }
    for (int r = 0; r < nprocs; r++) {
        pmix_proc_t proc;

        PMIX_LOAD_PROCID(&proc, srv->nspace, (pmix_rank_t)r);
        procs[r].srv = srv;
        rc = PMIx_server_register_client(&proc, getuid(), getgid(), &procs[r],
                                         NULL, NULL);
        if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED) {
            snprintf(err, errlen, "PMIx_server_register_client failed: %s",
                     PMIx_Error_string(rc));
            goto out;
        }
    }
    ret = 0;
out:
    if (info != NULL)
        PMIX_INFO_FREE(info, ninfo);
    free(hosts);
    free(ppn);
    free(node_map);
    free(proc_map);
    return ret;
}

int ucftrun_server_setup_fork(ucftrun_server_t *srv, int rank, char ***env)
{
    pmix_proc_t proc;

    PMIX_LOAD_PROCID(&proc, srv->nspace, (pmix_rank_t)rank);
    return PMIx_server_setup_fork(&proc, env) == PMIX_SUCCESS ? 0 : -1;
}

typedef struct notify_ctx {
    ucftrun_server_t *srv;
    pmix_info_t *info;
    size_t ninfo;
} notify_ctx_t;

static void notify_ctx_free(notify_ctx_t *ctx)
{
    PMIX_INFO_FREE(ctx->info, ctx->ninfo);
    free(ctx);
}

/* PMIx thread: the info array was needed until now. */
static void notify_done_cb(pmix_status_t status, void *cbdata)
{
    notify_ctx_t *ctx = cbdata;
    ucftrun_server_t *srv = ctx->srv;

    notify_ctx_free(ctx);
    atomic_fetch_sub(&srv->pending_notify, 1);
}

int ucftrun_server_notify_death(ucftrun_server_t *srv, int rank,
                                pmix_status_t code, int exit_code)
{
    notify_ctx_t *ctx = calloc(1, sizeof(*ctx));
    pmix_proc_t dead;
    pmix_status_t rc;

    if (ctx == NULL)
        return -1;
    PMIX_LOAD_PROCID(&dead, srv->nspace, (pmix_rank_t)rank);
    ctx->srv = srv;
    ctx->ninfo = 2;
    PMIX_INFO_CREATE(ctx->info, ctx->ninfo);
    PMIX_INFO_LOAD(&ctx->info[0], PMIX_EVENT_AFFECTED_PROC, &dead, PMIX_PROC);
    PMIX_INFO_LOAD(&ctx->info[1], PMIX_EXIT_CODE, &exit_code, PMIX_INT);
    atomic_fetch_add(&srv->pending_notify, 1);
    rc = PMIx_Notify_event(code, &dead, PMIX_RANGE_NAMESPACE, ctx->info,
                           ctx->ninfo, notify_done_cb, ctx);
    if (rc != PMIX_SUCCESS) {
        /* The callback will not run. */
        atomic_fetch_sub(&srv->pending_notify, 1);
        notify_ctx_free(ctx);
        if (rc != PMIX_OPERATION_SUCCEEDED) {
            ucft_warn(srv->log, "PMIx_Notify_event(%s) for rank %d: %s",
                      PMIx_Error_string(code), rank, PMIx_Error_string(rc));
            return -1;
        }
    }
    ucft_debug(srv->log, "notified %s for rank %d (exit code %d)",
               PMIx_Error_string(code), rank, exit_code);
    return 0;
}

int ucftrun_server_take_abort(ucftrun_server_t *srv, ucftrun_abort_t *out)
{
    int taken = 0;

    pthread_mutex_lock(&srv->lock);
    if (srv->abort.requested && !srv->abort.taken) {
        /* `requested` stays set so that later aborts are acknowledged at
         * once (the job is going down). */
        srv->abort.taken = 1;
        *out = srv->abort;
        taken = 1;
    }
    pthread_mutex_unlock(&srv->lock);
    return taken;
}

static void *finalize_main(void *arg)
{
    ucftrun_server_t *srv = arg;

    PMIx_server_deregister_nspace(srv->nspace, NULL, NULL);
    PMIx_server_finalize();
    atomic_store(&srv->finalized, 1);
    return NULL;
}

int ucftrun_server_fini(ucftrun_server_t *srv)
{
    struct timespec ms = {0, 1000 * 1000};
    uint64_t waited = 0;
    pthread_t t;

    if (!srv->initialized)
        return 0;
    while (atomic_load(&srv->pending_notify) > 0 &&
           waited < SERVER_NOTIFY_DRAIN_NS) {
        nanosleep(&ms, NULL);
        waited += (uint64_t)ms.tv_nsec;
    }
    /* PMIx 4.2.2 can deadlock in PMIx_server_finalize after a client died
     * while it connected or while it held the lock of the shared-memory
     * job-data store (docs/launcher.md, Known limitations): finalize on a
     * thread of its own and leave it behind after a bound, so that the
     * launcher always ends. */
    atomic_store(&srv->finalized, 0);
    if (pthread_create(&t, NULL, finalize_main, srv) != 0) {
        finalize_main(srv);
    } else {
        for (waited = 0;
             !atomic_load(&srv->finalized) && waited < SERVER_FINALIZE_BOUND_NS;
             waited += (uint64_t)ms.tv_nsec)
            nanosleep(&ms, NULL);
        if (!atomic_load(&srv->finalized)) {
            ucft_warn(srv->log,
                      "PMIx_server_finalize did not return within %llu s "
                      "(a PMIx bug after a rank died during start-up); "
                      "exiting without it",
                      SERVER_FINALIZE_BOUND_NS / 1000000000ull);
            pthread_detach(t);
            srv->initialized = 0;
            return -1; /* its lock and fd stay: PMIx may still use them */
        }
        pthread_join(t, NULL);
    }
    pthread_mutex_destroy(&srv->lock);
    close(srv->wake_fd);
    srv->wake_fd = -1;
    srv->initialized = 0;
    return 0;
}
