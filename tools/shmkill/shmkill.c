/*
 * ucft-shmkill: does a process SIGKILLed while it sends cut its receiver
 * off from every other sender? (docs/transport.md, "A kill mid-send")
 *
 * One trial = one receiver (this process) and --senders children; each
 * child sends --payload-byte tagged messages to the receiver in a loop.
 * After a random 50-150 ms the receiver SIGKILLs one child, then counts
 * for --wait seconds what the others still deliver. A trial is "cut off"
 * when no surviving sender got a single message through in the second
 * half of that time (they sent hundreds of thousands each before): a
 * victim that dies holding a FIFO slot stops every message behind it,
 * but the messages of the slots ahead of it, written before the kill,
 * are still read after it (a trial read "0 *36 16": 16 of them, then
 * nothing). Then the receiver runs
 * the self-probe (transport/ucp/fifo_probe.h): a second worker of this
 * process sends the receiving worker one message through the same FIFO,
 * so it should be stuck exactly when the survivors are.
 *
 * The senders use raw UCP. The receiver does too, running the probe by
 * hand, unless --ucft: then it is a ucft UCP transport that is told of the
 * death (tp_peer_failed) and runs its own probe, whose verdict (the
 * cut-off callback) is what the trial reports. It mends a blocked FIFO
 * (transport/ucp/mm_fifo.h) unless --no-mend; a mended trial then counts
 * what the survivors deliver for another --wait / 2 seconds, which must
 * not be nothing.
 *
 * --claim makes every kill land where it hurts: the victim, told by
 * SIGUSR1, claims the next slot of the receiver's FIFO as a sender does,
 * writes nothing, and SIGKILLs itself (a sender dying between claiming a
 * slot and marking it written, every time). --stop-other also SIGSTOPs
 * another sender just before: a stopped process that maps the FIFO may be
 * the one inside a send, so the transport must not mend it (the probe
 * ends BLOCKED, naming it). Transports come from
 * UCX_TLS; the UCX configuration is ucft's (tp_ucp_config_apply: shared
 * memory qualifies for peer error handling) and endpoints use
 * UCP_ERR_HANDLING_MODE_PEER, as ucft's do.
 *
 *   ucft-shmkill [--trials T] [--senders S] [--payload BYTES]
 *                [--wait SECONDS] [--seed N] [--ucft] [--no-mend]
 *                [--claim [--stop-other]] [--until-cut]
 *
 * --until-cut stops after the first cut-off trial. Prints one line per
 * trial and a summary; exit 0 after a complete measurement, 2 on bad
 * options, 1 if UCX cannot be set up or the probe gave no verdict.
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

#include "tools/shmkill/rx.h"
#include "transport/ucp/mm_fifo.h"

typedef struct opts {
    int trials, senders;
    int ucft, until_cut, claim, no_mend, stop_other;
    size_t payload;
    double wait_s;
    unsigned seed;
} opts_t;

static double now_s(void)
{
    return (double)now_ns() * 1e-9;
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

static volatile sig_atomic_t claim_now;

static void on_usr1(int sig)
{
    (void)sig;
    claim_now = 1;
}

static int take_fifo(const mm_fifo_t *f, void *arg)
{
    *(mm_fifo_t *)arg = *f;
    return 1;
}

/* --claim: a slot of the receiver's FIFO claimed and never written, then
 * death. The FIFO is full most of the time (the other senders refill it
 * as the receiver reads): claim as they do, as soon as there is room.
 * With no room for 2 s (a stopped sender, --stop-other, blocked it) it
 * dies all the same, holding nothing; exit 3 when it has no FIFO. */
static void claim_and_die(void)
{
    mm_fifo_t f;
    if (mm_fifo_each(getppid(), take_fifo, &f) != 1)
        _exit(3);
    for (uint64_t end = now_ns() + 2000000000ull; now_ns() < end;)
        if (mm_fifo_claim(&f) == 0)
            raise(SIGKILL);
    raise(SIGKILL);
}

/* A sender: the receiver's address from the pipe, then sends for ever. */
static void sender(int fd, int index, size_t payload)
{
    signal(SIGUSR1, on_usr1);
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
        void *r = ucp_tag_send_nbx(ep, msg, payload, sender_tag(index), &p);
        if (UCS_PTR_IS_ERR(r))
            _exit(1);
        if (r != NULL) { /* the receiver's FIFO is full */
            while (ucp_request_check_status(r) == UCS_INPROGRESS)
                ucp_worker_progress(u.worker);
            ucp_request_free(r);
        }
        if ((v & 63) == 0)
            ucp_worker_progress(u.worker);
        if (claim_now)
            claim_and_die();
    }
}

/* One trial; returns -1 on a setup error, else TRIAL_CUT when the
 * survivors were cut off, plus TRIAL_BLOCKED when the self-probe did not
 * come through, or TRIAL_MENDED when it did after the transport mended
 * the FIFO and the survivors' messages flowed again (TRIAL_DEAF: they
 * did not). */
enum {
    TRIAL_CUT = 1,
    TRIAL_BLOCKED = 2,
    TRIAL_MENDED = 4,
    TRIAL_DEAF = 8,
    TRIAL_DISORDER = 16 /* a survivor's message lost, repeated, reordered */
};

/* Kills the victim (--claim: lets it claim a slot and die, receiving
 * meanwhile: it may be waiting for room in the FIFO). 0, or -1 when a
 * claiming victim ended otherwise. */
static int kill_victim(const opts_t *o, pid_t pid, rx_t *rx, uint64_t *cnt,
                       int n)
{
    if (!o->claim)
        return kill(pid, SIGKILL);
    int st;
    pid_t w;
    kill(pid, SIGUSR1);
    /* It claims between two sends; a send that waits for room in a FIFO
     * that a stopped sender (--stop-other) blocked never returns: after
     * 3 s it is killed where it stands, a kill like any other. */
    uint64_t end = now_ns() + 3000000000ull;
    while ((w = waitpid(pid, &st, WNOHANG)) == 0) {
        rx->drain(rx, cnt, n);
        if (now_ns() > end) {
            kill(pid, SIGKILL);
            w = waitpid(pid, &st, 0);
            break;
        }
    }
    if (w != pid || !WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL) {
        fprintf(stderr, "ucft-shmkill: the victim could not claim a slot of "
                        "the receiver's FIFO\n");
        return -1;
    }
    return 0;
}

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
    rx_t *rx = NULL;
    if (n < o->senders ||
        (rx = o->ucft ? rx_ucft_open(n, !o->no_mend) : rx_raw_open()) == NULL)
        goto out;
    const void *addr;
    size_t alen;
    rx->address(rx, &addr, &alen);
    for (int i = 0; i < n; i++)
        if (write(fds[i], &alen, sizeof(alen)) != (ssize_t)sizeof(alen) ||
            write(fds[i], addr, alen) != (ssize_t)alen)
            goto out;
    uint64_t cnt[MAX_SENDERS] = {0}, before[MAX_SENDERS], mid[MAX_SENDERS];
    double kill_after = 0.05 + (double)(rand() % 100) * 1e-3;
    int victim = rand() % n;
    int other = (victim + 1) % n; /* --stop-other: once it has sent */
    double t0 = now_s();
    while (now_s() - t0 < kill_after ||
           (o->stop_other && cnt[other] == 0 && now_s() - t0 < 5))
        rx->drain(rx, cnt, n);
    memcpy(before, cnt, sizeof(cnt));
    if (o->stop_other)
        kill(pid[other], SIGSTOP);
    if (kill_victim(o, pid[victim], rx, cnt, n) != 0)
        goto out;
    double t1 = now_s();
    while (now_s() - t1 < o->wait_s / 2)
        rx->drain(rx, cnt, n);
    memcpy(mid, cnt, sizeof(cnt));
    while (now_s() - t1 < o->wait_s)
        rx->drain(rx, cnt, n);
    uint64_t got = 0; /* from the survivors, in the second half */
    for (int i = 0; i < n; i++)
        got += i == victim ? 0 : cnt[i] - mid[i];
    int arrived = rx->probe(rx, victim, cnt, n);
    if (arrived < 0)
        goto out;
    uint64_t after = 0; /* from the survivors, once the FIFO was mended */
    if (arrived == 2) {
        memcpy(mid, cnt, sizeof(cnt));
        for (double t2 = now_s(); now_s() - t2 < o->wait_s / 2;)
            rx->drain(rx, cnt, n);
        for (int i = 0; i < n; i++)
            after += i == victim ? 0 : cnt[i] - mid[i];
    }
    rc = (got == 0 ? TRIAL_CUT : 0) | (arrived ? 0 : TRIAL_BLOCKED) |
         (arrived == 2 ? (after > 0 ? TRIAL_MENDED : TRIAL_DEAF) : 0) |
         (rx->disorder ? TRIAL_DISORDER : 0);
    printf("trial %d: sender %d killed after %.0f ms; after the kill:", t,
           victim, kill_after * 1e3);
    for (int i = 0; i < n; i++)
        printf(" %s%llu", i == victim ? "*" : "",
               (unsigned long long)(cnt[i] - before[i]));
    printf(" (second half: %llu from the others)", (unsigned long long)got);
    printf(" -> %s, self-probe %s", got == 0 ? "CUT OFF" : "ok",
           arrived == 2 ? "mended"
           : arrived    ? "arrived"
                        : "BLOCKED");
    if (arrived == 2)
        printf(", then %llu from the others", (unsigned long long)after);
    if (rx->disorder)
        printf(", %llu OUT OF SEQUENCE", (unsigned long long)rx->disorder);
    printf("\n");
    fflush(stdout);
out:
    /* The senders go first: a receiver closing under a flood would drain
     * it for long. */
    for (int i = 0; i < n; i++) {
        close(fds[i]);
        kill(pid[i], SIGKILL);
        waitpid(pid[i], NULL, 0);
    }
    if (rx != NULL)
        rx->close(rx);
    return rc;
}

static int parse(int argc, char **argv, opts_t *o)
{
    static const struct option lo[] = {
        {"trials", 1, NULL, 't'},     {"senders", 1, NULL, 's'},
        {"wait", 1, NULL, 'w'},       {"seed", 1, NULL, 'r'},
        {"payload", 1, NULL, 'p'},    {"help", 0, NULL, 'h'},
        {"ucft", 0, NULL, 'u'},       {"until-cut", 0, NULL, 'c'},
        {"claim", 0, NULL, 'k'},      {"no-mend", 0, NULL, 'n'},
        {"stop-other", 0, NULL, 'o'}, {NULL, 0, NULL, 0}};
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
        case 'u':
            o->ucft = 1;
            continue;
        case 'c':
            o->until_cut = 1;
            continue;
        case 'k':
            o->claim = 1;
            continue;
        case 'n':
            o->no_mend = 1;
            continue;
        case 'o':
            o->stop_other = 1;
            continue;
        case 'h':
            printf("usage: ucft-shmkill [--trials T] [--senders S (2-%d)] "
                   "[--payload BYTES (8-%d)] [--wait SECONDS] [--seed N] "
                   "[--ucft] [--no-mend] [--claim [--stop-other]] "
                   "[--until-cut]\n",
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
    if (o->stop_other && !o->claim) {
        fprintf(stderr, "ucft-shmkill: --stop-other needs --claim\n");
        return -1;
    }
    if (optind < argc || o->trials < 1 || o->senders < 2 || o->payload < 8 ||
        o->payload > MAX_PAYLOAD || o->senders > MAX_SENDERS ||
        !(o->wait_s > 0 && o->wait_s <= 60)) {
        fprintf(stderr,
                "ucft-shmkill: need --trials >= 1, --senders 2-%d, "
                "--payload 8-%d, --wait in (0, 60] and no other "
                "arguments\n",
                MAX_SENDERS, MAX_PAYLOAD);
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
    printf("ucft-shmkill: UCX_TLS=%s, %s receiver%s, %d senders, %zu-byte "
           "messages, %d trials%s, %.1f s each, seed %u\n",
           tls ? tls : "(default)", o.ucft ? "ucft transport" : "raw UCP",
           o.ucft && !o.no_mend ? " (mends)" : "", o.senders, o.payload,
           o.trials, o.claim ? " (victims claim a slot and die)" : "", o.wait_s,
           o.seed);
    int cut = 0, blocked = 0, mended = 0, deaf = 0, disorder = 0, agree = 0;
    int t = 0;
    while (t < o.trials && !(o.until_cut && cut > 0)) {
        int r = trial(&o, t++);
        if (r < 0) {
            fprintf(stderr,
                    "ucft-shmkill: trial %d: UCX set-up failed or the probe "
                    "gave no verdict\n",
                    t - 1);
            return 1;
        }
        cut += (r & TRIAL_CUT) != 0;
        blocked += (r & TRIAL_BLOCKED) != 0;
        mended += (r & TRIAL_MENDED) != 0;
        deaf += (r & TRIAL_DEAF) != 0;
        disorder += (r & TRIAL_DISORDER) != 0;
        agree += !(r & TRIAL_CUT) == !(r & (TRIAL_BLOCKED | TRIAL_MENDED));
    }
    printf("ucft-shmkill: survivors cut off in %d of %d trials; self-probe "
           "blocked in %d; the two agree in %d of %d\n",
           cut, t, blocked, agree, t);
    if (o.ucft && !o.no_mend)
        printf("ucft-shmkill: mended in %d of %d trials, the survivors "
               "heard again in %d of them\n",
               mended + deaf, t, mended);
    printf("ucft-shmkill: messages out of their sender's sequence in %d of "
           "%d trials\n",
           disorder, t);
    return 0;
}
