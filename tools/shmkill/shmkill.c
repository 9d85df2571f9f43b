/*
 * ucft-shmkill: does a process SIGKILLed while it sends cut its receiver
 * off from every other sender? (docs/transport.md, "A kill mid-send")
 *
 * Raw UCP, no ucft: the question is about UCX's transports. One trial =
 * one receiver (this process) and --senders children; each child sends
 * 8-byte tagged messages to the receiver in a loop (tag = child index).
 * After a random 50-150 ms the receiver SIGKILLs one child, then counts
 * for --wait seconds what the others still deliver. A trial is "cut off"
 * when no surviving sender got a single message through in that time
 * (they sent hundreds of thousands each before). Then a second worker of
 * this process sends the receiving worker one message (the self-probe of
 * docs/transport.md): it goes through the same FIFO, so it should be
 * stuck exactly when the survivors are. Transports come from
 * UCX_TLS; the UCX configuration is ucft's (tp_ucp_config_apply: shared
 * memory qualifies for peer error handling) and endpoints use
 * UCP_ERR_HANDLING_MODE_PEER, as ucft's do.
 *
 *   ucft-shmkill [--trials T] [--senders S] [--wait SECONDS] [--seed N]
 *
 * Prints one line per trial and a summary; exit 0 after a complete
 * measurement, 2 on bad options, 1 if UCX cannot be set up.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <ucp/api/ucp.h>
#include <unistd.h>

#include "transport/ucp/tp_ucp.h"

#define MAX_SENDERS 16
#define MAX_PAYLOAD 96 /* stays inside one shared-memory FIFO element */
#define PROBE_TAG   ((uint64_t)1 << 40)
#define PROBE_S     0.3 /* how long the self-probe may take */

typedef struct opts {
    int trials, senders;
    size_t payload;
    double wait_s;
    unsigned seed;
} opts_t;

typedef struct ucx {
    ucp_context_h ctx;
    ucp_worker_h worker;
} ucx_t;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int ucx_open(ucx_t *u)
{
    ucp_config_t *cfg;
    if (ucp_config_read(NULL, NULL, &cfg) != UCS_OK)
        return -1;
    tp_ucp_config_apply(cfg, 0); /* ucft's settings (shared memory on) */
    ucp_params_t pp = {.field_mask = UCP_PARAM_FIELD_FEATURES,
                       .features = UCP_FEATURE_TAG};
    ucs_status_t st = ucp_init(&pp, cfg, &u->ctx);
    ucp_config_release(cfg);
    if (st != UCS_OK)
        return -1;
    ucp_worker_params_t wp = {.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
                              .thread_mode = UCS_THREAD_MODE_SINGLE};
    if (ucp_worker_create(u->ctx, &wp, &u->worker) != UCS_OK) {
        ucp_cleanup(u->ctx);
        return -1;
    }
    return 0;
}

static void ucx_close(ucx_t *u)
{
    ucp_worker_destroy(u->worker);
    ucp_cleanup(u->ctx);
}

static void send_cb(void *req, ucs_status_t st, void *arg)
{
    (void)req;
    (void)st;
    (void)arg;
}

static void ep_err_cb(void *arg, ucp_ep_h ep, ucs_status_t st)
{
    (void)arg;
    (void)ep;
    (void)st;
}

/* An endpoint as ucft makes them (peer error handling). */
static ucs_status_t ep_to(ucp_worker_h w, const void *addr, ucp_ep_h *ep)
{
    ucp_ep_params_t p = {.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS |
                                       UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                                       UCP_EP_PARAM_FIELD_ERR_HANDLER,
                         .address = addr,
                         .err_mode = UCP_ERR_HANDLING_MODE_PEER,
                         .err_handler = {.cb = ep_err_cb}};
    return ucp_ep_create(w, &p, ep);
}

static int read_all(int fd, void *buf, size_t len)
{
    for (size_t got = 0; got < len;) {
        ssize_t n = read(fd, (char *)buf + got, len - got);
        if (n <= 0 && errno != EINTR)
            return -1;
        got += n > 0 ? (size_t)n : 0;
    }
    return 0;
}

/* A sender: the receiver's address from the pipe, then sends for ever. */
static void sender(int fd, int index, size_t payload)
{
    size_t len;
    ucx_t u;
    if (read_all(fd, &len, sizeof(len)) != 0 || len > (1u << 20))
        _exit(1);
    void *addr = malloc(len);
    if (addr == NULL || read_all(fd, addr, len) != 0 || ucx_open(&u) != 0)
        _exit(1);
    ucp_ep_h ep;
    if (ep_to(u.worker, addr, &ep) != UCS_OK)
        _exit(1);
    unsigned char msg[MAX_PAYLOAD] = {0};
    for (uint64_t v = 0;; v++) {
        ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK,
                                 .cb.send = send_cb};
        memcpy(msg, &v, sizeof(v));
        void *r = ucp_tag_send_nbx(ep, msg, payload, (uint64_t)index, &p);
        if (UCS_PTR_IS_ERR(r))
            _exit(1);
        if (r != NULL) { /* the receiver's FIFO is full */
            while (ucp_request_check_status(r) == UCS_INPROGRESS)
                ucp_worker_progress(u.worker);
            ucp_request_free(r);
        }
        if ((v & 63) == 0)
            ucp_worker_progress(u.worker);
    }
}

/* Receives whatever has arrived; counts per sender. */
static void drain(ucp_worker_h w, uint64_t *cnt, int senders)
{
    ucp_tag_recv_info_t info;
    ucp_tag_message_h m;
    unsigned char buf[MAX_PAYLOAD];
    ucp_worker_progress(w);
    while ((m = ucp_tag_probe_nb(w, 0, 0, 1, &info)) != NULL) {
        ucp_request_param_t p = {.op_attr_mask = 0};
        void *r = ucp_tag_msg_recv_nbx(w, buf, sizeof(buf), m, &p);
        if (UCS_PTR_IS_PTR(r)) {
            while (ucp_request_check_status(r) == UCS_INPROGRESS)
                ucp_worker_progress(w);
            ucp_request_free(r);
        }
        if (info.sender_tag < (uint64_t)senders)
            cnt[info.sender_tag]++;
        else if (info.sender_tag == PROBE_TAG)
            cnt[MAX_SENDERS]++;
    }
}

/* The self-probe of docs/transport.md: a second worker of this process
 * sends one message to the receiving worker, which UCX carries through
 * that worker's own shared-memory FIFO. 1: it arrived within PROBE_S;
 * 0: it did not (the FIFO is blocked); -1: setup error. */
static int self_probe(ucx_t *u, const ucp_address_t *addr, uint64_t *cnt,
                      int senders)
{
    ucp_worker_params_t wp = {.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
                              .thread_mode = UCS_THREAD_MODE_SINGLE};
    ucp_worker_h pw;
    ucp_ep_h ep;
    if (ucp_worker_create(u->ctx, &wp, &pw) != UCS_OK)
        return -1;
    int rc = -1;
    if (ep_to(pw, addr, &ep) != UCS_OK)
        goto out;
    uint64_t v = 1, before = cnt[MAX_SENDERS];
    ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK,
                             .cb.send = send_cb};
    void *r = ucp_tag_send_nbx(ep, &v, sizeof(v), PROBE_TAG, &p);
    if (!UCS_PTR_IS_ERR(r)) {
        double t0 = now_s();
        while (cnt[MAX_SENDERS] == before && now_s() - t0 < PROBE_S) {
            ucp_worker_progress(pw);
            drain(u->worker, cnt, senders);
        }
        rc = cnt[MAX_SENDERS] != before;
        if (r != NULL) /* a blocked FIFO may keep it: give it up */
            ucp_request_free(r);
    }
    ucp_request_param_t cp = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
                              .flags = UCP_EP_CLOSE_FLAG_FORCE};
    void *c = ucp_ep_close_nbx(ep, &cp);
    if (UCS_PTR_IS_PTR(c)) {
        while (ucp_request_check_status(c) == UCS_INPROGRESS)
            ucp_worker_progress(pw);
        ucp_request_free(c);
    }
out:
    ucp_worker_destroy(pw);
    return rc;
}

/* One trial; returns -1 on a setup error, else TRIAL_CUT when the
 * survivors were cut off, plus TRIAL_BLOCKED when the self-probe did not
 * come through. */
enum { TRIAL_CUT = 1, TRIAL_BLOCKED = 2 };

static int trial(const opts_t *o, int t)
{
    pid_t pid[MAX_SENDERS];
    int fds[MAX_SENDERS];
    int n = 0, rc = -1;
    for (; n < o->senders; n++) {
        int p[2];
        if (pipe(p) != 0)
            break;
        pid[n] = fork();
        if (pid[n] == 0) {
            close(p[1]);
            sender(p[0], n, o->payload);
        }
        close(p[0]);
        fds[n] = p[1];
        if (pid[n] < 0) {
            close(p[1]);
            break;
        }
    }
    ucx_t u;
    ucp_address_t *addr = NULL;
    size_t alen = 0;
    if (n < o->senders || ucx_open(&u) != 0)
        goto out;
    if (ucp_worker_get_address(u.worker, &addr, &alen) != UCS_OK) {
        ucx_close(&u);
        goto out;
    }
    for (int i = 0; i < n; i++)
        if (write(fds[i], &alen, sizeof(alen)) != (ssize_t)sizeof(alen) ||
            write(fds[i], addr, alen) != (ssize_t)alen)
            goto close_ucx;
    uint64_t cnt[MAX_SENDERS + 1] = {0}, before[MAX_SENDERS + 1];
    double kill_after = 0.05 + (double)(rand() % 100) * 1e-3;
    int victim = rand() % n;
    double t0 = now_s();
    while (now_s() - t0 < kill_after)
        drain(u.worker, cnt, n);
    memcpy(before, cnt, sizeof(cnt));
    kill(pid[victim], SIGKILL);
    double t1 = now_s();
    while (now_s() - t1 < o->wait_s)
        drain(u.worker, cnt, n);
    uint64_t got = 0;
    for (int i = 0; i < n; i++)
        got += i == victim ? 0 : cnt[i] - before[i];
    int arrived = self_probe(&u, addr, cnt, n);
    if (arrived < 0)
        goto close_ucx;
    rc = (got == 0 ? TRIAL_CUT : 0) | (arrived ? 0 : TRIAL_BLOCKED);
    printf("trial %d: sender %d killed after %.0f ms; after the kill:", t,
           victim, kill_after * 1e3);
    for (int i = 0; i < n; i++)
        printf(" %s%llu", i == victim ? "*" : "",
               (unsigned long long)(cnt[i] - before[i]));
    printf(" -> %s, self-probe %s\n", got == 0 ? "CUT OFF" : "ok",
           arrived ? "arrived" : "BLOCKED");
    fflush(stdout);
close_ucx:
    ucp_worker_release_address(u.worker, addr);
    ucx_close(&u);
out:
    for (int i = 0; i < n; i++) {
        close(fds[i]);
        kill(pid[i], SIGKILL);
        waitpid(pid[i], NULL, 0);
    }
    return rc;
}

static int parse(int argc, char **argv, opts_t *o)
{
    static const struct option lo[] = {
        {"trials", 1, NULL, 't'},  {"senders", 1, NULL, 's'},
        {"wait", 1, NULL, 'w'},    {"seed", 1, NULL, 'r'},
        {"payload", 1, NULL, 'p'}, {"help", 0, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    *o = (opts_t){.trials = 20,
                  .senders = 3,
                  .payload = 8,
                  .wait_s = 1.0,
                  .seed = (unsigned)getpid()};
    for (int c; (c = getopt_long(argc, argv, "", lo, NULL)) != -1;) {
        char *end = NULL;
        switch (c) {
        case 't':
            o->trials = (int)strtol(optarg, &end, 10);
            break;
        case 's':
            o->senders = (int)strtol(optarg, &end, 10);
            break;
        case 'w':
            o->wait_s = strtod(optarg, &end);
            break;
        case 'r':
            o->seed = (unsigned)strtoul(optarg, &end, 10);
            break;
        case 'p':
            o->payload = (size_t)strtoul(optarg, &end, 10);
            break;
        case 'h':
            printf("usage: ucft-shmkill [--trials T] [--senders S (2-%d)] "
                   "[--payload BYTES (8-%d)] [--wait SECONDS] [--seed N]\n",
                   MAX_SENDERS, MAX_PAYLOAD);
            exit(0);
        default:
            return -1;
        }
        if (end == optarg || *end != '\0') {
            fprintf(stderr, "ucft-shmkill: bad value '%s'\n", optarg);
            return -1;
        }
    }
    if (optind < argc || o->trials < 1 || o->senders < 2 || o->payload < 8 ||
        o->payload > MAX_PAYLOAD || o->senders > MAX_SENDERS ||
        !(o->wait_s > 0 && o->wait_s <= 60)) {
        fprintf(stderr,
                "ucft-shmkill: need --trials >= 1, --senders 2-%d, "
                "--wait in (0, 60] and no other arguments\n",
                MAX_SENDERS);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    opts_t o;
    if (parse(argc, argv, &o) != 0)
        return 2;
    srand(o.seed);
    const char *tls = getenv("UCX_TLS");
    printf("ucft-shmkill: UCX_TLS=%s, %d senders, %zu-byte messages, %d "
           "trials, %.1f s each, seed %u\n",
           tls ? tls : "(default)", o.senders, o.payload, o.trials, o.wait_s,
           o.seed);
    int cut = 0, blocked = 0, agree = 0;
    for (int t = 0; t < o.trials; t++) {
        int r = trial(&o, t);
        if (r < 0) {
            fprintf(stderr, "ucft-shmkill: trial %d: UCX setup failed\n", t);
            return 1;
        }
        cut += (r & TRIAL_CUT) != 0;
        blocked += (r & TRIAL_BLOCKED) != 0;
        agree += !(r & TRIAL_CUT) == !(r & TRIAL_BLOCKED);
    }
    printf("ucft-shmkill: survivors cut off in %d of %d trials; self-probe "
           "blocked in %d; the two agree in %d of %d\n",
           cut, o.trials, blocked, agree, o.trials);
    return 0;
}
