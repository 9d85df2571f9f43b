/*
 * allreduce: what ucft is for. Every rank contributes rank+1 to a sum,
 * every iteration. Kill ranks while it runs:
 *
 *   ucftrun -n 8 --kill 3@1.5 --kill 6@2.5 build/examples/allreduce
 *
 * and every survivor keeps getting the right sum of the live ranks, with
 * no error handling and no recovery step: the corrected allreduce
 * tolerates f failed ranks by construction. Every failed rank of the
 * communicator counts towards f (until a shrink renumbers the survivors),
 * so this example, which loses two ranks, asks for f = 2.
 *
 * Each rank also adds 1<<rank in a second element, so it can check which
 * ranks were included: every live rank exactly once, a rank that died
 * during the operation entirely or not at all.
 */
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <ucft.h>

#define ITERS 80

int main(void)
{
    ucft_context_h ctx;
    ucft_status_t st = ucft_init(NULL, &ctx);
    if (st != UCFT_OK) {
        fprintf(stderr, "ucft_init: %s\n", ucft_status_string(st));
        return 1;
    }
    ucft_comm_h world = ucft_comm_world(ctx);
    int rank = ucft_comm_rank(world), size = ucft_comm_size(world);
    ucft_comm_set_f(world, 2);
    int wrong = 0;
    if (size > 63) {
        fprintf(stderr, "this example checks its results for <= 63 ranks\n");
        ucft_finalize(ctx);
        return 2;
    }
    for (int it = 0; it < ITERS; it++) {
        int64_t in[2] = {rank + 1, (int64_t)1 << rank}, out[2] = {0, 0};
        st = ucft_allreduce(world, in, out, 2, UCFT_INT64, UCFT_SUM);
        if (st != UCFT_OK) {
            printf("iteration %d: allreduce failed: %s\n", it,
                   ucft_status_name(st));
            wrong++;
            continue;
        }
        /* Which ranks are in the sum, and is it theirs exactly? A rank
         * left out must have failed; this rank may learn that a moment
         * after the others, so give the news up to 2 s to arrive. */
        uint64_t all = ((uint64_t)1 << size) - 1, mask = (uint64_t)out[1];
        uint64_t dead = 0;
        for (int wait_ms = 0; wait_ms <= 2000; wait_ms++) {
            int failed[64];
            size_t nfailed = 0;
            ucft_context_progress(ctx);
            ucft_context_get_failed_ranks(ctx, failed, 64, &nfailed);
            dead = 0;
            for (size_t i = 0; i < nfailed && i < 64; i++)
                dead |= (uint64_t)1 << failed[i];
            if ((mask | dead) == all)
                break;
            nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
        }
        int64_t expect = 0;
        for (int r = 0; r < size; r++)
            if (mask >> r & 1)
                expect += r + 1;
        int ok = (mask & ~all) == 0 && (mask | dead) == all && out[0] == expect;
        wrong += !ok;
        if (it % 10 == 0 || !ok || it == ITERS - 1)
            printf("iteration %2d: sum %3lld of %d live ranks %s\n", it,
                   (long long)out[0], __builtin_popcountll(mask),
                   ok ? "(correct)" : "(WRONG)");
        fflush(stdout);
        nanosleep(&(struct timespec){0, 40 * 1000 * 1000}, NULL);
    }
    st = ucft_finalize(ctx);
    return wrong == 0 && st == UCFT_OK ? 0 : 1;
}
