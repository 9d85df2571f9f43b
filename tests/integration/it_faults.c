/*
 * One collective in a loop while a rank is killed (by ucftrun --kill at a
 * random time, or by UCFT_INJECT at a chosen message): every survivor
 * checks every result. Driven by it_faults.sh, which picks the victim and
 * the moment from a seed.
 *
 * Usage: it_faults OP VICTIMS EXPECT [ITERS]
 *   OP      bcast | reduce | allreduce | barrier (algorithm: UCFT_*_ALG)
 *   VICTIMS the ranks that will die, comma-separated (at most 7, not all;
 *           rank 0 is the first candidate root of allreduce and barrier)
 *   EXPECT  corrected: every operation succeeds with the right result
 *           baseline:  an operation succeeds with the right result or ends
 *                      with UCFT_ERR_PROC_FAILED; the operations well after
 *                      the death end with UCFT_ERR_PROC_FAILED (allreduce
 *                      and barrier at every survivor, reduce at its root)
 *   ITERS   if given: exactly ITERS iterations, whether or not the victims
 *           died (they may die later, e.g. in ucft_finalize); the run must
 *           still end cleanly at every survivor
 *
 * Iteration i: the operation under test, then the coordinator (the lowest
 * rank that is not a victim) tells everyone with a corrected broadcast
 * whether to go on, so that all survivors run the same operations. It
 * stops once every victim has been known dead for AFTER iterations
 * (bounded by LIMIT_S). Values (rank r, iteration i; n ranks):
 *   allreduce  int32 sum over 2n elements, rank r puts i+1 at r and n+r:
 *              every other rank's pair must hold i+1 exactly (its value
 *              once), a victim's pair 0 or i+1, both the same (entirely
 *              or not at all); which victims were included must be the
 *              same at every survivor (compared at the end through the
 *              coordinator's record, sent with a corrected broadcast)
 *   reduce     the same at the root; roots rotate over the other ranks
 *   bcast      64 bytes from a rotating root (never a victim): equal to
 *              the root's
 *   (with UCFT_IT_ROOTKILL=1 in the environment, bcast and reduce roots
 *   rotate over every rank, and an operation whose root is a victim may
 *   also end with UCFT_ERR_PROC_FAILED)
 *   barrier    completes
 */
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <ucft.h>

#include "it_check.h"

int g_rank = -1;

enum {
    AFTER = 25,
    MAX_ITERS = 1 << 18,
    LIMIT_S = 20,
    HANG_S = 12,
    KNOW_S = 5,
    MAX_VICTIMS = 7
};

/* The ranks meant to die. */
typedef struct {
    int n;
    int rank[MAX_VICTIMS];
} victims_t;

static int is_victim(const victims_t *v, int r)
{
    for (int i = 0; i < v->n; i++)
        if (v->rank[i] == r)
            return 1;
    return 0;
}

/* "2" or "2,5": distinct ranks in 1..n-1. */
static void parse_victims(const char *s, int n, victims_t *v)
{
    char *end;
    v->n = 0;
    for (;;) {
        long r = strtol(s, &end, 10);
        CHECK(end != s && r >= 0 && r < n && v->n < MAX_VICTIMS && v->n + 1 < n,
              "victims '%s': want up to %d ranks in 0..%d, not all", s,
              MAX_VICTIMS, n - 1);
        CHECK(!is_victim(v, (int)r), "victim %ld given twice", r);
        v->rank[v->n++] = (int)r;
        if (*end != ',')
            break;
        s = end + 1;
    }
    CHECK(*end == '\0', "victims: junk '%s'", end);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* 1 when every victim is known dead here. */
static int knows_dead(ucft_context_h ctx, const victims_t *v)
{
    int r[64];
    size_t n = 0, k = 0;
    ucft_context_progress(ctx);
    if (ucft_context_get_failed_ranks(ctx, r, 64, &n) != UCFT_OK)
        return 0;
    for (size_t i = 0; i < n && i < 64; i++)
        k += is_victim(v, r[i]);
    return k == (size_t)v->n;
}

/* The context and the victims, for the failed set printed with a failed
 * check. */
static ucft_context_h g_ctx;
static const victims_t *g_vic;

/* Prints the failed set; a rank in it that nobody killed was declared
 * failed by the detector while alive (a false suspicion, e.g. its
 * heartbeat thread starved on an overloaded node): said so, because the
 * collectives then rightly leave it out and the checks below fail for a
 * reason that is not theirs. */
static void print_failed(ucft_context_h ctx)
{
    int r[64];
    size_t n = 0;
    ucft_context_get_failed_ranks(ctx, r, 64, &n);
    fprintf(stderr, "rank %d: known failed:", g_rank);
    for (size_t i = 0; i < n && i < 64; i++)
        fprintf(stderr, " %d", r[i]);
    for (size_t i = 0; i < n && i < 64; i++)
        if (g_vic != NULL && !is_victim(g_vic, r[i]))
            fprintf(stderr,
                    " (rank %d is not a victim: declared failed "
                    "while alive)",
                    r[i]);
    fprintf(stderr, "\n");
}

/* A check of a collective's outcome: on failure, also what this rank
 * knows of failures. */
#define FCHECK(cond, ...)                                                      \
    do {                                                                       \
        if (!(cond))                                                           \
            print_failed(g_ctx);                                               \
        CHECK(cond, __VA_ARGS__);                                              \
    } while (0)

/* Waits for a collective like ucft_wait (spin 50 us, then sleep on the
 * context's fd), but a wait longer than HANG_S is a hang: say which
 * operation of which iteration, and fail. */
static ucft_status_t wait_op(ucft_context_h ctx, ucft_request_h *r,
                             const char *what, int it)
{
    double t0 = now_s();
    int fd = -1;
    CHECK(ucft_context_get_fd(ctx, &fd) == UCFT_OK, "no context fd");
    for (;;) {
        int done = 0;
        ucft_context_progress(ctx);
        ucft_status_t st = ucft_test(r, &done, NULL);
        if (done)
            return st;
        double el = now_s() - t0;
        if (el > HANG_S) {
            print_failed(ctx);
            CHECK(0, "it %d: %s still pending after %d s (a hang)", it, what,
                  (int)HANG_S);
        }
        int tmo = 100;
        if (el > 50e-6 && ucft_context_arm(ctx, &tmo) == UCFT_OK) {
            struct pollfd p = {.fd = fd, .events = POLLIN};
            poll(&p, 1, tmo < 0 || tmo > 100 ? 100 : tmo);
        }
    }
}

/* A root for iteration `it` that is not a victim. */
static int root_of(int it, int n, const victims_t *v)
{
    int r = it % n;
    while (is_victim(v, r))
        r = (r + 1) % n;
    return r;
}

/* Checks a reduction result; returns the set of victims whose values are
 * in it (bit i: victim i). */
static int check_sum(const int32_t *s, int n, int it, const victims_t *vic)
{
    int in = 0;
    for (int i = 0; i < vic->n; i++)
        in |= (s[vic->rank[i]] != 0) << i;
    for (int r = 0; r < n; r++) {
        if (is_victim(vic, r)) {
            FCHECK(s[r] == s[n + r] && (s[r] == 0 || s[r] == it + 1),
                   "it %d: victim %d's value partly or wrongly included: "
                   "%d/%d",
                   it, r, s[r], s[n + r]);
            continue;
        }
        FCHECK(s[r] == it + 1 && s[n + r] == it + 1,
               "it %d: rank %d's value included %d/%d times (want once)", it, r,
               s[r] / (it + 1), s[n + r] / (it + 1));
    }
    return in;
}

/* The padding of a reduction: every element counts the ranks included. */
static void check_pad(const int32_t *s, int n, size_t len, int it)
{
    int32_t ranks = 0;
    for (int r = 0; r < n; r++)
        ranks += s[r] != 0;
    for (size_t i = 2 * (size_t)n; i < len; i++)
        FCHECK(s[i] == ranks, "it %d: padding element %zu is %d, want %d", it,
               i, s[i], ranks);
}

/* UCFT_IT_HOLD_SOCKET_MS: hold a socket that long before ucft_init, as a
 * rank looks to the launcher while it connects to the PMIx server (a
 * --kill due then must wait for the connection). */
static void hold_socket(void)
{
    const char *e = getenv("UCFT_IT_HOLD_SOCKET_MS");
    int sv[2];
    if (e == NULL || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        return;
    poll(NULL, 0, atoi(e));
    close(sv[0]);
    close(sv[1]);
}

int main(int argc, char **argv)
{
    ucft_context_h ctx;
    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: it_faults OP VICTIMS corrected|baseline "
                        "[ITERS]\n");
        return 2;
    }
    const char *op = argv[1];
    int baseline = strcmp(argv[3], "baseline") == 0;
    int iters = argc == 5 ? atoi(argv[4]) : 0;
    hold_socket();
    ucft_status_t ist = ucft_init(NULL, &ctx);
    if (ist != UCFT_OK) {
        /* Expected when a rank dies during start-up (the script decides). */
        printf("it_faults: ucft_init failed: %s\n", ucft_status_name(ist));
        return 1;
    }
    ucft_comm_h w = ucft_comm_world(ctx);
    int rank = g_rank = ucft_comm_rank(w);
    g_ctx = ctx;
    int n = ucft_comm_size(w);
    victims_t vic;
    CHECK(n <= 64 && iters >= 0 && iters < MAX_ITERS, "%d ranks, %d iters", n,
          iters);
    parse_victims(argv[2], n, &vic);
    g_vic = &vic;
    int coord = root_of(0, n, &vic); /* the lowest rank not a victim */
    const char *rk = getenv("UCFT_IT_ROOTKILL");
    int roots_die = rk != NULL && strcmp(rk, "1") == 0;
    /* UCFT_IT_PAD: that many more elements (reductions) or 4-byte words
     * (broadcast), so that messages go by UCX's rendezvous protocol. */
    const char *pad_env = getenv("UCFT_IT_PAD");
    size_t pad = pad_env != NULL ? strtoul(pad_env, NULL, 10) : 0;
    size_t len = 2 * (size_t)n + pad;
    CHECK(pad <= (1u << 22), "UCFT_IT_PAD=%zu: at most 4M", pad);
    int32_t *v = calloc(len, sizeof(*v));
    /* s also holds the broadcast's 64 + 4 pad bytes */
    int32_t *s = calloc(len > 16 + pad ? len : 16 + pad, sizeof(*s));
    uint8_t *incl = calloc(MAX_ITERS, 1);
    CHECK(v != NULL && s != NULL && incl != NULL, "out of memory");
    double t0 = now_s();
    int it = 0, known_at = -1, oks = 0, fails = 0, last_failed = 0;
    for (int go = 1; go; it++) {
        CHECK(it < MAX_ITERS, "too many iterations");
        int known = knows_dead(ctx, &vic);
        if (known && known_at < 0)
            known_at = it;
        /* Roots rotate over the ranks that are not victims, or over all
         * of them (UCFT_IT_ROOTKILL=1: a bcast or reduce root may die). */
        int root = roots_die ? it % n : root_of(it, n, &vic);
        ucft_status_t st = UCFT_OK;
        ucft_request_h r = NULL;
        memset(v, 0, 2 * (size_t)n * sizeof(*v));
        v[rank] = v[n + rank] = it + 1;
        for (size_t i = 2 * (size_t)n; i < len; i++)
            v[i] = 1; /* sums to the number of ranks included */
        memset(s, 0, len * sizeof(*s));
        if (strcmp(op, "allreduce") == 0) {
            st = ucft_iallreduce(w, v, s, len, UCFT_INT32, UCFT_SUM, &r);
            if (st == UCFT_OK)
                st = wait_op(ctx, &r, "allreduce", it);
            if (st == UCFT_OK) {
                incl[it] = (uint8_t)(1 + check_sum(s, n, it, &vic));
                check_pad(s, n, len, it);
            }
        } else if (strcmp(op, "reduce") == 0) {
            st = ucft_ireduce(w, v, s, len, UCFT_INT32, UCFT_SUM, root, &r);
            if (st == UCFT_OK)
                st = wait_op(ctx, &r, "reduce", it);
            if (st == UCFT_OK && rank == root) {
                check_sum(s, n, it, &vic);
                check_pad(s, n, len, it);
            }
        } else if (strcmp(op, "bcast") == 0) {
            unsigned char *b = (unsigned char *)s;
            size_t nb = 64 + 4 * pad;
            for (size_t i = 0; i < nb; i++)
                b[i] =
                    rank == root ? (unsigned char)(i * 13 + it * 7 + root) : 0;
            st = ucft_ibcast(w, b, nb, UCFT_BYTE, root, &r);
            if (st == UCFT_OK)
                st = wait_op(ctx, &r, "bcast", it);
            for (size_t i = 0; st == UCFT_OK && i < nb; i++)
                FCHECK(b[i] == (unsigned char)(i * 13 + it * 7 + root),
                       "it %d: bcast from %d: byte %zu is %u", it, root, i,
                       b[i]);
        } else if (strcmp(op, "barrier") == 0) {
            st = ucft_ibarrier(w, &r);
            if (st == UCFT_OK)
                st = wait_op(ctx, &r, "barrier", it);
        } else {
            CHECK(0, "unknown operation '%s'", op);
        }
        /* A rooted operation whose root dies may end with an error (the
         * data never left it), never hang or give a wrong value. */
        int root_died = roots_die && is_victim(&vic, root) &&
                        (strcmp(op, "bcast") == 0 || strcmp(op, "reduce") == 0);
        if (baseline || root_died)
            FCHECK(st == UCFT_OK || st == UCFT_ERR_PROC_FAILED,
                   "it %d: %s: %s (want OK or ERR_PROC_FAILED)", it, op,
                   ucft_status_name(st));
        else
            FCHECK(st == UCFT_OK, "it %d: %s: %s (want OK)", it, op,
                   ucft_status_name(st));
        oks += st == UCFT_OK;
        fails += st != UCFT_OK;
        last_failed = st != UCFT_OK;
        /* The coordinator decides, everyone follows (corrected broadcast). */
        int32_t cmd = 1;
        if (rank == coord) {
            int timeout = now_s() - t0 > LIMIT_S;
            if (iters > 0)
                cmd = it + 1 < iters;
            else
                cmd = !(timeout || (known_at >= 0 && it - known_at >= AFTER));
            if (timeout && known_at < 0 && iters == 0)
                cmd = -1; /* a victim never died: the test is void */
        }
        st = ucft_ibcast(w, &cmd, 1, UCFT_INT32, coord, &r);
        if (st == UCFT_OK)
            st = wait_op(ctx, &r, "the go/stop broadcast", it);
        FCHECK(st == UCFT_OK, "it %d: the go/stop broadcast: %s (want OK)", it,
               ucft_status_name(st));
        CHECK(cmd >= 0, "victims %s still alive after %d s", argv[2],
              (int)LIMIT_S);
        go = cmd == 1;
    }
    /* Every survivor learns of every death within a bound, not within a
     * number of iterations: on an oversubscribed node a heartbeat thread
     * started in ucft_init may not have run yet when a short loop ends
     * (seen: a kill 58 ms after launch, the loop over 25 iterations
     * later, 6 ranks on 2 cores). */
    double know_by = now_s() + KNOW_S;
    while (iters == 0 && !knows_dead(ctx, &vic) && now_s() < know_by)
        usleep(1000);
    CHECK(iters > 0 || knows_dead(ctx, &vic),
          "the deaths of %s not all known %d s after the end", argv[2],
          (int)KNOW_S);
    if (baseline && iters == 0) {
        /* Well after the death the baseline cannot succeed. */
        int needs_all = strcmp(op, "reduce") != 0;
        if (needs_all || rank == root_of(it - 1, n, &vic))
            CHECK(last_failed, "%s succeeded %d iterations after the death", op,
                  it - 1 - known_at);
    }
    /* Allreduce: were the same victims included at each iteration
     * everywhere? The coordinator's record against mine. */
    if (strcmp(op, "allreduce") == 0) {
        uint8_t *ref = malloc((size_t)it);
        CHECK(ref != NULL, "out of memory");
        memcpy(ref, incl, (size_t)it);
        CHECK_ST(ucft_bcast(w, ref, (size_t)it, UCFT_BYTE, coord), UCFT_OK);
        for (int i = 0; i < it; i++)
            FCHECK(!incl[i] || !ref[i] || incl[i] == ref[i],
                   "it %d: victims included here 0x%x, at rank %d 0x%x", i,
                   incl[i] - 1, coord, ref[i] - 1);
        free(ref);
    }
    printf("it_faults: rank %d: %s, victims %s known dead from iteration %d "
           "of %d: %d ok, %d ERR_PROC_FAILED, all checked\n",
           rank, op, argv[2], known_at, it, oks, fails);
    fflush(stdout); /* a hang in finalize must not swallow it */
    free(v);
    free(s);
    free(incl);
    ucft_status_t fst = ucft_finalize(ctx);
    printf("it_faults: rank %d: finalize: %s\n", rank, ucft_status_name(fst));
    return fst == UCFT_OK ? 0 : 1;
}
