/* Communicators that outlive failures, on a real job (docs/comms.md).
 *   it_comms basic        agree (AND of flags), dup, split (colors, keys),
 *                         shrink without failures, revoke (a blocked
 *                         receive at every other rank ends REVOKED; agree
 *                         still works on the revoked communicator), free,
 *                         bad arguments.
 *   it_comms revoke_die   the last rank revokes a dup and dies at once:
 *                         every other rank's blocked receive on it ends
 *                         REVOKED.
 *   it_comms uniform R    R rounds of agree, dup, shrink, split while
 *                         UCFT_INJECT kills ranks in them: the same outcome
 *                         at every survivor. Freed communicators are given
 *                         back: the memory of the rank (VmRSS) grows by
 *                         less than 1 MiB over the last three quarters of
 *                         the rounds (R >= 400).
 *   it_comms shrink I L   I iterations of a recursive-doubling allreduce
 *                         (UCFT_ALLREDUCE_ALG=recdbl) on the current
 *                         communicator; on PROC_FAILED or REVOKED: revoke,
 *                         shrink, agree on the iteration to go on from
 *                         (realign), go on with the survivors. Every result
 *                         checked; at the end (a last shrink and
 *                         agreement) the communicator must have L ranks
 *                         (the launcher kills the others).
 */
#include "it_check.h"

#include <limits.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int g_rank;

/* This process's resident memory in KiB (/proc/self/status), or -1. */
static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f != NULL && fgets(line, sizeof(line), f) != NULL)
        if (sscanf(line, "VmRSS: %ld", &kib) == 1)
            break;
    if (f != NULL)
        fclose(f);
    return kib;
}

static void basic(ucft_context_h ctx)
{
    ucft_comm_h w = ucft_comm_world(ctx);
    int n = ucft_comm_size(w), me = ucft_comm_rank(w);

    /* Agreement: each rank clears its own bit. */
    int flag = ~(1 << me);
    CHECK_ST(ucft_comm_agree(w, &flag), UCFT_OK);
    CHECK(flag == ~((1 << n) - 1), "agreed %#x", (unsigned)flag);

    /* Dup: same group, own traffic. */
    ucft_comm_h d;
    CHECK_ST(ucft_comm_dup(w, &d), UCFT_OK);
    CHECK(ucft_comm_size(d) == n && ucft_comm_rank(d) == me, "dup %d/%d",
          ucft_comm_rank(d), ucft_comm_size(d));
    long v = me, sum = -1;
    CHECK_ST(ucft_allreduce(d, &v, &sum, 1, UCFT_INT64, UCFT_SUM), UCFT_OK);
    CHECK(sum == (long)n * (n - 1) / 2, "dup allreduce %ld", sum);

    /* Split: colors by parity, keys reverse the order. */
    ucft_comm_h s;
    CHECK_ST(ucft_comm_split(w, me % 2, -me, &s), UCFT_OK);
    int ns = (n + 1 - me % 2) / 2, want = 0;
    for (int r = me + 2; r < n; r += 2)
        want++; /* ranks of my color with a smaller key (-r < -me) */
    CHECK(ucft_comm_size(s) == ns && ucft_comm_rank(s) == want,
          "split rank %d size %d, expected %d of %d", ucft_comm_rank(s),
          ucft_comm_size(s), want, ns);
    long wsum = 0;
    for (int r = me % 2; r < n; r += 2)
        wsum += r;
    CHECK_ST(ucft_allreduce(s, &v, &sum, 1, UCFT_INT64, UCFT_SUM), UCFT_OK);
    CHECK(sum == wsum, "split allreduce %ld, expected %ld", sum, wsum);
    ucft_comm_h none = w;
    CHECK_ST(ucft_comm_split(w, me == 0 ? 0 : UCFT_UNDEFINED, 0, &none),
             UCFT_OK);
    CHECK((me == 0) == (none != NULL), "UNDEFINED color gave %p", (void *)none);
    if (none != NULL) {
        CHECK(ucft_comm_size(none) == 1, "single-rank split");
        CHECK_ST(ucft_comm_free(&none), UCFT_OK);
    }

    /* create_group: ranks n-1 .. 1 in that order; rank 0 gets none. */
    int grp[64], ng = 0;
    for (int r = n - 1; r >= 1 && ng < 64; r--)
        grp[ng++] = r;
    ucft_comm_h g = w;
    if (n > 1) {
        CHECK_ST(ucft_comm_create_group(w, ng, grp, &g), UCFT_OK);
        CHECK((me == 0) == (g == NULL), "create_group: member %p", (void *)g);
        if (g != NULL) {
            CHECK(ucft_comm_size(g) == ng && ucft_comm_rank(g) == n - 1 - me,
                  "create_group rank %d of %d", ucft_comm_rank(g),
                  ucft_comm_size(g));
            CHECK_ST(ucft_allreduce(g, &v, &sum, 1, UCFT_INT64, UCFT_SUM),
                     UCFT_OK);
            CHECK(sum == (long)n * (n - 1) / 2, "create_group sum %ld", sum);
            CHECK_ST(ucft_comm_free(&g), UCFT_OK);
        }
        int dupl[2] = {1, 1};
        CHECK_ST(ucft_comm_create_group(w, 2, dupl, &g),
                 UCFT_ERR_INVALID_PARAM);
        int out[1] = {n};
        CHECK_ST(ucft_comm_create_group(w, 1, out, &g), UCFT_ERR_INVALID_PARAM);
        /* One rank passes another group: every rank fails alike. */
        int two[2] = {0, 1};
        CHECK_ST(ucft_comm_create_group(w, me == n - 1 ? 1 : 2, two, &g),
                 UCFT_ERR_INVALID_PARAM);
        CHECK(g == NULL, "a communicator after a mismatch");
    }

    /* Shrink without failures: the same ranks. */
    ucft_comm_h k;
    CHECK_ST(ucft_comm_shrink(s, &k), UCFT_OK);
    CHECK(ucft_comm_size(k) == ns && ucft_comm_rank(k) == want, "shrink");
    CHECK_ST(ucft_allreduce(k, &v, &sum, 1, UCFT_INT64, UCFT_SUM), UCFT_OK);
    CHECK(sum == wsum, "shrunk allreduce %ld", sum);

    /* Revoke: rank 0 revokes the dup; the others wait in a receive that
     * nobody matches, which must end REVOKED. */
    CHECK_ST(ucft_barrier(w), UCFT_OK);
    if (me == 0) {
        usleep(100000);
        CHECK_ST(ucft_comm_revoke(d), UCFT_OK);
    } else {
        char b;
        CHECK_ST(ucft_recv(d, &b, 1, 0, 77, NULL), UCFT_ERR_REVOKED);
    }
    CHECK(ucft_comm_is_revoked(d) == 1, "not revoked");
    CHECK_ST(ucft_barrier(d), UCFT_ERR_REVOKED);
    char b = 0;
    CHECK_ST(ucft_send(d, &b, 1, (me + 1) % n, 1), UCFT_ERR_REVOKED);
    CHECK(ucft_comm_is_revoked(w) == 0, "the parent was revoked");
    flag = me == 1 ? 0 : 1;
    CHECK_ST(ucft_comm_agree(d, &flag), UCFT_OK);
    CHECK(flag == (n > 1 ? 0 : 1), "agree on a revoked communicator: %d", flag);
    ucft_comm_h d2;
    CHECK_ST(ucft_comm_shrink(d, &d2), UCFT_OK);
    CHECK(ucft_comm_size(d2) == n, "shrink of the revoked dup");
    CHECK_ST(ucft_allreduce(d2, &v, &sum, 1, UCFT_INT64, UCFT_SUM), UCFT_OK);
    CHECK(sum == (long)n * (n - 1) / 2, "allreduce after revoke+shrink");

    /* Bad input. */
    CHECK_ST(ucft_comm_split(w, -5, 0, &none), UCFT_ERR_INVALID_PARAM);
    CHECK_ST(ucft_comm_free(&w), UCFT_ERR_INVALID_PARAM);
    CHECK_ST(ucft_comm_dup(NULL, &none), UCFT_ERR_INVALID_PARAM);
    CHECK_ST(ucft_comm_agree(w, NULL), UCFT_ERR_INVALID_PARAM);
    CHECK_ST(ucft_comm_free(NULL), UCFT_ERR_INVALID_PARAM);

    CHECK_ST(ucft_comm_free(&d2), UCFT_OK);
    CHECK_ST(ucft_comm_free(&k), UCFT_OK);
    CHECK_ST(ucft_comm_free(&s), UCFT_OK);
    CHECK_ST(ucft_comm_free(&d), UCFT_OK);
    CHECK(d == NULL, "free sets NULL");
    printf("rank %d: communicators ok\n", me);
}

/* After a shrink, the iteration to go on from, the same at every survivor.
 * A baseline allreduce may complete at some ranks and fail at others (as
 * in the MPI chapter, errors of collectives are not uniform): the ranks
 * that completed iteration i go on to i + 1, whose call then fails (the
 * others revoke), so the survivors reach the shrink at most one iteration
 * apart. The agreement (uniform) tells which of four residues are
 * present; a rank whose predecessor is present goes back one. */
static int realign(ucft_comm_h comm, int i)
{
    int flag = ~(1 << (i & 3));
    ucft_status_t st = ucft_comm_agree(comm, &flag);
    CHECK(st == UCFT_OK || st == UCFT_ERR_PROC_FAILED, "realign: %s",
          ucft_status_name(st));
    CHECK(((flag >> ((i + 2) & 3)) & 1) == 1,
          "realign: ranks more than one iteration apart at %d", i);
    return ((flag >> ((i - 1) & 3)) & 1) ? i : i - 1;
}

static void shrink_loop(ucft_context_h ctx, int iters, int live)
{
    ucft_comm_h cur = ucft_comm_world(ctx);
    int i = 0;
    for (;;) {
        if (i < iters) {
            long one = 1, sum = -1;
            ucft_status_t st =
                ucft_allreduce(cur, &one, &sum, 1, UCFT_INT64, UCFT_SUM);
            if (st == UCFT_OK) {
                CHECK(sum == ucft_comm_size(cur),
                      "iteration %d: sum %ld of %d ranks", i, sum,
                      ucft_comm_size(cur));
                if (ucft_comm_rank(cur) == 0)
                    printf("iteration %d: sum %ld of %d ranks (correct)\n", i,
                           sum, ucft_comm_size(cur));
                i++;
                usleep(20000);
                continue;
            }
            CHECK(st == UCFT_ERR_PROC_FAILED || st == UCFT_ERR_REVOKED,
                  "iteration %d: %s", i, ucft_status_name(st));
            ucft_comm_revoke(cur);
            printf("rank %d: iteration %d: %s\n", g_rank, i,
                   ucft_status_name(st));
        }
        /* An error, or past the last iteration (the failures of the last
         * iterations go out too): shrink, then agree where to go on. */
        ucft_comm_h nc;
        CHECK_ST(ucft_comm_shrink(cur, &nc), UCFT_OK);
        printf("rank %d: at iteration %d shrunk %d -> %d ranks\n", g_rank, i,
               ucft_comm_size(cur), ucft_comm_size(nc));
        if (cur != ucft_comm_world(ctx))
            CHECK_ST(ucft_comm_free(&cur), UCFT_OK);
        cur = nc;
        i = realign(cur, i);
        if (i == iters)
            break;
    }
    CHECK(ucft_comm_size(cur) == live,
          "final communicator: %d ranks, "
          "expected %d",
          ucft_comm_size(cur), live);
    printf("rank %d: %d ranks left (correct)\n", g_rank, ucft_comm_size(cur));
    if (cur != ucft_comm_world(ctx))
        CHECK_ST(ucft_comm_free(&cur), UCFT_OK);
}

/* The last rank revokes a dup and dies at once (SIGKILL); every other
 * rank waits in a receive from a live rank that nobody matches: it must end
 * with UCFT_ERR_REVOKED (not PROC_FAILED: the peer is alive). */
static void revoke_die(ucft_context_h ctx)
{
    ucft_comm_h w = ucft_comm_world(ctx), d;
    int n = ucft_comm_size(w), me = ucft_comm_rank(w);
    CHECK_ST(ucft_comm_dup(w, &d), UCFT_OK);
    CHECK_ST(ucft_barrier(d), UCFT_OK);
    if (me == n - 1) {
        usleep(50000);
        CHECK_ST(ucft_comm_revoke(d), UCFT_OK);
        kill(getpid(), SIGKILL);
    }
    char b;
    int from = me == 0 ? 1 : 0;
    CHECK_ST(ucft_recv(d, &b, 1, from, 78, NULL), UCFT_ERR_REVOKED);
    CHECK_ST(ucft_comm_free(&d), UCFT_OK);
    printf("rank %d: revoked by a rank that died at once\n", me);
}

/* Every survivor must hold a communicator of the same members (or none):
 * each rank's view (its size and the sum of its members' world ranks, by
 * an allreduce on it) must be the same at every survivor of the world
 * (min = max of a corrected allreduce over the world). */
static void same_everywhere(ucft_comm_h w, ucft_comm_h c, int takes_part,
                            const char *what)
{
    long view[2] = {-1, -1}, vmin[2], vmax[2], lo[2], hi[2];
    if (c != NULL) {
        long me = g_rank, sum = 0;
        CHECK_ST(ucft_allreduce(c, &me, &sum, 1, UCFT_INT64, UCFT_SUM),
                 UCFT_OK);
        view[0] = ucft_comm_size(c);
        view[1] = sum;
    }
    for (int i = 0; i < 2; i++) { /* ranks not taking part: neutral */
        vmin[i] = takes_part ? view[i] : LONG_MAX;
        vmax[i] = takes_part ? view[i] : LONG_MIN;
    }
    CHECK_ST(ucft_allreduce(w, vmin, lo, 2, UCFT_INT64, UCFT_MIN), UCFT_OK);
    CHECK_ST(ucft_allreduce(w, vmax, hi, 2, UCFT_INT64, UCFT_MAX), UCFT_OK);
    CHECK(lo[0] == hi[0] && lo[1] == hi[1],
          "%s: communicators differ (%ld..%ld ranks, sums %ld..%ld)", what,
          lo[0], hi[0], lo[1], hi[1]);
}

/* agree, dup, shrink and split, R rounds, while UCFT_INJECT kills a rank
 * inside one of them: every survivor agrees (same flag, same error), and
 * holds the same communicator after every maker. */
static void uniform(ucft_context_h ctx, int rounds)
{
    ucft_comm_h w = ucft_comm_world(ctx);
    long rss0 = -1;
    for (int i = 0; i < rounds; i++) {
        if (i == rounds / 4)
            rss0 = rss_kib();
        int flag = 1;
        ucft_status_t st = ucft_comm_agree(w, &flag);
        CHECK(st == UCFT_OK || st == UCFT_ERR_PROC_FAILED, "agree: %s",
              ucft_status_name(st));
        int v[2] = {flag, st == UCFT_OK}, l2[2], h2[2];
        CHECK_ST(ucft_allreduce(w, v, l2, 2, UCFT_INT32, UCFT_MIN), UCFT_OK);
        CHECK_ST(ucft_allreduce(w, v, h2, 2, UCFT_INT32, UCFT_MAX), UCFT_OK);
        CHECK(l2[0] == h2[0] && l2[1] == h2[1] && flag == 1,
              "round %d: agree differs (flag %d..%d, ok %d..%d)", i, l2[0],
              h2[0], l2[1], h2[1]);
        ucft_comm_h d, k, s;
        CHECK_ST(ucft_comm_dup(w, &d), UCFT_OK);
        same_everywhere(w, d, 1, "dup");
        CHECK_ST(ucft_comm_shrink(w, &k), UCFT_OK);
        same_everywhere(w, k, 1, "shrink");
        ucft_request_h sr; /* the non-blocking form */
        CHECK_ST(ucft_comm_isplit(w,
                                  g_rank % 3 == 2 ? UCFT_UNDEFINED : g_rank % 3,
                                  g_rank, &s, &sr),
                 UCFT_OK);
        CHECK_ST(ucft_wait(&sr, NULL), UCFT_OK);
        same_everywhere(w, s, g_rank % 3 == 0, "split (color 0)");
        same_everywhere(w, s, g_rank % 3 == 1, "split (color 1)");
        CHECK((s == NULL) == (g_rank % 3 == 2), "split: UNDEFINED");
        CHECK_ST(ucft_comm_free(&d), UCFT_OK);
        CHECK_ST(ucft_comm_free(&k), UCFT_OK);
        if (s != NULL)
            CHECK_ST(ucft_comm_free(&s), UCFT_OK);
    }
    long grown = rss_kib() - rss0;
    int check = rounds >= 400;
#if defined(__SANITIZE_ADDRESS__)
    check = 0; /* ASan keeps freed memory in quarantine */
#endif
    CHECK(!check || grown < 1024,
          "%d rounds: memory grew by %ld KiB over the last three quarters "
          "(freed communicators not given back?)",
          rounds, grown);
    printf("rank %d: %d rounds of agree, dup, shrink, split: uniform "
           "(memory %+ld KiB over the last three quarters)\n",
           g_rank, rounds, grown);
}

int main(int argc, char **argv)
{
    ucft_context_h ctx;
    if (argc < 2)
        return 2;
    CHECK_ST(ucft_init(NULL, &ctx), UCFT_OK);
    g_rank = ucft_comm_rank(ucft_comm_world(ctx));
    if (strcmp(argv[1], "basic") == 0)
        basic(ctx);
    else if (strcmp(argv[1], "revoke_die") == 0)
        revoke_die(ctx);
    else if (strcmp(argv[1], "uniform") == 0 && argc >= 3)
        uniform(ctx, atoi(argv[2]));
    else if (strcmp(argv[1], "shrink") == 0 && argc >= 4)
        shrink_loop(ctx, atoi(argv[2]), atoi(argv[3]));
    else
        return 2;
    CHECK_ST(ucft_finalize(ctx), UCFT_OK);
    return 0;
}
