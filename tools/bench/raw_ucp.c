/*
 * Raw UCP baseline for `ucft-bench pt2pt`.
 *
 * Same settings as ucft's UCP transport (transport/ucp/tp_ucp_create.c,
 * endpoints in tp_ucp_ep.c), so that the ratio ucft/raw measures ucft's own
 * layers and nothing else:
 *  - features TAG | WAKEUP, a per-request area (request_size), the same
 *    tag_sender_mask, estimated_num_eps = job size;
 *  - MM_ERROR_HANDLING=y when shared memory is enabled in UCX_TLS (and
 *    UCX_MM_ERROR_HANDLING is not set), KEEPALIVE_INTERVAL from
 *    UCFT_UCX_KEEPALIVE (default 1s) unless UCX_KEEPALIVE_INTERVAL is set;
 *  - thread mode single, the worker's event fd fetched, endpoints in
 *    UCP_ERR_HANDLING_MODE_PEER with an error handler;
 *  - completion callbacks that mark a flag inside the UCX request;
 *  - the same tag layout (P2P class, context 0, sender rank, user tag);
 *  - waiting as UCFT_WAIT says: spin = ucp_worker_progress loop; sleep =
 *    progress, ucp_worker_arm, poll(efd, UCFT_POLL_TIMEOUT); hybrid = spin
 *    for UCFT_SPIN_TIME (clock read every 64 turns, as the runtime does),
 *    then poll and sched_yield for UCFT_YIELD_TIME, then sleep.
 * The worker address goes through PMIx under a key of the bench's own
 * (Put, Commit, Fence with PMIX_COLLECT_DATA, Get).
 */
#include "tools/bench/raw_ucp.h"
#include "transport/tag.h"
#include "transport/ucp/tp_ucp_diag.h"

#include <poll.h>
#include <pmix.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucp/api/ucp.h>

#define ADDR_KEY      "ucft.bench.raw_ucp.addr"
#define CLOSE_WAIT_NS (5 * 1000000000ull)

struct raw_ucp {
    bench_wait_cfg_t wait;
    int rank, peer, size;
    ucp_context_h context;
    ucp_worker_h worker;
    ucp_ep_h ep;
    int efd;
    int ep_failed;
    int pmix_up;
    pmix_proc_t me;
    void **reqs; /* stream window */
    int max_window;
};

/* Lives inside every UCX request (request_size). */
typedef struct raw_rq {
    volatile int done;
    ucs_status_t status;
} raw_rq_t;

/* ---- completion and waiting ---------------------------------------------- */

static void send_cb(void *request, ucs_status_t status, void *user_data)
{
    raw_rq_t *rq = request;
    (void)user_data;
    rq->status = status;
    rq->done = 1;
}

static void recv_cb(void *request, ucs_status_t status,
                    const ucp_tag_recv_info_t *info, void *user_data)
{
    raw_rq_t *rq = request;
    (void)info;
    (void)user_data;
    rq->status = status;
    rq->done = 1;
}

static void ep_error_cb(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    raw_ucp_t *u = arg;
    (void)ep;
    u->ep_failed = 1;
    fprintf(stderr, "ucft-bench pt2pt: rank %d: raw UCP endpoint failed: %s\n",
            u->rank, ucs_status_string(status));
}

static void sleep_until(raw_ucp_t *u, volatile int *done)
{
    int ms = (int)((u->wait.poll_ns + 999999) / 1000000);
    struct pollfd pfd = {.fd = u->efd, .events = POLLIN};
    for (;;) {
        if (*done)
            return;
        if (ucp_worker_progress(u->worker) > 0)
            continue;
        if (*done)
            return;
        ucs_status_t st = ucp_worker_arm(u->worker);
        if (st == UCS_ERR_BUSY)
            continue;
        if (st != UCS_OK) {
            ucp_worker_progress(u->worker);
            continue;
        }
        poll(&pfd, 1, ms);
    }
}

static void wait_flag(raw_ucp_t *u, volatile int *done)
{
    bench_wait_mode_t mode = u->wait.mode;
    if (mode == BENCH_WAIT_SPIN) {
        while (!*done)
            ucp_worker_progress(u->worker);
        return;
    }
    if (mode == BENCH_WAIT_HYBRID) {
        uint64_t end = bench_now_ns() + u->wait.spin_ns;
        for (unsigned i = 1; u->wait.spin_ns > 0; i++) {
            if (*done)
                return;
            ucp_worker_progress(u->worker);
            if ((i & 63) == 0 && bench_now_ns() >= end)
                break;
        }
        end = bench_now_ns() + u->wait.yield_ns;
        while (u->wait.yield_ns > 0) {
            if (*done)
                return;
            if (ucp_worker_progress(u->worker) > 0 || *done)
                continue;
            if (bench_now_ns() >= end)
                break;
            sched_yield();
        }
    }
    sleep_until(u, done);
}

/* Waits for what a *_nbx call returned; releases the request. */
static ucs_status_t wait_req(raw_ucp_t *u, void *r)
{
    if (r == NULL)
        return UCS_OK;
    if (UCS_PTR_IS_ERR(r))
        return UCS_PTR_STATUS(r);
    raw_rq_t *rq = r;
    if (!rq->done)
        wait_flag(u, &rq->done);
    ucs_status_t st = rq->status;
    ucp_request_free(r);
    return st;
}

static void *post_send(raw_ucp_t *u, const void *buf, size_t len, uint32_t tag)
{
    uint64_t t = ucft_tag_make(UCFT_TAG_CLASS_P2P, 0, (uint32_t)u->rank, tag);
    ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK,
                             .cb.send = send_cb};
    void *r = ucp_tag_send_nbx(u->ep, buf, len, t, &p);
    if (r != NULL && !UCS_PTR_IS_ERR(r))
        ((raw_rq_t *)r)->done = 0; /* callbacks run only from progress */
    return r;
}

static void *post_recv(raw_ucp_t *u, void *buf, size_t len, uint32_t tag)
{
    uint64_t t = ucft_tag_make(UCFT_TAG_CLASS_P2P, 0, (uint32_t)u->peer, tag);
    ucp_tag_recv_info_t info;
    ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK |
                                             UCP_OP_ATTR_FIELD_RECV_INFO,
                             .cb.recv = recv_cb,
                             .recv_info.tag_info = &info};
    void *r = ucp_tag_recv_nbx(u->worker, buf, len, t, UCFT_TAG_FULL_MASK, &p);
    if (r != NULL && !UCS_PTR_IS_ERR(r))
        ((raw_rq_t *)r)->done = 0;
    return r;
}

static int check(raw_ucp_t *u, ucs_status_t st, const char *what)
{
    if (st == UCS_OK && !u->ep_failed)
        return 0;
    fprintf(stderr, "ucft-bench pt2pt: rank %d: raw UCP %s: %s\n", u->rank,
            what,
            ucs_status_string(st == UCS_OK ? UCS_ERR_CONNECTION_RESET : st));
    return -1;
}

/* ---- the two patterns (see pt2pt.h) -------------------------------------- */

static int raw_pingpong(void *obj, void *sbuf, void *rbuf, size_t size,
                        int warm, int n, double *out)
{
    raw_ucp_t *u = obj;
    for (int i = -warm; i < n; i++) {
        if (u->rank == 0) {
            uint64_t t0 = bench_now_ns();
            void *rr = post_recv(u, rbuf, size, PT2PT_TAG_PING);
            void *sr = post_send(u, sbuf, size, PT2PT_TAG_PING);
            if (check(u, wait_req(u, sr), "send") ||
                check(u, wait_req(u, rr), "recv"))
                return -1;
            if (i >= 0)
                out[i] = (double)(bench_now_ns() - t0);
        } else {
            void *rr = post_recv(u, rbuf, size, PT2PT_TAG_PING);
            if (check(u, wait_req(u, rr), "recv"))
                return -1;
            void *sr = post_send(u, sbuf, size, PT2PT_TAG_PING);
            if (check(u, wait_req(u, sr), "send"))
                return -1;
        }
    }
    return 0;
}

static int raw_stream(void *obj, void *sbuf, void *rbuf, size_t size,
                      int window, int warm, int n, double *out)
{
    raw_ucp_t *u = obj;
    uint64_t ack = 0;
    int bad = 0;

    if (window > u->max_window)
        return -1;
    for (int i = -warm; i < n && !bad; i++) {
        if (u->rank == 0) {
            uint64_t t0 = bench_now_ns();
            void *ar = post_recv(u, &ack, PT2PT_ACK_LEN, PT2PT_TAG_ACK);
            for (int k = 0; k < window; k++)
                u->reqs[k] = post_send(u, sbuf, size, PT2PT_TAG_STREAM);
            for (int k = 0; k < window; k++)
                bad |= check(u, wait_req(u, u->reqs[k]), "stream send");
            bad |= check(u, wait_req(u, ar), "ack recv");
            if (i >= 0)
                out[i] = (double)(bench_now_ns() - t0);
        } else {
            for (int k = 0; k < window; k++)
                u->reqs[k] = post_recv(u, rbuf, size, PT2PT_TAG_STREAM);
            for (int k = 0; k < window; k++)
                bad |= check(u, wait_req(u, u->reqs[k]), "stream recv");
            void *as = post_send(u, &ack, PT2PT_ACK_LEN, PT2PT_TAG_ACK);
            bad |= check(u, wait_req(u, as), "ack send");
        }
    }
    return bad ? -1 : 0;
}

void raw_ucp_path(raw_ucp_t *u, pt2pt_path_t *path)
{
    path->name = "ucp";
    path->obj = u;
    path->pingpong = raw_pingpong;
    path->stream = raw_stream;
}

/* ---- set-up and tear-down ------------------------------------------------ */

static int ucp_setup(raw_ucp_t *u)
{
    ucp_config_t *cfg;
    ucs_status_t st = ucp_config_read(NULL, NULL, &cfg);
    if (check(u, st, "ucp_config_read"))
        return -1;
    /* Exactly the UCX settings ucft's transport applies. */
    tp_ucp_config_apply(cfg, u->wait.keepalive_ns);
    ucp_params_t pp = {
        .field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_REQUEST_SIZE |
                      UCP_PARAM_FIELD_TAG_SENDER_MASK |
                      UCP_PARAM_FIELD_ESTIMATED_NUM_EPS,
        .features = UCP_FEATURE_TAG | UCP_FEATURE_AM | UCP_FEATURE_WAKEUP,
        .request_size = sizeof(raw_rq_t),
        .tag_sender_mask = UCFT_TAG_SRC_MASK,
        .estimated_num_eps = (size_t)u->size,
    };
    st = ucp_init(&pp, cfg, &u->context);
    ucp_config_release(cfg);
    if (check(u, st, "ucp_init"))
        return -1;
    ucp_worker_params_t wp = {.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
                              .thread_mode = UCS_THREAD_MODE_SINGLE};
    st = ucp_worker_create(u->context, &wp, &u->worker);
    if (check(u, st, "ucp_worker_create")) {
        ucp_cleanup(u->context);
        return -1;
    }
    st = ucp_worker_get_efd(u->worker, &u->efd);
    if (check(u, st, "ucp_worker_get_efd")) {
        ucp_worker_destroy(u->worker);
        ucp_cleanup(u->context);
        return -1;
    }
    return 0;
}

/* Publishes our worker address and fetches the peer's. */
static int exchange(raw_ucp_t *u, void **peer_addr)
{
    ucp_address_t *addr;
    size_t len;
    pmix_status_t rc;

    if (check(u, ucp_worker_get_address(u->worker, &addr, &len),
              "ucp_worker_get_address"))
        return -1;
    pmix_value_t val = {.type = PMIX_BYTE_OBJECT};
    val.data.bo.bytes = (char *)addr;
    val.data.bo.size = len;
    rc = PMIx_Put(PMIX_GLOBAL, ADDR_KEY, &val);
    ucp_worker_release_address(u->worker, addr);
    if (rc == PMIX_SUCCESS)
        rc = PMIx_Commit();
    if (rc == PMIX_SUCCESS) {
        pmix_info_t info;
        bool collect = true;
        PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
        rc = PMIx_Fence(NULL, 0, &info, 1);
        PMIX_INFO_DESTRUCT(&info);
    }
    pmix_value_t *pv = NULL;
    if (rc == PMIX_SUCCESS) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, u->me.nspace, (pmix_rank_t)u->peer);
        rc = PMIx_Get(&p, ADDR_KEY, NULL, 0, &pv);
    }
    if (rc != PMIX_SUCCESS || pv == NULL || pv->type != PMIX_BYTE_OBJECT) {
        fprintf(stderr,
                "ucft-bench pt2pt: rank %d: PMIx exchange of the raw UCP "
                "address failed: %s\n",
                u->rank, PMIx_Error_string(rc));
        if (pv != NULL)
            PMIX_VALUE_RELEASE(pv);
        return -1;
    }
    *peer_addr = malloc(pv->data.bo.size);
    if (*peer_addr != NULL)
        memcpy(*peer_addr, pv->data.bo.bytes, pv->data.bo.size);
    PMIX_VALUE_RELEASE(pv);
    return *peer_addr != NULL ? 0 : -1;
}

/* One round trip, spinning, so that the endpoint is fully wired before
 * anyone sleeps on the event fd (PLATFORM.md 0.3). */
static int wireup(raw_ucp_t *u)
{
    uint64_t v = 0;
    bench_wait_cfg_t saved = u->wait;
    int bad = 0;
    u->wait.mode = BENCH_WAIT_SPIN;
    if (u->rank == 0) {
        void *rr = post_recv(u, &v, sizeof(v), PT2PT_TAG_ACK);
        bad |= check(u, wait_req(u, post_send(u, &v, sizeof(v), PT2PT_TAG_ACK)),
                     "wire-up send");
        bad |= check(u, wait_req(u, rr), "wire-up recv");
    } else {
        bad |= check(u, wait_req(u, post_recv(u, &v, sizeof(v), PT2PT_TAG_ACK)),
                     "wire-up recv");
        bad |= check(u, wait_req(u, post_send(u, &v, sizeof(v), PT2PT_TAG_ACK)),
                     "wire-up send");
    }
    u->wait = saved;
    return bad ? -1 : 0;
}

int raw_ucp_create(int rank, int size, const bench_wait_cfg_t *wait,
                   int max_window, raw_ucp_t **out)
{
    raw_ucp_t *u = calloc(1, sizeof(*u));
    void *peer_addr = NULL;
    if (u == NULL)
        return -1;
    u->rank = rank;
    u->size = size;
    u->peer = 1 - rank;
    u->wait = *wait;
    u->max_window = max_window;
    u->reqs = calloc((size_t)max_window, sizeof(*u->reqs));
    if (u->reqs == NULL)
        goto err_free;
    pmix_status_t rc = PMIx_Init(&u->me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "ucft-bench pt2pt: PMIx_Init: %s\n",
                PMIx_Error_string(rc));
        goto err_free;
    }
    u->pmix_up = 1;
    if (ucp_setup(u) != 0)
        goto err_pmix;
    if (exchange(u, &peer_addr) != 0)
        goto err_worker;
    ucp_ep_params_t ep = {
        .field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS |
                      UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                      UCP_EP_PARAM_FIELD_ERR_HANDLER,
        .address = peer_addr,
        .err_mode = UCP_ERR_HANDLING_MODE_PEER,
        .err_handler = {.cb = ep_error_cb, .arg = u},
    };
    ucs_status_t st = ucp_ep_create(u->worker, &ep, &u->ep);
    free(peer_addr);
    if (check(u, st, "ucp_ep_create"))
        goto err_worker;
    if (wireup(u) != 0) {
        raw_ucp_destroy(u);
        return -1;
    }
    *out = u;
    return 0;

err_worker:
    ucp_worker_destroy(u->worker);
    ucp_cleanup(u->context);
err_pmix:
    PMIx_Finalize(NULL, 0);
err_free:
    free(u->reqs);
    free(u);
    return -1;
}

static void fence_cb(pmix_status_t status, void *cbdata)
{
    atomic_store((atomic_int *)cbdata, status == PMIX_SUCCESS ? 1 : -1);
}

void raw_ucp_destroy(raw_ucp_t *u)
{
    int safe = 1;
    if (u == NULL)
        return;
    if (u->ep != NULL) {
        ucp_request_param_t p = {0};
        if (u->ep_failed) {
            p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
            p.flags = UCP_EP_CLOSE_FLAG_FORCE;
        }
        void *r = ucp_ep_close_nbx(u->ep, &p);
        if (r != NULL && !UCS_PTR_IS_ERR(r)) {
            uint64_t end = bench_now_ns() + CLOSE_WAIT_NS;
            while (ucp_request_check_status(r) == UCS_INPROGRESS &&
                   bench_now_ns() < end)
                ucp_worker_progress(u->worker);
            if (ucp_request_check_status(r) == UCS_INPROGRESS)
                safe = 0; /* a live request must not meet worker_destroy */
            else
                ucp_request_free(r);
        }
    }
    /* The peer may still need our progress to finish its own close. */
    atomic_int done = 0;
    if (PMIx_Fence_nb(NULL, 0, NULL, 0, fence_cb, &done) == PMIX_SUCCESS) {
        uint64_t end = bench_now_ns() + CLOSE_WAIT_NS;
        while (atomic_load(&done) == 0 && bench_now_ns() < end)
            ucp_worker_progress(u->worker);
        if (atomic_load(&done) == 0)
            safe = 0; /* the callback would write to a dead stack frame */
    }
    if (safe) {
        ucp_worker_destroy(u->worker);
        ucp_cleanup(u->context);
        PMIx_Finalize(NULL, 0);
    }
    free(u->reqs);
    free(u);
}

void raw_ucp_transport(raw_ucp_t *u, char *buf, size_t len)
{
    char *text = NULL;
    size_t tlen = 0;
    FILE *f = open_memstream(&text, &tlen);

    snprintf(buf, len, "?");
    if (f == NULL)
        return;
    ucp_ep_print_info(u->ep, f);
    fclose(f);
    /* Lines look like "#   lane[0]:  3:sysv/memory.0 md[2] ... am am_bw":
     * report the first lane that carries active messages. */
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save)) {
        char *lane = strstr(line, "lane[");
        char *colon = lane ? strchr(lane, ':') : NULL;
        char *name = colon ? strchr(colon + 1, ':') : NULL;
        if (name == NULL || strstr(line, " am") == NULL)
            continue;
        name++;
        size_t n = strcspn(name, " \t");
        /* Drop the ".0" device index suffix of "sysv/memory.0". */
        char *dot = memchr(name, '.', n);
        if (dot != NULL && strchr(name, '/') < dot)
            n = (size_t)(dot - name);
        snprintf(buf, len, "%.*s", (int)n, name);
        break;
    }
    free(text);
}
