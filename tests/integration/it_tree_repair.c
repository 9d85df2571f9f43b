/*
 * Tree repair with the binomial algorithms (docs/trees.md): ranks named on
 * the command line kill themselves (SIGKILL) right after start-up; once
 * every survivor knows of them, the survivors loop broadcasts and reduces
 * from a rotating live root, barriers and allreduces. Run with
 * UCFT_{BCAST,REDUCE,BARRIER}_ALG=binomial (or corrected, with the
 * corrected allreduce: the corrected family on its frame with holes) and
 * UCFT_TREE_REPAIR set to the design under test. Every call that succeeds
 * must hold the right value (a broadcast: the root's data; a reduce at
 * its root and an allreduce everywhere: the sum over the live ranks); the
 * calls of the first EARLY iterations may fail (they may run
 * before the switch, on trees that still hold the dead ranks: these
 * fault-aware baselines then end with an error, never a hang), every later
 * one must succeed.
 * Usage: it_tree_repair DEAD[,DEAD...] [ITERS]
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <ucft.h>

#include "it_check.h"

int g_rank = -1;

enum { MAXN = 64, EARLY = 4, WORDS = 4 };

static int parse_dead(const char *s, int n, uint8_t *dead)
{
    int k = 0;
    while (*s != '\0') {
        char *end;
        long r = strtol(s, &end, 10);
        if (end == s || r <= 0 || r >= n || dead[r])
            return -1;
        dead[r] = 1, k++;
        s = *end == ',' ? end + 1 : end;
        if (*end != ',' && *end != '\0')
            return -1;
    }
    return k;
}

int main(int argc, char **argv)
{
    ucft_context_h ctx;
    if (argc < 2 || ucft_init(NULL, &ctx) != UCFT_OK)
        return 1;
    int iters = argc > 2 ? atoi(argv[2]) : 200;
    ucft_comm_h w = ucft_comm_world(ctx);
    int rank = g_rank = ucft_comm_rank(w), n = ucft_comm_size(w);
    uint8_t dead[MAXN] = {0};
    CHECK(n <= MAXN, "at most %d ranks", MAXN);
    int k = parse_dead(argv[1], n, dead);
    CHECK(k > 0, "bad list of dead ranks '%s' (ranks 1..%d)", argv[1], n - 1);
    if (dead[rank]) {
        fflush(stdout);
        kill(getpid(), SIGKILL);
    }
    time_t t0 = time(NULL);
    for (size_t known = 0; (int)known < k;) {
        ucft_context_progress(ctx);
        CHECK(ucft_comm_get_failed(w, NULL, 0, &known) == UCFT_OK,
              "ucft_comm_get_failed");
        CHECK(time(NULL) - t0 < 30, "knows of %zu of %d deaths after 30 s",
              known, k);
    }
    int live[MAXN], nlive = 0;
    int64_t sum_w = 0; /* sum of (r + 1) over the live ranks */
    for (int r = 0; r < n; r++)
        if (!dead[r])
            live[nlive++] = r, sum_w += r + 1;
    int early_errors = 0;
    for (int it = 0; it < iters; it++) {
        int root = live[it % nlive];
        int64_t b[WORDS], want[WORDS];
        for (int i = 0; i < WORDS; i++) {
            want[i] = (int64_t)root * 1000000 + it * 10 + i;
            b[i] = rank == root ? want[i] : -1;
        }
        ucft_status_t st[4];
        st[0] = ucft_bcast(w, b, WORDS, UCFT_INT64, root);
        if (st[0] == UCFT_OK)
            CHECK(memcmp(b, want, sizeof(b)) == 0,
                  "it %d: bcast from %d: word 0 is %lld, want %lld", it, root,
                  (long long)b[0], (long long)want[0]);
        int64_t mine[WORDS], sum[WORDS];
        for (int i = 0; i < WORDS; i++)
            mine[i] = (int64_t)(rank + 1) * (it + 1 + i), sum[i] = -1;
        st[1] = ucft_reduce(w, mine, sum, WORDS, UCFT_INT64, UCFT_SUM, root);
        if (st[1] == UCFT_OK && rank == root)
            for (int i = 0; i < WORDS; i++)
                CHECK(sum[i] == sum_w * (it + 1 + i),
                      "it %d: reduce to %d: word %d is %lld, want %lld", it,
                      root, i, (long long)sum[i],
                      (long long)(sum_w * (it + 1 + i)));
        st[2] = ucft_barrier(w);
        st[3] = ucft_allreduce(w, mine, sum, WORDS, UCFT_INT64, UCFT_SUM);
        if (st[3] == UCFT_OK)
            for (int i = 0; i < WORDS; i++)
                CHECK(sum[i] == sum_w * (it + 1 + i),
                      "it %d: allreduce: word %d is %lld, want %lld", it, i,
                      (long long)sum[i], (long long)(sum_w * (it + 1 + i)));
        for (int o = 0; o < 4; o++) {
            if (st[o] == UCFT_OK)
                continue;
            CHECK(it < EARLY, "it %d: %s: %s (after the switch)", it,
                  o == 0   ? "bcast"
                  : o == 1 ? "reduce"
                  : o == 2 ? "barrier"
                           : "allreduce",
                  ucft_status_name(st[o]));
            early_errors++;
        }
    }
    printf("rank %d: %d iterations, %d early errors, all values right\n", rank,
           iters, early_errors);
    return ucft_finalize(ctx) == UCFT_OK ? 0 : 1;
}
