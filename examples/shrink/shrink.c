/*
 * shrink: the recovery pattern of the MPI fault-tolerance chapter, the
 * one to copy when a fast collective that does not tolerate failures is
 * the right choice. 8 ranks iterate a recursive-doubling allreduce (the
 * fastest, and fault-aware only: a failure makes it end with an error,
 * never hang, but not at every rank alike: a rank that had all it needed
 * before the failure completes). On UCFT_ERR_PROC_FAILED or
 * UCFT_ERR_REVOKED a rank revokes the communicator (so that every other
 * rank leaves whatever call it is in: a rank that completed the iteration
 * fails in the next one), shrinks it to the survivors, agrees with them on
 * the iteration to go on from (they are at most one apart), and goes on
 * on the new communicator. The end of the loop is a shrink and an
 * agreement too, so that a rank that finished does not leave one that must
 * repeat the last iteration alone:
 *
 *   ucftrun -n 8 --kill 3@1.5 --kill 6@2.5 build/examples/shrink
 *
 * Every rank checks every result (the sum of 1 over the ranks of the
 * communicator: exactly its size) and prints `iteration I: sum S of R
 * ranks (correct)` lines. Then the shrunk communicator also runs the
 * corrected allreduce with a fresh f = 1: the failures before the shrink
 * are not in it any more.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <ucft.h>

#define ITERS 150

/* The survivors' iteration to go on from, the same at each: they are at
 * most one apart, so an agreement (uniform, unlike the allreduce's errors)
 * on which of four residues are present tells who must go back one. */
static int realign(ucft_comm_h comm, int i)
{
    int flag = ~(1 << (i & 3));
    ucft_comm_agree(comm, &flag); /* the flag is agreed even on an error */
    return ((flag >> ((i - 1) & 3)) & 1) ? i : i - 1;
}

/* The recovery: revoke (on an error), shrink, realign; NULL on an error. */
static ucft_comm_h recover(ucft_comm_h comm, ucft_comm_h world, int err, int *i)
{
    ucft_comm_h next;
    if (err)
        ucft_comm_revoke(comm);
    ucft_status_t st = ucft_comm_shrink(comm, &next);
    if (st != UCFT_OK) {
        fprintf(stderr, "shrink: %s\n", ucft_status_string(st));
        return NULL;
    }
    if (comm != world)
        ucft_comm_free(&comm);
    *i = realign(next, *i);
    return next;
}

int main(void)
{
    ucft_context_h ctx;
    if (setenv("UCFT_ALLREDUCE_ALG", "recdbl", 0) != 0 ||
        ucft_init(NULL, &ctx) != UCFT_OK)
        return 1;
    ucft_comm_h world = ucft_comm_world(ctx), comm = world;
    int wrong = 0, me = ucft_comm_rank(world), i = 0;
    while (comm != NULL) {
        if (i == ITERS) {
            /* Done here: a last shrink and agreement with the others. */
            comm = recover(comm, world, 0, &i);
            if (i == ITERS)
                break;
            continue;
        }
        long one = 1, sum = 0;
        ucft_status_t st =
            ucft_allreduce(comm, &one, &sum, 1, UCFT_INT64, UCFT_SUM);
        if (st == UCFT_ERR_PROC_FAILED || st == UCFT_ERR_REVOKED) {
            int at = i;
            comm = recover(comm, world, 1, &i);
            if (comm != NULL && ucft_comm_rank(comm) == 0)
                printf("iteration %d: %s, shrunk to %d ranks, going on at "
                       "iteration %d\n",
                       at, ucft_status_string(st), ucft_comm_size(comm), i);
            continue;
        }
        int ok = st == UCFT_OK && sum == ucft_comm_size(comm);
        wrong += !ok;
        if (ucft_comm_rank(comm) == 0 || !ok)
            printf("iteration %d: sum %ld of %d ranks (%s)\n", i, sum,
                   ucft_comm_size(comm), ok ? "correct" : "WRONG");
        i++;
        usleep(20000);
    }
    if (comm == NULL)
        return 1;
    /* The shrunk communicator has its own f: the corrected allreduce. */
    long v = me, total = -1;
    ucft_comm_h fresh;
    if (ucft_comm_shrink(comm, &fresh) != UCFT_OK)
        return 1;
    ucft_status_t st =
        ucft_allreduce(fresh, &v, &total, 1, UCFT_INT64, UCFT_SUM);
    printf("rank %d: %d wrong results; corrected allreduce on %d ranks "
           "(f = %d): %s\n",
           me, wrong, ucft_comm_size(fresh), ucft_comm_get_f(fresh),
           ucft_status_string(st));
    ucft_comm_free(&fresh);
    if (comm != world)
        ucft_comm_free(&comm);
    return ucft_finalize(ctx) != UCFT_OK || wrong > 0 || st != UCFT_OK;
}
