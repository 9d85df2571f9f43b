/*
 * ucft-bench coll: every rank's result to one reporting rank, which may be
 * any survivor (coll.h, coll_gather()).
 *
 * A kill can take any rank, rank 0 too, and the ranks need not agree yet
 * on who is dead when they finish. So no rank picks "the" reporter: every
 * rank sends its result to each of the first f + 1 ranks (the candidates;
 * at most f of them can fail within the tolerance), and each live
 * candidate receives from every other rank. A receive from a dead rank
 * ends with UCFT_ERR_PROC_FAILED (the runtime learns of every failure),
 * so nothing waits for ever. A candidate reports when every candidate
 * below it is dead, which it knows from its own failed receives or from
 * the runtime's failure list. Small messages: the sends complete at once.
 */
#include "tools/bench/coll.h"

#include <stdlib.h>
#include <string.h>

/* 1 when every rank below `rank` is dead: its receive failed (`gone`) or
 * the runtime lists it as failed. */
static int lower_all_dead(ucft_context_h ctx, int rank, int size,
                          const unsigned char *gone)
{
    int *failed = malloc((size_t)size * sizeof(*failed));
    size_t n = 0;
    int dead = 0;

    if (failed == NULL ||
        ucft_context_get_failed_ranks(ctx, failed, (size_t)size, &n) != UCFT_OK)
        n = 0;
    for (int c = 0; c < rank; c++) {
        int listed = 0;
        for (size_t i = 0; i < n && i < (size_t)size; i++)
            listed |= failed[i] == c;
        dead += gone[c] || listed;
    }
    free(failed);
    return dead == rank;
}

/* Receives every other rank's result; marks the dead ones in `gone`.
 * Returns 0, or -1 when a receive failed for another reason. */
static int receive_all(ucft_comm_h w, size_t len, unsigned char *all,
                       unsigned char *gone)
{
    int rank = ucft_comm_rank(w), size = ucft_comm_size(w), rc = 0;

    for (int q = 0; q < size; q++) {
        ucft_info_t info = {0};
        if (q == rank)
            continue;
        ucft_status_t st =
            ucft_recv(w, all + (size_t)q * len, len, q, COLL_TAG_RESULT, &info);
        gone[q] = st != UCFT_OK;
        if (st == UCFT_OK && info.length != len) {
            bench_err("coll", "rank %d's result has %zu bytes, not %zu", q,
                      info.length, len);
            gone[q] = 1;
            rc = -1;
        } else if (st != UCFT_OK && st != UCFT_ERR_PROC_FAILED) {
            bench_err("coll", "no result from rank %d: %s", q,
                      ucft_status_string(st));
            rc = -1;
        }
    }
    return rc;
}

/* A send to candidate c ended with `st`: -1 (and a line) unless it
 * succeeded or c is dead. */
static int send_failed(int rank, int c, ucft_status_t st)
{
    if (st == UCFT_OK || st == UCFT_ERR_PROC_FAILED)
        return 0;
    bench_err("coll", "rank %d: result to rank %d: %s", rank, c,
              ucft_status_string(st));
    return -1;
}

int coll_gather(ucft_context_h ctx, const void *mine, size_t len, void *all,
                unsigned char **gone_p, int *reporter)
{
    ucft_comm_h w = ucft_comm_world(ctx);
    int rank = ucft_comm_rank(w), size = ucft_comm_size(w);
    int f = ucft_comm_get_f(w), rc = 0;
    int ncand = f + 1 < size ? f + 1 : size;
    ucft_request_h *req = calloc((size_t)ncand, sizeof(*req));
    ucft_info_t *info = calloc((size_t)ncand, sizeof(*info));
    unsigned char *gone = calloc((size_t)size, 1);

    *reporter = 0;
    *gone_p = gone;
    if (req == NULL || info == NULL || gone == NULL) {
        free(req);
        free(info);
        bench_err("coll", "rank %d: out of memory", rank);
        return -1;
    }
    for (int c = 0; c < ncand; c++) {
        if (c == rank)
            continue;
        ucft_status_t st =
            ucft_isend(w, mine, len, c, COLL_TAG_RESULT, &req[c]);
        if (st != UCFT_OK) {
            req[c] = NULL; /* ended at once: nothing to wait for */
            rc |= send_failed(rank, c, st);
        }
    }
    if (rank < ncand) {
        memcpy((unsigned char *)all + (size_t)rank * len, mine, len);
        rc |= receive_all(w, len, all, gone);
        *reporter = lower_all_dead(ctx, rank, size, gone);
    }
    (void)ucft_waitall((size_t)ncand, req, info);
    for (int c = 0; c < ncand; c++)
        rc |= send_failed(rank, c, info[c].status);
    free(req);
    free(info);
    return rc;
}
