/*
 * PMIx bootstrap. Notes from the platform (PLATFORM.md):
 * - PMIX_LOCAL_RANK is a uint16; PMIX_NODEID and PMIX_HOSTNAME are per-proc
 *   keys (ask with our own rank, not the wildcard).
 * - Death events: our launcher sends PMIX_ERR_PROC_ABORTED_BY_SIG,
 *   PMIX_ERR_EXIT_NONZERO_TERM, PMIX_ERR_PROC_TERM_WO_SYNC and
 *   PMIX_EVENT_PROC_TERMINATED; PRRTE (recoverable, notifyerrors) only
 *   sends -402. Open MPI 4.1's mpirun sends none.
 * - The event handler runs on the PMIx progress thread: it only hands the
 *   news over (boot_death_cb_t), it never touches the context.
 */
#include "bootstrap/bootstrap.h"

#include <pmix.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ADDR_KEY    "ucft.ucp.addr"
#define HB_ADDR_KEY "ucft.ucp.hbaddr"
#define LIVE_KEY    "ucft.live" /* 1 byte: 1 while a context of ours runs */

static void load_proc(const boot_t *b, pmix_proc_t *p, pmix_rank_t rank)
{
    PMIX_PROC_CONSTRUCT(p);
    PMIX_LOAD_PROCID(p, b->nspace, rank);
}

/* Reads an integer-valued key of any width. Returns 0 on success. */
static int get_int(const boot_t *b, pmix_rank_t rank, const char *key,
                   long *out)
{
    pmix_proc_t p;
    pmix_value_t *v = NULL;
    int rc = -1;
    load_proc(b, &p, rank);
    if (PMIx_Get(&p, key, NULL, 0, &v) != PMIX_SUCCESS || v == NULL)
        return -1;
    switch (v->type) {
    case PMIX_UINT32:
        *out = v->data.uint32;
        rc = 0;
        break;
    case PMIX_UINT16:
        *out = v->data.uint16;
        rc = 0;
        break;
    case PMIX_INT:
        *out = v->data.integer;
        rc = 0;
        break;
    case PMIX_UINT64:
        *out = (long)v->data.uint64;
        rc = 0;
        break;
    case PMIX_INT32:
        *out = v->data.int32;
        rc = 0;
        break;
    default:
        break;
    }
    PMIX_VALUE_RELEASE(v);
    return rc;
}

static void init_singleton(boot_t *b)
{
    b->singleton = 1;
    b->rank = 0;
    b->size = 1;
    b->local_rank = 0;
    b->local_size = 1;
    b->node_id = 0;
    snprintf(b->nspace, sizeof(b->nspace), "singleton.%ld", (long)getpid());
}

ucft_status_t boot_init(boot_t *b, const ucft_log_t *log)
{
    pmix_proc_t me;
    pmix_status_t rc;
    long v;

    memset(b, 0, sizeof(*b));
    b->log = log;
    if (gethostname(b->hostname, sizeof(b->hostname) - 1) != 0)
        snprintf(b->hostname, sizeof(b->hostname), "localhost");

    if (getenv("PMIX_NAMESPACE") == NULL && getenv("PMIX_RANK") == NULL) {
        /* Started by hand: there is no server to ask. */
        init_singleton(b);
        ucft_debug(log, "no PMIx server in the environment: running as a "
                        "singleton (rank 0 of 1)");
        return UCFT_OK;
    }
    rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        ucft_error(log,
                   "PMIx_Init failed: %s (PMIX_NAMESPACE is set, so a "
                   "server was expected)",
                   PMIx_Error_string(rc));
        return UCFT_ERR_BOOTSTRAP;
    }
    b->pmix_up = 1;
    snprintf(b->nspace, sizeof(b->nspace), "%s", me.nspace);
    b->rank = (int)me.rank;
    if (get_int(b, PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, &v) != 0 || v < 1) {
        ucft_error(log, "PMIx: no job size (PMIX_JOB_SIZE)");
        goto err;
    }
    b->size = (int)v;
    b->local_rank = get_int(b, me.rank, PMIX_LOCAL_RANK, &v) == 0 ? (int)v : 0;
    b->local_size =
        get_int(b, PMIX_RANK_WILDCARD, PMIX_LOCAL_SIZE, &v) == 0 ? (int)v : 1;
    b->node_id_known = get_int(b, me.rank, PMIX_NODEID, &v) == 0;
    b->node_id = b->node_id_known ? (int)v : 0;

    pmix_value_t *hv = NULL;
    if (PMIx_Get(&me, PMIX_HOSTNAME, NULL, 0, &hv) == PMIX_SUCCESS &&
        hv != NULL) {
        if (hv->type == PMIX_STRING && hv->data.string != NULL)
            snprintf(b->hostname, sizeof(b->hostname), "%s", hv->data.string);
        PMIX_VALUE_RELEASE(hv);
    }
    ucft_debug(log,
               "PMIx: nspace %s rank %d of %d, local rank %d of %d, "
               "node %d (%s)",
               b->nspace, b->rank, b->size, b->local_rank, b->local_size,
               b->node_id, b->hostname);
    return UCFT_OK;

err:
    PMIx_Finalize(NULL, 0);
    b->pmix_up = 0;
    return UCFT_ERR_BOOTSTRAP;
}

ucft_status_t boot_put(boot_t *b, const char *key, const void *addr, size_t len)
{
    pmix_value_t val;
    pmix_status_t rc;

    if (b->singleton)
        return UCFT_OK;
    PMIX_VALUE_CONSTRUCT(&val);
    val.type = PMIX_BYTE_OBJECT;
    val.data.bo.bytes = (char *)addr;
    val.data.bo.size = len;
    rc = PMIx_Put(PMIX_GLOBAL, key, &val);
    if (rc != PMIX_SUCCESS) {
        ucft_error(b->log, "PMIx_Put(%s): %s", key, PMIx_Error_string(rc));
        return UCFT_ERR_BOOTSTRAP;
    }
    rc = PMIx_Commit();
    if (rc != PMIX_SUCCESS) {
        ucft_error(b->log, "PMIx_Commit: %s", PMIx_Error_string(rc));
        return UCFT_ERR_BOOTSTRAP;
    }
    return UCFT_OK;
}

ucft_status_t boot_publish_hb(boot_t *b, const void *addr, size_t len)
{
    return boot_put(b, HB_ADDR_KEY, addr, len);
}

static ucft_status_t get_bytes_q(boot_t *b, const char *key, int rank,
                                 void **addr, size_t *len, int quiet)
{
    pmix_proc_t p;
    pmix_value_t *v = NULL;
    pmix_status_t rc;
    pmix_info_t info;
    bool yes = true;

    if (b->singleton)
        return UCFT_ERR_BOOTSTRAP; /* only ourselves, handled by the caller */
    load_proc(b, &p, (pmix_rank_t)rank);
    /* Every key is read after the start-up fence, which collected all
     * the data. With the shared-memory job-data store this client finds
     * it in its own view of the store; with the hash store it stays on
     * the server, which then answers from its copy. PMIX_IMMEDIATE: the
     * server answers at once, also when a rank never published the key
     * (it died during start-up); without it the server would hold the
     * request for seconds, and the heartbeat thread is among the
     * callers. */
    PMIX_INFO_CONSTRUCT(&info);
    PMIX_INFO_LOAD(&info, PMIX_IMMEDIATE, &yes, PMIX_BOOL);
    rc = PMIx_Get(&p, key, &info, 1, &v);
    PMIX_INFO_DESTRUCT(&info);
    if (rc == PMIX_ERR_NOT_FOUND && v == NULL) {
        if (!quiet)
            ucft_info(b->log,
                      "rank %d published no %s (it died during start-up)", rank,
                      key);
        return UCFT_ERR_PROC_FAILED;
    }
    if (rc != PMIX_SUCCESS || v == NULL) {
        if (!quiet)
            ucft_error(b->log, "PMIx_Get(%s) of rank %d: %s", key, rank,
                       PMIx_Error_string(rc));
        return UCFT_ERR_BOOTSTRAP;
    }
    if (v->type != PMIX_BYTE_OBJECT || v->data.bo.size == 0) {
        ucft_error(b->log,
                   "PMIx: %s of rank %d has type %d, expected a "
                   "byte object",
                   key, rank, (int)v->type);
        PMIX_VALUE_RELEASE(v);
        return UCFT_ERR_BOOTSTRAP;
    }
    *addr = malloc(v->data.bo.size);
    if (*addr == NULL) {
        PMIX_VALUE_RELEASE(v);
        return UCFT_ERR_NO_MEMORY;
    }
    memcpy(*addr, v->data.bo.bytes, v->data.bo.size);
    *len = v->data.bo.size;
    PMIX_VALUE_RELEASE(v);
    return UCFT_OK;
}

ucft_status_t boot_publish(boot_t *b, const void *addr, size_t len)
{
    unsigned char *live = NULL;
    size_t llen = 0;

    if (b->singleton)
        return UCFT_OK;
    /* A context of this process that has not finalized: a second one
     * under a PMIx launcher, whose start-up fence no other rank would join
     * (it would wait for UCFT_INIT_TIMEOUT, then fail with a wire-up
     * error). One that finalized cleared the mark: init after finalize
     * works. */
    if (get_bytes_q(b, LIVE_KEY, b->rank, (void **)&live, &llen, 1) ==
        UCFT_OK) {
        int busy = live[0] != 0;
        free(live);
        if (busy) {
            ucft_error(b->log,
                       "this process (rank %d) already has a ucft context in "
                       "this PMIx job: one context per process until it "
                       "finalizes (docs/api.md, Limits)",
                       b->rank);
            return UCFT_ERR_INVALID_PARAM;
        }
    }
    ucft_status_t st = boot_put(b, ADDR_KEY, addr, len);
    if (st == UCFT_OK && (st = boot_put(b, LIVE_KEY, "\1", 1)) == UCFT_OK)
        b->live_set = 1;
    return st;
}

ucft_status_t boot_get(boot_t *b, const char *key, int rank, void **addr,
                       size_t *len)
{
    return get_bytes_q(b, key, rank, addr, len, 0);
}

ucft_status_t boot_get_opt(boot_t *b, const char *key, int rank, void **addr,
                           size_t *len)
{
    return get_bytes_q(b, key, rank, addr, len, 1);
}

ucft_status_t boot_lookup(void *arg, int rank, void **addr, size_t *len)
{
    return boot_get(arg, ADDR_KEY, rank, addr, len);
}

ucft_status_t boot_lookup_hb(void *arg, int rank, void **addr, size_t *len)
{
    return boot_get(arg, HB_ADDR_KEY, rank, addr, len);
}

ucft_status_t boot_local_peers(boot_t *b, int **ranks, size_t *n)
{
    pmix_proc_t p;
    pmix_value_t *v = NULL;

    *ranks = NULL;
    *n = 0;
    if (b->singleton)
        return UCFT_OK;
    load_proc(b, &p, PMIX_RANK_WILDCARD);
    if (PMIx_Get(&p, PMIX_LOCAL_PEERS, NULL, 0, &v) != PMIX_SUCCESS ||
        v == NULL)
        return UCFT_ERR_NOT_SUPPORTED;
    ucft_status_t st = UCFT_ERR_NOT_SUPPORTED;
    if (v->type == PMIX_STRING && v->data.string != NULL) {
        const char *s = v->data.string;
        size_t cap = 1;
        for (const char *c = s; *c; c++)
            cap += *c == ',';
        int *r = malloc(cap * sizeof(*r));
        st = r ? UCFT_OK : UCFT_ERR_NO_MEMORY;
        while (r != NULL && *s) {
            char *end;
            long x = strtol(s, &end, 10);
            if (end == s || x < 0 || x >= b->size || *n == cap) {
                ucft_debug(b->log, "PMIX_LOCAL_PEERS '%s': not a rank list",
                           v->data.string);
                free(r);
                r = NULL;
                *n = 0;
                st = UCFT_ERR_NOT_SUPPORTED;
                break;
            }
            r[(*n)++] = (int)x;
            s = *end == ',' ? end + 1 : end;
            if (*end != ',' && *end != '\0')
                s = ""; /* trailing junk: stop */
        }
        *ranks = r;
    }
    PMIX_VALUE_RELEASE(v);
    return st;
}

int boot_locality_string(boot_t *b, char *buf, size_t len)
{
    pmix_proc_t p;
    pmix_value_t *v = NULL;
    pmix_info_t info;
    int found = 0;

    buf[0] = '\0';
    if (b->singleton || !b->pmix_up)
        return 0;
    load_proc(b, &p, (pmix_rank_t)b->rank);
    PMIX_INFO_CONSTRUCT(&info);
    PMIX_INFO_LOAD(&info, PMIX_OPTIONAL, NULL, PMIX_BOOL);
    /* Unbound ranks get NOT-FOUND (ucftrun) or a string value holding
     * NULL (Open MPI's mpirun, PRRTE): both mean "no binding". */
    if (PMIx_Get(&p, PMIX_LOCALITY_STRING, &info, 1, &v) == PMIX_SUCCESS &&
        v != NULL) {
        if (v->type == PMIX_STRING && v->data.string != NULL &&
            v->data.string[0] != '\0' &&
            (size_t)snprintf(buf, len, "%s", v->data.string) < len)
            found = 1;
        PMIX_VALUE_RELEASE(v);
    }
    PMIX_INFO_DESTRUCT(&info);
    if (!found)
        buf[0] = '\0';
    return found;
}

/* ---- death events ----------------------------------------------------- */

static ucft_status_t death_reason(pmix_status_t code, const pmix_info_t *info,
                                  size_t ninfo)
{
    if (code == PMIX_EVENT_PROC_TERMINATED) {
        /* Informational unless it carries a non-zero exit code: a rank that
         * finished normally is not a failure. */
        for (size_t i = 0; i < ninfo; i++) {
            if (PMIX_CHECK_KEY(&info[i], PMIX_EXIT_CODE) &&
                info[i].value.type == PMIX_INT &&
                info[i].value.data.integer != 0)
                return UCFT_ERR_PROC_FAILED;
        }
        return UCFT_OK;
    }
    return UCFT_ERR_PROC_FAILED;
}

static void emit_proc(boot_t *b, const pmix_proc_t *p, ucft_status_t why)
{
    if (p == NULL || !PMIX_CHECK_NSPACE(p->nspace, b->nspace))
        return;
    if (p->rank == PMIX_RANK_WILDCARD || p->rank >= (pmix_rank_t)b->size)
        return;
    b->death_cb(b->death_arg, (int)p->rank, why);
}

static void death_handler(size_t id, pmix_status_t code,
                          const pmix_proc_t *source, pmix_info_t info[],
                          size_t ninfo, pmix_info_t results[], size_t nresults,
                          pmix_event_notification_cbfunc_fn_t cbfunc,
                          void *cbdata)
{
    boot_t *b = NULL;
    const pmix_proc_t *affected = NULL;
    const pmix_data_array_t *many = NULL;
    (void)id;
    (void)results;
    (void)nresults;

    for (size_t i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_RETURN_OBJECT))
            b = info[i].value.data.ptr;
        else if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC))
            affected = info[i].value.data.proc;
        else if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROCS))
            many = info[i].value.data.darray;
    }
    if (b != NULL && b->death_cb != NULL) {
        ucft_status_t why = death_reason(code, info, ninfo);
        if (why != UCFT_OK) {
            if (affected != NULL) {
                emit_proc(b, affected, why);
            } else if (many != NULL && many->type == PMIX_PROC) {
                const pmix_proc_t *procs = many->array;
                for (size_t i = 0; i < many->size; i++)
                    emit_proc(b, &procs[i], why);
            } else {
                emit_proc(b, source, why);
            }
        }
    }
    /* Let other handlers (an embedding runtime's) see the event too. */
    if (cbfunc != NULL)
        cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}

ucft_status_t boot_watch_deaths(boot_t *b, boot_death_cb_t cb, void *arg)
{
    pmix_status_t codes[] = {
        PMIX_ERR_PROC_ABORTED_BY_SIG,
        PMIX_ERR_EXIT_NONZERO_TERM,
        PMIX_ERR_PROC_TERM_WO_SYNC,
        PMIX_EVENT_PROC_TERMINATED,
        PMIX_ERR_PROC_KILLED_BY_CMD,
        PMIX_ERR_PROC_REQUESTED_ABORT,
        -7 /* PMIX_ERR_PROC_ABORTED, deprecated but still sent by some */,
    };
    pmix_info_t info[2];
    pmix_status_t rc;

    b->death_cb = cb;
    b->death_arg = arg;
    if (b->singleton)
        return UCFT_OK;
    PMIX_INFO_CONSTRUCT(&info[0]);
    PMIX_INFO_CONSTRUCT(&info[1]);
    PMIX_INFO_LOAD(&info[0], PMIX_EVENT_RETURN_OBJECT, b, PMIX_POINTER);
    PMIX_INFO_LOAD(&info[1], PMIX_EVENT_HDLR_NAME, "ucft-deaths", PMIX_STRING);
    rc = PMIx_Register_event_handler(codes, sizeof(codes) / sizeof(codes[0]),
                                     info, 2, death_handler, NULL, NULL);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    if (rc < 0) {
        ucft_error(b->log, "PMIx_Register_event_handler: %s",
                   PMIx_Error_string(rc));
        return UCFT_ERR_BOOTSTRAP;
    }
    b->ev_id = (size_t)rc;
    b->ev_registered = 1;
    return UCFT_OK;
}

static pmix_status_t fence_post(boot_t *b);

/* PMIx 4.2 counts a participant's orderly PMIx_Finalize as its loss when
 * it lands during a fence: a process that finalized and initialized again
 * while a peer was still finalizing its own previous context gets
 * PMIX_ERR_PARTIAL_SUCCESS at every participant (seen on one node: all of
 * them, it.reinit.n3 about 1 run in 20). The fence is posted once more;
 * a second partial success is an error. */
static void fence_done(pmix_status_t status, void *cbdata)
{
    boot_t *b = cbdata;
    if (status == PMIX_ERR_PARTIAL_SUCCESS && !b->fence_retried) {
        b->fence_retried = 1;
        ucft_warn(b->log,
                  "PMIx fence: %s (a peer finalized during it): "
                  "fencing again",
                  PMIx_Error_string(status));
        pmix_status_t rc = fence_post(b);
        if (rc == PMIX_SUCCESS)
            return;
        status = rc == PMIX_OPERATION_SUCCEEDED ? PMIX_SUCCESS : rc;
    }
    if (status != PMIX_SUCCESS)
        ucft_warn(b->log, "PMIx fence: %s", PMIx_Error_string(status));
    b->fence_cb(b->fence_arg,
                status == PMIX_SUCCESS ? UCFT_OK : UCFT_ERR_BOOTSTRAP);
}

static pmix_status_t fence_post(boot_t *b)
{
    pmix_proc_t all;
    pmix_info_t info;
    bool yes = true;

    load_proc(b, &all, PMIX_RANK_WILDCARD);
    PMIX_INFO_CONSTRUCT(&info);
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    pmix_status_t rc = PMIx_Fence_nb(&all, 1, b->fence_collect ? &info : NULL,
                                     b->fence_collect ? 1 : 0, fence_done, b);
    PMIX_INFO_DESTRUCT(&info);
    return rc;
}

ucft_status_t boot_fence_nb(boot_t *b, int collect, boot_done_cb_t cb,
                            void *arg)
{
    if (b->singleton) {
        cb(arg, UCFT_OK);
        return UCFT_OK;
    }
    b->fence_cb = cb;
    b->fence_arg = arg;
    b->fence_collect = collect;
    b->fence_retried = 0;
    pmix_status_t rc = fence_post(b);
    if (rc == PMIX_OPERATION_SUCCEEDED) {
        cb(arg, UCFT_OK);
        return UCFT_OK;
    }
    if (rc != PMIX_SUCCESS) {
        ucft_warn(b->log, "PMIx_Fence_nb: %s", PMIx_Error_string(rc));
        return UCFT_ERR_BOOTSTRAP;
    }
    return UCFT_OK;
}

void boot_unwatch_deaths(boot_t *b)
{
    if (b->pmix_up && b->ev_registered)
        PMIx_Deregister_event_handler(b->ev_id, NULL, NULL);
    b->ev_registered = 0;
}

void boot_finalize(boot_t *b)
{
    if (!b->pmix_up)
        return;
    boot_unwatch_deaths(b);
    if (b->live_set)
        boot_put(b, LIVE_KEY, "\0", 1);
    b->live_set = 0;
    PMIx_Finalize(NULL, 0);
    b->pmix_up = 0;
}
