/*
 * allreduce: what ucft is for. Every rank contributes rank+1 to a sum,
 * every iteration. Kill ranks while it runs:
 *
 *   ucftrun -n 8 --kill 3@1.5 --kill 6@2.5 build/examples/allreduce
 *
 * and every survivor keeps getting the right sum of the live ranks, with
 * no error handling and no recovery step: the corrected allreduce
 * tolerates f new failed ranks per operation by construction, and once
 * the survivors have agreed on a failure in the background (tree repair,
 * docs/trees.md) that failure no longer counts: this example loses two
 * ranks with f = 1. A longer run survives any number of kills below the
 * job size, as long as they are spaced:
 *
 *   ucftrun -n 16 --kill 3@1 --kill 9@2 --kill 12@3 --kill 5@4 --kill 14@5 \
 *       build/examples/allreduce 200
 *
 * (arguments: iterations, default 80; milliseconds between them, 40).
 *
 * Each rank also adds the bit of its rank to a bit set (one 64-bit word
 * per 64 ranks, after the sum), so it can check which ranks were
 * included: every live rank exactly once, a rank that died during the
 * operation entirely or not at all. Any number of ranks.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucft.h>

/* Bit r of the set `w` (words of 64 bits). */
static int has(const uint64_t *w, int r)
{
    return (int)(w[r / 64] >> (r % 64) & 1);
}

/* The ranks of the set, and 1 when every rank of [0, size) is in a or b
 * and a has none beyond size. */
static int covered(const uint64_t *a, const uint64_t *b, int size, int *count)
{
    int ok = 1;
    *count = 0;
    for (int r = 0; r < 64 * ((size + 63) / 64); r++) {
        *count += has(a, r);
        if (r < size ? !has(a, r) && !has(b, r) : has(a, r))
            ok = 0;
    }
    return ok;
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 80;
    long pause_ms = argc > 2 ? atol(argv[2]) : 40;
    if (iters < 1 || pause_ms < 0 || pause_ms > 10000) {
        fprintf(stderr, "usage: allreduce [ITERATIONS [PAUSE_MS]]\n");
        return 2;
    }
    ucft_context_h ctx;
    ucft_status_t st = ucft_init(NULL, &ctx);
    if (st != UCFT_OK) {
        fprintf(stderr, "ucft_init: %s\n", ucft_status_string(st));
        return 1;
    }
    ucft_comm_h world = ucft_comm_world(ctx);
    int rank = ucft_comm_rank(world), size = ucft_comm_size(world);
    ucft_comm_set_f(world, 1);
    int wrong = 0;
    int nwords = (size + 63) / 64;
    int64_t *in = calloc(1 + (size_t)nwords, sizeof(*in));
    int64_t *out = calloc(1 + (size_t)nwords, sizeof(*out));
    uint64_t *dead = calloc((size_t)nwords, sizeof(*dead));
    int *failed = calloc((size_t)size, sizeof(*failed));
    if (in == NULL || out == NULL || dead == NULL || failed == NULL) {
        fprintf(stderr, "out of memory for %d ranks\n", size);
        return 1;
    }
    in[0] = rank + 1;
    in[1 + rank / 64] = (int64_t)((uint64_t)1 << (rank % 64));
    for (int it = 0; it < iters; it++) {
        memset(out, 0, (1 + (size_t)nwords) * sizeof(*out));
        st = ucft_allreduce(world, in, out, 1 + (size_t)nwords, UCFT_INT64,
                            UCFT_SUM);
        if (st != UCFT_OK) {
            printf("iteration %d: allreduce failed: %s\n", it,
                   ucft_status_name(st));
            wrong++;
            continue;
        }
        /* Which ranks are in the sum, and is it theirs exactly? A rank
         * left out must have failed; this rank may learn that a moment
         * after the others, so give the news up to 2 s to arrive. */
        const uint64_t *mask = (const uint64_t *)&out[1];
        int live = 0, all = 0;
        for (int wait_ms = 0; wait_ms <= 2000; wait_ms++) {
            size_t nfailed = 0;
            ucft_context_progress(ctx);
            ucft_context_get_failed_ranks(ctx, failed, (size_t)size, &nfailed);
            memset(dead, 0, (size_t)nwords * sizeof(*dead));
            for (size_t i = 0; i < nfailed && i < (size_t)size; i++)
                dead[failed[i] / 64] |= (uint64_t)1 << (failed[i] % 64);
            if ((all = covered(mask, dead, size, &live)))
                break;
            nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
        }
        int64_t expect = 0;
        for (int r = 0; r < size; r++)
            if (has(mask, r))
                expect += r + 1;
        int ok = all && out[0] == expect;
        wrong += !ok;
        if (it % 10 == 0 || !ok || it == iters - 1)
            printf("iteration %2d: sum %3lld of %d live ranks %s\n", it,
                   (long long)out[0], live, ok ? "(correct)" : "(WRONG)");
        fflush(stdout);
        nanosleep(&(struct timespec){pause_ms / 1000,
                                     (pause_ms % 1000) * 1000 * 1000},
                  NULL);
    }
    free(in);
    free(out);
    free(dead);
    free(failed);
    st = ucft_finalize(ctx);
    return wrong == 0 && st == UCFT_OK ? 0 : 1;
}
